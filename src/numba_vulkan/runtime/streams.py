"""Streams: ordered sequences of copies and launches that overlap with each other.

The device side is in C++ (src/core/vk/stream.cc): a timeline semaphore per
stream, one submission per operation that waits for the stream's previous one
and for whatever else still uses its buffers (other streams, and work outside
streams), copies on the transfer queue and kernels on a second compute queue
where the device has them. This module adds the host side:

- copies from and to pinned arrays (``pinned_array``) are one buffer copy on
  the stream; other host arrays go through a staging buffer of pinned memory:
  to the device, the host array is copied into it at once (so it may change
  afterwards); to the host, the stream fills it and the data is copied out of
  it when the host learns the stream got there (``synchronize``, a ``query``
  that answers True, or the device's ``synchronize``); staging buffers are kept
  for later copies and reused once idle (``Buffer.idle``);
- views with gaps are copied as one buffer copy with a region per run of
  adjacent elements, or, with more than GATHER_MIN_RUNS runs (ranks 1-3), by a
  kernel on the stream that gathers or scatters them through a contiguous twin;
- the host work due once the stream has passed a point (copies out of staging
  buffers) is kept in order per stream and run by whichever call sees the
  stream done (``_finish``).
"""

import contextlib

import numpy as np

from .. import forksafe
from . import devices as _devices
from . import pinned as _pinned


def _core():
    from .. import _core as core

    return core


class Stream:
    """An ordered sequence of copies and launches on a device.

    Work on different streams can run at the same time: copies to and from the
    device on a copy engine, kernels on the device, as with streams in
    numba.cuda. Work on one stream runs in the order it was enqueued. Pass a
    stream as ``stream=`` to :func:`to_device`, ``DeviceArray.copy_to_device``
    and ``DeviceArray.copy_to_host``, and as the third element of
    ``kernel[groups, local_size, stream]`` or ``forall(n, stream=...)``; all of
    these return at once.

    Data copied to the host is there after :meth:`synchronize`. Copies from
    and to arrays made by ``pinned_array`` go directly between that memory and
    the device; other host arrays go through a staging buffer (see the module
    documentation). NumPy arrays passed to a launch on a stream are copied to
    the device before it and, if the kernel writes them, back after it.

    Each stream has a timeline semaphore: every submission waits for the
    previous one of its stream, and for the streams that last used its
    buffers. Copies go to a queue of a transfer-only queue family where the
    device has one, kernels to a second compute queue where there is one (on
    a device with one queue, such as lavapipe, streams are ordered the same
    way but do not overlap). Work enqueued without a stream waits for streams
    that still use its buffers, and the other way round: on the device (by
    semaphore) for launches and device-side copies, on the host for copies to
    and from mapped memory.

    Parameters
    ----------
    device : Device
        The device.

    Attributes
    ----------
    device : Device
    value : int
        The stream's timeline value of the last work enqueued (0: none yet).
    """

    def __init__(self, device):
        self.device = _devices.get_device(device)
        self._core = self.device._core.create_stream()
        self._lock = forksafe.lock()
        self._host_work = []  # callables due once the stream has passed what is enqueued

    def __repr__(self):
        return f"<Stream value={self.value} on {self.device.info.name!r}>"

    @property
    def value(self):
        return self._core.value

    def query(self):
        """Whether all work enqueued on the stream has finished.

        Returns
        -------
        bool
            True once the stream has done everything enqueued so far; the data of
            copies to pageable host arrays is then in place, as after
            :meth:`synchronize`.
        """
        if not self._core.query():
            return False
        self._finish()
        return True

    def synchronize(self):
        """Wait until all work enqueued on the stream has finished.

        Interruptible with Ctrl-C and bounded by ``NUMBA_VULKAN_TIMEOUT``, like
        every wait. Copies to pageable host arrays are complete afterwards.

        Raises
        ------
        Exception
            The first exception a kernel raised since the last report, after
            printing what kernels printed (runtime/reports.py).
        """
        self._core.synchronize()
        self._finish()
        from . import reports

        reports.check(self.device)

    def add_callback(self, callback, arg=None):
        """Call ``callback(stream, status, arg)`` on another thread once the work enqueued
        so far has finished, as numba.cuda's ``Stream.add_callback`` (status is None:
        an error surfaces at the next synchronisation). Unlike CUDA, later work on the
        stream does not wait for the callback.

        Parameters
        ----------
        callback : callable
        arg : object, optional
        """
        if not callable(callback):
            raise TypeError(f"add_callback() needs a callable, not {type(callback).__name__}")
        import threading

        from .extras import event

        done = event(self.device)
        done.record(self)

        def wait_then_call():
            done.synchronize()
            callback(self, None, arg)

        threading.Thread(target=wait_then_call, name="numba_vulkan stream callback",
                         daemon=True).start()  # fmt: skip

    def async_done(self):
        """An asyncio future, done once the work enqueued so far has finished (numba.cuda's
        ``Stream.async_done``): ``await stream.async_done()``.

        Returns
        -------
        asyncio.Future
        """
        import asyncio

        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # called outside a coroutine: the thread's loop
            loop = asyncio.get_event_loop()
        future = loop.create_future()

        def done(stream, status, arg):
            loop.call_soon_threadsafe(lambda: future.done() or future.set_result(stream))

        self.add_callback(done)
        return future

    @contextlib.contextmanager
    def auto_synchronize(self):
        """Wait for the stream when the ``with`` block ends, as in numba.cuda.

        Yields
        ------
        Stream
            The stream itself.
        """
        try:
            yield self
        finally:
            self.synchronize()

    # ---- host side ------------------------------------------------------------------
    def _after(self, work):
        """Run `work()` once the stream has passed everything enqueued so far."""
        with self._lock:
            self._host_work.append((self._core.value, work))
            with _pending_lock:
                _pending.add(self)  # kept alive until done, even if the user drops it

    def _finish(self):
        """Run the host work that is due: that of the points the stream has passed
        (other threads may have enqueued more since the caller saw it done)."""
        with self._lock:
            if not self._host_work:
                return
            done = self._core.completed
            due = [w for v, w in self._host_work if v <= done]
            self._host_work = [(v, w) for v, w in self._host_work if v > done]
            if not self._host_work:
                with _pending_lock:
                    _pending.discard(self)
            # Run in order, under the lock: a later thread's _finish must not overtake.
            for w in due:
                w()


