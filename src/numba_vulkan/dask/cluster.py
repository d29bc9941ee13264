"""LocalVulkanCluster: a ``distributed`` cluster on this machine with one worker process per
Vulkan device, each worker bound to its device (as dask-cuda's LocalCUDACluster binds one to
each GPU). On a machine without a GPU the workers run on lavapipe."""

from __future__ import annotations

import copy
import os
from collections.abc import Sequence
from typing import Any

import dask
import numpy as np
from distributed import LocalCluster, Nanny

from .. import cache, config
from ..dispatcher import jit
from ..runtime import device_list, get_device, to_device
from ..stubs import global_id

ENV = "NUMBA_VULKAN_VISIBLE_DEVICES"


def _entries(devices):
    """Each worker's ``NUMBA_VULKAN_VISIBLE_DEVICES``: one entry of the cluster's devices."""
    if devices is None:
        spec = config.VISIBLE_DEVICES
        if spec:
            return [e.strip() for e in spec.split(",") if e.strip()]
        return [str(info.vulkan_index if info.vulkan_index >= 0 else info.index)
                for info in device_list.list_devices()]  # fmt: skip
    if isinstance(devices, str):
        return [e.strip() for e in devices.split(",") if e.strip()]
    out = []
    for d in devices:
        info = getattr(d, "info", d)
        index = getattr(info, "vulkan_index", -1)
        out.append(str(index if index >= 0 else getattr(info, "index", d)))
    return out


class LocalVulkanCluster(LocalCluster):
    """A local ``distributed`` cluster with one worker process per device.

    Parameters
    ----------
    devices : str, sequence of int, str or Device, optional
        The devices, one worker each: loader indices or name substrings (as
        ``NUMBA_VULKAN_VISIBLE_DEVICES``, whose value is the default; else every device).
        A device named twice gets two workers, each on a logical device of its own: on a
        machine with one device (lavapipe), ``devices="0,0"`` makes a cluster of two.
    n_workers : int, optional
        Workers to start now (all devices by default); ``scale`` adds up to one per device.
    threads_per_worker : int
        Threads of each worker (1 by default: one device queue each).
    warm : bool
        Open the device and run a first kernel when a worker starts, so that the first
        task does not pay for it. The cluster compiles that kernel once per physical device,
        in this process (which opens the device), into the kernel disk cache
        (``NUMBA_VULKAN_CACHE``), and each worker loads it from there.
    pool_mb : int, optional
        Each worker's buffer pool, in MiB (``NUMBA_VULKAN_POOL_MB``; 1024 by default), as
        dask-cuda's ``rmm_pool_size``. Chains of element-wise operations on large chunks
        make a new chunk-sized result per operation: with a pool smaller than a few chunks
        per worker thread, most are fresh device allocations: 50 to 60 ms per 1 GiB buffer
        on NVIDIA's driver (docs/dask.md).
    start_method : {"forkserver", "spawn"}
        How worker processes start. "forkserver" (the default) forks them from a server
        process that imported distributed, dask.array, Numba and numba_vulkan once (and
        never used Vulkan: numba_vulkan.dask.forkserver), so each worker skips those
        imports; the cluster starts the server first, so that its imports overlap the rest
        of the start. "spawn" starts each as a fresh Python, as distributed does by default.
    **kwargs
        What ``distributed.LocalCluster`` takes (``dashboard_address`` is None by default).

    Attributes
    ----------
    devices : list of str
        Each worker's ``NUMBA_VULKAN_VISIBLE_DEVICES``, by worker name (0, 1, ...).
    """

    def __init__(self, devices: str | Sequence[Any] | None = None, n_workers: int | None = None,
                 threads_per_worker: int = 1, warm: bool = True, pool_mb: int | None = None,
                 start_method: str = "forkserver", **kwargs: Any) -> None:
        self.devices = _entries(devices)
        if not self.devices:
            raise ValueError("LocalVulkanCluster: no Vulkan device to start a worker on")
        if n_workers is None:
            n_workers = len(self.devices)
        if n_workers > len(self.devices):
            raise ValueError(f"{n_workers} workers for {len(self.devices)} devices "
                             f"({','.join(self.devices)}): one worker per device")  # fmt: skip
        self._warm = warm
        if pool_mb is not None and (isinstance(pool_mb, bool) or not isinstance(pool_mb, int)
                                    or not 0 <= pool_mb <= 1 << 30):
            raise ValueError(f"pool_mb must be a number of MiB (an int from 0 to 2**30), "
                             f"not {pool_mb!r}")
        self._pool_mb = pool_mb
        if start_method not in ("forkserver", "spawn"):
            raise ValueError(f"start_method must be 'forkserver' or 'spawn', not {start_method!r}")
        kwargs.setdefault("dashboard_address", None)
        kwargs.setdefault("worker_class", Nanny)
        method = {"distributed.worker.multiprocessing-method": start_method}
        with dask.config.set(method):  # read as the workers start
            if start_method == "forkserver":
                _start_forkserver()  # it imports (most of a cold start) while we go on
            if warm:
                _compile_first_kernel(self.devices)
            super().__init__(n_workers=0, threads_per_worker=threads_per_worker, processes=True,
                             **kwargs)  # fmt: skip
            options = self.new_spec["options"]
            options["preload"] = [*options.get("preload", []), "numba_vulkan.dask"]
            self.scale(n_workers)
            self.sync(self._correct_state)

    def new_worker_spec(self) -> dict[Any, dict[str, Any]]:
        free = sorted(set(range(len(self.devices))) - set(self.worker_spec))
        if not free:
            raise ValueError(f"every device of the cluster ({','.join(self.devices)}) has a "
                             "worker")  # fmt: skip
        name = free[0]
        spec = copy.deepcopy(self.new_spec)
        options = spec["options"]
        env = dict(options.get("env") or {})
        env[ENV] = self.devices[name]
        env["NUMBA_VULKAN_DASK_WARM"] = "1" if self._warm else "0"
        if self._pool_mb is not None:
            env["NUMBA_VULKAN_POOL_MB"] = str(self._pool_mb)
        options["env"] = env
        return {name: spec}


