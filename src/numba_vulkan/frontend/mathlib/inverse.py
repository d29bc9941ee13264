"""Inverse trigonometric functions: atan, atan2 (fdlibm's s_atan.c / e_atan2.c), asin, acos.

atan2 computes |y/x| as a double word (the quotient's rounding would otherwise
add up to half an ulp) and, for x < 0, pi - atan with pi - hi summed exactly.

atan: |x| is reduced by the breakpoints 7/16, 11/16, 19/16, 39/16 to t with
|t| <= 7/16 around c in {0, 1/2, 1, 3/2, inf}: atan|x| = atan(c) + atan(t),
atan(c) as hi + lo (scripts/mathgen/gen_coeffs.py), atan(t) = t - t z P(z) with
P near-minimax. The reductions' divisions use dd.div (Vulkan's own division
may be off by several ulp). Everything is computed for every lane and the
branch chosen by selects.
"""

from ... import _core
from ..arith import const
from . import bits, coeffs, dd
from .explog import _c, _horner

K = _core.Kind
Op = _core.Op

_W = {K.f32: "F32", K.f64: "F64"}


def _add(b, x, y):
    return b.binary(Op.add, x, y)


def _sub(b, x, y):
    return b.binary(Op.sub, x, y)


def _mul(b, x, y):
    return b.binary(Op.mul, x, y)


def _atan_parts(b, ax, extra=None):
    """atan(ax) = hi + rest (hi a breakpoint's atan or 0) for ax >= 0 (inf included).

    `extra`, a correction far below an ulp of the result (for an argument known as a
    double word), joins the small terms."""
    k = b.kind(ax)
    one, two, onep5 = const(b, k, 1.0), const(b, k, 2.0), const(b, k, 1.5)
    lt = lambda v: b.compare(Op.lt, ax, const(b, k, v))
    # Reduced argument per interval (computed with safe operands, selected below).
    safe = b.select(bits.is_finite(b, ax), ax, one)
    t0 = dd.div(b, _sub(b, _mul(b, two, safe), one), _add(b, two, safe))
    t1 = dd.div(b, _sub(b, safe, one), _add(b, safe, one))
    t2 = dd.div(b, _sub(b, safe, onep5), _add(b, one, _mul(b, onep5, safe)))
    big = b.select(b.compare(Op.gt, safe, const(b, k, 1e30)), const(b, k, 1e30), safe)
    t3 = b.unary(Op.neg, dd.div(b, one, big))
    t3 = b.select(bits.is_inf(b, ax), const(b, k, -0.0), t3)
    t = b.select(lt(7 / 16), ax, b.select(lt(11 / 16), t0, b.select(lt(19 / 16), t1,
                 b.select(lt(39 / 16), t2, t3))))  # fmt: skip
    hi = b.select(lt(11 / 16), _c(b, k, "ATAN_HALF"), b.select(lt(19 / 16), _c(b, k, "ATAN_ONE"),
                  b.select(lt(39 / 16), _c(b, k, "ATAN_1P5"), _c(b, k, "HALF_PI"))))  # fmt: skip
    lo = b.select(lt(11 / 16), _c(b, k, "ATAN_HALF_R"), b.select(lt(19 / 16), _c(b, k, "ATAN_ONE_R"),
                  b.select(lt(39 / 16), _c(b, k, "ATAN_1P5_R"), _c(b, k, "HALF_PI_R"))))  # fmt: skip
    z = _mul(b, t, t)
    tail = _mul(b, _mul(b, t, z), _horner(b, getattr(coeffs, f"ATAN_{_W[k]}"), z))
    if extra is not None:
        tail = _sub(b, tail, extra)
    # atan = hi + rest, rest = t - (tail - lo) (fdlibm: atanhi - ((t*z*P - atanlo) - t)).
    small = lt(7 / 16)
    hi = b.select(small, const(b, k, 0.0), hi)
    rest = b.select(small, _sub(b, t, tail), _sub(b, t, _sub(b, tail, lo)))
    return hi, rest


