"""Kernel exceptions and print output on the host: the status buffer and its one hook.

Each thread gets, on its first launch on a device of a kernel that can raise or
print, a status buffer (layout: numba_vulkan/sites.py) in host-visible memory
mapped into the process, so reading it costs no copy and no submission. Such
kernels take it as their last hidden array (frontend/status.py; hidden_args.py),
through a launcher per thread (dispatcher.Specialisation): what a thread's
launches raise or print is reported to that thread, never to another.

``check(device)`` is the one hook of the synchronisation paths
(``Device.synchronize``, ``DeviceArray.copy_to_host``, launches with NumPy
arguments): where the calling thread's buffer holds an exception or print
records, it waits for
the device, prints the records in order (and a line counting those a full
buffer lost), clears the buffer and raises the exception: the class the kernel
raised, with its message, the kernel's name, file, line and the invocation's
global id. The device stays usable. Threads that never ran such a kernel pay
one dictionary lookup. At exit, what no thread reported is printed, and an
exception becomes a warning.
"""

import functools
import sys
import threading

import numpy as np

from .. import config, forksafe, sites

_lock = forksafe.lock()
_buffers = {}  # (Device, thread token) -> Status
_local = threading.local()


def thread_token():
    """An object of the calling thread's own (never another thread's, even after it ends):
    what status buffers, and the launchers that write them, are kept per thread by."""
    token = getattr(_local, "token", None)
    if token is None:
        token = _local.token = object()
    return token


def print_words():
    """Words of the print area's records: ``numba_vulkan.runtime.PRINT_BUFFER_WORDS`` (from
    NUMBA_VULKAN_PRINT_WORDS, and settable), at least 64."""
    runtime = sys.modules.get("numba_vulkan.runtime")
    return max(64, int(getattr(runtime, "PRINT_BUFFER_WORDS", config.PRINT_WORDS)))


class Status:
    """A thread's status buffer on a device: pinned memory its kernels write what they raise
    and print to, and the host reads without a copy.

    Attributes
    ----------
    words : numpy.ndarray
        The buffer as uint32 words (numba_vulkan/sites.py lays them out).
    buffer : _core.Buffer
        The Vulkan buffer.
    array : DeviceArray or None
        The 0-d uint32 device array kernels take (runtime/creation.status_array makes it).
    """

    __slots__ = ("array", "buffer", "words")

    def __init__(self, words, buffer):
        self.words, self.buffer, self.array = words, buffer, None


def status(device):
    """The calling thread's Status on `device`: what its launches raise and print is
    reported to it alone."""
    key = (device, thread_token())
    entry = _buffers.get(key)
    if entry is None:
        with _lock:
            entry = _buffers.get(key)
            if entry is None:
                entry = _buffers[key] = _allocate(device)
    return entry


def _allocate(device):
    from .. import _core

    if not _buffers:
        import atexit

        atexit.register(_at_exit)
    capacity = print_words()
    total = sites.PRINT_AREA + sites.PRINT_HEADER + capacity
    buffer = _core.vk_allocate_pinned(device._core, 4 * total)
    words = buffer.host_view()[: 4 * total].view(np.uint32)
    words[:] = 0
    words[sites.PRINT_AREA + 1] = capacity
    return Status(words, buffer)


def _at_exit():
    """Print what kernels printed and was never reported, as CUDA flushes printf output at
    exit; an exception never reported becomes a warning (nothing can raise it any more)."""
    import warnings

    from ..errors import VulkanForkError

    for device, token in list(_buffers):
        try:
            device._core.synchronize()  # launches nothing waited for yet
            _check(device, _buffers[(device, token)].words)
        except VulkanForkError:
            return  # a forked child: the buffers and their kernels are the parent's
        except Exception as e:  # noqa: BLE001 (the kernel's own exception, or a lost device)
            warnings.warn(f"numba_vulkan: a kernel raised an exception that no synchronize "
                          f"reported before exit: {type(e).__name__}: {e}", RuntimeWarning,
                          stacklevel=1)  # fmt: skip


