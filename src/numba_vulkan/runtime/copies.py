"""Copies of device arrays that do not wait: to and from the host on a stream, between
device arrays, and of views into contiguous arrays (DeviceArray's copy methods call them).

- Copies from and to pinned arrays (``pinned_array``) are one buffer copy on the stream;
  other host arrays go through a staging buffer of pinned memory: to the device, the host
  array is copied into it at once (so it may change afterwards); to the host, the stream
  fills it and the data is copied out of it when the host learns the stream got there
  (``synchronize``, a ``query`` that answers True, or the device's ``synchronize``);
  staging buffers are kept for later copies and reused once idle (``Buffer.idle``).
- Views with gaps are copied as one buffer copy with a region per run of adjacent
  elements, or, with more than GATHER_MIN_RUNS runs (ranks 1-3), by a kernel on the stream
  that gathers or scatters them through a contiguous twin.
"""

import numpy as np

from .. import forksafe
from ..stubs import global_id
from . import pinned as _pinned
from .compiler_hook import jit
from .streams import Stream, _refuse_in_capture


def _core():
    from .. import _core as core

    return core


def _fold(array):
    """(k, bytes per run): the axes from k on are contiguous and form one run."""
    shape, strides, run = array.shape, array._dev_strides, array._itemsize
    k = len(shape)
    while k > 0 and (shape[k - 1] == 1 or strides[k - 1] == run):
        run *= shape[k - 1]
        k -= 1
    return k, run


def _runs(array):
    """(byte offsets in its buffer, bytes per run) of the runs of adjacent elements of
    the DeviceArray `array`, in C order."""
    shape, strides = list(array.shape), list(array._dev_strides)
    k, run = _fold(array)
    offsets = np.full((), array._offset, np.int64)
    for n, s in zip(shape[:k], strides[:k]):
        offsets = offsets[..., None] + np.arange(n, dtype=np.int64) * s
    return offsets.reshape(-1), run


def _regions(array, host_offset, to_device):
    """The copy regions between `array` and packed host bytes at `host_offset`."""
    offsets, run = _runs(array)
    packed = host_offset + np.arange(offsets.size, dtype=np.int64) * run
    src, dst = (packed, offsets) if to_device else (offsets, packed)
    return np.ascontiguousarray(
        np.stack([src, dst, np.full(offsets.size, run, np.int64)], axis=1).astype(np.uint64)
    )


_staging_lock = forksafe.lock()
_staging_free = {}  # Device -> [(buffer, uint8 view)], kept for later copies
_STAGING_KEPT = 8  # per device
_STAGING_KEPT_BYTES = 256 << 20  # larger staging buffers are not kept


def _staging(device, nbytes):
    """A pinned buffer of at least `nbytes` that nothing uses now, and its bytes as a
    uint8 NumPy array: one kept from an earlier copy (the stream op that used it is
    done: Buffer.idle), or a new one. The caller gives it back (_give_back) once
    it has enqueued its use (to the device) or read the data out (to the host)."""
    with _staging_lock:
        kept = _staging_free.setdefault(device, [])
        for k, (buffer, view) in enumerate(kept):
            if buffer.size >= nbytes and buffer.idle:
                del kept[k]
                break
        else:
            buffer = None
    if buffer is None:
        buffer = _core().vk_allocate_pinned(device._core, max(nbytes, 1))
        view = buffer.host_view()
    return buffer, view


def _give_back(device, buffer, view):
    """Keep a staging buffer for later copies (taken again only once idle)."""
    if buffer.size > _STAGING_KEPT_BYTES:
        return
    with _staging_lock:
        kept = _staging_free.setdefault(device, [])
        kept.append((buffer, view))
        if len(kept) > _STAGING_KEPT:
            del kept[0]


# Views with more runs of adjacent elements than this are gathered or scattered by a
# kernel on the device (ranks 1-3, numeric types) instead of one copy region per run.
GATHER_MIN_RUNS = 1024
_copy_kernels = {}


def _by_kernel(array):
    k, _ = _fold(array)
    runs = int(np.prod(array.shape[:k], dtype=np.int64))
    return runs > GATHER_MIN_RUNS and 1 <= array.ndim <= 3 and array.dtype.kind in "biuf"


