"""Correctly rounded sqrt and a <= 1 ulp hypot, from exactly rounded ops.

Vulkan does not require OpSqrt / GLSL Sqrt to be correctly rounded (float32:
"inherited from 1.0 / inversesqrt()", several ulp; float64: only as precise
as float32), so sqrt is computed here:

1. x = xs * 4**j with xs in [1, 4) (frexp on the bits, exact);
2. a float32 first guess y = InverseSqrt(xs) from the driver (any precision of a
   few ulp of float32 will do), then Newton steps on y ~ 1/sqrt(xs) with
   multiplications and additions only (one for float32, two for float64:
   2**-21 -> 2**-42 -> beyond 2**-53), s = xs * y;
3. one step s += r * y / 2 on the exact residual r = xs - s*s (Dekker's
   product, which needs no fma: float ops carry NoContraction);
4. the exact rounding test, twice: with r exact (it is representable when s
   is within one ulp), sqrt(xs) lies above the midpoint s + u/2 (u = the ulp
   above s) iff r > s*u, and below the midpoint s - d/2 (d = the ulp below s)
   iff r <= -s*d; both products are exact (u, d powers of two) and equality
   cannot happen on the upper side and means "below" on the lower side
   (x - s*s is a multiple of the midpoint granularity; see docs/math.md);
5. the result s * 2**j, exact since j keeps it normal.

Where the device's Fma rounds once, _sqrt_fused replaces steps 2 to 4 (no division, a
cheaper exact rounding decision).
"""

from ... import _core
from ..arith import const
from . import bits, denormals, rare
from .dd import driver_div, fused, two_prod, two_sum

K = _core.Kind
Op = _core.Op
M = _core.MathFn


def _residual(b, x, s):
    """x - s*s, exact when s is within an ulp of sqrt(x) (the true residual is then representable)."""
    p, e = two_prod(b, s, s)
    return b.binary(Op.sub, b.binary(Op.sub, x, p), e)


def _driver_rsqrt(b, x):
    """The driver's float32 InverseSqrt (Vulkan: 2 ulp); moved by 2 ulp where the library's
    driver quotients are made loose (tests: NUMBA_VULKAN_DRIVER_DIV=loose), as they are."""
    return denormals.loosen(b, b.math(M.inverse_sqrt, [x]))


def _first_guess(b, x):
    """y0 ~ 1/sqrt(x) to float32's precision (the driver's InverseSqrt; float64 through
    float32), x in [1, 4) or within _DIRECT."""
    k = b.kind(x)
    if k == K.f32:
        return _driver_rsqrt(b, x)
    y32 = _driver_rsqrt(b, denormals.convert_normal(b, K.f32, x))
    return denormals.convert_normal(b, k, y32)


def _newton_rsqrt(b, x, y):
    """One Newton step on y ~ 1/sqrt(x): y + y (1/2 - x y^2 / 2), squaring y's relative error."""
    k = b.kind(x)
    half = const(b, k, 0.5)
    t = b.binary(Op.mul, b.binary(Op.mul, x, y), y)
    return b.binary(Op.add, y, b.binary(Op.mul, y, b.binary(Op.sub, half, b.binary(Op.mul, half, t))))


def _residual_step(b, x, s, y):
    """s + (x - s^2) y/2 on the exact residual: squares s's relative error, given y ~ 1/s."""
    half = const(b, b.kind(x), 0.5)
    return b.binary(Op.add, s, b.binary(Op.mul, _residual(b, x, s), b.binary(Op.mul, half, y)))


def _round_test(b, x, s):
    """The correctly rounded sqrt(x) from an s within one ulp of it: s, or its neighbour on the
    side where sqrt(x) lies beyond the midpoint (the exact rounding test of the module's step 4).
    x and s must keep r = x - s*s and s*ulp(s) normal (or r zero): x in [1, 4), or within
    _DIRECT, where r is a multiple of at least 2^-106 and s*ulp(s) at least 2^-83."""
    k = b.kind(x)
    ik = bits.int_kind(k)
    r = _residual(b, x, s)
    sb = bits.to_bits(b, s)
    s_up = bits.from_bits(b, k, b.binary(Op.add, sb, const(b, ik, 1)))
    s_dn = bits.from_bits(b, k, b.binary(Op.sub, sb, const(b, ik, 1)))
    up = denormals.compare_normal(b, Op.gt, r, b.binary(Op.mul, s, b.binary(Op.sub, s_up, s)))
    down = denormals.compare_normal(b, Op.le, r, b.binary(Op.mul, s, b.binary(Op.sub, s_dn, s)))
    return b.select(up, s_up, b.select(down, s_dn, s))


