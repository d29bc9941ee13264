"""Stand-ins for numba-cuda's test scaffolding, used by scripts/run_cudapy.py.

numba-cuda's kernel tests import their base class and skip decorators from
``numba.cuda.testing`` and helpers from ``numba.cuda.tests.support``; those modules
probe the CUDA driver and toolkit, so run_cudapy.py points the imports here instead.
The rule for each decorator: a skip that exists because a CUDA *installation* may
lack something (nvdisasm, nvjitlink, cudadevrt, curand headers) skips here too, with
a reason the report classifies as "needs the CUDA toolkit"; a skip that selects a GPU
generation (``skip_unless_cc_53``) or the simulator's limits skips nothing, so those
tests run and show what we do with them. Nothing here changes what a test checks.
"""

import sys
import types
import unittest

import numpy as np
from numba.core import imputils as _imputils
from numba.tests import support as _numba_support

CUDA_TOOLKIT = "needs the CUDA toolkit"


def _no_skip(*args, **kwargs):
    """A decorator (used bare or with arguments) that leaves the test as it is."""
    if len(args) == 1 and callable(args[0]) and not kwargs:
        return args[0]
    return lambda obj: obj


def _skip(reason):
    def decorator(*args, **kwargs):
        if len(args) == 1 and callable(args[0]) and not kwargs:
            return unittest.skip(reason)(args[0])
        return unittest.skip(reason)
    return decorator


# ------------------------------------------------------------------ numba.cuda.core.config

config = types.ModuleType("_cudapy_config")
config.ENABLE_CUDASIM = False
config.CUDA_LOW_OCCUPANCY_WARNINGS = 0
config.CUDA_WARN_ON_IMPLICIT_COPY = 0
config.CUDA_DEFAULT_PTX_CC = (5, 0)
config.CUDA_ENABLE_PYNVJITLINK = False
config.CUDA_DEBUGINFO_DEFAULT = False
config.DISABLE_PERFORMANCE_WARNINGS = 1
config.DEBUG = 0
config.DEBUGINFO_DEFAULT = False
config.OPT = 3
config.DUMP_ASSEMBLY = 0
config.CUDA_ARRAY_INTERFACE_SYNC = 1
config.CUDA_PER_THREAD_DEFAULT_STREAM = 0
config.CUDA_MEMORY_MANAGER = "default"
config.CUDA_USE_NVIDIA_BINDING = False
config.CUDA_LOG_LEVEL = ""
config.CUDA_FORCE_TRUE = False
config.NUMBA_NUM_THREADS = 1


def _config_getattr(name):
    """numba-cuda has many more settings; tests read them to save and restore: off."""
    if name.isupper():
        return 0
    raise AttributeError(name)


config.__getattr__ = _config_getattr


# ------------------------------------------------------------------ numba.cuda.testing

testing = types.ModuleType("_cudapy_testing")
testing.unittest = unittest
testing.np = np
testing.test_data_dir = None


class CUDATestCase(_numba_support.TestCase):
    """numba-cuda's CUDATestCase without the driver: Numba's TestCase
    (assertPreciseEqual & co.); the FileCheck helpers on PTX/LLVM are not here."""

    FLOAT16_RTOL = np.finfo(np.float16).eps

    def skip_if_lto(self, reason):
        pass


class ForeignArray:
    """numba-cuda's wrapper exposing only ``__cuda_array_interface__``: such an array
    cannot exist without CUDA memory, so constructing one fails with that reason."""

    def __init__(self, arr):
        raise RuntimeError("ForeignArray: __cuda_array_interface__ needs CUDA memory")


def cc_X_or_above(major, minor):
    return True


testing.CUDATestCase = CUDATestCase
testing.ForeignArray = ForeignArray
testing.cc_X_or_above = cc_X_or_above
for _name in ("skip_if_nvjitlink_missing", "skip_if_cudadevrt_missing",
              "skip_if_curand_kernel_missing", "skip_without_nvdisasm",
              ):
    setattr(testing, _name, _skip(f"{CUDA_TOOLKIT} ({_name})"))
testing.skip_unless_cudasim = _skip("runs only under numba-cuda's simulator")
testing.xfail_unless_cudasim = unittest.expectedFailure


def _testing_getattr(name):
    """Every other skip_* (cc, cudasim, arm, wsl2, memcheck ...) skips nothing."""
    if name.startswith("skip"):
        return _no_skip
    raise AttributeError(f"numba.cuda.testing.{name} has no stand-in in scripts/cudapy_shim.py")


testing.__getattr__ = _testing_getattr


# ------------------------------------------------------------------ numba.cuda.tests.support

support = types.ModuleType("_cudapy_support")
support.__dict__.update({k: v for k, v in vars(_numba_support).items() if not k.startswith("__")})


class _OverrideConfig:
    """override_config on our config stand-in (the names numba-cuda tests set)."""

    def __init__(self, name, value):
        self.name, self.value = name, value

    def __enter__(self):
        self.old = getattr(config, self.name, None)
        setattr(config, self.name, self.value)

    def __exit__(self, *exc):
        setattr(config, self.name, self.old)


support.override_config = _OverrideConfig


# ------------------------------------------------------------------ numba.cuda.cudaimpl

cudaimpl = types.ModuleType("_cudapy_cudaimpl")
# numba-cuda's registry of llvmlite lowerings for its back end: the tests' extension
# examples register into one no target installs, so a kernel using such a lowering meets
# our refusal of it rather than an ImportError for the whole file.
cudaimpl.registry = _imputils.Registry("numba-cuda lowerings (not used by numba_vulkan)")
cudaimpl.lower = cudaimpl.registry.lower
cudaimpl.lower_attr = cudaimpl.registry.lower_getattr
cudaimpl.lower_constant = cudaimpl.registry.lower_constant


def install():
    """Register the stand-ins under the names run_cudapy.py rewrites the imports to."""
    from numba.core import errors

    sys.modules["_cudapy_config"] = config
    sys.modules["_cudapy_testing"] = testing
    sys.modules["_cudapy_support"] = support
    sys.modules["_cudapy_cudaimpl"] = cudaimpl
    core = types.ModuleType("_cudapy_core")  # numba.cuda.core: its config and errors
    core.config, core.errors = config, errors
    sys.modules["_cudapy_core"] = core
