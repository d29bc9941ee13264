"""Launch configurations: ``kernel[groups, local_size, ...]`` and ``kernel.forall(n)``.

A LaunchConfig is a kernel with its grid. Calling it offers the arguments to the
C++ launchers the dispatcher already made for the device (the fast path) and
falls back to the dispatcher's slow path (typing, compiling, copies).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import checks, config
from .errors import VulkanSupportError
from .runtime.device_info import DeviceLike
from .runtime.reports import thread_token
from .runtime.streams import Stream


class LaunchConfig:
    """A kernel with its grid: call it with the kernel's arguments to launch.

    Attributes
    ----------
    groups : tuple of int
        Workgroups along x, y, z.
    local_size : tuple of int
        Invocations per workgroup along x, y, z.
    device : Device or None
        The device, or None for the default device at the time of the call.
    stream : Stream or None
        Launches go to this stream (runtime/streams.py) instead of the device's batches.
    shared_bytes : int
        Bytes of the dynamic shared array (``nv.shared.array(0, dtype)``), 0 for none. A
        kernel is compiled once per size (its array has that many elements); later launches
        of a size take the fast path as others do.
    """

    __slots__ = (
        "_checked", "_stream_core", "device", "dispatcher", "groups", "local_size",
        "shared_bytes", "stream",
    )

    def __init__(self, dispatcher: Any, groups: tuple[int, int, int],
                 local_size: tuple[int, int, int], device: DeviceLike | None = None,
                 stream: Stream | None = None, shared_bytes: int = 0) -> None:
        self.dispatcher = dispatcher
        self.shared_bytes = shared_bytes
        self.groups = groups
        self.local_size = local_size
        self.device = device
        self.stream = stream
        self._stream_core = None if stream is None else stream._core  # the C++ side
        self._checked = None

    def __call__(self, *args: Any) -> None:
        # Fast path: the launchers already made for this device, newest first.
        device = self.device
        if device is None:
            device = _default_device()
        if device is not None:
            if self._checked is not device:
                self.check_limits(device)
            dispatcher = self.dispatcher
            size = self.shared_bytes  # no call on the common path: no dynamic shared memory
            found = dispatcher._launchers.get(fast_key(device, size) if size else device, ())
            if dispatcher._per_thread:  # kernels that raise or print: this thread's launchers
                key = (device, thread_token())
                found = (*dispatcher._launchers.get(fast_key(key, size) if size else key, ()),
                         *found)
            for launcher in found:
                done = launcher.launch(self.groups, self.local_size, args, False, self._stream_core)
                if done:
                    if done == 2:  # NumPy arguments copied back: report as copies do
                        _report(device)
                    if config.SYNC or dispatcher.sync_launches:
                        device.synchronize()
                    return None
        return self.dispatcher._launch_slow(self, args)

    def needs_64bit_ids(self) -> bool:
        """Whether the grid's ids need 64 bits: a global id past 2^31 - 1, or 2^26 groups
        or more along an axis (see frontend/grid.py)."""
        from . import _core

        return not _core.fits_int32_ids(self.groups, self.local_size)

    def check_limits(self, device: DeviceLike) -> None:
        """Raise VulkanSupportError if the workgroup exceeds ``device``'s limits.

        Grids of more workgroups than ``max_groups`` are split by the launcher.
        """
        info = device.info
        for axis, (n, limit) in enumerate(zip(self.local_size, info.max_local_size)):
            if n > limit:
                raise VulkanSupportError(
                    f"local size {self.local_size} exceeds the device's max_local_size "
                    f"{tuple(info.max_local_size)} along axis {axis} ({info.name})"
                )
        invocations = self.local_size[0] * self.local_size[1] * self.local_size[2]
        if invocations > info.max_local_invocations:
            raise VulkanSupportError(
                f"local size {self.local_size} has {invocations} invocations, more than the "
                f"device's max_local_invocations {info.max_local_invocations} ({info.name})"
            )
        self._checked = device

    def __repr__(self) -> str:
        return f"<LaunchConfig {self.dispatcher.__name__}[{self.groups}, {self.local_size}]>"


def fast_key(key, shared_bytes):
    """The key of Dispatcher._launchers under which launches with `shared_bytes` bytes of
    dynamic shared memory find their launchers: `key` (a device, or a device and a thread
    token) itself without, else tagged with the size (each size is its own specialisation)."""
    return key if not shared_bytes else ("shared bytes", shared_bytes, key)


def _dim3(value, what):
    """1 to 3 ints (a tuple or a list) in uint32 range, padded with 1s; local sizes are >= 1."""
    return checks.as_dim3(value, what, minimum=1 if what == "local_size" else 0)


def _stream_or_device(value):
    """(stream, device) for the third element of a launch configuration."""
    from . import runtime

    stream_cls = getattr(runtime, "Stream", None)
    if stream_cls is not None and isinstance(value, stream_cls):
        return value, value.device
    if not isinstance(value, (int, np.integer, str, runtime.Device, runtime.DeviceInfo)):
        raise TypeError(
            "the third element of a launch configuration (stream) must be a Stream or a "
            f"device, not {type(value).__name__}"
        )
    return None, _resolve_device(value)


def _stream_class():
    from . import runtime

    return runtime.Stream


def _resolve_device(which):
    if which is None:
        return None
    from . import runtime

    if isinstance(which, runtime.Device):
        return which
    return runtime.get_device(which)


def _report(device):
    """What kernels raised or printed (runtime/reports.py), as after a copy to the host."""
    global _report
    from .runtime.reports import check

    _report = check
    check(device)


def _default_device():
    """The default device (runtime.get_device(); looked up once, the launch path calls it)."""
    global _default_device
    from . import runtime

    _default_device = runtime.get_device
    return runtime.get_device()


def _device_name(device):
    info = getattr(device, "info", None)
    return f"device {getattr(info, 'index', '?')} ({getattr(info, 'name', device)})"
