"""Making device arrays: from host data (to_device; _upload, the launch path's shortcut) and
uninitialised (device_array, device_array_like)."""

import numpy as np

from .array import DeviceArray, _check_stream, _host_array, _raw


def to_device(array, device=None, stream=None):
    """Copy a NumPy array to a device.

    Parameters
    ----------
    array : array_like
        The values.
    device : int, str, DeviceInfo, Device or None
        The device (see :func:`get_device`); the selected one by default, or
        that of `stream`.
    stream : Stream, optional
        Enqueue the copy on a stream and return at once; see Stream.

    Returns
    -------
    DeviceArray
    """
    _check_stream(stream)
    if device is None and stream is not None:
        device = stream.device
    host = _host_array(array, "array")
    out = DeviceArray(device, host.shape, host.dtype)
    return out.copy_to_device(host, stream=stream)


def _upload(host, device):
    """to_device for the launch path: `host` is a NumPy array whose dtype a kernel
    takes (the dispatcher typed it). Skips to_device's checks and conversions
    where nothing needs converting (a launch with NumPy arguments makes one per
    array, every launch)."""
    out = DeviceArray(device, host.shape, host.dtype)
    if out.size:
        stored = out._stored_dtype
        if host.dtype != stored or not host.flags.c_contiguous:
            host = np.ascontiguousarray(host, dtype=stored)  # bool, byte order, layout
        out._buffer.write(0, _raw(host))
    return out


def device_array(shape, dtype=np.float64, device=None, exportable=False):
    """Create an array on a device without initialising it.

    Parameters
    ----------
    shape : int or tuple of int
    dtype : numpy.dtype
    device : int, str, DeviceInfo, Device or None
    exportable : bool
        Allocate memory that CUDA can share (``nv.to_cupy``, ``nv.to_torch``;
        runtime/cuda_interop.py): a dedicated allocation, never pooled.
        VulkanSupportError where the driver cannot export memory.

    Returns
    -------
    DeviceArray
    """
    if exportable:
        from .cuda_interop import exportable_array

        return exportable_array(shape, dtype, device)
    return DeviceArray(device, shape, dtype)


def device_array_like(array, device=None):
    """Create an uninitialised device array with the shape and dtype of another.

    Parameters
    ----------
    array : numpy.ndarray or DeviceArray
    device : int, str, DeviceInfo, Device or None
        Defaults to the device of `array` if it is a device array, else the
        selected device.

    Returns
    -------
    DeviceArray
    """
    if device is None and isinstance(array, DeviceArray):
        device = array.device
    if not isinstance(array, (DeviceArray, np.ndarray)):
        raise TypeError(
            f"array must be a NumPy array or a DeviceArray, not {type(array).__name__}"
        )
    return DeviceArray(device, array.shape, array.dtype)