def _atan_abs(b, ax, extra=None):
    hi, rest = _atan_parts(b, ax, extra)
    return b.select(bits.is_nan(b, ax), ax, _add(b, hi, rest))


def atan(b, x):
    return bits.copysign(b, _atan_abs(b, bits.fabs(b, x)), x)


def atan2(b, y, x):
    """C99 atan2 (fdlibm's e_atan2.c case analysis); |y/x| as a double word q + q_lo whose
    low part enters atan as q_lo / (1 + q^2), so the quotient's rounding costs nothing."""
    k = b.kind(x)
    ik = bits.int_kind(k)
    ax, ay = bits.fabs(b, x), bits.fabs(b, y)
    zero, one = const(b, k, 0.0), const(b, k, 1.0)
    pi, pi_lo = _c(b, k, "PI"), _c(b, k, "PI_R")
    half_pi = _c(b, k, "HALF_PI")
    # |x| = sx 2^ex, |y| = sy 2^ey with sx, sy in [0.5, 1) (exact); d = ey - ex. For |d| small,
    # q = |y/x| is normal and computed as a double word. For d very negative atan(q) = q, a
    # single ldexp of sy/sx (one rounding, also into the subnormals); very large gives pi/2.
    okx = bits.both(b, bits.is_finite(b, ax), b.compare(Op.gt, ax, zero))
    oky = bits.both(b, bits.is_finite(b, ay), b.compare(Op.gt, ay, zero))
    sx, ex = bits.frexp(b, b.select(okx, ax, one), ik)
    sy, ey = bits.frexp(b, b.select(oky, ay, one), ik)
    d = b.binary(Op.sub, ey, ex)
    lim = bits.LAYOUT[k][3] + 8
    steep = b.compare(Op.gt, d, const(b, ik, lim))
    flat = b.compare(Op.lt, d, const(b, ik, -lim))
    dm = b.select(bits.either(b, steep, flat), const(b, ik, 0), d)
    sy_m = bits.ldexp(b, sy, dm)  # exact: the ratio stays within 2^(+-lim)
    q = dd.div(b, sy_m, sx)
    p, pe = dd.two_prod(b, q, sx)
    q_lo = dd.driver_div(b, _sub(b, _sub(b, sy_m, p), pe), sx)
    corr = dd.driver_div(b, q_lo, _add(b, one, _mul(b, q, q)))  # 1 + q^2 < 2^(2 lim + 2)
    hi, rest = _atan_parts(b, q, corr)
    hi = b.select(steep, half_pi, hi)
    rest = b.select(steep, _c(b, k, "HALF_PI_R"), rest)
    x_neg = bits.sign_bit(b, x)
    # x < 0: pi - atan, with pi - hi kept exact (Knuth) so that only the last sum rounds.
    s_hi, s_lo = dd.two_sum(b, pi, b.unary(Op.neg, hi))
    z_neg = _add(b, s_hi, _add(b, s_lo, _sub(b, pi_lo, rest)))
    z_neg = b.select(flat, pi, z_neg)
    z_pos = b.select(flat, bits.ldexp(b, dd.div(b, sy, sx), d), _add(b, hi, rest))
    z = b.select(x_neg, z_neg, z_pos)
    r = bits.copysign(b, z, y)
    # Special cases (C99 F.10.1.4).
    y_zero = b.compare(Op.eq, y, zero)
    r = b.select(y_zero, b.select(x_neg, bits.copysign(b, pi, y), y), r)
    r = b.select(bits.both(b, b.compare(Op.eq, x, zero), b.unary(Op.not_, y_zero)),
                 bits.copysign(b, half_pi, y), r)  # fmt: skip
    x_inf, y_inf = bits.is_inf(b, x), bits.is_inf(b, y)
    quarter = _c(b, k, "ATAN_ONE")
    three_q = _mul(b, quarter, const(b, k, 3.0))
    both_inf = b.select(x_neg, three_q, quarter)
    x_inf_only = b.select(x_neg, pi, zero)
    r = b.select(x_inf, bits.copysign(b, b.select(y_inf, both_inf, x_inf_only), y), r)
    r = b.select(bits.both(b, y_inf, b.unary(Op.not_, x_inf)), bits.copysign(b, half_pi, y), r)
    return b.select(bits.either(b, bits.is_nan(b, x), bits.is_nan(b, y)), _add(b, x, y), r)


