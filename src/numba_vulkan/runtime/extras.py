"""Streams, events, pinned arrays and kernel print records.

This round, a Stream is the simple model the spec allows: its work is ordered
on the device's one compute queue (so it is also ordered with work outside
streams), and copies given a stream are done at once. Events (timestamp
queries) and print records are not implemented yet and say so.
"""

import contextlib

import numpy as np

from .. import config
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
    """A point in the work submitted to a device (not implemented yet).

    Raises
    ------
    NotImplementedError
        Always, this round: timestamp queries are not wired into the runtime.
    """

    QUERIES = 1024

    def __init__(self, device):
        raise NotImplementedError(
            "numba_vulkan.runtime.Event (timestamp queries) is not implemented yet"
        )


def event(device=None):
    """Create an :class:`Event` on a device (not implemented yet)."""
    return Event(_devices.get_device(device))


def event_elapsed_time(start, end):
    """Milliseconds between two events, as numba.cuda names it."""
    return start.elapsed_time(end)


def pinned_array(shape, dtype=np.float64, device=None):
    """Allocate a C-contiguous host array for copies to and from a device.

    This round the array is ordinary host memory (copies stage it like any
    other array); the device is still looked up so that a bad `device` fails.

    Returns
    -------
    numpy.ndarray
        Uninitialised, C-contiguous.
    """
    _devices.get_device(device)
    return np.empty(shape, dtype=dtype)


def print_records(words):
    """Print what a kernel's ``print`` calls recorded (not implemented yet)."""
    raise NotImplementedError(
        "print_records waits for the print record format of numba_vulkan.vkimpl"
    )
