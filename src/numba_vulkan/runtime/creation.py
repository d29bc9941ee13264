"""Making device arrays: from host data (to_device; _upload, the launch path's shortcut),
uninitialised (device_array, device_array_like), from other libraries' memory
(from_dlpack; from_cuda is runtime/cuda_interop.py), and the 0-d status array kernels
report through (status_array, runtime/reports.py)."""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike, DTypeLike, NDArray

from .. import checks
from . import cuda_interop, device_list, dlpack, pinned, reports
from .array import DeviceArray, _check_stream, _raw, host_order, storage_dtype
from .device_info import DeviceSpec, ShapeLike
from .streams import Stream


def to_device(array: ArrayLike, device: DeviceSpec = None,
              stream: Stream | None = None) -> DeviceArray:
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
        In F order where `array` is F-contiguous (not C-contiguous), else in C order.
    """
    _check_stream(stream)
    if device is None and stream is not None:
        device = stream.device
    host = checks.host_array(array, "array")
    out = DeviceArray(device, host.shape, host.dtype, order=host_order(host))
    return out.copy_to_device(host, stream=stream)


def _upload(host, device):
    """to_device for the launch path: `host` is a NumPy array whose dtype a kernel
    takes (the dispatcher typed it). Skips to_device's checks and conversions
    where nothing needs converting (a launch with NumPy arguments makes one per
    array, every launch). An F-contiguous array stays in F order (typed so:
    arguments.typeof_argument)."""
    order = host_order(host)
    out = DeviceArray(device, host.shape, host.dtype, order=order)
    if out.size:
        stored = out._stored_dtype
        flat = host if order == "C" else host.T  # the bytes of both in C order
        if flat.dtype != stored or not flat.flags.c_contiguous:
            flat = np.ascontiguousarray(flat, dtype=stored)  # bool, byte order, layout
        out._buffer.write(0, _raw(flat))
    return out


def device_array(shape: ShapeLike, dtype: DTypeLike = np.float64, device: DeviceSpec = None,
                 exportable: bool = False, order: str = "C") -> DeviceArray:
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
    order : {'C', 'F'}
        Row-major (C, the default) or column-major (Fortran) elements; kernels type
        an F-contiguous array with layout 'F' (not with exportable=True).

    Returns
    -------
    DeviceArray
    """
    if exportable:
        if order != "C":
            raise ValueError("exportable arrays are C-contiguous (order='C')")
        return cuda_interop.exportable_array(shape, dtype, device)
    return DeviceArray(device, shape, dtype, order=order)


def device_array_like(array: NDArray[Any] | DeviceArray,
                      device: DeviceSpec = None) -> DeviceArray:
    """Create an uninitialised device array with the shape and dtype of another: in F
    order where `array` is F-contiguous (not C-contiguous), else in C order.

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
    return DeviceArray(device, array.shape, array.dtype, order=order_like(array))


def order_like(array):
    """'F' for an F-contiguous (not C-contiguous) NumPy or device array, else 'C'."""
    if isinstance(array, DeviceArray):
        return "F" if array._f_only() else "C"
    return host_order(array)


def from_dlpack(x: object, device: DeviceSpec = None, copy: bool | None = None) -> DeviceArray:
    """A DeviceArray from any object that speaks DLPack (or a NumPy array).

    Parameters
    ----------
    x : object with ``__dlpack__`` and ``__dlpack_device__``, or a DeviceArray
    device : int, str, Device, optional
        The device for host data; the selected one by default.
    copy : bool, optional
        True: always copy. False: never copy (BufferError where sharing is not
        possible). None: share where possible, else copy.

    Returns
    -------
    DeviceArray

    Notes
    -----
    Zero-copy imports: numba_vulkan's own Vulkan exports, and host memory that
    lies in a Vulkan buffer of the device (``nv.pinned_array`` memory, device
    memory exported to NumPy). See the module docs for the rest.
    """
    if isinstance(x, DeviceArray):
        if device is not None and device_list.get_device(device) is not x.device:
            raise BufferError("from_dlpack cannot move a device array to another device")
        return x.copy() if copy else x
    if not hasattr(x, "__dlpack_device__"):
        raise TypeError(f"{type(x).__name__} does not support DLPack (no __dlpack_device__)")
    dev_type, dev_id = x.__dlpack_device__()
    if dev_type == dlpack.kDLVulkan:
        array = dlpack.import_vulkan(x)
        return array.copy() if copy else array
    if dev_type == dlpack.kDLCUDA and hasattr(x, "__cuda_array_interface__"):
        return cuda_interop.from_cuda(x, device, copy)
    if dev_type not in (dlpack.kDLCPU, dlpack.kDLCUDAHost):
        raise BufferError(
            f"DLPack device type {dev_type} cannot be imported: only CPU memory, Vulkan "
            "memory of numba_vulkan, and CUDA arrays with __cuda_array_interface__ "
            "(nv.from_cuda) can"
        )
    host = x if isinstance(x, np.ndarray) else np.from_dlpack(x)
    dev = device_list.get_device(device)
    if not copy:
        shared = _alias_pinned(host, dev)
        if shared is not None:
            return shared
        if copy is False:
            raise BufferError("this host memory is not in a Vulkan buffer of the device, so it "
                              "cannot be shared without a copy (allocate it with "
                              "nv.pinned_array to share it)")  # fmt: skip
    return to_device(host, dev)


def _alias_pinned(host, device):
    """A DeviceArray over the Vulkan buffer `host`'s memory lies in, or None."""
    if host.size == 0 or host.dtype.kind not in "iufc" or not host.dtype.isnative:
        return None
    if storage_dtype(host.dtype, device.info) != host.dtype:
        return None
    itemsize = host.dtype.itemsize
    if any(s % itemsize for s in host.strides):
        return None
    lo = hi = host.ctypes.data
    for n, s in zip(host.shape, host.strides):
        if s < 0:
            lo += (n - 1) * s
        else:
            hi += (n - 1) * s
    span = np.asarray(_Address(lo, hi + itemsize - lo))
    found = pinned.lookup(span, device)
    if found is None:
        return None
    buffer, offset = found
    first = offset + (host.ctypes.data - lo)
    stored = (buffer, first, tuple(host.strides))
    return DeviceArray(device, host.shape, host.dtype, _stored=stored)


class _Address:
    """An address range as NumPy sees memory (``__array_interface__``): a uint8 array over it
    is made only to look the range up in the pinned registry, never read."""

    def __init__(self, address, nbytes):
        self.__array_interface__ = {
            "data": (address, True), "shape": (nbytes,), "typestr": "|u1", "version": 3,
        }


def status_array(device):
    """The calling thread's status buffer on `device` (runtime/reports.py) as the 0-d uint32
    DeviceArray kernels take, made once."""
    status = reports.status(device)
    if status.array is None:
        status.array = DeviceArray(device, (), np.uint32, _stored=(status.buffer, 0, ()))
    return status.array
