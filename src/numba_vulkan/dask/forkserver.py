"""What LocalVulkanCluster's forkserver does once, before it forks the workers: each forked
worker starts with it done, where each would otherwise do it itself, all at once, on
however few cores the machine has.

Imported by the server only (cluster.FORKSERVER_PRELOAD names this module last). It imports
what a worker needs to start, run tasks on Dask arrays and compile kernels, and fills the
caches a worker's start reads: distributed's description of the installation, which each
worker sends the scheduler as it registers (package versions read from their metadata,
``platform.uname``: 10 to 20 ms a worker), and the build identity that keys the kernel disk
cache (a stat of each file of the package). Never Vulkan: a child cannot use Vulkan state
made before its fork (VulkanForkError), so each worker opens its own device.
"""

import dask.array  # noqa: F401
import distributed  # noqa: F401
from distributed.versions import get_versions

import numba_vulkan
import numba_vulkan.dask  # noqa: F401

from .. import cache
from . import cluster  # noqa: F401  (warm_up's kernel, made without a device)

get_versions()  # cached by distributed: platform.uname() and each package's version
cache.versions()  # cached: the versions and build identity in every kernel's key
