"""Environment variables of numba_vulkan (API.md section 5), read once at import.

Tests and users may change the attributes at run time; the readers look them
up when they need them.
"""

import os


def _float(name, default):
    value = os.environ.get(name, "")
    try:
        return float(value) if value.strip() else default
    except ValueError:
        raise ValueError(f"{name}={value!r} is not a number") from None


def _int(name, default):
    value = os.environ.get(name, "")
    try:
        return int(value) if value.strip() else default
    except ValueError:
        raise ValueError(f"{name}={value!r} is not an integer") from None


DEVICE = os.environ.get("NUMBA_VULKAN_DEVICE", "")  # index or name substring
DEBUG = _int("NUMBA_VULKAN_DEBUG", 0)  # 0, 1 or 2: validation layer
VALIDATE = _int("NUMBA_VULKAN_VALIDATE", 1)  # validate every module with SPIRV-Tools
CACHE = _int("NUMBA_VULKAN_CACHE", 1)
CACHE_DIR = os.environ.get("NUMBA_VULKAN_CACHE_DIR", "")
POOL_MB = _int("NUMBA_VULKAN_POOL_MB", 1024)
SYNC = _int("NUMBA_VULKAN_SYNC", 0)  # every launch waits
# Seconds one wait for the device may take before VulkanTimeoutError (0: no limit);
# read when a device is opened (Device.timeout changes it later).
TIMEOUT = _float("NUMBA_VULKAN_TIMEOUT", 0.0)
INT64 = _int("NUMBA_VULKAN_INT64", 0)  # no integer narrowing
NARROW = _int("NUMBA_VULKAN_NARROW", 0)  # narrow everything
PRINT_WORDS = _int("NUMBA_VULKAN_PRINT_WORDS", 1 << 16)
BOUNDSCHECK = _int("NUMBA_BOUNDSCHECK", 0)
DUMP = os.environ.get("NUMBA_VULKAN_DUMP", "")  # e.g. "kir,spirv"
