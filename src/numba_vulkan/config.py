"""Environment variables of numba_vulkan (API.md section 5), read once at import.

Tests and users may change the attributes at run time; the readers look them
up when they need them.

A malformed value never breaks ``import numba_vulkan`` (a package that cannot
be imported cannot say what is wrong): the usual spellings of on and off
(``yes``/``no``, ``true``/``false``, ``on``/``off``) count as 1 and 0, and
anything else, or a number outside the variable's range, falls back to the
default with a RuntimeWarning that names the variable, the value and the default
(docs/environment.md lists them all).
"""

import math
import os
import warnings

_TRUE = {"yes", "y", "true", "t", "on"}
_FALSE = {"no", "n", "false", "f", "off", "none"}


def _ignored(name, raw, why, default):
    """Warn that NAME=raw is not used (why), naming the default taken instead."""
    warnings.warn(f"{name}={raw!r} {why}; using the default, {default!r}", RuntimeWarning,
                  stacklevel=3)  # fmt: skip
    return default


def _float(name, default, lo=None, hi=None):
    """A number within [lo, hi] (finite); anything else warns and gives `default`."""
    raw = os.environ.get(name, "")
    if not raw.strip():
        return default
    try:
        value = float(raw)
    except ValueError:
        return _ignored(name, raw, "is not a number", default)
    if not math.isfinite(value) or (lo is not None and value < lo) or (hi is not None and value > hi):
        return _ignored(name, raw, f"is not within [{lo}, {hi}]", default)
    return value


def _int(name, default, lo=None, hi=None):
    """An integer within [lo, hi] (yes/no, true/false, on/off count as 1 and 0); anything
    else warns and gives `default`."""
    raw = os.environ.get(name, "")
    value = raw.strip().lower()
    if not value:
        return default
    try:
        number = int(value, 0)
    except ValueError:
        if value in _TRUE:
            number = 1
        elif value in _FALSE:
            number = 0
        else:
            return _ignored(name, raw, "is not an integer (nor yes/no, true/false, on/off)",
                            default)  # fmt: skip
    if (lo is not None and number < lo) or (hi is not None and number > hi):
        return _ignored(name, raw, f"is not within [{lo}, {hi}]", default)
    return number


def _choice(name, *choices):
    """The variable's value, lower-cased, if it is one of `choices`; else "" (warning if set)."""
    value = os.environ.get(name, "").strip().lower()
    if value and value not in choices:
        said = " or ".join(repr(c) for c in choices)
        return _ignored(name, value, f"is not {said}", "")
    return value


def _stages(name, *known):
    """A comma-separated list of `known` names; unknown ones are warned about and dropped."""
    raw = os.environ.get(name, "")
    names = [n.strip().lower() for n in raw.split(",") if n.strip()]
    unknown = [n for n in names if n not in known]
    if unknown:
        warnings.warn(f"{name}={raw!r}: {', '.join(map(repr, unknown))} not known (known: "
                      f"{', '.join(known)}); ignored", RuntimeWarning, stacklevel=2)  # fmt: skip
    return ",".join(n for n in names if n in known)


DEVICE = os.environ.get("NUMBA_VULKAN_DEVICE", "")  # index or name substring
# Which devices list_devices shows, in this order: loader indices or name substrings,
# separated by commas; a device named twice is opened twice (runtime/device_list.py).
VISIBLE_DEVICES = os.environ.get("NUMBA_VULKAN_VISIBLE_DEVICES", "")
DEBUG = _int("NUMBA_VULKAN_DEBUG", 0, 0, 2)  # 0, 1 or 2: validation layer
# Validate every module with SPIRV-Tools: 1 the final module, 2 (the tests) also the
# emitter's module before optimisation; 0 none.
VALIDATE = _int("NUMBA_VULKAN_VALIDATE", 1, 0, 2)
CACHE = _int("NUMBA_VULKAN_CACHE", 1, 0, 1)
CACHE_DIR = os.environ.get("NUMBA_VULKAN_CACHE_DIR", "")
POOL_MB = _int("NUMBA_VULKAN_POOL_MB", 1024, 0, 1 << 30)  # MiB, up to 1 PiB
SYNC = _int("NUMBA_VULKAN_SYNC", 0, 0, 1)  # every launch waits
# Seconds one wait for the device may take before VulkanTimeoutError (0: no limit);
# read when a device is opened (Device.timeout changes it later).
TIMEOUT = _float("NUMBA_VULKAN_TIMEOUT", 0.0, 0.0, 1e9)
INT64 = _int("NUMBA_VULKAN_INT64", 0, 0, 1)  # no integer narrowing
NARROW = _int("NUMBA_VULKAN_NARROW", 0, 0, 1)  # narrow everything
# Copies per unrolled iteration of counted loops (1 to 8; 1: no unrolling; 8 ran
# grid-stride reductions and histograms fastest on the H200). See
# docs/compiler.md: never changes a result, only lets a GPU overlap the loads.
UNROLL = _int("NUMBA_VULKAN_UNROLL", 8, 1, 8)
# 0: loops keep no element of device memory in registers (spirv/loop_promotion.h; never
# changes a result).
PROMOTE = _int("NUMBA_VULKAN_PROMOTE", 1, 0, 1)
# The group loop (frontend/grid.py): a kernel's workgroups along x run in a loop over fewer
# workgroups. Unset: on NVIDIA for light kernels only (launchers.group_loop: on an H100 it
# sped those up 1.1-1.7x and slowed kernels moving more memory, docs/corpus.md); 1: every
# kernel that can take it, on devices without a loop cap; 2: also where there is one (tests);
# 0: never. Never changes a result.
GROUP_LOOP = _int("NUMBA_VULKAN_GROUP_LOOP", None, 0, 2)
PRINT_WORDS = _int("NUMBA_VULKAN_PRINT_WORDS", 1 << 16, 64, 1 << 28)
# Numba's variable: 1 turns index checks on for every kernel, 0 off, unset (None)
# leaves it to each kernel's boundscheck option.
BOUNDSCHECK = _int("NUMBA_BOUNDSCHECK", None, 0, 1)
DUMP = _stages("NUMBA_VULKAN_DUMP", "kir", "narrowed", "spirv", "types", "all")  # e.g. "kir,spirv"
# Signed values hidden from the device compiler's range reasoning (kir/int_ranges.h): a mask,
# 0 to 31; unset: 23 on NVIDIA, 0 elsewhere (launchers.hide_int_ranges).
HIDE_INT_RANGES = _int("NUMBA_VULKAN_HIDE_INT_RANGES", None, 0, 31)
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
# Cooperative matrices (docs/matrix.md): "" runs nv.matrix on the device's matrix units where it
# lists the configuration, "emulate" emulates them everywhere (to compare the two on a GPU).
MATRIX = _choice("NUMBA_VULKAN_MATRIX", "emulate")
# The driver self-test (runtime/selftest.py, docs/runtime.md): 0 skips it, and the compiler then
# guesses each software form from the driver's name as before the self-test existed.
SELFTEST = _int("NUMBA_VULKAN_SELFTEST", 1, 0, 1)
# Software forms to use whatever the self-test found: "all", or names separated by commas
# (selftest.SOFT_FORMS: rounding_f32, rounding_f64, float_zeros, division_f32); tests force them
# all on lavapipe.
SOFT_FORMS = os.environ.get("NUMBA_VULKAN_SOFT_FORMS", "")
