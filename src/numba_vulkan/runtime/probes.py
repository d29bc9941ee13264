"""Facts about a driver that only running a kernel reveals, measured when a device is
opened and kept per driver (runtime/disk.py).

- The loop cap: Mesa 22's lavapipe ends every loop nest after 65,535 iterations per
  invocation, silently (gallivm's loop limiter, LP_MAX_TGSI_LOOP_ITERATIONS): summing
  200,000 ones gives 65,535. No Vulkan property reports it, so a probe kernel runs a loop
  longer than that; ``DeviceInfo.loop_iteration_limit`` carries the result (None where
  loops run to the end), and kernels compiled for such a driver count the invocations that
  finish their loops (kir/loop_guard.h).
- The driver self-test (runtime/selftest.py): the primitives exact results rest on.
"""

import numpy as np

from .. import _core
from . import compiler_hook, disk, selftest, sqrt_probe
from .creation import to_device

#: Iterations the probe asks for: past any limit a driver is known to have.
PROBE_ITERATIONS = 1 << 20


def driver_selftest(device):
    """The self-test verdicts of `device`'s driver: cached, else run now (run_selftest) and
    cached. {} where the compiler is not loaded."""
    cached = disk.cached_selftest(device.info)
    if cached is not disk.MISSING:
        return cached
    if not compiler_hook.available():
        return {}
    verdicts = run_selftest(device)
    disk.record_probe(device.info, {"selftest": {"version": selftest.VERSION, "verdicts": verdicts}})
    return verdicts




def matrix_units(device):
    """The matrix units' self-test verdicts of `device`'s driver (runtime/matrix_probe.py):
    cached, else run now and cached. {} where it lists no configuration or the compiler is
    not loaded."""
    from . import matrix_probe

    if not device.info.matrix_shapes or not compiler_hook.available():
        return {}
    cached = disk.cached_matrix_units(device.info)
    if cached is not disk.MISSING:
        return cached
    verdicts = matrix_probe.run(device)
    disk.record_probe(device.info, {"matrix_units": {"version": matrix_probe.VERSION,
                                                     "verdicts": verdicts}})  # fmt: skip
    return verdicts


def _probe_kernel(ones, n, out):
    total = 0
    j = 0
    # n is a parameter: no static bound the compiler could fold; and a loop tested with
    # `!=`, which the compiler never unrolls (unroll/unroll.h): the driver runs every
    # iteration as one.
    while j != n:
        total += ones[j & 1]
        j += 1
    out[0] = total


def loop_iteration_limit(device):
    """The loop cap of `device`'s driver (int), or None if loops run to the end.

    Cached per driver (see the module doc); otherwise measured by a probe
    kernel of PROBE_ITERATIONS iterations on `device`.
    """
    cached = disk.cached_loop_limit(device.info)
    if cached is not disk.MISSING:
        return cached
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
    disk.record_probe(device.info, {"loop_iteration_limit": limit, "probe_result": count})
    return limit


def run_selftest(device):
    """Run the self-test on `device` (a runtime Device): {primitive: verdict}. The probe
    kernel (numba_vulkan.selftest_kernel) is compiled for the raw driver (selftest.RAW)."""
    info = device.info
    with_64 = bool(info.int64 and info.float64)
    rng = np.random.default_rng(20261205)
    n = 512
    token = selftest.RAW.set(True)
    try:
        core, names = compiler_hook.selftest_kernel(device, with_64)
    finally:
        selftest.RAW.reset(token)
    host = {"x32": selftest.float_operands(np.float32, n, rng)}
    host["o32"] = np.zeros((n, selftest.COLUMNS), np.float32)
    if with_64:
        host["x64"] = selftest.float_operands(np.float64, n, rng)
        host["o64"] = np.zeros((n, selftest.COLUMNS), np.float64)
        host["a"] = selftest.int_operands(n, rng)
        host["ua"] = host["a"].view(np.uint64)
        host["f"] = selftest.conversion_operands(n, rng)
        host["out"] = np.zeros((n, 6), np.int64)
        host["uout"] = np.zeros((n, 4), np.uint64)
        for k in selftest.CONVERSION_KINDS:
            host[f"c{np.dtype(k).name}"] = np.zeros(n, k)
    arrays = [to_device(host[name], device=device) for name in names]
    kernel = device._core.load_kernel(core.words, core.push_size)
    launcher = _core.Launcher(device._core, kernel, list(core.args), core.param_size,
                              core.params_in_buffer)  # fmt: skip
    local = 64
    if not launcher.launch(((n + local - 1) // local, 1, 1), (local, 1, 1), tuple(arrays)):
        raise RuntimeError("the self-test's kernel refused its own arguments")
    got = {name: arr.copy_to_host() for name, arr in zip(names, arrays)}
    verdicts = {}
    for dtype, tag in ((np.float32, "32"), (np.float64, "64")):
        if f"x{tag}" not in host:
            lacking = "not run: the device has no int64 or float64"
            verdicts.update({p: lacking for p in selftest.PRIMITIVES if not p.endswith("f32")})
            continue
        x, o = host[f"x{tag}"], got[f"o{tag}"]
        keeps = int(tag) in info.denorm_preserve
        verdicts.update(selftest.float_verdicts(dtype, o, x, keeps))
        verdicts[f"fma_f{tag}"] = selftest.fma_verdict(dtype, o[:, 11], x, keeps)
    if with_64:
        conv = [got[f"c{np.dtype(k).name}"] for k in selftest.CONVERSION_KINDS]
        verdicts.update(selftest.int_verdicts(host["a"], host["f"], got["out"], got["uout"], conv))
    verdicts["sqrt_f32_one_step"] = sqrt_probe.verdict(device)
    return {p: verdicts.get(p, "not run") for p in selftest.PRIMITIVES}
