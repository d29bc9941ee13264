"""Locks that a forked child gets back unlocked.

A thread of the parent may hold one of the package's locks at the moment the
process forks (compiling a kernel, allocating a status buffer, copying through
a staging buffer); that thread does not exist in the child, so the lock would
never be released there and the child's next call would hang instead of
raising VulkanForkError (src/core/vk/fork.h: the runtime refuses every device
operation in such a child). Every lock made by :func:`lock` is re-initialised,
unlocked, in the child (``os.register_at_fork``), as the standard library does
for its own locks. What it guarded may be half-updated there; the child cannot
use the device anyway, and the Python-side state stays consistent enough to
raise that error and exit.
"""

import os
import threading
import weakref

_locks = weakref.WeakSet()


def lock(reentrant=False):
    """A new ``threading.Lock`` (``RLock`` if `reentrant`) that a forked child gets unlocked."""
    made = threading.RLock() if reentrant else threading.Lock()
    _locks.add(made)
    return made


def _reinit_in_child():
    for made in list(_locks):
        made._at_fork_reinit()  # what threading and logging do for theirs (Python >= 3.9)


os.register_at_fork(after_in_child=_reinit_in_child)
