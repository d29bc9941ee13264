"""Pinned host arrays: NumPy arrays in host-visible Vulkan memory the device copies directly.

``pinned_array`` allocates a buffer in the device's host-visible, host-coherent
memory type (host-cached where the device offers one: ``Device::AllocatePinned``),
maps it and wraps the mapping as a NumPy array. The buffer is an ordinary
Vulkan buffer with transfer usage, so a copy between it and a device array is
one ``vkCmdCopyBuffer`` (a single DMA transfer on a discrete GPU) with no
staging buffer and no host memcpy; other host arrays go through a staging
buffer on devices whose arrays are not mapped (copy.cc).

Copies recognise pinned memory by address: every allocation is registered
with its address range, and a C-contiguous host array (or view) that lies
inside a live pinned allocation takes the direct path. The registry holds weak
references only: the memory lives as long as some array refers to it (the
NumPy array keeps the ``_core.Buffer`` alive through its base).
"""

import bisect
import weakref

import numpy as np

from .. import checks, forksafe

_lock = forksafe.lock()
_starts = []  # sorted start addresses
_entries = {}  # start -> (end, weakref to the whole uint8 array, _core.Buffer, Device)


def _core():
    from .. import _core as core

    return core


def allocate(device, shape, dtype):
    """A C-contiguous NumPy array of `shape` and `dtype` in pinned memory of `device`."""
    shape = checks.as_shape(shape)
    dtype = checks.as_dtype(dtype)
    if dtype.kind not in "biuf" or dtype.itemsize > 8:
        raise TypeError(f"dtype must be a boolean, integer or float type of at most 64 bits, "
                        f"not {dtype}")  # fmt: skip
    nbytes = checks.nbytes_of(shape, dtype.itemsize)
    buffer = _core().vk_allocate_pinned(device._core, nbytes)
    raw = buffer.host_view()  # uint8, keeps `buffer` alive
    start = raw.ctypes.data
    _register(start, start + raw.size, raw, buffer, device)
    return raw[:nbytes].view(dtype).reshape(shape)


def _register(start, end, raw, buffer, device):
    def forget(_ref, start=start):
        with _lock:
            if _entries.get(start, (None, _ref))[1] is _ref:
                del _entries[start]
                _starts.pop(bisect.bisect_left(_starts, start))

    ref = weakref.ref(raw, forget)
    with _lock:
        if start in _entries:  # an old mapping at the same address, not yet forgotten
            _starts.pop(bisect.bisect_left(_starts, start))
        bisect.insort(_starts, start)
        # The entry holds the Buffer strongly and `raw` weakly: when the last array
        # using the memory goes, `forget` drops the entry and with it the buffer.
        _entries[start] = (end, ref, buffer, device)


def lookup(array, device):
    """(buffer, byte offset) if `array` is C-contiguous and lies in pinned memory of
    `device`, else None."""
    if not isinstance(array, np.ndarray) or not array.flags.c_contiguous or array.size == 0:
        return None
    address = array.ctypes.data
    with _lock:
        i = bisect.bisect_right(_starts, address) - 1
        if i < 0:
            return None
        start = _starts[i]
        end, ref, buffer, owner = _entries[start]
    if ref() is None or address + array.nbytes > end or owner is not device:
        return None
    return buffer, address - start


def is_pinned(array, device=None):
    """Whether `array` lies in memory made by ``pinned_array`` (of `device`, if given)."""
    if not isinstance(array, np.ndarray) or array.size == 0:
        return False
    address = array.ctypes.data
    with _lock:
        i = bisect.bisect_right(_starts, address) - 1
        if i < 0:
            return False
        end, ref, _buffer, owner = _entries[_starts[i]]
    return ref() is not None and address + array.nbytes <= end and (
        device is None or owner is device
    )


def copy_to_device(array, host, wait=True):
    """Copy pinned `host` into the contiguous DeviceArray `array` with one buffer copy.

    Returns False (nothing done) if the direct path does not apply. Without
    `wait` (a copy on a stream) it returns once the copy is recorded; later
    launches and copies are ordered after it, and ``synchronize`` waits for it.
    """
    if not array.is_contiguous or host.dtype != array._stored_dtype or host.shape != array.shape:
        return False
    found = lookup(host, array.device)
    if found is None:
        return False
    buffer, offset = found
    _core().vk_copy(buffer, offset, array._buffer, array._offset, host.nbytes)
    if wait:
        array._buffer.wait()  # the host may change `host` once this returns
    return True


def copy_to_host(array, out, wait=True):
    """Copy the contiguous DeviceArray `array` into pinned `out` with one buffer copy.

    Returns False (nothing done) if the direct path does not apply. Without
    `wait` (a copy on a stream), `out` holds the data after ``synchronize``.
    """
    if not array.is_contiguous or out.dtype != array._stored_dtype or out.shape != array.shape:
        return False
    if not out.flags.writeable:
        return False
    found = lookup(out, array.device)
    if found is None:
        return False
    buffer, offset = found
    _core().vk_copy(array._buffer, array._offset, buffer, offset, out.nbytes)
    if wait:
        buffer.wait()
    return True
