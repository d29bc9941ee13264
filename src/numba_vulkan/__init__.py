"""numba_vulkan: Numba kernels compiled to SPIR-V, run on any Vulkan device.

>>> import numba_vulkan as nv
>>> @nv.jit
... def saxpy(a, x, y, out):
...     i = nv.global_id(0)
...     if i < out.size:
...         out[i] = a * x[i] + y[i]
>>> saxpy.forall(n)(2.0, x, y, out)
"""

from ._version import __version__

from . import errors, runtime
from .dispatcher import jit
from .errors import (
    SpirvCodegenError,
    VulkanDriverFaultWarning,
    VulkanLoopLimitError,
    VulkanPerformanceWarning,
    VulkanPrecisionWarning,
    VulkanSupportError,
    VulkanTypingError,
    VulkanUnsupportedError,
    VulkanValidationWarning,
)

# The runtime's public names (numba_vulkan.runtime), re-exported as nv.*.
from .runtime import (
    Device,
    DeviceArray,
    DeviceInfo,
    Event,
    Stream,
    device_array,
    device_array_like,
    event,
    event_elapsed_time,
    from_cuda,
    from_dlpack,
    get_device,
    gpus,
    list_devices,
    pinned_array,
    select_device,
    stream,
    synchronize,
    to_cupy,
    to_device,
    to_torch,
)
from .ufunc import guvectorize, vectorize
from .ufunc import register as _register_vectorize_target

_register_vectorize_target()  # numba.vectorize(..., target="vulkan") from now on

from . import linalg  # noqa: E402  (np.matmul and @ on device arrays)
from .graphs import Graph, GraphExec, capture, graph  # noqa: E402

from .stubs import (  # noqa: E402
    atomic,
    barrier,
    cg,
    global_id,
    group_id,
    local,
    local_id,
    local_size,
    matrix,
    num_groups,
    shared,
    subgroup,
    syncthreads,
    syncthreads_and,
    syncthreads_count,
    syncthreads_or,
    threadfence,
    threadfence_block,
)

__all__ = [
    "Device",
    "DeviceArray",
    "DeviceInfo",
    "Event",
    "Graph",
    "GraphExec",
    "SpirvCodegenError",
    "Stream",
    "VulkanDriverFaultWarning",
    "VulkanLoopLimitError",
    "VulkanPerformanceWarning",
    "VulkanPrecisionWarning",
    "VulkanSupportError",
    "VulkanTypingError",
    "VulkanUnsupportedError",
    "VulkanValidationWarning",
    "__version__",
    "atomic",
    "barrier",
    "capture",
    "cg",
    "device_array",
    "device_array_like",
    "errors",
    "event",
    "event_elapsed_time",
    "from_cuda",
    "from_dlpack",
    "get_device",
    "global_id",
    "gpus",
    "graph",
    "group_id",
    "guvectorize",
    "jit",
    "linalg",
    "list_devices",
    "local",
    "local_id",
    "local_size",
    "matrix",
    "num_groups",
    "pinned_array",
    "runtime",
    "select_device",
    "shared",
    "stream",
    "subgroup",
    "synchronize",
    "syncthreads",
    "syncthreads_and",
    "syncthreads_count",
    "syncthreads_or",
    "threadfence",
    "threadfence_block",
    "to_cupy",
    "to_device",
    "to_torch",
    "vectorize",
]


def _matrix_shapes(device=None):
    """The cooperative-matrix configurations kernels may multiply on `device` (default: the
    current device): the device's own list (VK_KHR_cooperative_matrix), or where it has
    none the configurations the emulation accepts (``MatrixShape.emulated``).

    Returns
    -------
    tuple of numba_vulkan.matrix_shapes.MatrixShape
        (m, n, k, a, b, c, result, emulated): ``m x k`` times ``k x n`` plus ``m x n``.
    """
    from .matrix_shapes import EMULATED

    info = (device if device is not None else get_device()).info
    return info.matrix_shapes or EMULATED


matrix.shapes = _matrix_shapes


#: numba.cuda's names a newcomer reaches for, and what to use here instead.
_CUDA_SPELLINGS = {
    "threadIdx": "nv.local_id(axis)", "blockIdx": "nv.group_id(axis)",
    "blockDim": "nv.local_size(axis)", "gridDim": "nv.num_groups(axis)",
    "grid": "nv.global_id(axis)", "gridsize": "nv.num_groups(axis) * nv.local_size(axis)",
    "to_device_async": "nv.to_device(x, stream=s)",
}  # fmt: skip


def __getattr__(name):
    if name == "bfloat16":  # ml_dtypes.bfloat16, imported on first use (bfloat16_host.py)
        from . import bfloat16_host

        return bfloat16_host.scalar_type()
    hint = _CUDA_SPELLINGS.get(name)
    if hint is None:
        raise AttributeError(f"module 'numba_vulkan' has no attribute {name!r}")
    raise AttributeError(
        f"module 'numba_vulkan' has no attribute {name!r}: numba.cuda's {name} is {hint} "
        "here; or keep numba.cuda's spelling with `from numba_vulkan import cuda` "
        "(docs/porting.md)"
    )