# Streams with host work not yet run (strong references: a dropped stream's copies
# still complete at the device's synchronize).
_pending_lock = forksafe.lock()
_pending = set()


def finish_device(device):
    """Run the due host work of every stream of `device` (after a device synchronize)."""
    if not _pending:  # without the lock: work added before this synchronize began is seen
        return
    with _pending_lock:
        due = [s for s in _pending if s.device is device]
    for s in due:
        s._finish()


def stream(device=None):
    """Create a :class:`Stream` on a device, like ``numba.cuda.stream``.

    Parameters
    ----------
    device : int, str, Device or None
        The device; the selected one by default.

    Returns
    -------
    Stream
    """
    return Stream(_devices.get_device(device))


# ---- copies on a stream -----------------------------------------------------------------


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
        from ..stubs import global_id
        from .compiler_hook import jit

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
    from .array import DeviceArray

    return DeviceArray(array.device, array.shape, array.dtype)


def copy_to_device(array, host, stream):
    """Enqueue on `stream` the copy of NumPy `host` (shape checked) into DeviceArray `array`."""
    if array.size == 0:
        return
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


def check(stream, device=None):
    """Refuse a `stream` argument that is not a Stream (of `device`, if given)."""
    if stream is None:
        return
    if not isinstance(stream, Stream):
        raise TypeError(f"stream must be a Stream (nv.stream()), not {type(stream).__name__}")
    if device is not None and stream.device is not device:
        raise ValueError(f"the stream belongs to {stream.device}, not to {device}")
