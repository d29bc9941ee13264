"""Device: a logical device, its queue, pipeline cache and buffer pool, and what it does with
kernels (runtime/device_kernels.py). Which devices there are and which one a call means is
runtime/device_list.py.
"""

from __future__ import annotations

import dataclasses
import warnings
from typing import Any

from .. import checks, config
from ..narrowing import Mode
from . import debug, device_list, disk, matrix_probe, probes, reports, selftest, streams
from .array import DeviceArray
from .device_info import DeviceInfo, DeviceSpec  # DeviceInfo: imported from here too
from .device_kernels import KernelLaunches
from .slots import Slots


def _core():
    from .. import _core as core

    return core


class Device(KernelLaunches):
    """A logical device with one compute queue and a pipeline cache.

    Parameters
    ----------
    info : DeviceInfo
        The device to open (an entry of :func:`list_devices`). ``Device(info)`` returns
        the device already opened for it, if any: there is one Device per listed device,
        and a physical device listed twice (``NUMBA_VULKAN_VISIBLE_DEVICES="0,0"``) is
        two logical devices.

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

    Arrays, kernels' launchers, streams and events belong to one device; a launch or a
    ufunc that mixes devices raises ValueError naming both. ``with device:`` makes the
    device the calling thread's current one for a block (docs/devices.md).
    """

    info: DeviceInfo
    mode: Mode

    # The C++ core's constants (src/core/vk/device.h), never copies.
    #: Launches recorded into one command buffer before it is submitted.
    MAX_BATCH: int = _core().MAX_BATCH
    #: Submitted command buffers the device may have in flight at once.
    MAX_IN_FLIGHT: int = _core().MAX_IN_FLIGHT
    #: Slots of a kernel, each the device copies of one launch's small host arrays
    #: (runtime/slots.py; our kernels have no descriptor sets to put in them).
    MAX_SLOTS: int = _core().KERNEL_SLOTS

    def __new__(cls, info: DeviceInfo) -> Device:
        with device_list.lock:
            dev = device_list.opened.get(info.index)
            if dev is None:
                dev = super().__new__(cls)
                dev._init(info)
                device_list.opened[info.index] = dev
                dev._probe()
            return dev

    def __init__(self, info: DeviceInfo) -> None:
        pass  # all done once, in _init

    def _init(self, info):
        self.info = info
        vulkan_index = info.index if info.vulkan_index < 0 else info.vulkan_index
        self._core = _core().Device.open(vulkan_index, debug.debug_level(), info.logical)
        self._core.pool_limit = int(config.POOL_MB) << 20
        self._core.sync_launches = bool(config.SYNC)
        self._core.timeout = float(config.TIMEOUT)
        self.mode = Mode.for_device(info)
        self._kernels = {}
        self._slots = Slots()  # the kernels' host-array slots (launch)
        disk.load_pipeline_cache(self)  # and save it at exit (NUMBA_VULKAN_CACHE)

    def _probe(self):
        """Measure what the driver does not report (probes.py) and record it in ``info``."""
        try:
            limit = probes.loop_iteration_limit(self)
        except Exception as e:  # a device that cannot run the probe can still run other work
            warnings.warn(f"the loop-limit probe failed on {self.info.name}: {e}", RuntimeWarning)
            return
        info = dataclasses.replace(self.info, loop_iteration_limit=limit)
        if config.SELFTEST:
            try:
                verdicts = probes.driver_selftest(self)
            except Exception as e:  # noqa: BLE001 - say so, and compile as without the test
                warnings.warn(f"the driver self-test failed on {self.info.name}: {e}",
                              RuntimeWarning, stacklevel=2)
                verdicts = {}
            if verdicts:
                info = device_list.with_verdicts(info, verdicts)
                selftest.warn_unmended(info)
        self.info = info  # the matrix probe's kernels compile for what is known so far
        if info.matrix_shapes and config.SELFTEST and config.MATRIX != "emulate":
            try:
                units = probes.matrix_units(self)
            except Exception as e:  # noqa: BLE001 - say so, and keep kernels off the units
                units = {"all": f"not run: {type(e).__name__}: {e}"}
            if units:
                matrix_probe.warn_failed(info, units)
                info = matrix_probe.with_verdicts(info, units)
        self.info = info
        device_list.update_info(info)

    def __repr__(self) -> str:
        again = f" (logical {self.info.logical})" if self.info.logical else ""
        return f"<Device {self.info.index}: {self.info.name!r}{again}>"

    def __enter__(self) -> Device:
        """``with device:``: the calling thread's current device inside the block (kernel
        launches, allocations, ufuncs on host data), the previous one after it."""
        return device_list.enter(self)

    def __exit__(self, *exc: object) -> None:
        device_list.leave()

    # Facts of the logical device.
    @property
    def handle(self) -> int:
        """The VkDevice handle."""
        return self._core.handle

    @property
    def queue(self) -> int:
        """The compute queue's VkQueue handle."""
        return self._core.queue

    @property
    def stream_queue(self) -> int:
        """The VkQueue handle streams launch kernels on: a second queue of the compute
        family where it has one, else ``queue`` (runtime/streams.py)."""
        return self._core.stream_queue

    @property
    def stream_queues(self) -> tuple[str, ...]:
        """(where streams' kernels run, where their copies run): 'queue' (the device's),
        'second compute queue' or 'transfer queue' (of the transfer-only family)."""
        return tuple(
            {0: "queue", 1: "second compute queue", 2: "transfer queue"}[q]
            for q in self._core.stream_queues
        )

    @property
    def family(self) -> int:
        """Queue family of the compute queue."""
        return self._core.family

    @property
    def transfer_family(self) -> int:
        """A transfer-only queue family (streams copy on its queue), or -1."""
        return self._core.transfer_family

    @property
    def command_pool(self) -> int:
        """The VkCommandPool."""
        return self._core.command_pool

    @property
    def memory(self) -> dict[str, int]:
        """The buffer pool's statistics (see pool_stats)."""
        return self.pool_stats()

    @property
    def timeout(self) -> float:
        return self._core.timeout

    @timeout.setter
    def timeout(self, seconds: float | None) -> None:
        self._core.timeout = 0.0 if seconds is None else float(seconds)

    @property
    def pool_limit(self) -> int:
        return self._core.pool_limit

    @pool_limit.setter
    def pool_limit(self, nbytes: int) -> None:
        nbytes = checks.as_int(nbytes, "pool_limit", minimum=0, maximum=2**64 - 1)
        self._core.pool_limit = nbytes
        self._core.trim(nbytes)

    def pool_stats(self) -> dict[str, int]:
        """Statistics of the buffer pool.

        Returns
        -------
        dict
            ``pooled_bytes``, ``pooled_buffers`` (released buffers kept for
            reuse), ``live_bytes`` (buffers in use), ``hits`` (allocations
            served from the pool), ``misses`` (allocations that made a new
            buffer), ``retired_bytes`` (released buffers the pool did not keep,
            freed once the device is past their last use) and ``peak_bytes``
            (the most live, pooled and retired bytes held at once).
        """
        return self._core.pool_stats()

    def trim(self, limit: int = 0) -> None:
        """Free pooled buffers until at most `limit` bytes stay pooled.

        Parameters
        ----------
        limit : int
            Number of bytes that may remain pooled.
        """
        self._core.trim(checks.as_int(limit, "limit", minimum=0, maximum=2**64 - 1))

    def synchronize(self, report: bool = True) -> None:
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
        streams.finish_device(self)
        if report:
            debug.report_new_messages()
            reports.check(self)

    def wait_for(self, buffer: DeviceArray | Any) -> None:
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
        if isinstance(buffer, DeviceArray):
            if buffer.device is not self:
                raise ValueError(f"the array belongs to {buffer.device}, not {self}")
            buffer = buffer._buffer
        if not isinstance(buffer, _core().Buffer):
            raise TypeError(
                f"buffer must be a device buffer or a DeviceArray, not {type(buffer).__name__}"
            )
        buffer.wait()


def synchronize(device: DeviceSpec = None, report: bool = True) -> None:
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
        for dev in list(device_list.opened.values()):
            dev.synchronize(report=report)
    else:
        device_list.get_device(device).synchronize(report=report)


device_list.use_device_class(Device)
