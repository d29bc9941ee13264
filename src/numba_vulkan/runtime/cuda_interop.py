"""Device arrays shared with CUDA (CuPy, PyTorch) without a trip through the host.

How (docs/interop.md):

- **Vulkan → CUDA** (``to_cupy``, ``to_torch``, ``cuda_view``). An array whose
  buffer is *exportable* (``device_array(..., exportable=True)``: a dedicated
  allocation made with ``VkExportMemoryAllocateInfo``, src/core/vk/external.cc)
  is exported as an OPAQUE_FD file descriptor (``vkGetMemoryFdKHR``), imported
  into CUDA with the driver API (``cuImportExternalMemory``,
  ``cuExternalMemoryGetMappedBuffer``; runtime/cuda_driver.py) and wrapped in an
  object with ``__cuda_array_interface__`` that CuPy and PyTorch take without a
  copy. Both sides then see the same memory. An ordinary array is first copied
  on the device into an exportable buffer (``copy=False`` refuses), so the result
  does not alias it.
- **CUDA → Vulkan** (``from_cuda``). Memory that came from us (a CuPy array or
  tensor made by ``to_cupy``/``to_torch``, or a view of one) becomes a DeviceArray
  over the same Vulkan buffer. Memory CUDA allocated itself (``cudaMalloc``, the
  CuPy and PyTorch pools) cannot be exported, so it is copied on the GPU
  (``cuMemcpyDtoD``) into a new exportable Vulkan buffer (``copy=False``
  refuses). To let CUDA write straight into Vulkan memory, allocate it on our
  side (``device_array(..., exportable=True)``) and hand CUDA the view.
- **Ordering.** Handing over waits: ``cuda_view``/``to_cupy``/``to_torch``
  wait for the Vulkan launches using the buffer, ``from_cuda`` for the CUDA
  stream named by the producer's ``__cuda_array_interface__`` (the whole
  device when it names none). Work issued after the hand-over is not ordered:
  ``nv.synchronize()`` before CUDA reads what a later launch wrote, and a CUDA
  synchronisation (or ``from_cuda`` again) before a launch reads what CUDA wrote.
- **Same GPU.** The CUDA device is the one whose UUID equals the Vulkan
  device's ``deviceUUID``; a Vulkan device without a CUDA twin, a driver that
  cannot export, or a machine without ``libcuda.so.1`` gets a
  :class:`~numba_vulkan.errors.VulkanSupportError` saying which.
"""

from __future__ import annotations

import os
import weakref
from typing import Any

import numpy as np

from .. import checks, forksafe
from ..errors import VulkanSupportError
from . import cuda_driver as driver
from . import device_list
from .array import DeviceArray, _c_strides, storage_dtype
from .device_info import DeviceSpec

_lock = forksafe.lock()
# Vulkan buffer address -> weakref to its live CudaMemory (one CUDA import per buffer).
_imports = {}


def _core():
    from .. import _core as core

    return core


def exports(device):
    """Whether `device` can share memory as file descriptors, and if not, why: (bool, str)."""
    info = _core().vk_external_info(device._core)
    return info["exports"], info["reason"]


def _require_exports(device):
    ok, why = exports(device)
    if not ok:
        raise VulkanSupportError(f"Vulkan device '{device.info.name}' cannot share memory with "
                                 f"CUDA: {why}")  # fmt: skip


def cuda_ordinal(device):
    """The CUDA ordinal of the GPU that is Vulkan device `device` (UUIDs compared)."""
    cached = getattr(device, "_cuda_ordinal", None)
    if cached is not None:
        return cached
    _require_exports(device)
    uuid = _core().vk_external_info(device._core)["uuid"]
    ordinal = driver.device_for_uuid(uuid)
    if ordinal is None:
        raise VulkanSupportError(f"no CUDA device has the UUID of Vulkan device "
                                 f"'{device.info.name}' ({uuid.hex()})")  # fmt: skip
    device._cuda_ordinal = ordinal
    return ordinal


def exportable_array(shape, dtype, device=None):
    """An uninitialised DeviceArray in exportable memory (``device_array(exportable=True)``)."""
    device = device_list.get_device(device)
    _require_exports(device)
    stored = storage_dtype(checks.as_dtype(dtype), device.info)
    shape = checks.as_shape(shape)
    nbytes = checks.nbytes_of(shape, stored.itemsize)
    buffer = _core().vk_allocate_exportable(device._core, nbytes)
    return DeviceArray(device, shape, dtype, _stored=(buffer, 0, _c_strides(shape, stored.itemsize)))