def _asin_small(b, a):
    """(a, a^3 P(a^2)): asin(a) = a + tail for |a| <= 1/2."""
    k = b.kind(a)
    z = _mul(b, a, a)
    return _mul(b, _mul(b, a, z), _horner(b, getattr(coeffs, f"ASIN_{_W[k]}"), z))


def _asin_far(b, a):
    """For a in [1/2, 1]: 2 asin(s) as (hi, lo) words, s = sqrt((1 - a)/2) as a double word."""
    k = b.kind(a)
    z = _mul(b, _sub(b, const(b, k, 1.0), a), const(b, k, 0.5))  # exact for a >= 1/2
    from . import roots

    s = dd.dw_sqrt(b, (z, const(b, k, 0.0)), roots.sqrt)
    tail = _mul(b, _mul(b, s[0], z), _horner(b, getattr(coeffs, f"ASIN_{_W[k]}"), z))
    two = const(b, k, 2.0)
    return _mul(b, two, s[0]), _mul(b, two, _add(b, s[1], tail))


def asin(b, x):
    """asin within 1 ulp: a polynomial for |x| <= 1/2, else pi/2 - 2 asin(sqrt((1-|x|)/2))
    with pi/2 - 2s summed exactly; NaN beyond [-1, 1]."""
    k = b.kind(x)
    ax = bits.fabs(b, x)
    a = b.select(b.compare(Op.le, ax, const(b, k, 1.0)), ax, const(b, k, 0.0))
    near = _add(b, a, _asin_small(b, a))
    hi, lo = _asin_far(b, a)
    s_hi, s_lo = dd.two_sum(b, _c(b, k, "HALF_PI"), b.unary(Op.neg, hi))
    far = _add(b, s_hi, _sub(b, _add(b, s_lo, _c(b, k, "HALF_PI_R")), lo))
    r = bits.copysign(b, b.select(b.compare(Op.le, a, const(b, k, 0.5)), near, far), x)
    r = b.select(b.compare(Op.gt, ax, const(b, k, 1.0)), const(b, k, float("nan")), r)
    return b.select(bits.is_nan(b, x), x, r)


def acos(b, x):
    """acos within 1 ulp: pi/2 - asin(x) for |x| <= 1/2 (summed exactly); 2 asin(s) for
    x > 1/2 and pi - 2 asin(s) for x < -1/2, s = sqrt((1-|x|)/2); NaN beyond [-1, 1]."""
    k = b.kind(x)
    ax = bits.fabs(b, x)
    ok = b.compare(Op.le, ax, const(b, k, 1.0))
    xs = b.select(ok, x, const(b, k, 0.0))
    a = bits.fabs(b, xs)
    s_hi, s_lo = dd.two_sum(b, _c(b, k, "HALF_PI"), b.unary(Op.neg, xs))
    tail = _asin_small(b, xs)
    mid = _add(b, s_hi, _sub(b, _add(b, s_lo, _c(b, k, "HALF_PI_R")), tail))
    hi, lo = _asin_far(b, a)
    pos = _add(b, hi, lo)
    p_hi, p_lo = dd.two_sum(b, _c(b, k, "PI"), b.unary(Op.neg, hi))
    neg = _add(b, p_hi, _sub(b, _add(b, p_lo, _c(b, k, "PI_R")), lo))
    r = b.select(b.compare(Op.le, a, const(b, k, 0.5)), mid,
                 b.select(b.compare(Op.gt, xs, const(b, k, 0.0)), pos, neg))  # fmt: skip
    r = b.select(ok, r, const(b, k, float("nan")))
    return b.select(bits.is_nan(b, x), x, r)
