"""Pinned arrays, and the print buffer's size (streams and events: streams.py)."""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import DTypeLike, NDArray

from .. import config
from . import device_list, pinned
from .device_info import DeviceSpec, ShapeLike

#: Words of each device's print buffer (``NUMBA_VULKAN_PRINT_WORDS``).
PRINT_BUFFER_WORDS = config.PRINT_WORDS


def pinned_array(shape: ShapeLike, dtype: DTypeLike = np.float64,
                 device: DeviceSpec = None) -> NDArray[Any]:
    """Allocate a host array that a device can copy to and from directly.

    Like numba.cuda.pinned_array: the memory is a Vulkan buffer in host-visible,
    host-cached memory of the device, mapped into the process, so copies
    between it and device arrays are single buffer copies (DMA on a discrete
    GPU) with no staging buffer (runtime/pinned.py).

    Parameters
    ----------
    shape : int or tuple of int
    dtype : numpy.dtype
    device : int, str, Device or None
        The device; the selected one by default.

    Returns
    -------
    numpy.ndarray
        Uninitialised, C-contiguous.
    """
    return pinned.allocate(device_list.get_device(device), shape, dtype)


def mapped_array(shape: ShapeLike, dtype: DTypeLike = np.float64,
                 device: DeviceSpec = None) -> NDArray[Any]:
    """Same as :func:`pinned_array` (numba.cuda's name for host memory the device maps)."""
    return pinned_array(shape, dtype, device)

