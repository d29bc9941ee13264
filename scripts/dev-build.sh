#!/usr/bin/env bash
# Developer build: compile the extension in build/<name> (default "dev") and
# copy it into src/numba_vulkan, so that PYTHONPATH=src imports this tree.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=build/${1:-dev}
if [ ! -f "$dir/build.ninja" ]; then
    cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        -Dnanobind_DIR="$(python3 -m nanobind --cmake_dir)" >/dev/null
fi
cmake --build "$dir"
# Copy then rename: a running process keeps its mapping of the old file.
for so in "$dir"/src/core/bind/_core*.so; do
    cp "$so" "src/numba_vulkan/.$(basename "$so").tmp.$$"
    mv -f "src/numba_vulkan/.$(basename "$so").tmp.$$" "src/numba_vulkan/$(basename "$so")"
done
