#!/usr/bin/env bash
# ThreadSanitizer build of the runtime's C++ tests (build/tsan), run against the
# machine's Vulkan driver (lavapipe in CI). The multi-threaded test
# (src/core/vk/vk_threads_test.cc) has many threads allocate, copy, launch and
# wait on one device at once; any data race in the runtime fails the run.
# The driver itself is not instrumented, so only our own code is checked.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=build/tsan
if [ ! -f "$dir/build.ninja" ]; then
    cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Debug -DNVK_BUILD_PYTHON=OFF -DCMAKE_UNITY_BUILD=ON \
        -DCMAKE_CXX_FLAGS="-fsanitize=thread -O1 -g" \
        -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=thread" >/dev/null
fi
cmake --build "$dir" --target nvk_vk_threads_test nvk_vk_test nvk_vk_stream_test
export TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 suppressions=$PWD/scripts/tsan.supp ${TSAN_OPTIONS:-}"
# TSan fails on kernels with high mmap randomisation (vm.mmap_rnd_bits > 28):
# run without address-space randomisation where setarch allows it.
run=()
if command -v setarch >/dev/null && setarch "$(uname -m)" -R true 2>/dev/null; then
    run=(setarch "$(uname -m)" -R)
fi
"${run[@]}" "$dir/src/core/vk/nvk_vk_threads_test"
"${run[@]}" "$dir/src/core/vk/nvk_vk_test"
"${run[@]}" "$dir/src/core/vk/nvk_vk_stream_test"
