"""Hyperbolic functions and their inverses within 1 ulp.

Near 0 the odd/even series are near-minimax polynomials (sinh, cosh on |x| <= 1,
tanh on |x| <= 0.3; scripts/mathgen/gen_coeffs.py). Elsewhere the classical
formulas (fdlibm's e_sinh.c, e_cosh.c, s_tanh.c, s_asinh.c, e_acosh.c,
e_atanh.c) are evaluated in double-word arithmetic (mathlib/dd.py) from e^x as a
double word (explog.exp_parts), and the inverse functions pass their argument's
low word to log / log1p as a correction, so that only the last operation rounds
noticeably. Large arguments scale by 2^k with ldexp (no spurious overflow).
"""

from ... import _core
from ..arith import const
from . import bits, coeffs, dd, explog, roots
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


def _lt(b, x, v):
    return b.compare(Op.lt, x, const(b, b.kind(x), v))


def _big(k):
    """Beyond this |x|, e^-|x| is below an ulp of e^|x| / 2 (and tanh is +-1)."""
    return 22.0 if k == K.f64 else 9.0


def _odd_poly(b, a, name):
    k = b.kind(a)
    z = _mul(b, a, a)
    return _add(b, a, _mul(b, _mul(b, a, z), _horner(b, getattr(coeffs, f"{name}_{_W[k]}"), z)))


def _exp_dw(b, a):
    """e^a as a double word for 0 <= a <= _big (no overflow): the parts scaled by 2^k exactly."""
    k = b.kind(a)
    m_hi, m_lo, kf = explog.exp_parts(b, a)
    t = bits.pow2(b, k, b.convert(bits.int_kind(k), kf))
    return _mul(b, m_hi, t), _mul(b, m_lo, t)


def _half_exp_large(b, a):
    """e^a / 2 for large a without overflow before the true one: ldexp(m, k - 1)."""
    k = b.kind(a)
    m_hi, m_lo, kf = explog.exp_parts(b, a)
    n = b.binary(Op.sub, b.convert(bits.int_kind(k), kf), const(b, bits.int_kind(k), 1))
    return bits.ldexp(b, _add(b, m_hi, m_lo), n)


def _sinh_cosh(b, x, odd):
    k = b.kind(x)
    ax = bits.fabs(b, x)
    one, half = const(b, k, 1.0), const(b, k, 0.5)
    a = b.select(bits.is_finite(b, ax), ax, one)
    am = b.select(_lt(b, a, _big(k)), a, one)
    e = _exp_dw(b, am)
    inv = dd.dw_div(b, (one, const(b, k, 0.0)), e)
    if odd:
        mid = dd.dw_add(b, e, (b.unary(Op.neg, inv[0]), b.unary(Op.neg, inv[1])))
        small = _odd_poly(b, a, "SINH")
    else:
        mid = dd.dw_add(b, e, inv)
        # 1 + z/2 + z^2 C'(z) with z = a^2 exact as a double word and 1 + zh/2 summed exactly
        # (a plain 1 + z C(z) measured 1.07 ulp near |x| = 1).
        zh, zl = dd.two_prod(b, a, a)
        cs = getattr(coeffs, f"COSH_{_W[k]}")  # cs[0] = 1/2
        tail = _mul(b, _mul(b, zh, zh), _horner(b, cs[1:], zh))
        s_hi, s_lo = dd.two_sum(b, one, _mul(b, half, zh))
        small = _add(b, s_hi, _add(b, s_lo, _add(b, _mul(b, half, zl), tail)))
    mid = _mul(b, half, _add(b, mid[0], mid[1]))
    large = _half_exp_large(b, a)
    r = b.select(_lt(b, a, 1.0), small, b.select(_lt(b, a, _big(k)), mid, large))
    r = b.select(bits.is_finite(b, ax), r, ax)
    return bits.copysign(b, r, x) if odd else r


def sinh(b, x):
    return _sinh_cosh(b, x, True)


def cosh(b, x):
    return _sinh_cosh(b, x, False)


def tanh(b, x):
    """Near 0 a polynomial; then (e^2a - 1)/(e^2a + 1) in double words; +-1 beyond _big."""
    k = b.kind(x)
    ax = bits.fabs(b, x)
    one, zero = const(b, k, 1.0), const(b, k, 0.0)
    a = b.select(_lt(b, ax, _big(k)), ax, one)
    a = b.select(bits.is_nan(b, ax), one, a)
    u = _exp_dw(b, _mul(b, const(b, k, 2.0), a))
    q = dd.dw_div(b, dd.dw_add(b, u, (b.unary(Op.neg, one), zero)), dd.dw_add(b, u, (one, zero)))
    mid = _add(b, q[0], q[1])
    small = _odd_poly(b, ax, "TANH")
    z = b.select(_lt(b, ax, 0.3), small, b.select(_lt(b, ax, _big(k)), mid, one))
    return b.select(bits.is_nan(b, x), x, bits.copysign(b, z, x))


