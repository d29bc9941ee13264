"""numba.cuda's API on Vulkan: ``from numba_vulkan import cuda`` instead of
``from numba import cuda`` should be the only change a numba.cuda program needs.

Kernel-side names live in cuda/kernel_api.py (and cuda/rewrite.py for the
attribute values ``threadIdx.x``, ``laneid``, ``warpsize``); host-side names map onto
numba_vulkan's runtime here. What Vulkan cannot do (grid-wide synchronisation,
dynamic parallelism, cooperative groups) and what is not mapped yet raise
VulkanUnsupportedError naming the feature, never AttributeError.
docs/cuda-compat.md lists every name and every difference.
"""

import numpy as _np

from .. import dispatcher as _dispatcher
from .. import runtime as _rt
from .. import stubs as _s
from ..errors import VulkanUnsupportedError
from ..typing import pipeline as _pipeline
from .kernel_api import (  # noqa: F401
    activemask,
    all_sync,
    any_sync,
    ballot_sync,
    blockDim,
    blockIdx,
    const,
    eq_sync,
    grid,
    gridDim,
    gridsize,
    lanemask_lt,
    laneid,
    refused,
    shfl_down_sync,
    shfl_sync,
    shfl_up_sync,
    shfl_xor_sync,
    threadIdx,
    warpsize,
)
from .rewrite import CudaCompatRewrite

# Kernels see `cuda.threadIdx.x` & co. as our intrinsics from now on (cuda/rewrite.py).
_pipeline.add_untyped_pass(CudaCompatRewrite, "numba_vulkan.cuda: threadIdx.x ... to intrinsics")

# numba.cuda re-exports Numba's scalar types (``from numba.cuda import float32``).
from numba.core.types import (  # noqa: E402,F401
    boolean, complex64, complex128, float16, float32, float64, int8, int16, int32, int64,
    intp, uint8, uint16, uint32, uint64, void,
)

# ---------------------------------------------------------------- kernel side: same stubs

shared = _s.shared
local = _s.local
atomic = _s.atomic
syncthreads = _s.syncthreads
syncthreads_count = _s.syncthreads_count
syncthreads_and = _s.syncthreads_and
syncthreads_or = _s.syncthreads_or
threadfence = _s.threadfence
threadfence_block = _s.threadfence_block
# A system-scope fence orders memory as seen by the host too; Vulkan's device scope is
# the widest a kernel can name here, and the host sees a kernel's writes only after
# synchronisation anyway, which is what numba.cuda programs wait for.
threadfence_system = _s.threadfence


# ---------------------------------------------------------------- the decorator


def jit(func_or_sig=None, device=False, **options):
    """numba.cuda.jit: ``@cuda.jit``, ``@cuda.jit(device=True)``, ``@cuda.jit(opts)``.

    A signature (``@cuda.jit("void(float32[:])")``) is accepted and not used: kernels
    are compiled lazily for the argument types of each launch, as with no signature.
    ``link``, ``lineinfo`` and ``max_registers`` are CUDA-only and refused with a
    clear error when they ask for something; ``opt`` and ``cache`` are passed on.
    """
    for name in ("link", "extensions"):
        if options.get(name):
            raise VulkanUnsupportedError(f"cuda.jit({name}=...): linking CUDA code "
                                         "(PTX, CUDA C) is not possible on Vulkan")
    options.pop("link", None)
    options.pop("extensions", None)
    for name in ("lineinfo", "max_registers", "opt", "forceinline"):
        options.pop(name, None)  # hints only: no effect on what a kernel computes
    if callable(func_or_sig) and not isinstance(func_or_sig, (str, list, tuple)):
        return _dispatcher.jit(func_or_sig, device=device, **options)
    return _dispatcher.jit(device=device, **options)


# ---------------------------------------------------------------- vectorize


def vectorize(signatures_or_function=(), **options):
    """numba.cuda.vectorize: ``numba.vectorize(..., target="vulkan")`` (numba_vulkan.vectorize)."""
    from ..ufunc import vectorize as _vectorize

    return _vectorize(signatures_or_function, **options)


def guvectorize(*args, **options):
    """numba.cuda.guvectorize: ``numba.guvectorize(..., target="vulkan")``."""
    from ..ufunc import guvectorize as _guvectorize

    return _guvectorize(*args, **options)


# ---------------------------------------------------------------- memory


to_device = _rt.to_device
device_array = _rt.device_array
device_array_like = _rt.device_array_like
pinned_array = _rt.pinned_array


def pinned_array_like(ary):
    """A pinned host array with the shape and dtype of `ary`."""
    return _rt.pinned_array(ary.shape, ary.dtype)


def mapped_array(shape, dtype=_np.float64, strides=None, order="C", stream=0,
                 portable=False, wg=False):
    """A host array kernels can be given directly: a pinned array here.

    Passed to a kernel it is copied in before the launch and back when the launch
    finishes (not read in place over the bus as CUDA's mapped memory is), so what the
    host sees after ``cuda.synchronize()`` is the same.
    """
    if strides is not None or order != "C":
        raise VulkanUnsupportedError("cuda.mapped_array with strides or order='F': only "
                                     "C-contiguous mapped arrays are supported")
    return _rt.pinned_array(shape, dtype)


