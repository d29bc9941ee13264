"""Streams, events, pinned arrays and kernel print records.

This round, a Stream is the simple model the spec allows: its work is ordered
on the device's one compute queue (so it is also ordered with work outside
streams), and copies given a stream are done at once. Events are timestamp
queries recorded into the device's open batch. ``print_records`` decodes a
print buffer (runtime/reports.py).
"""

import contextlib

import numpy as np

from .. import checks, config
from . import devices as _devices

PRINT_BUFFER_WORDS = config.PRINT_WORDS


class Stream:
    """An ordered sequence of copies and launches on a device.

    This round every stream's work goes to the device's one compute queue, in
    order with all other work on the device; copies on a stream complete
    before the call returns. ``synchronize`` waits for the device.

    Parameters
    ----------
    device : Device
    """

    def __init__(self, device):
        self.device = _devices.get_device(device)
        self.value = 0

    def query(self):
        """Whether all work enqueued on the stream has finished (bool)."""
        return bool(self.device._core.idle())

    def synchronize(self):
        """Wait until all work enqueued on the stream has finished."""
        self.device.synchronize()

    @contextlib.contextmanager
    def auto_synchronize(self):
        """Wait for the stream when the ``with`` block ends, as in numba.cuda."""
        try:
            yield self
        finally:
            self.synchronize()


def stream(device=None):
    """Create a :class:`Stream` on a device (the selected one by default)."""
    return Stream(_devices.get_device(device))


class Event:
    """A point in the work submitted to a device, like a CUDA event.

    :meth:`record` marks the point after all work launched so far; the device
    writes a timestamp when it gets there. :meth:`elapsed_time` gives the device
    time between two events. Streams share the device's one queue this round,
    so ``record(stream)`` marks the same point as ``record()``.

    Parameters
    ----------
    device : Device

    Raises
    ------
    VulkanSupportError
        If the device's compute queue writes no timestamps.
    """

    QUERIES = _devices._core().QUERIES  # timestamp queries per device (C++ kQueries)

    def __init__(self, device):
        from ..errors import VulkanSupportError

        self.device = _devices.get_device(device)
        if self.device.info.timestamp_bits == 0:
            raise VulkanSupportError(
                f"Vulkan device '{self.device.info.name}' writes no timestamps on its "
                "compute queue, so events cannot be timed"
            )
        self._mark = None  # a _core.Timestamp

    def record(self, stream=None):
        """Mark the point after all work launched on the device so far.

        Parameters
        ----------
        stream : Stream, optional
            Must belong to the same device.

        Returns
        -------
        Event
            The event itself.
        """
        if stream is not None and not isinstance(stream, Stream):
            raise TypeError(f"stream must be a Stream, not {type(stream).__name__}")
        if stream is not None and stream.device is not self.device:
            raise ValueError("the stream belongs to another device")
        self._mark = self.device._core.record_timestamp()
        return self

    def query(self):
        """Whether the device has passed the event (bool)."""
        return self._mark is not None and self.device._core.idle()

    def synchronize(self):
        """Wait until the device has passed the event.

        Raises
        ------
        ValueError
            If the event has not been recorded: there is no point to wait for.
        """
        if self._mark is None:
            raise ValueError("the event has not been recorded; call record() before synchronize()")
        self.device._core.wait_value(self._mark.value)

    def _ns(self):
        if self._mark is None:
            raise ValueError("the event has not been recorded")
        return self.device._core.read_timestamp_ns(self._mark)

    def elapsed_time(self, end):
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


def event(device=None):
    """Create an :class:`Event` on a device (the selected one by default)."""
    return Event(_devices.get_device(device))


def event_elapsed_time(start, end):
    """Milliseconds between two events, as numba.cuda names it."""
    if not isinstance(start, Event):
        raise TypeError(f"start must be an Event, not {type(start).__name__}")
    return start.elapsed_time(end)


def pinned_array(shape, dtype=np.float64, device=None):
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
    from . import pinned

    return pinned.allocate(_devices.get_device(device), shape, dtype)


def mapped_array(shape, dtype=np.float64, device=None):
    """Same as :func:`pinned_array` (numba.cuda's name for host memory the device maps)."""
    return pinned_array(shape, dtype, device)


def print_records(words):
    """Print what a kernel's ``print`` calls recorded (see runtime/reports.py)."""
    from .reports import print_records as _print_records

    _print_records(words)
