# On the lent GPU host (carry .gl, after `source .gl/remote-run.sh NAME`): the latency
# figures of issue 10 item 7 (bench_latency.py under each NVK_VULKAN_HOST_ARGS memory kind,
# then side by side with numba.cuda; the triad), and the timing-sensitive device tests run
# alone. Results under $OUT. About 5 minutes with the build: give the run 420 s (MODES=""
# and T_TESTS=60 make it shorter).
set +e
(vulkaninfo 2>/dev/null | sed -n '/VkPhysicalDeviceMemoryProperties/,/VkPhysicalDeviceFeatures:/p' | head -80) > $OUT/memory_types.txt
python3 -c "import numba_vulkan as nv; d=nv.get_device()._core; print('host args:', d.host_args_memory(False), '/', d.host_args_memory(True))" >> $OUT/memory_types.txt 2>&1
grep -c "memoryTypes\[" $OUT/memory_types.txt; tail -1 $OUT/memory_types.txt
for mode in ${MODES-mixed host bar off}; do
  NVK_VULKAN_HOST_ARGS=$mode timeout 40 python3 benchmarks/bench_latency.py --backends numba_vulkan --repeats 5 --out $OUT/latency_$mode.json 2>&1 | sed -n 2,5p | sed "s/^/$mode: /"
done
timeout 60 python3 benchmarks/bench_latency.py --out $OUT/latency.json 2>&1 | grep -v Warning | tail -8
timeout 60 python3 benchmarks/bench_vs_cuda.py --only launch,triad --out $OUT/vs_cuda.json > $OUT/vs_cuda.log 2>&1; grep -v Warning $OUT/vs_cuda.log | tail -8
cd tests; export NVK_REQUIRE_DEVICE=1
timeout ${T_TESTS:-110} python3 -m pytest -q -p no:cacheprovider --timeout 100 device/test_interrupt.py device/test_process.py device/test_hazards.py device/test_numpy_args.py device/test_threads.py device/test_launch.py "device/test_runtime.py::test_staging_path_subprocess" "device/test_runtime.py::test_events_time_the_device" > $OUT/tests_alone.log 2>&1
tail -1 $OUT/tests_alone.log; grep -E "^FAILED|^ERROR" $OUT/tests_alone.log | head