class CudaMemory:
    """One exportable Vulkan buffer imported into CUDA: ``ptr`` is its byte 0 there.

    Holds the Vulkan buffer, so the memory outlives every CUDA array made over it
    (they hold this object through their ``__cuda_array_interface__`` owner).
    Dropping it waits for the CUDA device and frees the import.
    """

    def __init__(self, device, buffer):
        core = _core()
        self.device = device
        self.buffer = buffer
        self.ordinal = cuda_ordinal(device)
        self.size = buffer.size
        fd = core.vk_export_fd(buffer)
        try:
            self._ext, self.ptr = driver.import_fd(self.ordinal, fd, core.vk_external_size(buffer),
                                                   self.size)  # fmt: skip
        except BaseException:
            os.close(fd)  # not taken over by CUDA
            raise

    def __del__(self):
        ext = getattr(self, "_ext", None)
        if ext is not None:
            try:
                driver.release(self.ordinal, ext, self.ptr)
            except Exception:  # interpreter shutdown: the driver may be gone already
                pass


def _memory_of(array):
    """The CudaMemory of `array`'s buffer (importing it the first time), or None when the
    buffer is not exportable."""
    buffer = array._buffer
    if _core().vk_external_size(buffer) == 0:
        return None
    with _lock:
        ref = _imports.get(buffer.address)
        memory = ref() if ref is not None else None
    if memory is None:
        memory = CudaMemory(array.device, buffer)
        array._cuda_memory = memory  # kept while the array lives: later hand-overs are cheap
        with _lock:
            for dead in [a for a, r in _imports.items() if r() is None]:
                del _imports[dead]
            _imports[buffer.address] = weakref.ref(memory)
    return memory


class CudaArrayView:
    """A device array's memory as CUDA sees it: ``__cuda_array_interface__`` (version 3)
    for CuPy, PyTorch, numba.cuda. Keeps the Vulkan memory alive."""

    def __init__(self, memory, offset, shape, strides, dtype):
        self.memory = memory
        self.ordinal = memory.ordinal
        contiguous = strides == _c_strides(shape, dtype.itemsize)
        self.__cuda_array_interface__ = {
            "shape": tuple(shape),
            "typestr": dtype.str,
            "data": (memory.ptr + offset, False),
            "strides": None if contiguous else tuple(strides),
            "version": 3,
        }


def cuda_view(array: DeviceArray, copy: bool | None = None) -> CudaArrayView:
    """A :class:`CudaArrayView` of a DeviceArray, after the Vulkan work using it.

    Parameters
    ----------
    array : DeviceArray
    copy : bool, optional
        None: share the memory where the array is exportable, else copy it (on the
        device) into exportable memory. True: always copy. False: never (BufferError
        where the array is not exportable).

    Returns
    -------
    CudaArrayView
        Holds the elements in their stored type (bool arrays: int32).
    """
    if not isinstance(array, DeviceArray):
        raise TypeError(f"expected a DeviceArray, not {type(array).__name__}")
    if array.dtype.fields is not None:
        raise BufferError("record arrays cannot be shared with CUDA")
    memory = None if copy else _memory_of(array)
    if memory is None:
        if copy is False:
            raise BufferError("this device array is not in exportable memory, so CUDA cannot "
                              "share it without a copy (allocate it with "
                              "nv.device_array(..., exportable=True))")  # fmt: skip
        cuda_ordinal(array.device)  # fail before copying where CUDA cannot take it
        source = array if array.is_contiguous else array.copy()
        shared = exportable_array(array.shape, array.dtype, array.device)
        if array.size:
            _core().vk_copy(source._buffer, source._offset, shared._buffer, 0,
                            array.size * array._itemsize)  # fmt: skip
        array = shared
        memory = _memory_of(array)
    array._buffer.wait()  # what Vulkan wrote is complete before CUDA reads it
    return CudaArrayView(memory, array._offset, array.shape, array._dev_strides,
                         array._stored_dtype)  # fmt: skip


def to_cupy(array: DeviceArray, copy: bool | None = None) -> Any:
    """A CuPy array over a DeviceArray's memory (``copy`` as in :func:`cuda_view`).

    Bool arrays (stored as int32) come back as a converted copy (CuPy's astype).
    """
    import cupy

    view = cuda_view(array, copy)
    with cupy.cuda.Device(view.ordinal):
        out = cupy.asarray(view)
        return out.astype(np.bool_) if array.dtype.kind == "b" else out


def to_torch(array: DeviceArray, copy: bool | None = None) -> Any:
    """A PyTorch CUDA tensor over a DeviceArray's memory (``copy`` as in :func:`cuda_view`).

    Bool arrays (stored as int32) come back as a converted copy.
    """
    import torch

    view = cuda_view(array, copy)
    out = torch.as_tensor(view, device=f"cuda:{view.ordinal}")
    return out.bool() if array.dtype.kind == "b" else out


