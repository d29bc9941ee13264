"""Exact float building blocks: Veltkamp's split, Dekker's product, Knuth's sum, and a division
accurate to about half an ulp whatever the driver's division does.

All of them rely on each float op being rounded once, as Vulkan requires for
add, sub and mul and as the NoContraction decoration of the accurate path
guarantees (no fused multiply-add behind our back). OpFDiv is only required to
be within 2.5 ulp (float32; float64 only "as precise as float32"), hence `div`.
The library's own divisions take the driver's quotient (`driver_div`): a kernel's
`/` on float32 is made correctly rounded by a float64 division on devices whose
division is loose (kir/float_division.h), which `div` would pay for and then
redo.

Where the device's GLSL.std.450 Fma rounds once (`b.fused_fma`, set from the
vendor: launchers.fused_fma), Dekker's product is one Fma (fma(x, y, -p) is
exactly x*y - p) and `mul_add` one rounding instead of two: about a quarter of
the instructions of the double-word code, and polynomials at twice the speed.
"""

from ... import _core
from ..arith import const

K = _core.Kind
Op = _core.Op
M = _core.MathFn

_SPLIT = {K.f32: 2.0**12 + 1, K.f64: 2.0**27 + 1}


def split(b, a):
    """Veltkamp's split: a = hi + lo exactly, each half fitting in half the precision."""
    k = b.kind(a)
    c = b.binary(Op.mul, a, const(b, k, _SPLIT[k]))
    hi = b.binary(Op.sub, c, b.binary(Op.sub, c, a))
    return hi, b.binary(Op.sub, a, hi)


def fused(b):
    """True when `b` builds for a device whose Fma rounds once."""
    return getattr(b, "fused_fma", False)


def mul_add(b, a, x, c):
    """a*x + c: one Fma where it rounds once (more accurate, and one instruction), else a
    rounded product and sum."""
    if fused(b):
        return b.math(M.fma, [a, x, c])
    return b.binary(Op.add, b.binary(Op.mul, a, x), c)


def horner(b, cs, x):
    """The polynomial with coefficient values `cs` (already in the IR, lowest degree first)."""
    r = cs[-1]
    for c in reversed(cs[:-1]):
        r = mul_add(b, r, x, c)
    return r


def two_prod(b, x, y):
    """(p, e) with p = fl(x*y) and x*y = p + e exactly (Dekker, or one Fma), for operands far
    from overflow (and from underflow: e must be normal)."""
    p = b.binary(Op.mul, x, y)
    if fused(b):  # p is never subnormal (e normal; a flushing device's product is not either)
        return p, b.math(M.fma, [x, y, _neg_normal(b, p)])
    xh, xl = split(b, x)
    yh, yl = split(b, y)
    e = b.binary(Op.sub, b.binary(Op.mul, xh, yh), p)
    e = b.binary(Op.add, e, b.binary(Op.mul, xh, yl))
    e = b.binary(Op.add, e, b.binary(Op.mul, xl, yh))
    e = b.binary(Op.add, e, b.binary(Op.mul, xl, yl))
    return p, e


def _neg_normal(b, v):
    from .denormals import neg_normal

    return neg_normal(b, v)


def two_sum(b, x, y):
    """(s, e) with s = fl(x+y) and x + y = s + e exactly (Knuth)."""
    s = b.binary(Op.add, x, y)
    bb = b.binary(Op.sub, s, x)
    e = b.binary(
        Op.add,
        b.binary(Op.sub, x, b.binary(Op.sub, s, bb)),
        b.binary(Op.sub, y, bb),
    )
    return s, e


#: float kind -> (its bits' kind, the magnitude mask, the bits of infinity)
_BITS = {K.f32: (K.u32, 0x7FFFFFFF, 0x7F800000),
         K.f64: (K.u64, (1 << 63) - 1, 0x7FF << 52)}  # fmt: skip


def add_to_odd(b, x, y):
    """x + y of two floats of one kind rounded to odd: where the sum is inexact (and finite),
    the float next to it whose last bit is odd. Rounding that once more to a format of at
    most p - 2 significant bits gives the exact sum rounded once (float16's and bfloat16's
    fused multiply-add from float32, float32's from float64: x an exact product; Boldo and
    Melquiond's float64 one, mathlib/fma.py). TwoSum gives the sum and its error; s moves
    one unit in its last place toward the error where its last bit is even (s is not zero
    where the error is not: a zero sum of such operands is exact)."""
    k = b.kind(x)
    uk, mag_mask, inf_bits = _BITS[k]
    s, err = two_sum(b, x, y)
    zero = const(b, k, 0.0)
    u = b.bitcast(uk, s)
    magnitude = b.binary(Op.and_, u, const(b, uk, mag_mask))
    finite = b.compare(Op.lt, magnitude, const(b, uk, inf_bits))
    even = b.compare(Op.eq, b.binary(Op.and_, u, const(b, uk, 1)), const(b, uk, 0))
    inexact = b.binary(Op.and_, b.compare(Op.ne, err, zero), finite)
    # The bits + 1 move away from zero: where the error has s's sign; - 1 where not.
    away = b.compare(Op.eq, b.compare(Op.gt, err, zero), b.compare(Op.gt, s, zero))
    moved = b.select(away, b.binary(Op.add, u, const(b, uk, 1)),
                     b.binary(Op.sub, u, const(b, uk, 1)))  # fmt: skip
    return b.bitcast(k, b.select(b.binary(Op.and_, inexact, even), moved, u))


