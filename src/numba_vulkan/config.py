"""Environment variables of numba_vulkan (API.md section 5), read once at import.

Tests and users may change the attributes at run time; the readers look them
up when they need them.

A malformed value never breaks ``import numba_vulkan`` (a package that cannot
be imported cannot say what is wrong): the usual spellings of on and off
(``yes``/``no``, ``true``/``false``, ``on``/``off``) count as 1 and 0, and
anything else falls back to the default with a RuntimeWarning that names the
variable.
"""

import os
import warnings

_TRUE = {"yes", "y", "true", "t", "on"}
_FALSE = {"no", "n", "false", "f", "off", "none"}


def _float(name, default):
    value = os.environ.get(name, "")
    try:
        return float(value) if value.strip() else default
    except ValueError:
        raise ValueError(f"{name}={value!r} is not a number") from None


def _int(name, default):
    raw = os.environ.get(name, "")
    value = raw.strip().lower()
    if not value:
        return default
    try:
        return int(value, 0)
    except ValueError:
        pass
    if value in _TRUE:
        return 1
    if value in _FALSE:
        return 0
    warnings.warn(
        f"{name}={raw!r} is not an integer (nor yes/no, true/false, on/off); using {default}",
        RuntimeWarning,
        stacklevel=2,
    )
    return default


def _choice(name, *choices):
    """The variable's value, lower-cased, if it is one of `choices`; else "" (warning if set)."""
    value = os.environ.get(name, "").strip().lower()
    if value and value not in choices:
        said = " or ".join(repr(c) for c in choices)
        warnings.warn(f"{name}={value!r} is not {said}; ignored", RuntimeWarning, stacklevel=3)
        return ""
    return value


DEVICE = os.environ.get("NUMBA_VULKAN_DEVICE", "")  # index or name substring
DEBUG = _int("NUMBA_VULKAN_DEBUG", 0)  # 0, 1 or 2: validation layer
# Validate every module with SPIRV-Tools: 1 the final module, 2 (the tests) also the
# emitter's module before optimisation; 0 none.
VALIDATE = _int("NUMBA_VULKAN_VALIDATE", 1)
CACHE = _int("NUMBA_VULKAN_CACHE", 1)
CACHE_DIR = os.environ.get("NUMBA_VULKAN_CACHE_DIR", "")
POOL_MB = _int("NUMBA_VULKAN_POOL_MB", 1024)
SYNC = _int("NUMBA_VULKAN_SYNC", 0)  # every launch waits
# Seconds one wait for the device may take before VulkanTimeoutError (0: no limit);
# read when a device is opened (Device.timeout changes it later).
TIMEOUT = _float("NUMBA_VULKAN_TIMEOUT", 0.0)
INT64 = _int("NUMBA_VULKAN_INT64", 0)  # no integer narrowing
NARROW = _int("NUMBA_VULKAN_NARROW", 0)  # narrow everything
# Copies per unrolled iteration of counted loops (1 to 8; 1: no unrolling; 8 ran
# grid-stride reductions and histograms fastest on the H200). See
# docs/compiler.md: never changes a result, only lets a GPU overlap the loads.
UNROLL = _int("NUMBA_VULKAN_UNROLL", 8)
PRINT_WORDS = _int("NUMBA_VULKAN_PRINT_WORDS", 1 << 16)
# Numba's variable: 1 turns index checks on for every kernel, 0 off, unset (None)
# leaves it to each kernel's boundscheck option.
BOUNDSCHECK = _int("NUMBA_BOUNDSCHECK", None)
DUMP = os.environ.get("NUMBA_VULKAN_DUMP", "")  # e.g. "kir,spirv"
# Signed values hidden from the device compiler's range reasoning (kir/int_ranges.h): a mask,
# 0 to 31; unset: 23 on NVIDIA, 0 elsewhere (launchers.hide_int_ranges).
HIDE_INT_RANGES = _int("NUMBA_VULKAN_HIDE_INT_RANGES", None)
# float32 subnormals in the math library (docs/math.md, "Subnormals and devices"): "" takes the
# flush-safe forms unless the device promises to keep them (shaderDenormPreserveFloat32);
# "keep" trusts the device to keep them (lavapipe does without promising it); "simulate" (tests)
# takes the flush-safe forms and makes the library's own float32 ops flush as NVIDIA's do.
SUBNORMALS32 = _choice("NUMBA_VULKAN_SUBNORMALS32", "keep", "simulate")
# The math library's own divisions that take the driver's quotient (docs/math.md, "Division"):
# "loose" (tests) moves each such quotient by 2 ulp, about as far as Vulkan lets a driver's be
# off, so that a device whose division is exact (lavapipe) checks that the library needs no more.
DRIVER_DIV = _choice("NUMBA_VULKAN_DRIVER_DIV", "loose")
# The math library's exact products (docs/math.md, "Fused multiply-add"): "" uses GLSL's Fma
# where the vendor's drivers fuse it (launchers.FUSED_FMA_VENDORS), "fused" everywhere (tests;
# only for a device whose Fma rounds once), "off" nowhere (Dekker's products).
FMA = _choice("NUMBA_VULKAN_FMA", "fused", "off")
# The driver self-test (runtime/selftest.py, docs/runtime.md): 0 skips it, and the compiler then
# guesses each software form from the driver's name as before the self-test existed.
SELFTEST = _int("NUMBA_VULKAN_SELFTEST", 1)
# Software forms to use whatever the self-test found: "all", or names separated by commas
# (selftest.SOFT_FORMS: rounding_f32, rounding_f64, float_zeros, division_f32); tests force them
# all on lavapipe.
SOFT_FORMS = os.environ.get("NUMBA_VULKAN_SOFT_FORMS", "")
