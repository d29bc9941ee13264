#!/usr/bin/env bash
# Run every test tier: the C++ unit tests (CTest), then the Python tests
# (compile-only and on the default Vulkan device, lavapipe without a GPU).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}

# Assertions on (Debug: no NDEBUG) at -O1 without debug information, as a unity build (several
# sources per compiler run): on 2 cores the build takes 43 s and the tests 4 (-O0 -g, a file per
# run: 71 and 31 s, the two fuzz tests most of it). scripts/dev-build.sh compiles each file
# alone, which keeps every file's includes honest.
cmake -S . -B build/tests -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG=-O1 \
    -DNVK_BUILD_PYTHON=OFF -DCMAKE_UNITY_BUILD=ON >/dev/null
cmake --build build/tests
ctest --test-dir build/tests --output-on-failure -j "$(nproc)"
# The runtime's C++ tests under ThreadSanitizer are a tier of their own (scripts/tsan.sh,
# 31 s from scratch on 2 cores): CI runs it after this script.

# Run from tests/ so that the installed package is imported, not src/. A missing
# Vulkan device fails the run (NVK_REQUIRE_DEVICE=0 lets the device tier skip).
# Two workers (pytest-xdist) where it is installed: the 2-core machines of CI.
cd tests
workers=()
if "$PY" -c "import xdist" 2>/dev/null; then workers=(-n "${NVK_TEST_WORKERS:-2}"); fi
NVK_REQUIRE_DEVICE=${NVK_REQUIRE_DEVICE:-1} "$PY" -m pytest -q "${workers[@]}" "$@"
