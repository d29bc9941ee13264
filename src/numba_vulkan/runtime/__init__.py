"""Minimal Vulkan compute runtime: devices, device arrays and kernel launch.

This is the Python face of the C++ runtime in ``src/core/vk`` (reached through
``numba_vulkan._core``). Importing it needs no Vulkan loader: the loader is
opened by the first call that needs a device, which raises
:class:`numba_vulkan.errors.VulkanLoaderError` (its message contains
:data:`hint`) when there is none.
"""

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
from .array import DeviceArray, device_array, device_array_like, to_device
from .extras import (
    PRINT_BUFFER_WORDS,
    Event,
    Stream,
    event,
    event_elapsed_time,
    pinned_array,
    print_records,
    stream,
)

__all__ = [
    "hint",
    "DEBUG_ENV_VAR",
    "PRINT_BUFFER_WORDS",
    "DeviceInfo",
    "Device",
    "DeviceArray",
    "Stream",
    "Event",
    "debug_level",
    "debug_enabled",
    "validation_messages",
    "list_devices",
    "print_records",
    "to_device",
    "device_array",
    "device_array_like",
    "get_device",
    "stream",
    "pinned_array",
    "event",
    "event_elapsed_time",
    "synchronize",
    "select_device",
]
