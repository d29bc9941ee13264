"""Devices: what list_devices finds, how get_device chooses, and Device itself."""

import dataclasses
import typing

import numpy as np

from .. import checks, config, forksafe
from ..errors import VulkanSupportError
from . import debug
from .device_kernels import KernelLaunches
from .device_info import _FIELDS, DeviceInfo  # noqa: F401 (DeviceInfo is imported from here)

hint = " Install your distribution's Vulkan loader (libvulkan1 on Debian and Ubuntu) and a driver."


def _core():
    from .. import _core as core

    return core


_infos = None
_lock = forksafe.lock(reentrant=True)  # a forked child gets it unlocked


# GPUs whose float64 rate is a large fraction of their float32 rate (data-centre
# parts). Other GPUs run float64 at 1/16 to 1/64 of float32 or emulate it; CPUs
# (lavapipe) run it at full speed. No Vulkan property reports this.
_FAST_FLOAT64 = ("H100", "H200", "H800", "GH200", "A100", "A800", "A30", "V100", "P100", "B100",
                 "B200", "GB200", "INSTINCT", "MI100", "MI210", "MI250", "MI300")  # fmt: skip


def float64_is_slow(info):
    """Whether float64 arithmetic is much slower than float32 on a device (a name heuristic).

    True for GPUs other than the data-centre parts in _FAST_FLOAT64; False for
    CPUs and virtual devices. Used for VulkanPerformanceWarning only.
    """
    if info.kind not in ("discrete", "integrated") or not info.float64:
        return False
    name = info.name.upper()
    return not any(part in name for part in _FAST_FLOAT64)


def list_devices(refresh=False):
    """All Vulkan 1.2+ devices that expose a compute queue.

    Parameters
    ----------
    refresh : bool
        Ask the Vulkan loader again instead of returning the devices found by
        the first call.

    Returns
    -------
    list of DeviceInfo

    Raises
    ------
    numba_vulkan.errors.VulkanLoaderError
        If there is no Vulkan loader; the message contains :data:`hint`.
    """
    global _infos, _default
    with _lock:
        if refresh:
            _default = None
        if _infos is None or refresh:
            raw = _core().vk_list_devices(debug.debug_level(), bool(refresh))
            _infos = [_with_cached_probes(DeviceInfo(**{k: v for k, v in d.items() if k in _FIELDS}))
                      for d in raw]  # fmt: skip
            for index, dev in Device._open.items():  # what opened devices measured stays
                if index < len(_infos):
                    _infos[index] = dev.info
        return list(_infos)


def _with_cached_probes(info):
    """`info` with what the probe cache knows of its driver (runtime/probes.py): the loop cap,
    the self-test's verdicts and the software forms they call for (runtime/selftest.py)."""
    from . import probes

    limit = probes.cached_loop_limit(info)
    if limit is not probes._MISSING:
        info = dataclasses.replace(info, loop_iteration_limit=limit)
    verdicts = probes.cached_selftest(info) if config.SELFTEST else probes._MISSING
    if verdicts is not probes._MISSING:
        info = _with_verdicts(info, verdicts)
    return info


def _with_verdicts(info, verdicts):
    from . import selftest

    return dataclasses.replace(info, selftest=tuple(verdicts.items()),
                               soft_forms=selftest.soft_forms(verdicts))