def _fused_residual(b, x, s):
    """fma(-s, s, x): s is never subnormal, the device's negation folds."""
    return b.math(M.fma, [denormals.neg_normal(b, s), s, x])


def one_step32(b, x):
    """Steps 1 and 2 of _sqrt_fused (float32): s = fma(fma(-s0, s0, x), y/2, s0), s0 = x y, y the
    driver's InverseSqrt of float32 x within _DIRECT; faithful, and correctly rounded where the
    device's self-test says so (runtime/sqrt_probe.py runs this very form)."""
    y = _driver_rsqrt(b, x)
    s0 = b.binary(Op.mul, x, y)
    return b.math(M.fma, [_fused_residual(b, x, s0), b.binary(Op.mul, y, const(b, b.kind(x), 0.5)),
                          s0])  # fmt: skip


def _two_steps64(b, x):
    """float64's s for _sqrt_fused's decision: from the float32 InverseSqrt y (relative error e
    of about 2^-21, float32's rounding of x included), s0 = x y and h = y/2, two steps
    s = fma(fma(-s, s, x), h, s), each taking the relative error d to about d e + d^2/2 before
    its rounding: 2^-41, then 2^-62, so s is faithful."""
    y = _first_guess(b, x)
    h = b.binary(Op.mul, y, const(b, K.f64, 0.5))
    s = b.binary(Op.mul, x, y)
    for _ in range(2):
        s = b.math(M.fma, [_fused_residual(b, x, s), h, s])
    return s


def _sqrt_fused(b, x):
    """The correctly rounded sqrt of x in [1, 4) or within _DIRECT, where the device's Fma
    rounds once (dd.fused), without a division:

    1. y = the driver's float32 InverseSqrt (Vulkan: 2 ulp), s0 = x y (relative error d of a
       few 2^-24) and h = y/2 (exact; relative error e of y's);
    2. float32: one step s = fma(fma(-s0, s0, x), h, s0) (one_step32): x - s0^2 = -x (2 d + d^2)
       exactly (Fma), times h = (1 + e)/(2 sqrt(x)), so s = sqrt(x) (1 - d e - d^2/2 + ...)
       rounded once: a relative error of about 2^-44 before that rounding for d, e of a few
       ulp (below 2^-25 up to about 1000 ulp), so s is faithful (one of the two floats around
       sqrt(x)); float64: two such steps (_two_steps64);
    3. the rounding decision, exact, for a p-bit format (24 or 53): r = fma(-s, s, x) (its sign
       says on which side of s sqrt(x) lies) and rc = fma(-c, c, x) for c, s's neighbour on
       that side; c is the correctly rounded root iff |rc| < |r|. With g = |c - s| (s and c
       multiples of g, x of g^2), r + rc = 2 (x - s^2 - s g') - g^2 (g' = +-g) is an odd
       multiple of g^2: never 0, and |r| - |rc| has the sign of sqrt(x)'s distance to the
       midpoint (x >= (s + g'/2)^2 iff x - s^2 - s g' >= g^2/4 iff >= g^2 iff > g^2/2). r and
       rc are exact (at most p + 1 bits, multiples of g^2 below 2^(p+1) g^2) except the
       larger magnitude, which rounds to a multiple of 2 g^2, staying above the smaller
       (below 2^p g^2): the comparison holds. r and rc are normal or zero (multiples of
       g^2 >= 2^-108 (float32) or 2^-166 (float64) within _DIRECT).
    The form before it started from the driver's Sqrt, with 1/(2 s0) to within 5 % from its
    bits, and took two steps (docs/math.md).

    Where the device's self-test found float32's step 2 correctly rounded for every float32
    of the range with its InverseSqrt (`b.sqrt_one_step`: runtime/sqrt_probe.py), step 3 is
    left out: the proof above needs only that y is a few ulp off, the shortcut a property of
    the device's InverseSqrt that only such an exhaustive check shows (as NVIDIA's own
    sqrt.rn relies on)."""
    k = b.kind(x)
    ik = bits.int_kind(k)
    if k == K.f32:
        s = one_step32(b, x)
        if getattr(b, "sqrt_one_step", False):
            return s
    else:
        s = _two_steps64(b, x)
    r = _fused_residual(b, x, s)
    above = denormals.compare_normal(b, Op.gt, r, const(b, k, 0.0))
    c = bits.from_bits(b, k, b.binary(Op.add, bits.to_bits(b, s),
                                      b.select(above, const(b, ik, 1), const(b, ik, -1))))  # fmt: skip
    rc = _fused_residual(b, x, c)
    closer = denormals.compare_normal(b, Op.lt, b.math(M.abs, [rc]), b.math(M.abs, [r]))
    return b.select(closer, c, s)


