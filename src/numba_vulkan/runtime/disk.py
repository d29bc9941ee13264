"""numba_vulkan's disk caches as the runtime sees them: where they live, whether
NUMBA_VULKAN_CACHE allows them, and the driver's pipeline cache (VkPipelineCache),
kept per device and driver. The compiled-kernel cache (numba_vulkan.cache) builds on
this module; the runtime never imports the compiler.
"""

import atexit
import hashlib
import os
import stat
import tempfile

from .. import config


def enabled():
    """Whether NUMBA_VULKAN_CACHE allows disk caches (read at each use)."""
    return bool(config.CACHE)


def cache_dir():
    """The folder of numba_vulkan's on-disk caches."""
    from . import probes

    return probes.cache_dir()


def _owned_and_private(st):
    """Whether a stat result belongs to this user (or root) and is not writable by others."""
    return st.st_uid in (os.getuid(), 0) and not st.st_mode & (stat.S_IWGRP | stat.S_IWOTH)


_warned = set()


def trusted(path):
    """Whether `path`, and every folder from the cache directory down to it, belongs to this
    user (or root) and is writable by no one else, as Python's and SSH's own caches require:
    another user who can write there could replace an entry, and a kernel entry is a pickle,
    which runs code when read. A path that does not exist is trusted if its folders are (it
    is created private). Untrusted folders are named once in a RuntimeWarning."""
    root = os.path.abspath(cache_dir())
    path = os.path.abspath(path)
    parts = [root]
    rel = os.path.relpath(path, root)
    if not rel.startswith(".."):
        for name in rel.split(os.sep):
            if name != ".":
                parts.append(os.path.join(parts[-1], name))
    for part in parts:
        try:
            st = os.stat(part)
        except FileNotFoundError:
            return True  # made by this process, private
        except OSError:
            return False
        if not _owned_and_private(st):
            if part not in _warned:
                _warned.add(part)
                import warnings

                warnings.warn(
                    f"numba_vulkan's cache {part!r} belongs to another user or is writable by "
                    f"others (owner uid {st.st_uid}, mode {stat.S_IMODE(st.st_mode):o}): its "
                    "entries are neither read nor written, since another user could plant "
                    "code in them. Set NUMBA_VULKAN_CACHE_DIR to a folder of your own.",
                    RuntimeWarning,
                    stacklevel=3,
                )
            return False
    return True


def write_atomic(path, data):
    """Write `data` to `path` through a temporary file (readers never see half a file);
    a folder that cannot be written, or that is not trusted(), is not an error (the cache
    is then not kept). New folders are private (0700)."""
    folder = os.path.dirname(path)
    try:
        os.makedirs(folder, mode=0o700, exist_ok=True)
        if not trusted(path):
            return
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
        if not trusted(_pipeline_path(device)):
            raise OSError("not trusted")
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
