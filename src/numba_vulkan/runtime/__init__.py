"""Minimal Vulkan compute runtime: devices, device arrays and kernel launch.

This is the Python face of the C++ runtime in ``src/core/vk`` (reached through
``numba_vulkan._core``). Importing it needs no Vulkan loader: the loader is
opened by the first call that needs a device, which raises
:class:`numba_vulkan.errors.VulkanLoaderError` (its message contains
:data:`hint`) when there is none.
"""

from .array import DeviceArray
from .creation import device_array, device_array_like, from_dlpack, to_device
from .cuda_interop import from_cuda, to_cupy, to_torch
from .debug import DEBUG_ENV_VAR, debug_enabled, debug_level, validation_messages
from .device_info import DeviceInfo
from .device_list import get_device, gpus, hint, list_devices, select_device
from .devices import Device, synchronize
from .extras import PRINT_BUFFER_WORDS, mapped_array, pinned_array
from .reports import print_records
from .streams import Event, Stream, event, event_elapsed_time, stream

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
    "gpus",
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