class Device(KernelLaunches):
    """A logical device with one compute queue and a pipeline cache.

    Parameters
    ----------
    info : DeviceInfo
        The physical device to open. ``Device(info)`` returns the device already
        opened for it, if any: there is one Device per physical device.

    Attributes
    ----------
    info : DeviceInfo
        The physical device.
    handle : int
        The VkDevice handle.
    queue : int
        The compute queue (VkQueue handle).
    mode : numba_vulkan.narrowing.Mode
        How kernels are compiled for the device by default.
    pool_limit : int
        Bytes of released buffers kept for reuse (``NUMBA_VULKAN_POOL_MB``, default 1024 MiB).
    timeout : float
        Seconds one wait for the device may take before it raises
        VulkanTimeoutError (``NUMBA_VULKAN_TIMEOUT``; 0, the default, waits forever).

    Notes
    -----
    Any number of threads may launch kernels, copy arrays, allocate and
    synchronise on one device at once. Waits release the GIL and can be
    interrupted with Ctrl-C. A device cannot be used in a child process forked
    after the parent used Vulkan (VulkanForkError): use multiprocessing's
    ``spawn`` start method. Devices stay open until the process ends.
    """

    # The C++ core's constants (src/core/vk/device.h), never copies.
    #: Launches recorded into one command buffer before it is submitted.
    MAX_BATCH = _core().MAX_BATCH
    #: Submitted command buffers the device may have in flight at once.
    MAX_IN_FLIGHT = _core().MAX_IN_FLIGHT
    #: Slots of a kernel, each the device copies of one launch's small host arrays
    #: (runtime/slots.py; our kernels have no descriptor sets to put in them).
    MAX_SLOTS = _core().KERNEL_SLOTS

    _open: typing.ClassVar[dict] = {}  # index -> Device

    def __new__(cls, info):
        with _lock:
            dev = cls._open.get(info.index)
            if dev is None:
                dev = super().__new__(cls)
                dev._init(info)
                cls._open[info.index] = dev
                dev._probe()
            return dev

    def __init__(self, info):
        pass  # all done once, in _init

    def _init(self, info):
        from ..narrowing import Mode

        self.info = info
        self._core = _core().Device.open(info.index, debug.debug_level())
        self._core.pool_limit = int(config.POOL_MB) << 20
        self._core.sync_launches = bool(config.SYNC)
        self._core.timeout = float(config.TIMEOUT)
        self.mode = Mode.for_device(info)
        self._kernels = {}
        from .slots import Slots

        self._slots = Slots()  # the kernels' host-array slots (launch)
        from . import disk

        disk.load_pipeline_cache(self)  # and save it at exit (NUMBA_VULKAN_CACHE)

    def _probe(self):
        """Measure what the driver does not report (probes.py) and record it in ``info``."""
        import warnings

        from . import probes

        try:
            limit = probes.loop_iteration_limit(self)
        except Exception as e:  # a device that cannot run the probe can still run other work
            warnings.warn(f"the loop-limit probe failed on {self.info.name}: {e}", RuntimeWarning)
            return
        info = dataclasses.replace(self.info, loop_iteration_limit=limit)
        if config.SELFTEST:
            from . import selftest

            try:
                verdicts = probes.driver_selftest(self)
            except Exception as e:  # noqa: BLE001 - say so, and compile as without the test
                warnings.warn(f"the driver self-test failed on {self.info.name}: {e}",
                              RuntimeWarning, stacklevel=2)
                verdicts = {}
            if verdicts:
                info = _with_verdicts(info, verdicts)
                selftest.warn_unmended(info)
        self.info = info
        with _lock:
            if _infos is not None and self.info.index < len(_infos):
                _infos[self.info.index] = self.info

    def __repr__(self):
        return f"<Device {self.info.index}: {self.info.name!r}>"

    # Facts of the logical device.
    handle = property(lambda self: self._core.handle, doc="The VkDevice handle.")
    queue = property(lambda self: self._core.queue, doc="The compute queue's VkQueue handle.")
    stream_queue = property(
        lambda self: self._core.stream_queue,
        doc="The VkQueue handle streams launch kernels on: a second queue of the compute "
        "family where it has one, else ``queue`` (runtime/streams.py).",
    )
    stream_queues = property(
        lambda self: tuple(
            {0: "queue", 1: "second compute queue", 2: "transfer queue"}[q]
            for q in self._core.stream_queues
        ),
        doc="(where streams' kernels run, where their copies run): 'queue' (the device's), "
        "'second compute queue' or 'transfer queue' (of the transfer-only family).",
    )
    family = property(lambda self: self._core.family, doc="Queue family of the compute queue.")
    transfer_family = property(
        lambda self: self._core.transfer_family,
        doc="A transfer-only queue family (streams copy on its queue), or -1.",
    )
    command_pool = property(lambda self: self._core.command_pool, doc="The VkCommandPool.")
    memory = property(
        lambda self: self.pool_stats(), doc="The buffer pool's statistics (see pool_stats)."
    )

    @property
    def timeout(self):
        return self._core.timeout

    @timeout.setter
    def timeout(self, seconds):
        self._core.timeout = 0.0 if seconds is None else float(seconds)

    @property
    def pool_limit(self):
        return self._core.pool_limit

    @pool_limit.setter
    def pool_limit(self, nbytes):
        nbytes = checks.as_int(nbytes, "pool_limit", minimum=0, maximum=2**64 - 1)
        self._core.pool_limit = nbytes
        self._core.trim(nbytes)

    def pool_stats(self):
        """Statistics of the buffer pool.

        Returns
        -------
        dict
            ``pooled_bytes``, ``pooled_buffers`` (released buffers kept for
            reuse), ``live_bytes`` (buffers in use), ``hits`` (allocations
            served from the pool) and ``misses`` (allocations that made a new
            buffer).
        """
        return self._core.pool_stats()

    def trim(self, limit=0):
        """Free pooled buffers until at most `limit` bytes stay pooled.

        Parameters
        ----------
        limit : int
            Number of bytes that may remain pooled.
        """
        self._core.trim(checks.as_int(limit, "limit", minimum=0, maximum=2**64 - 1))

    def synchronize(self, report=True):
        """Wait until every kernel launched on this device has finished.

        Waits for the work of every stream of the device too, and completes their
        copies to pageable host arrays (as each stream's ``synchronize`` does).

        Parameters
        ----------
        report : bool
            Whether to report what happened since the last synchronisation:
            print what kernels printed and raise the exception a kernel raised
            (runtime/reports.py), and validation messages as warnings under
            ``NUMBA_VULKAN_DEBUG``.

        Raises
        ------
        Exception
            The first exception that a kernel raised since the last report.
        """
        self._core.synchronize()
        streams, reports = _sync_modules()
        streams.finish_device(self)
        if report:
            debug.report_new_messages()
            reports.check(self)

    def wait_for(self, buffer):
        """Wait until no launch uses a buffer any more.

        Launches that do not use it may go on running.

        Parameters
        ----------
        buffer : _core.Buffer or DeviceArray
            The buffer, or a device array whose buffer to wait for.

        Raises
        ------
        TypeError
            If `buffer` is neither.
        ValueError
            If it belongs to another device.
        """
        from .array import DeviceArray

        if isinstance(buffer, DeviceArray):
            if buffer.device is not self:
                raise ValueError(f"the array belongs to {buffer.device}, not {self}")
            buffer = buffer._buffer
        if not isinstance(buffer, _core().Buffer):
            raise TypeError(
                f"buffer must be a device buffer or a DeviceArray, not {type(buffer).__name__}"
            )
        buffer.wait()


