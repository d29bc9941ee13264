"""The few CUDA driver API calls the CUDA interop needs, through ctypes.

Why the driver API (``libcuda.so.1``) and not a CUDA runtime: the driver comes
with every NVIDIA driver installation, whichever runtime CuPy or PyTorch
bring, and its primary context is the one both of them use, so a pointer made
here is valid in theirs. Every call runs with the device's primary context
pushed (retained once per device, never released: like our Vulkan devices it
lives until the process ends).

Nothing here is imported before the first interop call; a machine without the
driver gets a :class:`~numba_vulkan.errors.VulkanSupportError` naming it.
"""

import ctypes
import os
from contextlib import contextmanager

from .. import forksafe
from ..errors import VulkanForkError, VulkanSupportError

CU_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD = 1
CUDA_EXTERNAL_MEMORY_DEDICATED = 1
CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL = 9
CU_STREAM_LEGACY = 1


class _HandleDesc(ctypes.Structure):
    """CUDA_EXTERNAL_MEMORY_HANDLE_DESC (the handle union is 16 bytes, 8-aligned)."""

    _fields_ = [
        ("type", ctypes.c_int),
        ("fd", ctypes.c_int64),  # the union's first member, an int, padded to its size
        ("name", ctypes.c_void_p),
        ("size", ctypes.c_uint64),
        ("flags", ctypes.c_uint),
        ("reserved", ctypes.c_uint * 16),
    ]


class _BufferDesc(ctypes.Structure):
    """CUDA_EXTERNAL_MEMORY_BUFFER_DESC."""

    _fields_ = [
        ("offset", ctypes.c_uint64),
        ("size", ctypes.c_uint64),
        ("flags", ctypes.c_uint),
        ("reserved", ctypes.c_uint * 16),
    ]


_lock = forksafe.lock()
_lib = []  # [CDLL] once loaded
_contexts = {}  # CUDA ordinal -> retained primary context
_forked = []  # [True] in a child forked after the parent initialised CUDA


def _forked_child():
    # CUDA, like Vulkan, cannot be used in a child forked after the parent initialised
    # it: every call there fails (a CudaMemory dropped there leaks instead).
    if _lib:
        _forked.append(True)


os.register_at_fork(after_in_child=_forked_child)


def _driver():
    if _forked:
        raise VulkanForkError(
            "this process was forked from one that had already used CUDA, which cannot be "
            "used in a forked child. Start worker processes with multiprocessing's 'spawn' "
            "start method instead: multiprocessing.get_context('spawn')"
        )
    if _lib:
        return _lib[0]
    with _lock:
        if not _lib:
            try:
                lib = ctypes.CDLL("libcuda.so.1")
            except OSError as e:
                raise VulkanSupportError(
                    f"CUDA interop needs the NVIDIA driver's libcuda.so.1, which cannot be "
                    f"loaded here ({e})"
                ) from None
            _check(lib, lib.cuInit(0), "cuInit")
            _lib.append(lib)
    return _lib[0]


def _check(lib, result, call):
    if result != 0:
        name = ctypes.c_char_p()
        lib.cuGetErrorName(result, ctypes.byref(name))
        text = name.value.decode() if name.value else f"CUresult {result}"
        raise VulkanSupportError(f"{call} failed: {text}")


def call(name, *args):
    """Calls driver function `name` (the versioned symbol where there is one)."""
    lib = _driver()
    _check(lib, getattr(lib, name)(*args), name)


def device_for_uuid(uuid):
    """The CUDA ordinal of the device whose UUID is `uuid` (16 bytes), or None."""
    lib = _driver()
    count = ctypes.c_int()
    call("cuDeviceGetCount", ctypes.byref(count))
    get_uuid = getattr(lib, "cuDeviceGetUuid_v2", None) or lib.cuDeviceGetUuid
    for i in range(count.value):
        dev = ctypes.c_int()
        call("cuDeviceGet", ctypes.byref(dev), i)
        raw = (ctypes.c_char * 16)()
        _check(lib, get_uuid(raw, dev), "cuDeviceGetUuid")
        if raw.raw == uuid:
            return i
    return None


@contextmanager
def context(ordinal):
    """Runs the body with device `ordinal`'s primary context current."""
    ctx = _contexts.get(ordinal)
    if ctx is None:
        dev = ctypes.c_int()
        call("cuDeviceGet", ctypes.byref(dev), ordinal)
        ctx = ctypes.c_void_p()
        call("cuDevicePrimaryCtxRetain", ctypes.byref(ctx), dev)
        _contexts[ordinal] = ctx
    call("cuCtxPushCurrent_v2", ctx)
    try:
        yield
    finally:
        call("cuCtxPopCurrent_v2", ctypes.byref(ctypes.c_void_p()))


def import_fd(ordinal, fd, memory_size, nbytes):
    """Imports an OPAQUE_FD Vulkan allocation (dedicated, `memory_size` bytes) into CUDA and
    maps its first `nbytes`. Returns (external memory handle, device pointer). CUDA owns
    `fd` once this succeeds."""
    desc = _HandleDesc(type=CU_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD, fd=fd, size=memory_size,
                       flags=CUDA_EXTERNAL_MEMORY_DEDICATED)  # fmt: skip
    ext = ctypes.c_void_p()
    ptr = ctypes.c_uint64()
    with context(ordinal):
        call("cuImportExternalMemory", ctypes.byref(ext), ctypes.byref(desc))
        try:
            call("cuExternalMemoryGetMappedBuffer", ctypes.byref(ptr), ext,
                 ctypes.byref(_BufferDesc(offset=0, size=nbytes)))  # fmt: skip
        except BaseException:
            call("cuDestroyExternalMemory", ext)
            raise
    return ext, ptr.value


def release(ordinal, ext, ptr):
    """Unmaps and frees an import (after the device's CUDA work has finished)."""
    with context(ordinal):
        call("cuCtxSynchronize")  # a kernel in flight may still read it
        call("cuMemFree_v2", ctypes.c_uint64(ptr))
        call("cuDestroyExternalMemory", ext)


def copy(ordinal, dst, src, nbytes, stream=CU_STREAM_LEGACY):
    """Device-to-device copy on `stream`, waited for."""
    with context(ordinal):
        call("cuMemcpyDtoDAsync_v2", ctypes.c_uint64(dst), ctypes.c_uint64(src),
             ctypes.c_size_t(nbytes), ctypes.c_void_p(stream))  # fmt: skip
        call("cuStreamSynchronize", ctypes.c_void_p(stream))


def synchronize(ordinal, stream=None):
    """Waits for `stream` (a CUDA stream handle), or for the whole device when None."""
    with context(ordinal):
        if stream is None:
            call("cuCtxSynchronize")
        else:
            call("cuStreamSynchronize", ctypes.c_void_p(stream))


def pointer_ordinal(ptr):
    """The CUDA ordinal of the device that holds device pointer `ptr`."""
    out = ctypes.c_int()
    call("cuPointerGetAttribute", ctypes.byref(out), CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
         ctypes.c_uint64(ptr))  # fmt: skip
    return out.value
