"""Session 19: is the float64 trig chain (bench_math.py) bound by its float64 operations?

Each variant in a process of its own, numba.cuda's figure beside main's in the same run:

  main         as shipped
  exp_sum      exp's short path as e = 1 + (r + r^2 p(r)), the sum rounded once, instead of
               1 + r kept exact by Fast2Sum: 3 float64 operations fewer per exp (up to about
               0.25 ulp less accurate: a probe, not a candidate as it stands)
  norare_trig  sin's and cos's full reduction left out (what that rare block costs)

    python3 benchmarks/experiments/s19_trig_variants.py [--out FILE] [--only a,b]
"""

import os
import sys
from pathlib import Path

os.environ.setdefault("NUMBA_VULKAN_CACHE", "0")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

VARIANTS = {name: ("trig_chain_f64",) for name in ("main", "exp_sum", "norare_trig")}


def apply(variant):
    from numba_vulkan.frontend.mathlib import bits, coeffs, dd, explog, rare
    from numba_vulkan.frontend.arith import const

    if variant == "norare_trig":
        inner = rare.branch
        rare.branch = lambda b, cond, values, body, tag: (
            tuple(values) if tag == "trig" else inner(b, cond, values, body, tag))
    elif variant == "exp_sum":
        Op = explog.Op

        def short(b, x):
            k = b.kind(x)
            ik, mbits, bias, prec = bits.LAYOUT[k]
            inside = explog.denormals.compare_normal(b, Op.le, bits.fabs(b, x),
                                                     const(b, k, explog._EXP_DIRECT[k]))
            magic = const(b, k, 1.5 * 2.0 ** (prec - 1))
            t = dd.mul_add(b, x, explog._c(b, k, "INV_LN2"), magic)
            kf = b.binary(Op.sub, t, magic)
            w = explog._W[k]
            r = dd.mul_add(b, kf, const(b, k, -getattr(coeffs, f"LN2_HI_{w}")), x)
            r = dd.mul_add(b, kf, const(b, k, -getattr(coeffs, f"LN2_LO_{w}")), r)
            p = explog._horner(b, getattr(coeffs, f"EXP_{w}"), r)
            e = b.binary(Op.add, const(b, k, 1.0), dd.mul_add(b, b.binary(Op.mul, r, r), p, r))
            scale = b.binary(Op.shl, b.binary(Op.add, bits.to_bits(b, t), const(b, ik, bias)),
                             const(b, ik, mbits))
            v = b.binary(Op.mul, e, bits.from_bits(b, k, scale))
            _, v = rare.branch(b, b.unary(Op.not_, inside), (x, v),
                               lambda xs, _: (xs, explog._exp_full(b, xs)), "exp")
            return v

        explog._exp_short = short


def main(argv=None):
    """s16_math_variants' runner: each variant in a process of its own."""
    import s16_math_variants

    return s16_math_variants.main(argv, VARIANTS, apply, __file__, __doc__)


if __name__ == "__main__":
    sys.exit(main())