def _sqrt_reduced(b, xs):
    """The correctly rounded sqrt of xs in [1, 4)."""
    if fused(b):
        return _sqrt_fused(b, xs)
    y = _first_guess(b, xs)
    for _ in range(1 if b.kind(xs) == K.f32 else 2):
        y = _newton_rsqrt(b, xs, y)
    s = _residual_step(b, xs, b.binary(Op.mul, xs, y), y)
    for _ in range(2):
        s = _round_test(b, xs, s)
    return s


# sqrt's short path: x within these needs no reduction (every intermediate stays normal).
_DIRECT = (2.0**-60, 2.0**60)


def _sqrt_direct(b, x):
    """The correctly rounded sqrt of x within _DIRECT, without the reduction to [1, 4): the
    driver's float32 InverseSqrt y (relative error e of a few 2^-24; float64 refines it by one
    Newton step, to about 2^-40) and s0 = x y (d, about as large); one step on the residual
    leaves a relative error of about d^2/2 + d e (float32: 2^-40; float64: 2^-78) plus its own
    rounding, within one ulp; then one exact rounding test."""
    if fused(b):
        return _sqrt_fused(b, x)
    y = _first_guess(b, x)
    if b.kind(x) == K.f64:
        y = _newton_rsqrt(b, x, y)
    return _round_test(b, x, _residual_step(b, x, b.binary(Op.mul, x, y), y))


def _reduce(b, x):
    """(xs, j) with x = xs * 4**j, xs in [1, 4), for a finite x > 0."""
    k = b.kind(x)
    ik = bits.int_kind(k)
    m, e = bits.frexp(b, x, ik)  # x = m * 2**e, m in [0.5, 1)
    odd = b.compare(Op.ne, b.binary(Op.and_, e, const(b, ik, 1)), const(b, ik, 0))
    xs = b.binary(Op.mul, m, b.select(odd, const(b, k, 2.0), const(b, k, 4.0)))
    j = b.binary(
        Op.shr,
        b.binary(Op.sub, e, b.select(odd, const(b, ik, 1), const(b, ik, 2))),
        const(b, ik, 1),
    )
    return xs, j


def _sqrt_full(b, x):
    """IEEE sqrt of any x, through the reduction to [1, 4)."""
    k = b.kind(x)
    ok = bits.is_positive_finite(b, x)
    xs, j = _reduce(b, b.select(ok, x, const(b, k, 1.0)))
    s = b.binary(Op.mul, _sqrt_reduced(b, xs), bits.pow2(b, k, j))
    special = b.select(b.compare(Op.lt, x, const(b, k, 0.0)), const(b, k, float("nan")), x)
    return b.select(ok, s, special)


def sqrt(b, x, branch=False):
    """IEEE sqrt: correctly rounded; sqrt(-0) = -0, sqrt(x < 0) = NaN, sqrt(inf) = inf.

    Where the call may branch (mathlib.Call.may_branch), x within _DIRECT takes the short
    path and the rest (zeros, the extremes, subnormals, negatives, inf, NaN) the reduction,
    in a block of its own (rare.py); otherwise every x takes the reduction."""
    if not branch:
        return _sqrt_full(b, x)
    k = b.kind(x)
    inside = bits.both(b, denormals.compare_normal(b, Op.ge, x, const(b, k, _DIRECT[0])),
                       b.compare(Op.le, x, const(b, k, _DIRECT[1])))  # fmt: skip
    s = _sqrt_direct(b, b.select(inside, x, const(b, k, 1.0)))
    _, s = rare.branch(b, b.unary(Op.not_, inside), (x, s),
                       lambda xs, _: (xs, _sqrt_full(b, xs)), "sqrt")  # fmt: skip
    return s


