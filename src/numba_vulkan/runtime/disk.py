"""numba_vulkan's disk caches as the runtime sees them: where they live, whether
NUMBA_VULKAN_CACHE allows them, and the driver's pipeline cache (VkPipelineCache),
kept per device and driver. The compiled-kernel cache (numba_vulkan.cache) builds on
this module; the runtime never imports the compiler.
"""

import atexit
import hashlib
import os
import tempfile

from .. import config


def enabled():
    """Whether NUMBA_VULKAN_CACHE allows disk caches (read at each use)."""
    return bool(config.CACHE)


def cache_dir():
    """The folder of numba_vulkan's on-disk caches."""
    from . import probes

    return probes.cache_dir()


def write_atomic(path, data):
    """Write `data` to `path` through a temporary file (readers never see half a file);
    a folder that cannot be written is not an error (the cache is then not kept)."""
    folder = os.path.dirname(path)
    try:
        os.makedirs(folder, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tmp.")
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except OSError:
        pass


_devices = []  # devices whose pipeline cache is saved at exit


def _pipeline_path(device):
    from . import probes

    key = hashlib.sha256(probes.driver_key(device.info).encode()).hexdigest()[:32]
    return os.path.join(cache_dir(), "pipelines", f"{key}.bin")


def load_pipeline_cache(device):
    """Merge the saved pipeline cache of `device`'s driver, and save it again at exit."""
    if not enabled():
        return
    try:
        with open(_pipeline_path(device), "rb") as f:
            data = f.read()
        if data:
            device._core.merge_pipeline_cache(data)
    except Exception:  # no file, or data the driver refuses: start empty
        pass
    if not _devices:
        atexit.register(save_pipeline_caches)
    _devices.append(device)


def save_pipeline_caches():
    """Write every used device's pipeline cache (also run at exit)."""
    if not enabled():
        return
    for device in list(_devices):
        try:
            data = device._core.pipeline_cache_data()
        except Exception:  # a lost device or a forked child: nothing to save
            continue
        if data:
            write_atomic(_pipeline_path(device), data)
