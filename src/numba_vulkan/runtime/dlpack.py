"""DLPack: ``DeviceArray.__dlpack__``/``__dlpack_device__``, and what ``nv.from_dlpack``
(runtime/creation.py) needs to take our own exports back.

What can be exchanged without a copy, and how:

- **Vulkan device memory** is exported as device type ``kDLVulkan`` (7) with
  ``data`` = the buffer's device address (``VkDeviceAddress``, what our
  kernels dereference) and ``byte_offset`` = the array's offset in it. Only a
  consumer on the same ``VkDevice`` could use that address; in practice that
  is numba_vulkan itself (``nv.from_dlpack`` of such a capsule returns the
  exporter's array, zero copy). Other Vulkan producers' capsules are refused.
- **Host-visible device memory** (lavapipe and integrated GPUs, where arrays
  are mapped into the process): ``np.from_dlpack(d)`` asks for the CPU
  (``dl_device=(kDLCPU, 0)`` or no device) and gets the mapped memory itself,
  after the launches using the buffer have finished. The NumPy array and the
  device array then share memory: launches issued later are not waited for.
  Where arrays are not mapped (discrete GPUs, ``NVK_VULKAN_STAGING=1``) a CPU
  export is a copy (refused with ``copy=False``).
- **NumPy arrays in pinned memory** (``nv.pinned_array``, or memory exported
  as above): ``nv.from_dlpack`` wraps the Vulkan buffer they live in as a
  DeviceArray without copying; kernels read and write the host's memory.
  Other host memory is copied to the device (refused with ``copy=False``):
  importing arbitrary host memory needs ``VK_EXT_external_memory_host``,
  which the runtime does not use yet.
- **CUDA memory** (CuPy arrays, PyTorch CUDA tensors) that also has
  ``__cuda_array_interface__`` goes to ``nv.from_cuda`` (runtime/cuda_interop.py:
  shared where it came from numba_vulkan, else copied on the GPU); the other
  way is ``nv.to_cupy``/``nv.to_torch``, not DLPack (a kDLCUDA capsule would
  need the CUDA import made first). ROCm memory and CUDA capsules without that
  interface are refused with BufferError.

Booleans (stored as int32 on the device) and 64-bit types stored narrowed on
devices without them cannot be shared as they are; their exports are copies.
"""

from __future__ import annotations

import ctypes
import weakref
from typing import Any

import numpy as np
from numpy.lib.stride_tricks import as_strided

from .. import bfloat16_host
from . import pinned

kDLCPU = 1
kDLCUDA = 2
kDLCUDAHost = 3
kDLVulkan = 7
_READ_ONLY = 1
_IS_COPIED = 2

_DTYPE_CODES = {"i": 0, "u": 1, "f": 2, "c": 5, "b": 6}
kDLBfloat = 4  # ml_dtypes.bfloat16


class _Device(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _Tensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("device", _Device),
        ("ndim", ctypes.c_int32),
        ("dtype", _DataType),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),
        ("byte_offset", ctypes.c_uint64),
    ]


_Deleter = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


class _Managed(ctypes.Structure):
    _fields_ = [("dl_tensor", _Tensor), ("manager_ctx", ctypes.c_void_p), ("deleter", _Deleter)]


class _Version(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32)]


class _ManagedVersioned(ctypes.Structure):
    _fields_ = [
        ("version", _Version),
        ("manager_ctx", ctypes.c_void_p),
        ("deleter", _Deleter),
        ("flags", ctypes.c_uint64),
        ("dl_tensor", _Tensor),
    ]


_NAMES = {False: b"dltensor", True: b"dltensor_versioned"}
_USED = {False: b"used_dltensor", True: b"used_dltensor_versioned"}

_api = ctypes.pythonapi
_api.PyCapsule_New.restype = ctypes.py_object
_api.PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
_api.PyCapsule_GetPointer.restype = ctypes.c_void_p
_api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_api.PyCapsule_IsValid.restype = ctypes.c_int
_api.PyCapsule_IsValid.argtypes = [ctypes.py_object, ctypes.c_char_p]
_api.PyCapsule_SetName.restype = ctypes.c_int
_api.PyCapsule_SetName.argtypes = [ctypes.py_object, ctypes.c_char_p]

# Exported tensors still owned by a capsule or a consumer: manager_ctx -> (array, structs).
_exported = {}
_next_ctx = [1]


@_Deleter
def _delete(managed_ptr):
    """The DLPack deleter: the consumer (or an unused capsule) lets go of the array. The
    export is found by the address of its managed tensor (the two layouts keep
    manager_ctx at different places)."""
    for ctx, (_, managed, _) in list(_exported.items()):
        if ctypes.addressof(managed) == managed_ptr:
            del _exported[ctx]
            return


class DLPackExport:
    """The DLPack methods of DeviceArray."""

    __slots__ = ()

    def __dlpack__(self, *, stream: int | None = None, max_version: tuple[int, int] | None = None,
                   dl_device: tuple[int, int] | None = None, copy: bool | None = None) -> Any:
        """DLPack export: Vulkan memory as kDLVulkan (device addresses), or the host's view
        of mapped memory when the consumer asks for the CPU (``np.from_dlpack(d)``)."""
        return export(self, stream, max_version, dl_device, copy)

    def __dlpack_device__(self) -> tuple[int, int]:
        """(kDLVulkan = 7, device index)."""
        return device_of(self)