def check(device):
    """Print what the calling thread's kernels printed and raise what one of them raised
    since its last check (another thread's launches are reported to that thread)."""
    entry = _buffers.get((device, thread_token()))
    if entry is not None:
        _check(device, entry.words)


def _check(device, words):
    if not words[sites.EXC_FLAG] and not words[sites.PRINT_AREA] and \
            not words[sites.PRINT_AREA + 2] and \
            words[sites.LOOP_STARTED] == words[sites.LOOP_FINISHED]:  # fmt: skip
        return
    device._core.synchronize()  # no kernel writes the buffer any more
    cut = None
    with _lock:
        area = words[sites.PRINT_AREA:]
        if area[0] or area[2]:
            _emit(area)
            # Zero the words read: after records that fit, a record too long for the rest of
            # a full area leaves words unwritten, which must not hold an earlier period's.
            used = min(int(area[0]), int(area[1]), len(area) - sites.PRINT_HEADER)
            area[sites.PRINT_HEADER: sites.PRINT_HEADER + used] = 0
            area[0] = 0
            area[2] = 0
            # PRINT_BUFFER_WORDS changed since: a smaller area takes effect now (a larger one
            # where the buffer is made, at the device's first printing or raising kernel).
            area[1] = min(print_words(), len(area) - sites.PRINT_HEADER)
        if words[sites.LOOP_STARTED] != words[sites.LOOP_FINISHED]:
            # 32-bit counts: they wrap alike
            cut = [(int(words[sites.LOOP_STARTED]) - int(words[sites.LOOP_FINISHED])) & 0xFFFFFFFF,
                   int(words[sites.LOOP_KERNEL])]
            words[sites.LOOP_STARTED: sites.LOOP_KERNEL + 1] = 0
        if cut is None and not words[sites.EXC_FLAG]:
            return
        record = [int(w) for w in words[: sites.EXC_WORDS]]
        words[: sites.EXC_WORDS] = 0
    if cut is not None:  # before the kernel's own exception: the results it came from are wrong
        _raise_cut(device, *cut)
    key = record[sites.EXC_KEY] | (record[sites.EXC_KEY + 1] << 32)
    site = sites.lookup(key)
    if site is None or not isinstance(site, sites.RaiseSite):
        raise RuntimeError(
            f"a kernel raised an exception that this process cannot decode (site key {key:#x})"
        )
    raise site.exception(record)


def _raise_cut(device, count, key):
    """VulkanLoopLimitError: `count` invocations did not finish their loops; LoopSite `key`
    is the kernel launched last among those counted (kir/loop_guard.h)."""
    site = sites.lookup(key)
    limit = getattr(device.info, "loop_iteration_limit", None)
    if not isinstance(site, sites.LoopSite):
        site = sites.LoopSite("<a kernel compiled in another process>", "?", 0)
    raise site.exception(count, limit)


def after_copy(method):
    """Run ``check`` after a DeviceArray copy that waited (one given no stream)."""

    @functools.wraps(method)
    def copy(self, *args, **kwargs):
        result = method(self, *args, **kwargs)
        stream = kwargs.get("stream", args[1] if len(args) > 1 else None)
        if stream is None:
            check(self.device)
        return result

    return copy


def _emit(area):
    lines, lost = sites.format_print_records(area)
    out = sys.stdout
    for line in lines:
        out.write(line + "\n")
    if lost:
        out.write(sites.lost_line(lost, int(area[1])) + "\n")
    out.flush()


def print_records(words):
    """Print what a kernel's ``print`` calls recorded.

    Parameters
    ----------
    words : numpy.ndarray
        The print buffer as uint32: cursor (words claimed), capacity, records
        lost to a full buffer, then the records (numba_vulkan/sites.py,
        frontend/printing.py).
    """
    words = np.asarray(words)
    if words.ndim != 1 or words.dtype.kind not in "iu":
        raise TypeError("words must be a 1-d integer array (the print buffer as uint32)")
    _emit(words.astype(np.uint64))