def hypot(b, x, y):
    """sqrt(x*x + y*y) within 1 ulp, without spurious overflow or underflow (C99 special values).

    The larger magnitude is brought to [1, 2) by an exact power of two, the
    sum of squares is kept as an exact double-word (Dekker, Knuth), and its
    square root is the correctly rounded sqrt of the high word plus a first
    order correction for the rest; the scaling back is one ldexp (one rounding
    if the result is subnormal).
    """
    k = b.kind(x)
    ik = bits.int_kind(k)
    ax, ay = bits.fabs(b, x), bits.fabs(b, y)
    big = b.select(b.compare(Op.ge, ax, ay), ax, ay)
    small = b.select(b.compare(Op.ge, ax, ay), ay, ax)
    ok = bits.both(b, bits.is_finite(b, big), b.compare(Op.gt, big, const(b, k, 0.0)))
    safe = b.select(ok, big, const(b, k, 1.0))
    _, e = bits.frexp(b, safe, ik)
    e = b.binary(Op.sub, e, const(b, ik, 1))  # safe = m * 2**e, m in [1, 2)
    neg_e = b.unary(Op.neg, e)
    hs = bits.ldexp(b, safe, neg_e)
    ls = bits.ldexp(b, b.select(ok, small, const(b, k, 0.0)), neg_e)
    p1, e1 = two_prod(b, hs, hs)
    p2, e2 = two_prod(b, ls, ls)
    s_hi, s_lo = two_sum(b, p1, p2)
    s_lo = b.binary(Op.add, s_lo, b.binary(Op.add, e1, e2))
    s_hi, s_lo = two_sum(b, s_hi, s_lo)
    h = sqrt(b, s_hi)
    r = b.binary(Op.add, _residual(b, s_hi, h), s_lo)
    h = b.binary(Op.add, h, driver_div(b, b.binary(Op.mul, r, const(b, k, 0.5)), h))  # h in [1, 3)
    result = bits.ldexp(b, h, e)
    inf = const(b, k, float("inf"))
    # C99: hypot(±inf, anything) = +inf, even NaN; otherwise NaN in gives NaN; hypot(0, 0) = 0.
    special = b.select(
        bits.either(b, bits.is_inf(b, x), bits.is_inf(b, y)),
        inf,
        b.select(
            bits.either(b, bits.is_nan(b, x), bits.is_nan(b, y)), const(b, k, float("nan")), big
        ),
    )
    return b.select(ok, result, special)


def cbrt(b, x):
    """The real cube root within 1 ulp (C99 cbrt: odd, cbrt(+-0) = +-0, cbrt(+-inf) = +-inf).

    |x| = xs * 8**q with xs in [0.5, 4) (exact, from frexp); z ~ xs**(-1/3) from a
    cubic first guess (2.6 %) and Newton steps z += z (1 - xs z^3) / 3 that use
    no division (two for float32, three for float64); c = xs z^2; one last step
    c += (xs - c^3) z^2 / 3 with c^3 as an exact double word (Dekker).
    """
    from . import coeffs

    k = b.kind(x)
    ik = bits.int_kind(k)
    ax = bits.fabs(b, x)
    ok = bits.is_positive_finite(b, ax)
    m, e = bits.frexp(b, b.select(ok, ax, const(b, k, 1.0)), ik)
    # e = 3q + rem with rem in {0, 1, 2}: shift e to non-negative before the truncating division.
    off = 3 * 1200
    q = b.binary(Op.sub, b.binary(Op.div, b.binary(Op.add, e, const(b, ik, off)), const(b, ik, 3)),
                 const(b, ik, off // 3))  # fmt: skip
    rem = b.binary(Op.sub, e, b.binary(Op.mul, q, const(b, ik, 3)))
    xs = b.binary(Op.mul, m, bits.pow2(b, k, rem))
    cs = getattr(coeffs, "RCBRT_F32" if k == K.f32 else "RCBRT_F64")
    z = const(b, k, cs[-1])
    for c in reversed(cs[:-1]):
        z = b.binary(Op.add, b.binary(Op.mul, z, xs), const(b, k, c))
    third = const(b, k, 1.0 / 3.0)
    one = const(b, k, 1.0)
    for _ in range(2 if k == K.f32 else 3):
        z3 = b.binary(Op.mul, b.binary(Op.mul, z, z), z)
        z = b.binary(Op.add, z, b.binary(Op.mul, b.binary(Op.mul, z, third),
                                         b.binary(Op.sub, one, b.binary(Op.mul, xs, z3))))  # fmt: skip
    z2 = b.binary(Op.mul, z, z)
    c = b.binary(Op.mul, xs, z2)
    p, pe = two_prod(b, c, c)
    cube, ce = two_prod(b, p, c)
    r = b.binary(Op.sub, b.binary(Op.sub, b.binary(Op.sub, xs, cube), ce), b.binary(Op.mul, pe, c))
    c = b.binary(Op.add, c, b.binary(Op.mul, r, b.binary(Op.mul, z2, third)))
    res = bits.copysign(b, b.binary(Op.mul, c, bits.pow2(b, k, q)), x)
    return b.select(ok, res, x)  # zeros, infinities and NaN are their own cube roots