def _tiny(k):
    """Below this, a^3/3 is under a quarter ulp of a."""
    return 2.0 ** -(bits.LAYOUT[k][3] // 2 + 2)


def _huge(k):
    return 2.0 ** (28 if k == K.f64 else 12)


def asinh(b, x):
    """log1p(a + a^2/(1 + sqrt(1 + a^2))) with the argument as a double word; beyond 2^28
    (float32: 2^12) log(a) + ln 2; odd."""
    k = b.kind(x)
    ax = bits.fabs(b, x)
    one, zero = const(b, k, 1.0), const(b, k, 0.0)
    a = b.select(bits.is_finite(b, ax), ax, one)
    am = b.select(_lt(b, a, _huge(k)), a, one)
    a2 = dd.two_prod(b, am, am)
    s = dd.dw_sqrt(b, dd.dw_add(b, a2, (one, zero)), roots.sqrt)
    y = dd.dw_add(b, (am, zero), dd.dw_div(b, a2, dd.dw_add(b, s, (one, zero))))
    mid = explog.log1p(b, y[0], y[1])
    large = explog.log(b, a, _c(b, k, "LN2"))
    z = b.select(_lt(b, a, _huge(k)), mid, large)
    z = b.select(_lt(b, a, _tiny(k)), a, z)  # asinh(a) = a - a^3/6: a itself to the ulp
    z = b.select(bits.is_finite(b, ax), z, ax)
    return bits.copysign(b, z, x)


def acosh(b, x):
    """In [1, 2]: log1p(t + sqrt(2t + t^2)), t = x - 1 (exact); above: log(x + sqrt(x^2 - 1));
    beyond 2^28 (float32: 2^12): log(x) + ln 2; NaN below 1. Arguments as double words."""
    k = b.kind(x)
    one, two, zero = const(b, k, 1.0), const(b, k, 2.0), const(b, k, 0.0)
    a = b.select(bits.both(b, bits.is_finite(b, x), b.compare(Op.ge, x, one)), x, one)
    am = b.select(_lt(b, a, _huge(k)), a, two)
    t = _sub(b, b.select(_lt(b, am, 2.0), am, one), one)  # exact on [1, 2]
    tt = dd.dw_add(b, dd.two_prod(b, t, t), (_mul(b, two, t), zero))
    ys = dd.dw_add(b, (t, zero), dd.dw_sqrt(b, tt, roots.sqrt))
    small = explog.log1p(b, ys[0], ys[1])
    x2 = dd.dw_add(b, dd.two_prod(b, am, am), (b.unary(Op.neg, one), zero))
    ym = dd.dw_add(b, (am, zero), dd.dw_sqrt(b, x2, roots.sqrt))
    mid = explog.log(b, ym[0], dd.div(b, ym[1], ym[0]))
    large = explog.log(b, a, _c(b, k, "LN2"))
    z = b.select(_lt(b, a, 2.0), small, b.select(_lt(b, a, _huge(k)), mid, large))
    z = b.select(b.compare(Op.eq, x, const(b, k, float("inf"))), x, z)
    return b.select(bits.either(b, _lt(b, x, 1.0), bits.is_nan(b, x)), const(b, k, float("nan")), z)


def atanh(b, x):
    """log1p(2a / (1 - a)) / 2 with the quotient as a double word; +-1 gives +-inf, beyond NaN;
    odd."""
    k = b.kind(x)
    ax = bits.fabs(b, x)
    one, half = const(b, k, 1.0), const(b, k, 0.5)
    a = b.select(_lt(b, ax, 1.0), ax, half)
    d = dd.two_sum(b, one, b.unary(Op.neg, a))
    q = dd.dw_div(b, (_mul(b, const(b, k, 2.0), a), const(b, k, 0.0)), d)
    z = _mul(b, half, explog.log1p(b, q[0], q[1]))
    z = b.select(_lt(b, a, _tiny(k)), a, z)  # atanh(a) = a + a^3/3: a itself to the ulp
    z = b.select(b.compare(Op.eq, ax, one), const(b, k, float("inf")), z)
    z = b.select(b.compare(Op.gt, ax, one), const(b, k, float("nan")), z)
    z = b.select(bits.is_nan(b, x), x, z)
    return bits.copysign(b, z, x)