_selected = None
# get_device(None) without a selection, found once (list_devices(refresh) forgets it).
_default = None

_KIND_ORDER = {"discrete": 0, "integrated": 1, "virtual": 2, "cpu": 3, "other": 4}


def _describe(infos):
    if not infos:
        return "no Vulkan device was found"
    return "available devices: " + ", ".join(f"{i.index}: {i.name!r} ({i.kind})" for i in infos)


def _resolve(which, infos):
    if isinstance(which, Device):
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


def get_device(which=None):
    """Return a :class:`Device`.

    Parameters
    ----------
    which : int, str, DeviceInfo, Device or None
        Index into :func:`list_devices`, a case-insensitive substring of the
        device name, or None for the current default: the device chosen by
        :func:`select_device`, else ``NUMBA_VULKAN_DEVICE``, else the first
        discrete GPU, integrated GPU, virtual GPU or CPU device, in that order.

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
    if isinstance(which, Device):
        return which
    if which is None:  # the launch path asks every launch: answer from the cache
        if _selected is not None:
            return _selected
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
    device = Device(_resolve(which, infos))
    if default:
        _default = device
    return device


def select_device(which):
    """Make `which` the default device for later kernel calls and allocations.

    Parameters
    ----------
    which : int, str, DeviceInfo or Device
        See :func:`get_device`.

    Returns
    -------
    Device
    """
    global _selected
    device = get_device(which)
    _selected = device
    return device


def _sync_modules():
    """(streams, reports), imported on first use (they import this module)."""
    global _sync_modules
    from . import reports, streams

    _sync_modules = lambda: (streams, reports)  # noqa: E731
    return streams, reports


def synchronize(device=None, report=True):
    """Wait until launched kernels have finished.

    Parameters
    ----------
    device : int, str, DeviceInfo, Device or None
        The device to wait for; every device opened so far if None.
    report : bool
        Whether to print what kernels printed and raise what one raised since the last
        report (``Device.synchronize``).
    """
    if device is None:
        for dev in list(Device._open.values()):
            dev.synchronize(report=report)
    else:
        get_device(device).synchronize(report=report)
