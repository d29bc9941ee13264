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
from ..typing.fma import fma  # noqa: F401  (a * b + c rounded once: frontend/mathlib/fma.py)
from .kernel_api import (  # noqa: F401
    activemask,
    all_sync,
    any_sync,
    ballot_sync,
    blockDim,
    blockIdx,
    cbrt,
    const,
    eq_sync,
    grid,
    gridDim,
    gridsize,
    lanemask_lt,
    laneid,
    match_all_sync,
    match_any_sync,
    ldca,
    ldcg,
    ldcs,
    ldcv,
    ldlu,
    refused,
    selp,
    shfl_down_sync,
    shfl_sync,
    shfl_up_sync,
    shfl_xor_sync,
    stcg,
    stcs,
    stwb,
    stwt,
    syncwarp,
    threadIdx,
    warpsize,
)
from . import signatures as _signatures
from .bits import brev, clz, ffs, popc  # noqa: F401
from .reduction import Reduce, reduce  # noqa: F401
from .rewrite import CudaCompatRewrite

# Kernels see `cuda.threadIdx.x` & co. as our intrinsics from now on (cuda/rewrite.py).
_pipeline.add_untyped_pass(CudaCompatRewrite, "numba_vulkan.cuda: threadIdx.x ... to intrinsics")

