#!/usr/bin/env bash
# The device tier under other driver configurations than the machine's own (CI runs it after
# the README's test command; docs/testing.md, "Other drivers"):
#   1. lavapipe generating code for a CPU without AVX-512 (GALLIUM_OVERRIDE_CPU_CAPS=avx: the
#      AVX2 machines whose float64 rounding the self-test finds wrong), then with 128-bit
#      vectors (LP_NATIVE_VECTOR_WIDTH=128): the exactness tests, the loop-cap tests (the
#      subgroup width changes) and a sample of both fuzzers;
#   2. every software form of the driver self-test forced on (NUMBA_VULKAN_SOFT_FORMS=all):
#      the whole device tier.
set -euo pipefail
cd "$(dirname "$0")/../tests"
PY=${PYTHON:-python3}
workers=()
if "$PY" -c "import xdist" 2>/dev/null; then workers=(-n "${NVK_TEST_WORKERS:-2}"); fi
exact=(device/test_selftest.py device/test_math_exact.py device/test_math_cpython.py
       device/test_math_ulp.py device/test_math_division.py device/test_float32_division.py
       device/test_language_arith.py device/test_language_llvm_intrinsics.py
       device/test_ufunc_scalars.py device/test_ufuncs_numpy.py device/test_math_gamma.py
       device/test_loop_limit.py
       fuzz)
export NVK_REQUIRE_DEVICE=1
for config in GALLIUM_OVERRIDE_CPU_CAPS=avx LP_NATIVE_VECTOR_WIDTH=128; do
    echo "test-drivers: $config"
    env "$config" "$PY" -m pytest -q "${workers[@]}" "${exact[@]}" -p no:cacheprovider
done
echo "test-drivers: NUMBA_VULKAN_SOFT_FORMS=all"
NUMBA_VULKAN_SOFT_FORMS=all "$PY" -m pytest -q "${workers[@]}" device fuzz -p no:cacheprovider