def driver_div(b, x, y):
    """x / y as the driver's OpFDiv gives it: within 2.5 ulp on float32 (float64: at least as
    precise as float32) for |y| in [2^-126, 2^126], where every caller keeps its divisor
    (docs/math.md, "Division"; outside, the quotient must go unused). For quotients corrected
    afterwards (`div`), first guesses and correction terms far below an ulp of a result:
    never rewritten into a float64 division, nor scaled for NVIDIA's large divisors (kir.h
    DivPrecision::kDriver)."""
    return b.driver_div(x, y)


def div(b, x, y, moderate=True):
    """x / y to within about 0.5 ulp: q = x * (1/y) from the driver's reciprocal, then Newton
    corrections on the exact remainder x - q*y (one for float32, two for float64).

    For x / y in the normal range, |x| above about 2^-100 (float32) so that the remainder does
    not underflow, and y far from overflow; callers keep operands moderate. `moderate` (the
    default): |y| is within float32's normal range (2^-120 to 2^120), so that float64 starts
    from a float32 reciprocal and one Newton step (2^-22 -> 2^-44) instead of a float64
    division (a long sequence on NVIDIA); cmath's sqrt, whose divisor may be larger, says
    False. One reciprocal, not a second division for q: x * (1/y) is within a few ulp, which
    the corrections remove as they remove the driver's error.
    """
    return div_inv(b, x, y, moderate)[0]


def div_inv(b, x, y, moderate=True):
    """(div's x / y, the reciprocal 1/y it used: for a correction term's division by y)."""
    k = b.kind(x)
    if k == K.f64 and moderate:
        from .denormals import convert_normal

        inv = convert_normal(b, K.f64, driver_div(
            b, const(b, K.f32, 1.0), convert_normal(b, K.f32, y)))
        inv = mul_add(b, inv, mul_add(b, b.unary(Op.neg, y), inv, const(b, k, 1.0)), inv)
    else:
        inv = driver_div(b, const(b, k, 1.0), y)
    q = b.binary(Op.mul, x, inv)
    for _ in range(1 if k == K.f32 else 2):
        if fused(b):  # the remainder rounded once (exact where q is faithful), the step too
            r = b.math(M.fma, [_neg_normal(b, q), y, x])
            q = b.math(M.fma, [r, inv, q])
            continue
        p, e = two_prod(b, q, y)
        r = b.binary(Op.sub, b.binary(Op.sub, x, p), e)
        q = b.binary(Op.add, q, b.binary(Op.mul, r, inv))
    return q, inv


# ---------------------------------------------------------------- double words (hi, lo), |lo| <= ulp(hi)/2


def fast_two_sum(b, x, y):
    """(s, e) with s + e = x + y exactly, for |x| >= |y| (or x == 0)."""
    s = b.binary(Op.add, x, y)
    return s, b.binary(Op.sub, y, b.binary(Op.sub, s, x))


def dw_add(b, x, y):
    """(xh + xl) + (yh + yl) as a double word (relative error about 2^-2p)."""
    s, e = two_sum(b, x[0], y[0])
    e = b.binary(Op.add, e, b.binary(Op.add, x[1], y[1]))
    return fast_two_sum(b, s, e)


def dw_mul(b, x, y):
    """(xh + xl) * (yh + yl) as a double word."""
    p, e = two_prod(b, x[0], y[0])
    e = b.binary(
        Op.add, e, b.binary(Op.add, b.binary(Op.mul, x[0], y[1]), b.binary(Op.mul, x[1], y[0]))
    )
    return fast_two_sum(b, p, e)


def dw_div(b, x, y):
    """(xh + xl) / (yh + yl) as a double word (y far from 0 and from overflow; yh within
    float32's normal range, as div's `moderate`). The low word, a correction below an ulp of
    the high one, is the remainder times div's reciprocal (accurate to 2^-22 or better)."""
    q, inv = div_inv(b, x[0], y[0])
    p, e = two_prod(b, q, y[0])
    r = b.binary(Op.sub, b.binary(Op.sub, x[0], p), e)
    r = b.binary(Op.sub, b.binary(Op.add, r, x[1]), b.binary(Op.mul, q, y[1]))
    return fast_two_sum(b, q, b.binary(Op.mul, r, inv))


def dw_sqrt(b, x, sqrt):
    """sqrt(xh + xl) as a double word, from a correctly rounded `sqrt` of one word."""
    k = b.kind(x[0])
    s = sqrt(b, x[0])
    p, e = two_prod(b, s, s)
    r = b.binary(Op.add, b.binary(Op.sub, b.binary(Op.sub, x[0], p), e), x[1])
    zero = const(b, k, 0.0)
    is_zero = b.compare(Op.eq, s, zero)
    two_s = b.select(is_zero, const(b, k, 1.0), b.binary(Op.mul, s, const(b, k, 2.0)))
    return fast_two_sum(b, s, b.select(is_zero, zero, driver_div(b, r, two_s)))