def from_cuda(x: object, device: DeviceSpec = None, copy: bool | None = None) -> DeviceArray:
    """A DeviceArray from a CUDA array (anything with ``__cuda_array_interface__``: CuPy
    arrays, PyTorch CUDA tensors, numba.cuda device arrays).

    Parameters
    ----------
    x : object with ``__cuda_array_interface__``
    device : int, str, Device, optional
        The Vulkan device (the selected one by default); it must be the GPU that holds `x`.
    copy : bool, optional
        None: share memory that came from numba_vulkan, copy the rest on the GPU. True:
        always copy. False: never (BufferError for memory CUDA allocated).

    Returns
    -------
    DeviceArray
        After the producer's stream (the whole CUDA device if it names none) has finished.
    """
    cai = getattr(x, "__cuda_array_interface__", None)
    if cai is None:
        raise TypeError(f"{type(x).__name__} has no __cuda_array_interface__")
    device = device_list.get_device(device)
    ordinal = cuda_ordinal(device)
    dtype = np.dtype(cai["typestr"])
    if len(cai.get("descr", ())) > 1 or dtype.fields is not None:
        raise BufferError("record arrays cannot be imported from CUDA")
    shape = tuple(int(n) for n in cai["shape"])
    strides = cai.get("strides")
    strides = _c_strides(shape, dtype.itemsize) if strides is None else tuple(strides)
    ptr = int(cai["data"][0] or 0)
    size = int(np.prod(shape, dtype=np.int64))
    if dtype.kind == "b":
        raise BufferError("bool arrays cannot be imported from CUDA as they are (numba_vulkan "
                          "stores bools as int32): pass x.astype('int32') and compare with 0")
    if storage_dtype(dtype, device.info) != dtype:
        raise BufferError(f"{dtype} arrays are stored as another type on this device")
    if any(s % dtype.itemsize for s in strides):
        raise BufferError("strides that are not multiples of the item size are not supported")
    stream = cai.get("stream")
    driver.synchronize(ordinal, None if stream is None else int(stream))
    if size == 0:
        return DeviceArray(device, shape, dtype)
    lo = hi = ptr
    for n, s in zip(shape, strides):
        if s < 0:
            lo += (n - 1) * s
        else:
            hi += (n - 1) * s
    hi += dtype.itemsize
    found = None if copy else _lookup(lo, hi, device)
    if found is not None:
        memory = found
        return DeviceArray(device, shape, dtype,
                           _stored=(memory.buffer, ptr - memory.ptr, strides))  # fmt: skip
    if copy is False:
        raise BufferError("this CUDA memory was not allocated by numba_vulkan and cannot be "
                          "shared with Vulkan without a copy (CUDA cannot export cudaMalloc "
                          "memory); allocate with nv.device_array(..., exportable=True) and "
                          "nv.to_cupy/nv.to_torch to share")  # fmt: skip
    with driver.context(ordinal):
        holder = driver.pointer_ordinal(lo)
    if holder != ordinal:
        raise BufferError(f"the CUDA array is on CUDA device {holder}, Vulkan device "
                          f"'{device.info.name}' is CUDA device {ordinal}")  # fmt: skip
    out = exportable_array(hi - lo, np.uint8, device)
    memory = _memory_of(out)
    driver.copy(ordinal, memory.ptr, lo, hi - lo)
    result = DeviceArray(device, shape, dtype, _stored=(out._buffer, ptr - lo, strides))
    result._cuda_memory = memory  # the import lives as long as the array: to_cupy is cheap
    return result


def _lookup(lo, hi, device):
    """The live CudaMemory of `device` that holds CUDA addresses [lo, hi), or None."""
    with _lock:
        live = [r() for r in _imports.values()]
    for memory in live:
        if memory is not None and memory.device is device:
            if memory.ptr <= lo and hi <= memory.ptr + memory.size:
                return memory
    return None


def reimport(array):
    """A DeviceArray aliasing `array` through an exported file descriptor imported back into
    Vulkan (what another Vulkan user of the descriptor would see): for tests of the export
    path on machines without CUDA."""
    core = _core()
    buffer = array._buffer
    fd = core.vk_export_fd(buffer)
    try:
        imported = core.vk_import_fd(array.device._core, fd, buffer.size,
                                     core.vk_external_size(buffer))  # fmt: skip
    except BaseException:
        os.close(fd)
        raise
    return DeviceArray(array.device, array.shape, array.dtype,
                       _stored=(imported, array._offset, array._dev_strides))  # fmt: skip
