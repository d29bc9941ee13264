"""Session 24 probe: small changes to the float64 short paths of sin, cos and exp, each compiled
into a kernel of its own (the library patched while it compiles) and timed round by round in
turn with the others in one process, numba.cuda's chain (libdevice) in the same rounds.

    main        as shipped
    light_rare  sin's and cos's rare block (the full reduction beyond 2^20, 54 registers for the
                chain) replaced by a short register-light stand-in that keeps the branch: what a
                register-light full reduction could give (the benchmark's operands never take it)
    fabs        float64 |x| by GLSL.std.450 FAbs instead of clearing the sign bit (the driver
                may fold it into the instruction using it); the same bits
    exp_fma     exp's short path ending e = fma(r, fma(r, p, 1), 1) instead of 1 + r as a
                Fast2Sum double word plus r^2 p (4 float64 operations fewer; error bound about
                0.9 ulp, not 0.76)
    fabs_exp    fabs and exp_fma
    all         the three together

    python3 benchmarks/experiments/s24_trig_variants.py [--log2 24] [--rounds 5]
"""

import argparse
import contextlib
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import bench_math  # noqa: E402

from numba_vulkan import _core  # noqa: E402
from numba_vulkan.frontend.arith import const  # noqa: E402
from numba_vulkan.frontend.mathlib import bits, dd, explog, rare  # noqa: E402

K, Op, M = _core.Kind, _core.Op, _core.MathFn


@contextlib.contextmanager
def patched(module, name, value):
    old = getattr(module, name)
    setattr(module, name, value)
    try:
        yield
    finally:
        setattr(module, name, old)


def _light_branch(inner):
    def branch(b, cond, values, body, tag):
        if tag != "trig":
            return inner(b, cond, values, body, tag)

        def light(*vals):  # ~16 dependent float64 operations, few registers
            x, qb, rh, rl = vals
            h = rh
            for _ in range(8):
                h = dd.mul_add(b, h, const(b, K.f64, 0.5), const(b, K.f64, 0.25))
            return x, qb, h, rl

        return inner(b, cond, values, light, tag)

    return branch


def _fabs(inner):
    def fabs(b, v):
        return b.math(M.abs, [v]) if b.kind(v) == K.f64 else inner(b, v)

    return fabs


def _exp_short_fma(b, x):
    """explog._exp_short with e = fma(r, fma(r, p, 1), 1)."""
    k = b.kind(x)
    ik, mbits, bias, prec = bits.LAYOUT[k]
    inside = b.compare(Op.le, bits.fabs(b, x), const(b, k, explog._EXP_DIRECT[k]))
    magic = const(b, k, 1.5 * 2.0 ** (prec - 1))
    t = dd.mul_add(b, x, explog._c(b, k, "INV_LN2"), magic)
    kf = b.binary(Op.sub, t, magic)
    hi_, lo_ = explog.coeffs.LN2_HI_F64, explog.coeffs.LN2_LO_F64
    r = dd.mul_add(b, kf, const(b, k, -hi_), x)
    r = dd.mul_add(b, kf, const(b, k, -lo_), r)
    one = const(b, k, 1.0)
    p = explog._horner(b, explog.coeffs.EXP_F64, r)
    e = dd.mul_add(b, r, dd.mul_add(b, r, p, one), one)
    scale = b.binary(Op.shl, b.binary(Op.add, bits.to_bits(b, t), const(b, ik, bias)),
                     const(b, ik, mbits))  # fmt: skip
    v = b.binary(Op.mul, e, bits.from_bits(b, k, scale))
    _, v = rare.branch(b, b.unary(Op.not_, inside), (x, v),
                       lambda xs, _: (xs, explog._exp_full(b, xs)), "exp")  # fmt: skip
    return v


def patches(variant):
    stack = contextlib.ExitStack()
    names = {"all": ("light_rare", "fabs", "exp_fma"),
             "fabs_exp": ("fabs", "exp_fma")}.get(variant, (variant,))
    if "light_rare" in names:
        stack.enter_context(patched(rare, "branch", _light_branch(rare.branch)))
    if "fabs" in names:
        stack.enter_context(patched(bits, "fabs", _fabs(bits.fabs)))
    if "exp_fma" in names:
        stack.enter_context(patched(explog, "_exp_short", _exp_short_fma))
    return stack


def main(argv=None):
    parser = argparse.ArgumentParser()
    bench_math.add_timing_arguments(parser)
    parser.add_argument("--variants", default="main,light_rare,fabs,exp_fma,fabs_exp,all")
    args = parser.parse_args(argv)
    np.row_stack = np.vstack  # numba-cuda 0.30 on NumPy 2.5
    from backends import VulkanBackend

    vk, cu = VulkanBackend(), bench_math.cuda_or_none()
    n = 1 << args.log2
    x = bench_math.trig_chain_input(n)
    group = bench_math.BLOCK
    groups = (n + group - 1) // group
    dx, out = vk.to_device(x), bench_math.device_array(vk, n, np.float64)
    runs, stats, results = {}, {}, {}
    for v in args.variants.split(","):
        with patches(v if v != "main" else "none"):
            k = bench_math.build(vk, bench_math.TRIG_CHAIN, "trig_chain", np.float64, False)
            k[groups, group](dx, out)  # compiles with the patch in place
            vk.synchronize()
        results[v] = out.copy_to_host()
        stats[v] = vk.pipeline_stats(k, (dx, out), group)
        runs[v] = (vk, lambda k=k: k[groups, group](dx, out))
    ref = results[next(iter(results))]
    for v, got in results.items():
        diff = np.max(np.abs(got - ref) / np.maximum(np.abs(ref), 1e-300))
        print(f"{v}: same bits {bool(np.array_equal(got, ref))}, max relative difference "
              f"{float(diff):.3g}, {json.dumps(stats[v])}")
    if cu is not None:
        cx, cout = cu.to_device(x), bench_math.device_array(cu, n, np.float64)
        ck = bench_math.build(cu, bench_math.TRIG_CHAIN, "trig_chain", np.float64, False)
        runs["numba.cuda"] = (cu, lambda: ck[groups, group](cx, cout))
    seconds = bench_math.time_in_turn(runs, args)
    bench_math.report_rates(seconds, n, args.out, pipeline=stats)

if __name__ == "__main__":
    main()
