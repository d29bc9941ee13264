"""Minimal Vulkan compute runtime: devices, device arrays and kernel launch.

This is the Python face of the C++ runtime in ``src/core/vk`` (reached through
``numba_vulkan._core``). Importing it needs no Vulkan loader: the loader is
opened by the first call that needs a device, which raises
:class:`numba_vulkan.errors.VulkanLoaderError` (its message contains
:data:`hint`) when there is none.
"""

from .array import DeviceArray
from .creation import device_array, device_array_like, to_device
from .cuda_interop import from_cuda, to_cupy, to_torch
from .dlpack import from_dlpack
from .debug import DEBUG_ENV_VAR, debug_enabled, debug_level, validation_messages
from .devices import (
    Device,
    DeviceInfo,
    get_device,
    hint,
    list_devices,
    select_device,
    synchronize,
)
from .extras import (
    PRINT_BUFFER_WORDS,
    Event,
    Stream,
    event,
    event_elapsed_time,
    mapped_array,
    pinned_array,
    stream,
)
from .reports import print_records

__all__ = [
    "DEBUG_ENV_VAR",
    "PRINT_BUFFER_WORDS",
    "Device",
    "DeviceArray",
    "DeviceInfo",
    "Event",
    "Stream",
    "debug_enabled",
    "debug_level",
    "device_array",
    "device_array_like",
    "event",
    "event_elapsed_time",
    "from_cuda",
    "from_dlpack",
    "get_device",
    "hint",
    "list_devices",
    "mapped_array",
    "pinned_array",
    "print_records",
    "select_device",
    "stream",
    "synchronize",
    "to_cupy",
    "to_device",
    "to_torch",
    "validation_messages",
]
