"""Rounding to integers: floor, ceil, trunc (the exact GLSL.std.450 ops) and round-half-even.

Vulkan requires Floor, Ceil and Trunc to be exact. RoundEven is not in KIR's
math set, and is built here from exact additions: for |x| < 2**(prec-1),
(|x| + 2**(prec-1)) - 2**(prec-1) rounds |x| to an integer in the
round-to-nearest-even mode that Vulkan's correctly rounded OpFAdd uses (the
kernel's float ops carry NoContraction, so the driver may not fold the pair
away); larger values are already integers.
"""

from ... import _core
from ..arith import const
from . import bits, denormals

K = _core.Kind
Op = _core.Op
M = _core.MathFn


def floor(b, x):
    return _unit_for_subnormal(b, x, b.math(M.floor, [x]), True)


def ceil(b, x):
    return _unit_for_subnormal(b, x, b.math(M.ceil, [x]), False)


def _unit_for_subnormal(b, x, r, negative):
    """On a device that flushes subnormals Floor(-1e-45) gives -0.0: -1 (floor of a negative
    subnormal) or 1 (ceil of a positive one), from the bits."""
    if b.kind(x) != K.f32 or not denormals.flushes(b):
        return r
    pick = bits.both(b, bits.is_subnormal(b, x), bits.sign_bit(b, x) if negative else
                     b.unary(Op.not_, bits.sign_bit(b, x)))  # fmt: skip
    return b.select(pick, const(b, K.f32, -1.0 if negative else 1.0), r)


def trunc(b, x):
    return b.math(M.trunc, [x])


def rint_small(b, x):
    """rint(x) for |x| < 2**(prec-2) (NaN stays NaN): (x + 1.5 * 2**(prec-1)) - 1.5 * 2**(prec-1),
    two exact additions (the sum lies in [2**(prec-1), 2**prec), where the spacing is 1), for
    arguments the caller has bounded (exp's k = rint(x / ln 2) on a clamped x)."""
    k = b.kind(x)
    shifter = const(b, k, 1.5 * 2.0 ** (bits.LAYOUT[k][3] - 1))
    return b.binary(Op.sub, b.binary(Op.add, x, shifter), shifter)


def rint(b, x):
    """x rounded to the nearest integer, ties to even (C99 rint, NumPy rint, Python round)."""
    k = b.kind(x)
    prec = bits.LAYOUT[k][3]
    big = const(b, k, 2.0 ** (prec - 1))
    ax = bits.fabs(b, x)
    r = b.binary(Op.sub, b.binary(Op.add, ax, big), big)
    r = bits.copysign(b, r, x)  # -0.4 -> -0.0, as C99 rint
    return b.select(b.compare(Op.lt, ax, big), r, x)  # NaN and inf fail the test and pass through