def _copy_kernel(ndim):
    """A kernel copying src[idx] to dst[idx] for every index of an ndim-d shape, one
    invocation per element (forall over the size)."""
    kernel = _copy_kernels.get(ndim)
    if kernel is None:
        def copy1(src, dst):
            g = global_id(0)
            if g < dst.size:
                dst[g] = src[g]

        def copy2(src, dst):
            g = global_id(0)
            if g < dst.size:
                n1 = dst.shape[1]
                dst[g // n1, g % n1] = src[g // n1, g % n1]

        def copy3(src, dst):
            g = global_id(0)
            if g < dst.size:
                n12 = dst.shape[1] * dst.shape[2]
                i, r = g // n12, g % n12
                j, k = r // dst.shape[2], r % dst.shape[2]
                dst[i, j, k] = src[i, j, k]

        kernel = _copy_kernels.setdefault(ndim, jit((copy1, copy2, copy3)[ndim - 1]))
    return kernel


def _contiguous_twin(array):
    return type(array)(array.device, array.shape, array.dtype)


def copy_to_device(array, host, stream):
    """Enqueue on `stream` the copy of NumPy `host` (shape checked) into DeviceArray `array`."""
    if array.size == 0:
        return
    if array._f_only():  # its transpose is C-contiguous: one run
        array, host = array.T, host.T
    if _by_kernel(array):  # many small runs: a contiguous copy, then a scatter kernel
        twin = _contiguous_twin(array)
        copy_to_device(twin, host, stream)
        _copy_kernel(array.ndim).forall(array.size, stream=stream)(twin, array)
        return
    stored = array._stored_dtype
    core = stream._core
    if host.dtype == stored and host.dtype.fields is None:
        found = _pinned.lookup(host, array.device)
        if found is not None:  # one copy straight from pinned memory
            buffer, offset = found
            core.copy(buffer, array._buffer, _regions(array, offset, True))
            return
    _refuse_in_capture(stream, "a copy from pageable host memory (through staging)")
    values = np.ascontiguousarray(host.astype(array.dtype, copy=False), dtype=stored)
    raw = values.reshape(-1).view(np.uint8)
    buffer, view = _staging(array.device, raw.size)
    view[: raw.size] = raw  # the caller may change `host` from now on
    core.copy(buffer, array._buffer, _regions(array, 0, True))
    _give_back(array.device, buffer, view)


def copy_to_host(array, out, stream):
    """Copy DeviceArray `array` into NumPy `out` (same shape, writeable) on `stream`. Into
    pinned memory the copy is enqueued and `out` holds the data once the stream is seen
    done; into ordinary (pageable) memory the call waits until `out` holds it, as CUDA's
    and numba.cuda's copies to pageable memory do (programs read `out` right after)."""
    if array.size == 0:
        return
    if array._f_only():  # its transpose is C-contiguous: one run
        array, out = array.T, out.T
    if _by_kernel(array):  # many small runs: a gather kernel, then a contiguous copy
        twin = _contiguous_twin(array)
        _copy_kernel(array.ndim).forall(array.size, stream=stream)(array, twin)
        copy_to_host(twin, out, stream)
        return
    stored = array._stored_dtype
    core = stream._core
    if out.dtype == stored == array.dtype and out.dtype.fields is None:
        found = _pinned.lookup(out, array.device)
        if found is not None:
            buffer, offset = found
            core.copy(array._buffer, buffer, _regions(array, offset, False))
            return
    _refuse_in_capture(stream, "a copy to pageable host memory (through staging)")
    nbytes = array.size * array._itemsize
    buffer, view = _staging(array.device, nbytes)
    core.copy(array._buffer, buffer, _regions(array, 0, False))

    def copy_out(view=view, buffer=buffer):
        values = view[:nbytes].view(stored).reshape(array.shape)
        if array.dtype.kind == "b":
            values = values != 0
        np.copyto(out, values, casting="unsafe")
        _give_back(array.device, buffer, view)

    stream._after(copy_out)
    stream.synchronize()  # pageable `out`: done when the call returns


def copy_device_to_device(src, dst, stream):
    """Enqueue a copy between two DeviceArrays of the same device, shape and stored
    type on `stream`; False where that does not apply (the caller copies otherwise)."""
    if src.device is not dst.device or src._stored_dtype != dst._stored_dtype:
        return False
    if src.shape != dst.shape or not src.is_contiguous:
        return False
    if src.size == 0:
        return True
    regions = _regions(dst, 0, True)
    regions[:, 0] += np.uint64(src._offset)
    stream._core.copy(src._buffer, dst._buffer, regions)
    return True


_internal_lock = forksafe.lock()
_internal = {}  # Device -> the Stream that DeviceArray.copy uses


def copy_view(src, dst):
    """Copy the DeviceArray view `src` into the contiguous `dst` (same device, shape and
    dtype) on the device, without waiting: on a stream of the runtime's own, so work
    outside streams that uses `dst` (or writes `src`) later waits for it."""
    with _internal_lock:
        stream = _internal.get(src.device)
        if stream is None:
            stream = _internal[src.device] = Stream(src.device)
    if src.size == 0:
        return
    if _by_kernel(src):
        _copy_kernel(src.ndim).forall(src.size, stream=stream)(src, dst)
    else:
        regions = _regions(src, dst._offset, False)
        stream._core.copy(src._buffer, dst._buffer, regions)