def device_of(array):
    """``__dlpack_device__``: (kDLVulkan, device index)."""
    return kDLVulkan, int(array.device.info.index)


def export(array, stream=None, max_version=None, dl_device=None, copy=None):
    """``DeviceArray.__dlpack__`` (the Python array API's signature; see the module docs)."""
    if stream is not None and not isinstance(stream, int):
        raise TypeError(f"stream must be None or an int for Vulkan arrays, not {stream!r}")
    versioned = max_version is not None and tuple(max_version)[0] >= 1
    if dl_device is not None:
        dl_device = tuple(dl_device)
    if dl_device is None or dl_device == device_of(array):
        if copy:
            array = array.copy()
        return _vulkan_capsule(array, versioned, copied=bool(copy))
    if dl_device[0] != kDLCPU:
        raise BufferError(f"a Vulkan device array cannot be exported to DLPack device {dl_device}")
    return host_view(array, copy).__dlpack__(max_version=max_version, copy=False)


def host_view(array, copy=None):
    """The array as a NumPy array: the mapped device memory itself where it can be (after
    waiting for the launches using it), else a copy (BufferError with ``copy=False``)."""
    shareable = (array._buffer.pinned and array.dtype == array._stored_dtype
                 and array.dtype.fields is None and array.size > 0)  # fmt: skip
    if copy or not shareable:
        if copy is False:
            raise BufferError("this device array cannot be shared with the host without a copy "
                              "(its memory is not mapped, or its elements are stored in "
                              "another type on the device)")  # fmt: skip
        return array.copy_to_host()
    buffer = array._buffer
    buffer.wait()  # the launches writing it have finished before the host reads
    raw = buffer.host_view()  # keeps the buffer (and so the memory) alive
    start = raw.ctypes.data
    pinned._register(start, start + raw.size, raw, buffer, array.device)
    first = raw[array._offset :].view(np.uint8)
    # Element strides may be negative: address from the first element, as the view does.
    base = first[: array._itemsize].view(array._stored_dtype)
    return as_strided(base, array.shape, array._dev_strides)


def _vulkan_capsule(array, versioned, copied):
    if array.dtype != array._stored_dtype or array.dtype.fields is not None:
        raise BufferError(f"{array.dtype} device arrays are stored as {array._stored_dtype} on "
                          "this device and cannot be exported as they are")  # fmt: skip
    dtype = array.dtype
    ndim = array.ndim
    shape = (ctypes.c_int64 * max(ndim, 1))(*array.shape)
    strides = (ctypes.c_int64 * max(ndim, 1))(*(s // array._itemsize for s in array._dev_strides))
    managed = _ManagedVersioned() if versioned else _Managed()
    t = managed.dl_tensor
    t.data = array._buffer.address
    t.device = _Device(*device_of(array))
    t.ndim = ndim
    lanes_bits = dtype.itemsize * 8 if dtype.kind != "b" else 8
    code = kDLBfloat if bfloat16_host.is_dtype(dtype) else _DTYPE_CODES[dtype.kind]
    t.dtype = _DataType(code, lanes_bits, 1)
    t.shape = ctypes.cast(shape, ctypes.POINTER(ctypes.c_int64))
    t.strides = ctypes.cast(strides, ctypes.POINTER(ctypes.c_int64))
    t.byte_offset = array._offset
    for old in [k for k, entry in _exported.items() if entry[0]() is None]:
        del _exported[old]  # unconsumed exports of arrays that are gone
    ctx = _next_ctx[0]
    _next_ctx[0] += 1
    managed.manager_ctx = ctx
    managed.deleter = _delete
    if versioned:
        managed.version = _Version(1, 0)
        managed.flags = _IS_COPIED if copied else 0
    # The table holds the array weakly: a capsule nobody consumes must not keep it alive.
    # Without a C-level capsule destructor (a ctypes one would run with the consumer's
    # pending exception set), an unconsumed capsule's entry (its small structs) stays in
    # the table; consuming it (our from_dlpack, or any consumer calling the deleter)
    # removes it.
    _exported[ctx] = (weakref.ref(array), managed, (shape, strides))
    return _api.PyCapsule_New(ctypes.addressof(managed), _NAMES[versioned], None)


def import_vulkan(x):
    try:
        capsule = x.__dlpack__(max_version=(1, 0))
    except TypeError:
        capsule = x.__dlpack__()
    versioned = bool(_api.PyCapsule_IsValid(capsule, _NAMES[True]))
    if not versioned and not _api.PyCapsule_IsValid(capsule, _NAMES[False]):
        raise BufferError("not a DLPack capsule")
    ptr = _api.PyCapsule_GetPointer(capsule, _NAMES[versioned])
    layout = _ManagedVersioned if versioned else _Managed
    managed = layout.from_address(ptr)
    entry = _exported.get(managed.manager_ctx)
    if entry is None or ctypes.addressof(entry[1]) != ptr:
        raise BufferError("Vulkan memory exported by another library cannot be imported: a "
                          "device address is only valid on the VkDevice that made it")  # fmt: skip
    array = entry[0]()
    if array is None:
        raise BufferError("the exported device array no longer exists")
    _api.PyCapsule_SetName(capsule, _USED[versioned])  # consumed: we own it now
    _delete(ptr)  # our DeviceArray keeps the buffer alive by itself
    return array
