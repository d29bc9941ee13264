"""Kernel slots: the device copies of the small host arrays of ``Device.launch``.

The reference's Device.launch takes, besides device arrays, small host arrays
(a status word, shapes, scalars) and says that a launch uses a *slot* of the
kernel, shared by launches with the same buffers and host arrays, so that
repeated launches copy no data; a kernel has ``Device.MAX_SLOTS`` of them. Our
kernels take no descriptor sets (arrays are addresses in push constants), so a
slot here is what remains of that: the device copies of one launch's host
arrays, kept per kernel (the ``MAX_SLOTS`` most recently used, from the C++
core's ``KERNEL_SLOTS``). A later launch of the kernel with the same device
arrays and the same host array objects takes the slot and uploads a host array
again only if its bytes changed or the kernel may write its copy
(the written flags of CompiledKernel.arguments; every array for a kernel
without them), so the kernel always reads what the host array holds.

Threads: one lock per device covers taking a slot, refreshing its copies and
recording the launch, so two threads never share a slot's copies between
refresh and record. Copies are ordered after the launches that used them like
any other copy (a device array's buffer tracks its last use).
"""

import collections
import threading

import numpy as np

from .creation import to_device


def _core():
    from .. import _core as core

    return core


LIMIT = _core().KERNEL_SLOTS  # slots per kernel (Device.MAX_SLOTS)


class Slots:
    """The slots of every kernel of one device."""

    def __init__(self):
        self.lock = threading.Lock()  # held from take() until the launch is recorded
        self._by_kernel = {}  # id(loaded kernel) -> OrderedDict(key -> {position: (copy, bytes)})

    def take(self, device, loaded, arrays, written, stream):
        """`arrays` with each NumPy array replaced by its device copy in the kernel's slot
        for this launch (made, or refreshed where needed). Call with ``self.lock`` held."""
        key = tuple(_describe(a) for a in arrays)
        slots = self._by_kernel.setdefault(id(loaded), collections.OrderedDict())
        slot = slots.pop(key, None)
        if slot is None:
            slot = {}
        out = list(arrays)
        for position, a in enumerate(arrays):
            if not isinstance(a, np.ndarray):
                continue
            raw = np.ascontiguousarray(a).tobytes()
            held = slot.get(position)
            if held is None:
                copy = to_device(a, device=device, stream=stream)
            else:
                copy = held[0]
                if written[position] or held[1] != raw:
                    copy.copy_to_device(a, stream=stream)
            slot[position] = (copy, raw)
            out[position] = copy
        slots[key] = slot  # the most recently used last
        while len(slots) > LIMIT:
            slots.popitem(last=False)
        return out


def _describe(a):
    """What identifies an entry of `arrays` for sharing a slot."""
    if a is None:
        return None
    if isinstance(a, np.ndarray):
        return ("host", id(a), a.shape, a.dtype.str)
    buffer = getattr(a, "_buffer", None)
    if buffer is None:
        return ("other", id(a))
    return ("device", buffer.address + a._offset, tuple(a.shape), a._code)
