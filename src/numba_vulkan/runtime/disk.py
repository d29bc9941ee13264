"""numba_vulkan's disk caches as the runtime sees them: where they live, whether
NUMBA_VULKAN_CACHE allows them, whether their files can be trusted, the driver's
pipeline cache (VkPipelineCache) kept per device and driver, and what the driver probes
(runtime/probes.py) found, kept per driver in ``<cache dir>/driver_probes.json``. The
compiled-kernel cache (numba_vulkan.cache) builds on this module.

The cache directory is ``NUMBA_VULKAN_CACHE_DIR``, else ``$XDG_CACHE_HOME/numba_vulkan``
(``~/.cache/numba_vulkan``). A cache that cannot be read or written only costs a probe per
process.
"""

import atexit
import functools
import hashlib
import json
import os
import stat
import tempfile

from .. import config
from . import selftest

_PROBES_FILE = "driver_probes.json"
_PROBES_VERSION = 1  # bump when a probe changes, so that old results are not trusted


def enabled():
    """Whether NUMBA_VULKAN_CACHE allows disk caches (read at each use)."""
    return bool(config.CACHE)


def cache_dir():
    """The folder of numba_vulkan's on-disk caches."""
    if config.CACHE_DIR:
        return config.CACHE_DIR
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "numba_vulkan")


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
    key = hashlib.sha256(driver_key(device.info).encode()).hexdigest()[:32]
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


# ---------------------------------------------------------------- driver probes

#: Environment variables that change the code a CPU driver generates (Mesa's llvmpipe reads
#: them): part of the key of a CPU device, like the CPU's features.
CPU_DRIVER_VARIABLES = ("LP_", "GALLIUM_", "MESA_", "LIBGL_", "DRAW_")


@functools.cache
def _cpu_features():
    """The machine's architecture and CPU feature flags (read once)."""
    import platform

    flags = ""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith(("flags", "Features")):
                    flags = " ".join(sorted(line.split(":", 1)[1].split()))
                    break
    except OSError:
        pass
    return f"{platform.machine()}\n{flags}"


def _cpu_signature():
    """The CPU's features and the variables that steer a CPU driver's code generation, hashed:
    lavapipe's code (and its faults) differs between an AVX2 and an AVX-512 CPU of the same
    driver version, and a home directory's cache may be shared between such machines."""
    import hashlib

    env = sorted(f"{k}={v}" for k, v in os.environ.items() if k.startswith(CPU_DRIVER_VARIABLES))
    text = "\n".join([_cpu_features(), *env])
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def driver_key(info):
    """What identifies a driver build: device, driver name and version string, API version;
    for a CPU device also the CPU's features and the driver's variables (_cpu_signature)."""
    version = ".".join(map(str, info.api_version))
    key = (
        f"v{_PROBES_VERSION}:{info.vendor_id:04x}:{info.device_id:04x}:{info.name}:"
        f"{info.driver_name}:{info.driver_info}:{version}"
    )
    if str(getattr(info, "kind", "")).lower() == "cpu":
        key += f":cpu={_cpu_signature()}"
    return key


def _read_probes():
    path = os.path.join(cache_dir(), _PROBES_FILE)
    try:
        if not trusted(path):  # another user's verdicts would steer our compiler
            return {}
        with open(path) as f:
            data = json.load(f)
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


def record_probe(info, entry):
    """Merge `entry`'s fields into the cached probe results of `info`'s driver."""
    folder = cache_dir()
    key = driver_key(info)
    try:
        os.makedirs(folder, mode=0o700, exist_ok=True)
        if not trusted(os.path.join(folder, _PROBES_FILE)):
            return
        data = _read_probes()
        old = data.get(key)
        data[key] = {**(old if isinstance(old, dict) else {}), **entry}
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".probes.")
        with os.fdopen(fd, "w") as f:
            json.dump(data, f, indent=1, sort_keys=True)
        os.replace(tmp, os.path.join(folder, _PROBES_FILE))  # atomic: concurrent processes are safe
    except OSError:
        pass


#: What the cached_* functions return for a driver the cache knows nothing of.
MISSING = object()


def cached_selftest(info):
    """The cached self-test verdicts of `info`'s driver ({primitive: verdict}), or MISSING."""
    entry = _read_probes().get(driver_key(info))
    found = entry.get("selftest") if isinstance(entry, dict) else None
    if not isinstance(found, dict) or found.get("version") != selftest.VERSION:
        return MISSING
    verdicts = found.get("verdicts")
    if not isinstance(verdicts, dict) or set(verdicts) != set(selftest.PRIMITIVES):
        return MISSING
    if not all(isinstance(v, str) for v in verdicts.values()):
        return MISSING
    return {p: verdicts[p] for p in selftest.PRIMITIVES}


def cached_matrix_units(info):
    """The cached verdicts of the matrix units' self-test for `info`'s driver
    ({configuration: verdict}, runtime/matrix_probe.py), or MISSING."""
    from . import matrix_probe

    entry = _read_probes().get(driver_key(info))
    found = entry.get("matrix_units") if isinstance(entry, dict) else None
    if not isinstance(found, dict) or found.get("version") != matrix_probe.VERSION:
        return MISSING
    verdicts = found.get("verdicts")
    if not isinstance(verdicts, dict) or set(verdicts) != {str(s) for s in info.matrix_shapes}:
        return MISSING
    if not all(isinstance(v, str) for v in verdicts.values()):
        return MISSING
    return dict(verdicts)


def cached_loop_limit(info):
    """The cached result for `info`'s driver: an int, None (no limit), or MISSING."""
    entry = _read_probes().get(driver_key(info))
    if not isinstance(entry, dict) or "loop_iteration_limit" not in entry:
        return MISSING
    value = entry["loop_iteration_limit"]
    return value if value is None or isinstance(value, int) else MISSING
