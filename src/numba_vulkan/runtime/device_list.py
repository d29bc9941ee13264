"""Which devices there are and which one a call means: list_devices, get_device,
select_device (per thread; ``with device:`` for a block) and ``gpus``, with the table of
opened devices. The Device class itself is runtime/devices.py.

``NUMBA_VULKAN_VISIBLE_DEVICES`` chooses and orders the devices list_devices shows; an entry
that names a physical device already listed opens it once more as a logical device of its
own, which lets one machine (lavapipe in CI) test programs that use several devices.
"""

from __future__ import annotations

import dataclasses
import threading

import numpy as np

from .. import config, forksafe
from ..errors import VulkanSupportError
from . import debug, disk, selftest
from .device_info import _FIELDS, DeviceInfo, DeviceLike, DeviceSpec

hint = " Install your distribution's Vulkan loader (libvulkan1 on Debian and Ubuntu) and a driver."


def _core():
    from .. import _core as core

    return core


_infos = None
#: Held while devices are listed and opened (reentrant: opening a device runs its probes,
#: which get the device again). A forked child gets it unlocked.
lock = forksafe.lock(reentrant=True)
#: Every Device opened in this process, by index: one per physical device.
opened = {}
#: The Device class (runtime/devices.py). It sits above the arrays and streams it launches
#: with, so it hands itself down when imported (``numba_vulkan.runtime`` imports it before
#: anything can ask for a device).
_Device = None


def list_devices(refresh: bool = False) -> list[DeviceInfo]:
    """All Vulkan 1.2+ devices that expose a compute queue.

    Parameters
    ----------
    refresh : bool
        Ask the Vulkan loader again instead of returning the devices found by
        the first call.

    Returns
    -------
    list of DeviceInfo
        The visible devices (``NUMBA_VULKAN_VISIBLE_DEVICES``), each ``index`` its position
        here.

    Raises
    ------
    numba_vulkan.errors.VulkanLoaderError
        If there is no Vulkan loader; the message contains :data:`hint`.
    ValueError
        If an entry of ``NUMBA_VULKAN_VISIBLE_DEVICES`` names no device.
    """
    global _infos, _default
    with lock:
        if refresh:
            _default = None
        if _infos is None or refresh:
            raw = _core().vk_list_devices(debug.debug_level(), bool(refresh))
            found = [_info(d) for d in raw]
            _infos = [_with_cached_probes(i) for i in visible(found, config.VISIBLE_DEVICES)]
            for index, dev in opened.items():  # what opened devices measured stays
                if index < len(_infos):
                    _infos[index] = dev.info
        return list(_infos)


def visible(infos, spec):
    """The devices of `infos` (the loader's list) that `spec` names, in its order.

    `spec` is ``NUMBA_VULKAN_VISIBLE_DEVICES``: loader indices or case-insensitive name
    substrings, separated by commas; empty for every device. A physical device named again
    is a further logical device (``logical`` counts the earlier entries). Each DeviceInfo
    gets ``index`` (its position in the result), ``vulkan_index`` and ``logical``.
    """
    entries = [e.strip() for e in spec.split(",") if e.strip()] if spec else None
    if entries is None:
        chosen = list(infos)
    else:
        chosen = []
        for entry in entries:
            match = None
            if entry.lstrip("-").isdigit():
                n = int(entry)
                match = infos[n] if 0 <= n < len(infos) else None
            else:
                match = next((i for i in infos if entry.lower() in i.name.lower()), None)
            if match is None:
                raise ValueError(
                    f"NUMBA_VULKAN_VISIBLE_DEVICES={spec!r}: {entry!r} names no Vulkan device; "
                    f"{_describe(infos)}"
                )
            chosen.append(match)
    out, seen = [], {}
    for position, info in enumerate(chosen):
        logical = seen.get(info.index, 0)
        seen[info.index] = logical + 1
        out.append(dataclasses.replace(info, index=position, vulkan_index=info.index,
                                       logical=logical))  # fmt: skip
    return out


def _info(raw):
    """The DeviceInfo of one of the runtime's device dicts."""
    from ..matrix_shapes import from_device

    fields = {k: v for k, v in raw.items() if k in _FIELDS}
    fields["matrix_shapes"] = from_device(raw.get("matrix_shapes_raw", ()),
                                          bfloat16=fields.get("bfloat16_matrix", False))
    return DeviceInfo(**fields)


def _with_cached_probes(info):
    """`info` with what the probe cache knows of its driver (runtime/disk.py; the probes are
    runtime/probes.py): the loop cap, the self-test's verdicts and the software forms they
    call for (runtime/selftest.py)."""
    limit = disk.cached_loop_limit(info)
    if limit is not disk.MISSING:
        info = dataclasses.replace(info, loop_iteration_limit=limit)
    verdicts = disk.cached_selftest(info) if config.SELFTEST else disk.MISSING
    if verdicts is not disk.MISSING:
        info = with_verdicts(info, verdicts)
    units = disk.cached_matrix_units(info) if info.matrix_shapes and config.SELFTEST \
        else disk.MISSING  # fmt: skip
    if units is not disk.MISSING:
        from . import matrix_probe

        info = matrix_probe.with_verdicts(info, units)
    return info


def with_verdicts(info, verdicts):
    """`info` with the self-test's verdicts and the software forms they call for."""
    return dataclasses.replace(info, selftest=tuple(verdicts.items()),
                               soft_forms=selftest.soft_forms(verdicts))