def mapped_array_like(ary, stream=0, portable=False, wg=False):
    return mapped_array(ary.shape, ary.dtype)


def managed_array(*args, **kwargs):
    raise VulkanUnsupportedError("cuda.managed_array: unified (managed) memory is not "
                                 "available on Vulkan; use device_array and to_device")


# ---------------------------------------------------------------- devices, streams, events

stream = _rt.stream
event = _rt.event
synchronize = _rt.synchronize
event_elapsed_time = _rt.event_elapsed_time


def default_stream():
    """numba.cuda's default stream: a stream on the selected device."""
    return _rt.stream()


def select_device(device_id):
    """Make device `device_id` (an index into ``cuda.gpus``) the current one."""
    _rt.select_device(device_id)
    return _rt.get_device(device_id)


def get_current_device():
    return _rt.get_device()


def close():
    """numba.cuda.close: nothing to release early here (devices close at exit)."""


class _GPUList:
    """``cuda.gpus``: the Vulkan devices, indexable, with ``.current``."""

    def __len__(self):
        return len(_rt.list_devices())

    def __getitem__(self, i):
        return _rt.get_device(i)

    def __iter__(self):
        return (_rt.get_device(i) for i in range(len(self)))

    @property
    def current(self):
        return _rt.get_device()

    def __repr__(self):
        return f"<numba_vulkan.cuda.gpus: {len(self)} Vulkan device(s)>"


gpus = _GPUList()


def is_available():
    """Whether a Vulkan device with a compute queue exists."""
    try:
        return len(_rt.list_devices()) > 0
    except Exception:  # no loader, no driver: not available, as numba.cuda answers
        return False


def detect():
    """Print the Vulkan devices found; True if there is at least one (numba.cuda.detect)."""
    devices = _rt.list_devices() if is_available() else []
    print(f"Found {len(devices)} Vulkan device(s)")
    for info in devices:
        print(f"id {info.index} {info.name!r} (subgroup size {info.subgroup_size})")
    return len(devices) > 0


# ---------------------------------------------------------------- refused / not yet mapped

_NO_GRID_SYNC = ("grid-wide synchronisation does not exist in Vulkan; split the kernel "
                 "into launches on one stream")
cg = _s.cg  # cg.this_grid().sync() is refused by the front end with this reason

_REFUSED = {
    "syncwarp": "warp-level barriers are not mapped yet (Vulkan subgroups need not "
                "execute in lockstep; use cuda.syncthreads)",
    "match_any_sync": "not mapped yet",
    "match_all_sync": "not mapped yet",
    "fp16": "half-precision intrinsics are not mapped yet",
    "nanosleep": "not available in Vulkan kernels",
    "cooperative_groups": _NO_GRID_SYNC,
}

for _name, _why in _REFUSED.items():
    globals()[_name] = refused(_name, _why)

_NOT_MAPPED = {
    "reduce": "cuda.reduce is not mapped yet (numba_vulkan.runtime.reduce has the reductions)",
    "libdevice": "cuda.libdevice names are not mapped yet: use the math module",
    "cudadrv": "the CUDA driver API does not exist on Vulkan",
    "driver": "the CUDA driver API does not exist on Vulkan",
    "external_stream": "wrapping a CUDA stream is not possible on Vulkan",
    "from_cuda_array_interface": "__cuda_array_interface__ exchange needs CUDA memory",
    "as_cuda_array": "__cuda_array_interface__ exchange needs CUDA memory",
    "is_cuda_array": "__cuda_array_interface__ exchange needs CUDA memory",
    "profile_start": "CUDA profiler control does not exist on Vulkan",
    "profile_stop": "CUDA profiler control does not exist on Vulkan",
    "profiling": "CUDA profiler control does not exist on Vulkan",
    "compile_ptx": "PTX is CUDA's: numba_vulkan compiles to SPIR-V",
    "compile_ptx_for_current_device": "PTX is CUDA's: numba_vulkan compiles to SPIR-V",
    "declare_device": "linking external device functions is not possible on Vulkan",
    "simulator": "the CUDA simulator is not part of numba_vulkan",
}


class UnmappedNameError(VulkanUnsupportedError, AttributeError):
    """A numba.cuda name numba_vulkan.cuda does not provide. It is a VulkanUnsupportedError,
    whose message names the feature; it is also an AttributeError so that probes such as
    ``getattr(cuda, name, None)`` and ``hasattr`` (Numba's, inspect's) keep working."""


def __getattr__(name):
    """Any other numba.cuda name: an error naming the missing feature."""
    if name.startswith("__"):
        raise AttributeError(name)
    if name == "random":  # cuda.random without importing it first, as numba.cuda allows
        import importlib

        return importlib.import_module(f"{__name__}.random")
    why = _NOT_MAPPED.get(name, "this numba.cuda name is not mapped to Vulkan yet")
    raise UnmappedNameError(f"numba_vulkan.cuda.{name}: {why}")
