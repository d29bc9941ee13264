"""Session 24 probe: is the float64 trig chain's gap to libdevice in our algorithms or in the
Vulkan driver's compilation of them?

bench_math.py's chain (eight rounds of v = sin(v) cos(v/2) + exp(-v^2)) written three ways
and timed in the same rounds:

    vulkan        numba_vulkan as shipped (the accurate library, mathlib/trig.py, explog.py)
    cuda_libdev   numba.cuda with math.sin/cos/exp (libdevice: sin and cos documented at 2 ulp)
    cuda_ours     numba.cuda with our short paths written out in CUDA Python: the same
                  operations and coefficients (trig._reduce_short and _kernel, explog._exp_short;
                  coeffs.py), libdevice's own function taking the rare operands (|x| > 2^20 for
                  sin and cos, |x| > 708 for exp) in a branch as ours does. NVVM may contract
                  a product and a sum into an Fma where the library keeps them apart
                  (NoContraction), so this is, if anything, cheaper than ours.

If cuda_ours runs near cuda_libdev, the gap is in how the driver compiles our SPIR-V; if near
vulkan, it is in the algorithms (the float64 work that keeps sin and cos within 1 ulp).

The recorded run (benchmarks/results/h200_2026-12-02_s24_*) timed them in a fixed order each
round; the probe now takes bench_math.time_in_turn's turning order. cuda_ours is the short
paths as they were before session 24's changes (15.0 again on the final code, where the Vulkan
kernel ran at 18.5 against libdevice's 22.7).

    python3 benchmarks/experiments/s24_cuda_ours.py [--log2 24] [--rounds 5]
"""

import argparse
import json
import math
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import bench_math  # noqa: E402

from numba_vulkan.frontend.mathlib import coeffs  # noqa: E402


def _horner(cs, var):
    """Source of the polynomial (coefficients lowest degree first) by Fmas, as dd.horner."""
    acc = repr(cs[-1])
    for c in reversed(cs[:-1]):
        acc = f"cuda.fma({acc}, {var}, {c!r})"
    return acc


def _trig(name):
    """Source of sin's or cos's short path (trig._short with _reduce_short's fused form)."""
    cosine = name == "cos"
    quadrant = "    qb += 1\n" if cosine else ""
    sign = "" if cosine else "    sign ^= ld.double_as_longlong(x)\n"
    p0, p1, p2 = (repr(w) for w in coeffs.PIO2_FMA_F64)
    return f"""
@cuda.jit(device=True, inline=True)
def _{name}(x):
    ax = abs(x)
    if ax > 1048576.0:
        return ld.{name}(x)
    t = cuda.fma(ax, {2.0 / math.pi!r}, MAGIC)
    qb = ld.double_as_longlong(t)
    q = t - MAGIC
    nq = -q
    r1 = cuda.fma(nq, {p0}, ax)
    rh = r1 - q * {p1}
    lo = cuda.fma(nq, {p1}, r1 - rh)
    rl = cuda.fma(nq, {p2}, lo)
{quadrant}    z = rh * rh
    zl = cuda.fma(rh, rh, -z)
    w = cuda.fma(z, -0.5, 1.0)
    we = cuda.fma(z, -0.5, 1.0 - w)
    ps = {_horner(coeffs.SIN_SHORT_F64, "z")}
    pc = {_horner(coeffs.COS_SHORT_F64, "z")}
    vs = rh + cuda.fma(rh * z, ps, rl * w)
    corr = cuda.fma(-rh, rl, cuda.fma(zl, -0.5, we))
    vc = w + cuda.fma(z * z, pc, corr)
    v = vc if (qb & 1) != 0 else vs
    sign = qb << 62
{sign}    sign &= -9223372036854775808
    return ld.longlong_as_double(ld.double_as_longlong(v) ^ sign)
"""


OURS = f"""
from numba import cuda
from numba.cuda import libdevice as ld

MAGIC = {1.5 * 2.0 ** 52!r}


{_trig("sin")}{_trig("cos")}@cuda.jit(device=True, inline=True)
def _exp(x):
    if not abs(x) <= 708.0:
        return ld.exp(x)
    t = cuda.fma(x, {coeffs.INV_LN2_F64!r}, MAGIC)
    kf = t - MAGIC
    r = cuda.fma(kf, {-coeffs.LN2_HI_F64!r}, x)
    r = cuda.fma(kf, {-coeffs.LN2_LO_F64!r}, r)
    hi = 1.0 + r
    lo = (1.0 - hi) + r
    p = {_horner(coeffs.EXP_F64, "r")}
    e = hi + cuda.fma(r * r, p, lo)
    scale = (ld.double_as_longlong(t) + 1023) << 52
    return e * ld.longlong_as_double(scale)


@cuda.jit
def trig_chain_ours(x, out):
    i = cuda.grid(1)
    if i < x.size:
        v = x[i]
        acc = 0.0
        for _ in range(8):
            v = _sin(v) * _cos(v * 0.5) + _exp(-v * v)
            acc += v
        out[i] = acc
"""


def main(argv=None):
    parser = argparse.ArgumentParser()
    bench_math.add_timing_arguments(parser)
    args = parser.parse_args(argv)
    np.row_stack = np.vstack  # numba-cuda 0.30 on NumPy 2.5
    from backends import CudaBackend, VulkanBackend

    vk, cu = VulkanBackend(), CudaBackend()
    n = 1 << args.log2
    x = bench_math.trig_chain_input(n)
    group = bench_math.BLOCK
    groups = (n + group - 1) // group
    ns = {}
    exec(compile(OURS, "<s24 cuda_ours>", "exec"), ns)  # noqa: S102
    runs = {}
    vx, vout = vk.to_device(x), bench_math.device_array(vk, n, np.float64)
    kv = bench_math.build(vk, bench_math.TRIG_CHAIN, "trig_chain", np.float64, False)
    runs["vulkan"] = (vk, lambda: kv[groups, group](vx, vout), vout)
    cx, cout = cu.to_device(x), bench_math.device_array(cu, n, np.float64)
    kc = bench_math.build(cu, bench_math.TRIG_CHAIN, "trig_chain", np.float64, False)
    runs["cuda_libdev"] = (cu, lambda: kc[groups, group](cx, cout), cout)
    ox = cu.to_device(x)
    oout = bench_math.device_array(cu, n, np.float64)
    ko = ns["trig_chain_ours"]
    runs["cuda_ours"] = (cu, lambda: ko[groups, group](ox, oout), oout)
    for name, (backend, run, out) in runs.items():
        run()
        backend.synchronize()
    ref = runs["cuda_libdev"][2].copy_to_host()
    for name, (_, _, out) in runs.items():
        got = out.copy_to_host()
        print(f"{name}: max relative difference from libdevice's chain "
              f"{float(np.max(np.abs(got - ref) / np.maximum(np.abs(ref), 1e-300))):.3g}")
    regs = {}
    try:
        for name, k in (("cuda_ours", ko), ("cuda_libdev", kc)):
            regs[name] = {str(sig): v for sig, v in k.get_regs_per_thread().items()}
    except Exception as e:  # noqa: BLE001
        regs["error"] = str(e)
    regs["vulkan"] = vk.pipeline_stats(kv, (vx, vout), group)
    print("registers:", json.dumps(regs))
    timed_runs = {name: (backend, run) for name, (backend, run, _) in runs.items()}
    seconds = bench_math.time_in_turn(timed_runs, args)
    bench_math.report_rates(seconds, n, args.out, registers=regs)

if __name__ == "__main__":
    main()
