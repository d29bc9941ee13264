"""Facts about a driver that only running a kernel reveals.

Mesa 22's lavapipe ends every loop nest after 65,535 iterations per
invocation, silently (gallivm's loop limiter, LP_MAX_TGSI_LOOP_ITERATIONS):
summing 200,000 ones gives 65,535. No Vulkan property reports it, so a probe
kernel runs a loop longer than that once per driver version and the result is
kept in ``<cache dir>/driver_probes.json``; ``DeviceInfo.loop_iteration_limit``
carries it (None where loops run to the end), and the dispatcher warns about
kernels whose loops could pass it.

The cache directory is ``NUMBA_VULKAN_CACHE_DIR``, else
``$XDG_CACHE_HOME/numba_vulkan`` (``~/.cache/numba_vulkan``). A cache that
cannot be read or written only costs a probe per process.
"""

import functools
import json
import os
import tempfile

import numpy as np

from .. import config

#: Iterations the probe asks for: past any limit a driver is known to have.
PROBE_ITERATIONS = 1 << 20
_VERSION = 1  # bump when the probe changes, so that old results are not trusted
_FILE = "driver_probes.json"


def cache_dir():
    """The folder of numba_vulkan's on-disk caches."""
    if config.CACHE_DIR:
        return config.CACHE_DIR
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "numba_vulkan")


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
        f"v{_VERSION}:{info.vendor_id:04x}:{info.device_id:04x}:{info.name}:"
        f"{info.driver_name}:{info.driver_info}:{version}"
    )
    if str(getattr(info, "kind", "")).lower() == "cpu":
        key += f":cpu={_cpu_signature()}"
    return key


def _read():
    from . import disk

    path = os.path.join(cache_dir(), _FILE)
    try:
        if not disk.trusted(path):  # another user's verdicts would steer our compiler
            return {}
        with open(path) as f:
            data = json.load(f)
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


def _write(key, entry):
    """Merge `entry`'s fields into the cached entry of `key`."""
    from . import disk

    folder = cache_dir()
    try:
        os.makedirs(folder, mode=0o700, exist_ok=True)
        if not disk.trusted(os.path.join(folder, _FILE)):
            return
        data = _read()
        old = data.get(key)
        data[key] = {**(old if isinstance(old, dict) else {}), **entry}
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".probes.")
        with os.fdopen(fd, "w") as f:
            json.dump(data, f, indent=1, sort_keys=True)
        os.replace(tmp, os.path.join(folder, _FILE))  # atomic: concurrent processes are safe
    except OSError:
        pass


_MISSING = object()


def cached_selftest(info):
    """The cached self-test verdicts of `info`'s driver ({primitive: verdict}), or _MISSING."""
    from . import selftest

    entry = _read().get(driver_key(info))
    found = entry.get("selftest") if isinstance(entry, dict) else None
    if not isinstance(found, dict) or found.get("version") != selftest.VERSION:
        return _MISSING
    verdicts = found.get("verdicts")
    if not isinstance(verdicts, dict) or set(verdicts) != set(selftest.PRIMITIVES):
        return _MISSING
    if not all(isinstance(v, str) for v in verdicts.values()):
        return _MISSING
    return {p: verdicts[p] for p in selftest.PRIMITIVES}


def driver_selftest(device):
    """The self-test verdicts of `device`'s driver: cached, else run now (selftest.run) and
    cached. {} where the compiler is not loaded."""
    cached = cached_selftest(device.info)
    if cached is not _MISSING:
        return cached
    from . import compiler_hook, selftest

    if not compiler_hook.available():
        return {}
    verdicts = selftest.run(device)
    _write(driver_key(device.info), {"selftest": {"version": selftest.VERSION, "verdicts": verdicts}})
    return verdicts


def cached_loop_limit(info):
    """The cached result for `info`'s driver: an int, None (no limit), or _MISSING."""
    entry = _read().get(driver_key(info))
    if not isinstance(entry, dict) or "loop_iteration_limit" not in entry:
        return _MISSING
    value = entry["loop_iteration_limit"]
    return value if value is None or isinstance(value, int) else _MISSING


def _probe_kernel(ones, n, out):
    total = 0
    for j in range(n):  # n is a parameter: no static bound the compiler could fold
        total += ones[j & 1]
    out[0] = total


def loop_iteration_limit(device):
    """The loop cap of `device`'s driver (int), or None if loops run to the end.

    Cached per driver (see the module doc); otherwise measured by a probe
    kernel of PROBE_ITERATIONS iterations on `device`.
    """
    cached = cached_loop_limit(device.info)
    if cached is not _MISSING:
        return cached
    from . import compiler_hook

    if not compiler_hook.available():  # only numba_vulkan.runtime is loaded: not known
        return None
    kernel = compiler_hook.jit(_probe_kernel)
    ones = np.ones(2, np.int32)
    out = np.zeros(1, np.int32)
    kernel.forall(1, device=device, local_size=1)(ones, np.int32(PROBE_ITERATIONS), out)
    count = int(out[0])
    if count <= 0:  # the probe itself went wrong: say nothing rather than something false
        return None
    limit = None if count >= PROBE_ITERATIONS else count
    _write(driver_key(device.info), {"loop_iteration_limit": limit, "probe_result": count})
    return limit
