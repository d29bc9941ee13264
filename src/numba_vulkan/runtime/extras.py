"""Events and pinned arrays (streams: streams.py).

Events are timestamp queries recorded into the device's open batch, or on a
stream as a submission of that stream (src/core/vk/timestamps.cc, stream.cc).
"""

import numpy as np

from .. import checks, config
from . import devices as _devices
from .streams import Stream, stream  # noqa: F401 (re-exported)

#: Words of each device's print buffer (``NUMBA_VULKAN_PRINT_WORDS``).
PRINT_BUFFER_WORDS = config.PRINT_WORDS


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
    QUERIES = _devices._core().QUERIES

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

    def query(self):
        """Whether the device has passed the event (bool; False if never recorded)."""
        if self._mark is None:
            return False
        if self.device._core.timestamp_done(self._mark):
            return True
        self.device._core.flush()  # a mark in the open batch: submit it, so it comes
        return False

    def synchronize(self):
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