#: The calling thread's selection (select_device, ``with device:``): ``device``, the current
#: Device or None for the default.
_thread = threading.local()
# get_device(None) without a selection, found once (list_devices(refresh) forgets it).
_default = None

_KIND_ORDER = {"discrete": 0, "integrated": 1, "virtual": 2, "cpu": 3, "other": 4}


def _describe(infos):
    if not infos:
        return "no Vulkan device was found"
    return "available devices: " + ", ".join(f"{i.index}: {i.name!r} ({i.kind})" for i in infos)


def _resolve(which, infos):
    if isinstance(which, _Device):
        return which.info
    if isinstance(which, DeviceInfo):
        return which
    if isinstance(which, bool):
        raise TypeError(f"a device is chosen by index, name, DeviceInfo or Device, not {which!r}")
    if isinstance(which, (int, np.integer)):
        index = int(which)
        if not 0 <= index < len(infos):
            raise ValueError(f"no Vulkan device {index}; {_describe(infos)}")
        return infos[index]
    if isinstance(which, str):
        text = which.strip()
        if text.lstrip("-").isdigit():
            return _resolve(int(text), infos)
        for info in infos:
            if text.lower() in info.name.lower():
                return info
        raise ValueError(f"no Vulkan device's name contains {which!r}; {_describe(infos)}")
    raise TypeError(
        "a device is chosen by index, name substring, DeviceInfo or Device, not "
        f"{type(which).__name__}; {_describe(infos)}"
    )


def get_device(which: DeviceSpec = None) -> DeviceLike:
    """Return a :class:`Device` (opened on first use).

    Parameters
    ----------
    which : int, str, DeviceInfo, Device or None
        Index into :func:`list_devices`, a case-insensitive substring of the
        device name, or None for the current device: the one the calling thread chose
        with :func:`select_device` or ``with device:``, else ``NUMBA_VULKAN_DEVICE``,
        else the first discrete GPU, integrated GPU, virtual GPU or CPU device, in
        that order.

    Returns
    -------
    Device

    Raises
    ------
    ValueError, TypeError
        If `which` names no device; the message lists the devices.
    VulkanSupportError
        If there is no Vulkan 1.2 device with a compute queue at all.
    """
    global _default
    if isinstance(which, _Device):
        return which
    if which is None:  # the launch path asks every launch: answer from the cache
        selected = getattr(_thread, "device", None)
        if selected is not None:
            return selected
        if _default is not None:
            return _default
    default = which is None
    infos = list_devices()
    if which is None:
        if config.DEVICE:
            which = config.DEVICE
        else:
            if not infos:
                raise VulkanSupportError(
                    "no Vulkan 1.2 device with a compute queue was found." + hint
                )
            which = min(infos, key=lambda i: (_KIND_ORDER.get(i.kind, 9), i.index))
    device = _Device(_resolve(which, infos))
    if default:
        _default = device
    return device


def select_device(which: DeviceSpec) -> DeviceLike:
    """Make `which` the calling thread's device for later kernel calls and allocations.

    The choice is per thread, as numba.cuda's ``select_device``: other threads keep
    theirs, and a thread that chose none uses the default (:func:`get_device`).
    ``with device:`` chooses a device for a block only.

    Parameters
    ----------
    which : int, str, DeviceInfo or Device
        See :func:`get_device`.

    Returns
    -------
    Device
    """
    device = get_device(which)
    _thread.device = device
    return device


def enter(device):
    """``with device:`` (Device.__enter__): make `device` the thread's current one until
    :func:`leave`; blocks nest."""
    stack = getattr(_thread, "stack", None)
    if stack is None:
        stack = _thread.stack = []
    stack.append(getattr(_thread, "device", None))
    _thread.device = device
    return device


def leave():
    """The end of ``with device:``: the thread's device before the block again."""
    _thread.device = _thread.stack.pop()


class DeviceSequence:
    """``nv.gpus``: the visible devices as a sequence of Devices, as numba.cuda's
    ``cuda.gpus`` (``with nv.gpus[1]:``, ``nv.gpus.current``). Devices open on first
    use; despite the name they are every Vulkan device list_devices shows, CPUs too."""

    def __len__(self) -> int:
        return len(list_devices())

    def __getitem__(self, i: int) -> DeviceLike:
        n = len(self)
        if isinstance(i, bool) or not isinstance(i, (int, np.integer)):
            raise TypeError(f"gpus is indexed by an int, not {type(i).__name__}")
        if not -n <= int(i) < n:
            raise IndexError(f"no device {int(i)}; {_describe(list_devices())}")
        return get_device(int(i) % n)

    def __iter__(self):
        return (get_device(i) for i in range(len(self)))

    @property
    def current(self) -> DeviceLike:
        """The calling thread's current device (:func:`get_device` ``(None)``)."""
        return get_device()

    def __repr__(self) -> str:
        return f"<numba_vulkan.gpus: {len(self)} Vulkan device(s)>"


gpus = DeviceSequence()


def use_device_class(cls):
    """Register the Device class (runtime/devices.py does, when imported)."""
    global _Device
    _Device = cls


def update_info(info):
    """Replace the listed DeviceInfo of `info`'s device (with what its probes measured)."""
    with lock:
        if _infos is not None and info.index < len(_infos):
            _infos[info.index] = info