#: What the forkserver imports once for every worker it forks (numba_vulkan.dask.forkserver:
#: all a worker imports to start, run tasks on Dask arrays and compile kernels, and the
#: caches a worker's start fills). Never Vulkan: a child cannot use Vulkan state made
#: before its fork (VulkanForkError).
FORKSERVER_PRELOAD = ["numba_vulkan.dask.forkserver"]


def _start_forkserver():
    """Start the forkserver now, with our preload list, unless it runs already (a running
    server keeps its list). distributed's get_mp_context sets its own list on its first
    call, then leaves it: ours replaces it. Started here, before the scheduler, the server's
    imports (most of a cold start) overlap the rest of the cluster's start."""
    from multiprocessing import forkserver

    from distributed.utils import get_mp_context

    ctx = get_mp_context()
    ctx.set_forkserver_preload(FORKSERVER_PRELOAD)
    forkserver.ensure_running()


def _compile_first_kernel(entries):
    """Compile the workers' first kernel (warm_up) here, once per physical device of the
    cluster, into the kernel disk cache, where each worker then finds it instead of compiling
    it again (8 workers compiling it at once took 0.5 to 1 s on 2 cores: docs/dask.md). Only with the
    disk cache, and for the devices this process lists; a device it does not list is
    compiled for by its workers. This process opens the devices (the forkserver and the
    workers it forks never saw this process's Vulkan state)."""
    if not cache.enabled():
        return
    listed = {info.vulkan_index if info.vulkan_index >= 0 else info.index: info
              for info in device_list.list_devices()}  # fmt: skip
    done = set()
    for entry in entries:
        if not entry.lstrip("-").isdigit() or int(entry) in done or int(entry) not in listed:
            continue
        done.add(int(entry))
        _first_kernel.compile(FIRST_KERNEL_ARGS, device=get_device(listed[int(entry)]))


#: The first kernel's signature (an array of float32, as warm_up passes it).
FIRST_KERNEL_ARGS = "void(float32[::1])"


@jit(cache=True)
def _first_kernel(x):
    """The kernel a worker runs as it starts (warm_up): one launch of each worker's device."""
    i = global_id(0)
    if i < x.size:
        x[i] = x[i] + 1.0


def warm_up() -> Any:
    """Open the current device and run a small kernel (from the kernel disk cache, where the
    cluster put it; else compiled here): what a worker does before its first task
    (numba_vulkan.dask.dask_setup)."""
    device = get_device()
    x = to_device(np.zeros(64, np.float32), device=device)
    _first_kernel.forall(x.size, device=device)(x)
    device.synchronize()
    return device


def worker_device() -> dict[str, Any]:
    """What the calling worker runs on: its ``NUMBA_VULKAN_VISIBLE_DEVICES``, the device's
    name and logical index, its pool limit in bytes and the process id (for tests and
    diagnostics)."""
    from ..runtime import get_device

    device = get_device()
    info = device.info
    return {"visible": os.environ.get(ENV, ""), "name": info.name,
            "vulkan_index": info.vulkan_index, "logical": info.logical,
            "pool_limit": device.pool_limit, "pid": os.getpid()}