# numba.cuda re-exports Numba's scalar types (``from numba.cuda import float32``).
from numba.core.types import (  # noqa: E402,F401
    b1, bool_, boolean, byte, c8, c16, complex64, complex128, double, f2, f4, f8, float16,
    float32, float64, i1, i2, i4, i8, int8, int16, int32, int64, int_, intc, intp, long_,
    longlong, short, u1, u2, u4, u8, uint, uint8, uint16, uint32, uint64, uintc, uintp, ulong,
    ulonglong, ushort, void,
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

    A signature (``@cuda.jit("void(float32[:], int32)")``) fixes the types of scalar
    arguments, which each launch converts to them (cuda/signatures.py), and the kernel is
    typed for it at once (a typing error is raised here, as numba.cuda does, in our
    words: VulkanUnsupportedError); launches still compile for their own argument types.
    ``link`` is CUDA-only and refused with a clear error when it asks for something;
    ``lineinfo``, ``max_registers``, ``launch_bounds``, ``opt`` and ``forceinline`` are
    hints without effect here; ``cache`` is passed on. ``debug=True`` means
    ``error_model="python"`` and launches that wait and raise a kernel's exception.
    """
    for name in ("link", "extensions"):
        if options.get(name):
            raise VulkanUnsupportedError(f"cuda.jit({name}=...): linking CUDA code "
                                         "(PTX, CUDA C) is not possible on Vulkan")
    options.pop("link", None)
    options.pop("extensions", None)
    for name in ("lineinfo", "max_registers", "opt", "forceinline", "launch_bounds"):
        options.pop(name, None)  # hints only: no effect on what a kernel computes
    if "inline" in options and options["inline"] not in ("never", "always"):
        # numba.cuda's inline=True/False or a cost-model function: a hint (our device
        # functions are inlined into kernels whatever it says)
        options["inline"] = "always" if options["inline"] is True else "never"
    debug = options.pop("debug", False)
    if debug:
        # numba.cuda's debug=True compiles with error_model="python" (integer division by
        # zero raises ZeroDivisionError) and makes each launch wait and raise a kernel's
        # exception at once; the debug information it adds SPIR-V kernels do not carry here
        options.setdefault("error_model", "python")
    if callable(func_or_sig) and not isinstance(func_or_sig, (str, list, tuple)):
        return _debug_launches(_dispatcher.jit(func_or_sig, device=device, **options), debug)
    if func_or_sig is None or device or isinstance(func_or_sig, list):
        return _debug_launches(_dispatcher.jit(device=device, **options), debug)
    signature = func_or_sig
    return lambda func: _signatures.typed_kernel(
        _debug_launches(_dispatcher.jit(func, device=device, **options), debug), signature)


def _debug_launches(made, debug):
    """A kernel (or the decorator making one) whose launches wait, for debug=True."""
    if not debug:
        return made
    if isinstance(made, _dispatcher.Dispatcher):
        made.sync_launches = True
        return made
    return lambda func: _debug_launches(made(func), debug)


class CUSource:
    """numba.cuda.CUSource: CUDA C++ source meant for ``cuda.jit(link=[...])``. It can be
    made and kept (programs build them at import); linking it is what Vulkan cannot do,
    and ``link=`` refuses it by name."""

    kind = "cu"

    def __init__(self, data, name=None):
        self.data = data
        self.name = name or "<cuda source>"


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


# numba-cuda's flag saying Numba itself is installed (its tests import it); it always is.
HAS_NUMBA = True


def to_device(obj, stream=0, copy=True, to=None):
    """numba.cuda.to_device: a copy of `obj` on the device (on `stream` if one is given;
    ``to``, an existing device array, is filled instead)."""
    stream = None if stream == 0 else stream
    if to is not None:
        to.copy_to_device(obj, stream=stream)
        return to
    return _rt.to_device(_np.asarray(obj), stream=stream)


def device_array(shape, dtype=_np.float64, strides=None, order="C", stream=0):
    """numba.cuda.device_array: an uninitialised device array, in C or F order (`strides`,
    if given, must be those of one of them)."""
    return _rt.device_array(shape, dtype, order=_order("device_array", shape, dtype, strides,
                                                       order))


def device_array_like(ary, stream=0):
    """numba.cuda.device_array_like: F order where `ary` is F-contiguous (not C-contiguous),
    else C order (a strided view's like is C-contiguous here, where numba.cuda permutes
    its strides)."""
    return _rt.device_array_like(ary)


def _order(name, shape, dtype, strides, order):
    """'C' or 'F', the order of a new array of numba.cuda's arguments; VulkanUnsupportedError
    for strides of neither."""
    if order not in ("C", "F"):
        raise ValueError(f"cuda.{name}: order must be 'C' or 'F', not {order!r}")
    if strides is None:
        return order
    shape = (shape,) if isinstance(shape, (int, _np.integer)) else tuple(shape)
    strides = (strides,) if isinstance(strides, (int, _np.integer)) else tuple(strides)
    from ..runtime.array import _c_strides, _f_strides

    itemsize = _np.dtype(dtype).itemsize
    for candidate, contiguous in (("C", _c_strides), ("F", _f_strides)):
        expected = contiguous(shape, itemsize)
        if len(strides) == len(shape) and all(
                n <= 1 or s == e for n, s, e in zip(shape, strides, expected)):
            return candidate
    raise VulkanUnsupportedError(f"cuda.{name} with strides {strides}: only C- and "
                                 "F-contiguous device arrays can be created")


def pinned_array(shape, dtype=_np.float64, strides=None, order="C"):
    """numba.cuda.pinned_array: a host array in pinned memory (runtime/pinned.py), in C or
    F order."""
    return _pinned("pinned_array", shape, dtype, strides, order)


def _pinned(name, shape, dtype, strides, order):
    """A pinned host array in C or F order (an F array is the transpose of a pinned C one)."""
    if _order(name, shape, dtype, strides, order) == "C":
        return _rt.pinned_array(shape, dtype)
    shape = (shape,) if isinstance(shape, (int, _np.integer)) else tuple(shape)
    return _rt.pinned_array(shape[::-1], dtype).T


def _order_like(ary):
    from ..runtime.creation import order_like

    return order_like(ary)


def pinned_array_like(ary):
    """A pinned host array with the shape and dtype of `ary`, in its order (C or F)."""
    return _pinned("pinned_array_like", ary.shape, ary.dtype, None, _order_like(ary))


def mapped_array(shape, dtype=_np.float64, strides=None, order="C", stream=0,
                 portable=False, wg=False):
    """A host array kernels can be given directly: a pinned array here (C or F order).

    Passed to a kernel it is copied in before the launch and back when the launch
    finishes (not read in place over the bus as CUDA's mapped memory is), so what the
    host sees after ``cuda.synchronize()`` is the same.
    """
    return _pinned("mapped_array", shape, dtype, strides, order)


def mapped_array_like(ary, stream=0, portable=False, wg=False):
    return _pinned("mapped_array_like", ary.shape, ary.dtype, None, _order_like(ary))


def managed_array(shape, dtype=_np.float64, strides=None, order="C", stream=0,
                  attach_global=True):
    """numba.cuda's managed (unified) memory, emulated as a mapped array: a host array
    that kernels take directly, copied in before each launch and back when it finishes
    (Vulkan has no memory both sides address at once). What the host reads after
    ``cuda.synchronize()`` is what it would read with CUDA's managed memory; reading it
    while a kernel runs is not (copy-back happens at the launch's end)."""
    return _pinned("managed_array", shape, dtype, strides, order)


# ---------------------------------------------------------------- devices, streams, events

stream = _rt.stream
event = _rt.event
synchronize = _rt.synchronize
event_elapsed_time = _rt.event_elapsed_time
from .graphs import GraphBuilder, begin_capture, create_graph_builder, end_capture  # noqa: E402,F401


def default_stream():
    """numba.cuda's default stream: a stream on the selected device."""
    return _rt.stream()


def legacy_default_stream():
    """numba.cuda's legacy default stream: a stream on the selected device, as
    ``default_stream()`` (Vulkan has no implicit stream that synchronises with others)."""
    return _rt.stream()


def per_thread_default_stream():
    """numba.cuda's per-thread default stream: a stream on the selected device, as
    ``default_stream()``."""
    return _rt.stream()


class Device:
    """A Vulkan device as numba.cuda's Device objects present it: ``id``, ``name``,
    ``compute_capability`` and numba_vulkan's own attributes (``info`` ...) through to
    the runtime's device.

    ``compute_capability`` is (0, 0): Vulkan devices have none, and programs compare it
    against CUDA generations (``cc >= (6, 0)``) to choose a feature; (0, 0) makes them
    assume none, taking their portable path."""

    compute_capability = (0, 0)

    def __init__(self, device, index):
        self._device = device
        self.id = index

    @property
    def name(self):
        return self._device.info.name

    def __getattr__(self, attr):
        return getattr(self._device, attr)

    def __eq__(self, other):
        return isinstance(other, Device) and other._device is self._device

    def __hash__(self):
        return hash(id(self._device))

    def __repr__(self):
        return f"<numba_vulkan.cuda.Device {self.id}: {self.name}>"

    def reset(self):
        """numba.cuda's Device.reset: nothing is released early here."""

    def __enter__(self):
        """``with cuda.gpus[i]:`` makes device i the thread's current one inside the block."""
        self._device.__enter__()
        return self

    def __exit__(self, *exc):
        self._device.__exit__(*exc)


def _cuda_device(index=None):
    device = _rt.get_device() if index is None else _rt.get_device(index)
    if index is None:
        index = getattr(device.info, "index", 0)
    return Device(device, index)


def select_device(device_id):
    """Make device `device_id` (an index into ``cuda.gpus``) the calling thread's current one."""
    _rt.select_device(device_id)
    return _cuda_device(device_id)


def get_current_device():
    return _cuda_device()


def close():
    """numba.cuda.close: nothing to release early here (devices close at exit)."""


class _GPUList:
    """``cuda.gpus``: the Vulkan devices, indexable, with ``.current``."""

    def __len__(self):
        return len(_rt.list_devices())

    def __getitem__(self, i):
        return _cuda_device(i)

    def __iter__(self):
        return (_cuda_device(i) for i in range(len(self)))

    @property
    def current(self):
        return _cuda_device()

    def __repr__(self):
        return f"<numba_vulkan.cuda.gpus: {len(self)} Vulkan device(s)>"


gpus = _GPUList()


def is_bfloat16_supported():
    """Whether the current device takes bfloat16 arrays (numba.cuda: compute capability 8.0).

    numba_vulkan computes bfloat16 in float32 on every device; its arrays need 16-bit
    storage (``DeviceInfo.storage16``)."""
    return bool(_rt.get_device().info.storage16)


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
    "nanosleep": "not available in Vulkan kernels",
    "cooperative_groups": _NO_GRID_SYNC,
}

for _name, _why in _REFUSED.items():
    globals()[_name] = refused(_name, _why)

_NOT_MAPPED = {
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
    if name in ("random", "libdevice", "fp16", "bf16", "types"):  # without an import, as numba.cuda
        import importlib

        return importlib.import_module(f"{__name__}.{name}")
    why = _NOT_MAPPED.get(name, "this numba.cuda name is not mapped to Vulkan yet")
    raise UnmappedNameError(f"numba_vulkan.cuda.{name}: {why}")


def _no_cuda_array_interface(self):
    raise UnmappedNameError(
        "DeviceArray.__cuda_array_interface__: Vulkan memory has no CUDA device pointer "
        "to export (exchange arrays with __dlpack__ / nv.from_dlpack instead)")


# numba.cuda programs read `d.__cuda_array_interface__["data"][0]` for a raw pointer: say
# why there is none. An AttributeError too, so that probes (hasattr, CuPy's and
# PyTorch's checks for CUDA arrays) still answer False.
_rt.DeviceArray.__cuda_array_interface__ = property(_no_cuda_array_interface)
