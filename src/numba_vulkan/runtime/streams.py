"""Streams and events: ordered sequences of copies and launches that overlap with each
other, and points in them the device timestamps.

The device side is in C++ (src/core/vk/stream.cc, timestamps.cc): a timeline semaphore per
stream; consecutive launches on a stream share one submission (an open command buffer,
submitted at once when the stream is idle, else when full or when anything waits for it),
and every submission waits for the stream's previous one and for whatever else still uses
its buffers (other streams, and work outside streams), copies on
the transfer queue and kernels on a second compute queue where the device has them. This
module adds the host side: the host work due once a stream has passed a point (copies out
of staging buffers, runtime/copies.py) is kept in order per stream and run by whichever
call sees the stream done (``_finish``). Events are timestamp queries recorded into the
device's open batch, or on a stream as a submission of that stream.
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

from .. import forksafe
from ..errors import VulkanSupportError
from . import device_list, reports
from .device_info import DeviceLike, DeviceSpec


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

    device: DeviceLike

    def __init__(self, device: DeviceSpec) -> None:
        self.device = device_list.get_device(device)
        self._core = self.device._core.create_stream()
        self._lock = forksafe.lock()
        self._host_work = []  # callables due once the stream has passed what is enqueued

    def __repr__(self) -> str:
        return f"<Stream value={self.value} on {self.device.info.name!r}>"

    @property
    def value(self) -> int:
        return self._core.value

    def query(self) -> bool:
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

    def synchronize(self) -> None:
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
        reports.check(self.device)

    def add_callback(self, callback: Callable[[Stream, None, Any], object],
                     arg: Any = None) -> None:
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
        _refuse_in_capture(self, "Stream.add_callback (a host callback)")
        import threading

        done = event(self.device)
        done.record(self)

        def wait_then_call():
            done.synchronize()
            callback(self, None, arg)

        threading.Thread(target=wait_then_call, name="numba_vulkan stream callback",
                         daemon=True).start()  # fmt: skip

    def async_done(self) -> Awaitable[Stream]:
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
    def auto_synchronize(self) -> Iterator[Stream]:
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
        _refuse_in_capture(self, "host work after the stream's copies")
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


def _refuse_in_capture(stream, what):
    """VulkanGraphError if a graph captures `stream` (graphs.py): `what` needs the host
    while the stream runs, which a replay does not come back for."""
    if stream._core.capturing:
        from ..errors import VulkanGraphError

        raise VulkanGraphError(
            f"{what} cannot be captured into a graph: a replay runs on the device without "
            "the host; do it after the replay, or use pinned memory (pinned_array) for "
            "copies to and from the host"
        )


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


def stream(device: DeviceSpec = None) -> Stream:
    """Create a :class:`Stream` on a device, like ``numba.cuda.stream``.

    Parameters
    ----------
    device : int, str, Device or None
        The device; the selected one by default.

    Returns
    -------
    Stream
    """
    return Stream(device_list.get_device(device))


def check(stream, device=None):
    """Refuse a `stream` argument that is not a Stream (of `device`, if given)."""
    if stream is None:
        return
    if not isinstance(stream, Stream):
        raise TypeError(f"stream must be a Stream (nv.stream()), not {type(stream).__name__}")
    if device is not None and stream.device is not device:
        raise ValueError(f"the stream belongs to {stream.device}, not to {device}")


# ---- events ------------------------------------------------------------------------


class Event:
    """A point in the work submitted to a device, like a CUDA event.

    :meth:`record` marks the point after all work launched so far outside
    streams; the device writes a timestamp when it gets there. ``record(stream)``
    marks the point after the work enqueued on that stream instead.
    :meth:`elapsed_time` gives the device time between two events. (Vulkan
    compares timestamps only within one queue: events on streams that run on
    another queue than the device's, where the device has several, are
    compared as the driver's clocks allow; on the GPUs we know, all queues
    share one clock.)

    Parameters
    ----------
    device : Device

    Raises
    ------
    VulkanSupportError
        If the device's compute queue writes no timestamps.
    """

    #: Timestamp queries per device (C++ kQueries): events recorded and not yet read.
    QUERIES: int = _core().QUERIES

    device: DeviceLike

    def __init__(self, device: DeviceSpec) -> None:
        self.device = device_list.get_device(device)
        if self.device.info.timestamp_bits == 0:
            raise VulkanSupportError(
                f"Vulkan device '{self.device.info.name}' writes no timestamps on its "
                "compute queue, so events cannot be timed"
            )
        self._mark = None  # a _core.Timestamp

    def record(self, stream: Stream | None = None) -> Event:
        """Mark the point after all work launched on the device so far.

        Parameters
        ----------
        stream : Stream, optional
            Mark the point after the work enqueued on this stream so far
            instead, like ``cuda.event().record(stream)``.

        Returns
        -------
        Event
            The event itself.

        Raises
        ------
        ValueError
            If the stream belongs to another device.
        """
        if stream is not None and not isinstance(stream, Stream):
            raise TypeError(f"stream must be a Stream, not {type(stream).__name__}")
        if stream is not None and stream.device is not self.device:
            raise ValueError("the stream belongs to another device")
        if stream is None:
            self._mark = self.device._core.record_timestamp()
        else:
            self._mark = stream._core.record_timestamp()
        return self

    def query(self) -> bool:
        """Whether the device has passed the event (bool; False if never recorded)."""
        if self._mark is None:
            return False
        if self.device._core.timestamp_done(self._mark):
            return True
        self.device._core.flush()  # a mark in the open batch: submit it, so it comes
        return False

    def synchronize(self) -> None:
        """Wait until the device has passed the event.

        Raises
        ------
        ValueError
            If the event has not been recorded: there is no point to wait for.
        """
        if self._mark is None:
            raise ValueError("the event has not been recorded; call record() before synchronize()")
        self.device._core.read_timestamp_ns(self._mark)  # waits on the mark's timeline

    def _ns(self):
        if self._mark is None:
            raise ValueError("the event has not been recorded")
        return self.device._core.read_timestamp_ns(self._mark)

    def elapsed_time(self, end: Event) -> float:
        """Milliseconds the device took from this event to `end`.

        Parameters
        ----------
        end : Event
            A later event on the same device.

        Returns
        -------
        float
        """
        if not isinstance(end, Event):
            raise TypeError(f"end must be an Event, not {type(end).__name__}")
        if end.device is not self.device:
            raise ValueError("the events belong to different devices")
        return (end._ns() - self._ns()) / 1e6


def event(device: DeviceSpec = None) -> Event:
    """Create an :class:`Event` on a device (the selected one by default)."""
    return Event(device_list.get_device(device))


def event_elapsed_time(start: Event, end: Event) -> float:
    """Milliseconds between two events, as numba.cuda names it."""
    if not isinstance(start, Event):
        raise TypeError(f"start must be an Event, not {type(start).__name__}")
    return start.elapsed_time(end)
