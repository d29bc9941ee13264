"""numba_vulkan: Numba kernels compiled to SPIR-V, run on any Vulkan device.

>>> import numba_vulkan as nv
>>> @nv.jit
... def saxpy(a, x, y, out):
...     i = nv.global_id(0)
...     if i < out.size:
...         out[i] = a * x[i] + y[i]
>>> saxpy.forall(n)(2.0, x, y, out)
"""

__version__ = "0.1.0"

from . import errors, runtime  # noqa: E402  (runtime imports without a Vulkan loader)
from .dispatcher import jit  # noqa: E402
from .errors import (  # noqa: E402
    SpirvCodegenError,
    VulkanPerformanceWarning,
    VulkanPrecisionWarning,
    VulkanSupportError,
    VulkanUnsupportedError,
    VulkanValidationWarning,
)
from .stubs import global_id, group_id, local_id, local_size, num_groups  # noqa: E402

# The runtime's public names (numba_vulkan.runtime), re-exported as nv.*.
RUNTIME_NAMES = (
    "Device",
    "DeviceArray",
    "DeviceInfo",
    "Event",
    "Stream",
    "device_array",
    "device_array_like",
    "event",
    "event_elapsed_time",
    "get_device",
    "list_devices",
    "pinned_array",
    "select_device",
    "stream",
    "synchronize",
    "to_device",
)
for _name in RUNTIME_NAMES:
    if hasattr(runtime, _name):
        globals()[_name] = getattr(runtime, _name)
del _name

__all__ = [
    "__version__",
    "jit",
    "runtime",
    "errors",
    "global_id",
    "local_id",
    "group_id",
    "local_size",
    "num_groups",
    "SpirvCodegenError",
    "VulkanPerformanceWarning",
    "VulkanPrecisionWarning",
    "VulkanSupportError",
    "VulkanUnsupportedError",
    "VulkanValidationWarning",
    *RUNTIME_NAMES,
]
