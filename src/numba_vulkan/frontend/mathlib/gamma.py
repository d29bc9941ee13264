"""math.gamma and math.lgamma from ln|Gamma| as a double word.

ln Gamma(y) for y >= 8 (LGAMMA_STIRLING) is Stirling's formula
(y - 1/2) ln y - y + ln(2 pi)/2 + 1/(12 y) + z R(z)/y, z = 1/y^2, summed in
double words (ln y from power.log2_dw; R near-minimax, scripts/mathgen); below,
Gamma(x) = Gamma(x + n) / (x (x+1) ... (x+n-1)) with the product and every
x + j kept as double words, so that ln Gamma(x) = ln Gamma(y) - ln x - ln P has
an absolute error near 2^-2p (p the precision). Negative x use the reflection
ln|Gamma(x)| = ln pi - ln|sin(pi x)| - ln Gamma(1 - x), sin(pi d) (d the
distance to the nearest integer, exact) as a double word from trig.py's kernels.

gamma = +-2^(ln|Gamma| / ln 2) (power.exp2_dw: one rounding, overflow to inf and
gradual underflow included); |x| < 2^-60: 1/x (1/m for x = m 2^e by frexp, then
ldexp). lgamma rounds the double word, except: t P(t) on
|x - 1|, |x - 2| <= 1/32 where it vanishes (there the absolute error of the sum
would be too large relative to the result), -ln|x| for |x| < 2^-60, and
x (ln x - 1) beyond 2^60 (float32: 2^30), where the other terms are below the ulp.
Near its other zeros (x < 0, e.g. -2.4570...) lgamma's error is absolute, not relative.

Special values as numba.njit (CPython's algorithm, without its ValueError):
gamma(+-0) = +-inf, gamma(negative integer) = NaN, gamma(-inf) = NaN, gamma(inf) = inf;
lgamma of 0, a negative integer or +-inf is inf; NaN gives NaN.
"""

from ... import _core
from ..arith import const
from . import bits, coeffs, coeffs_special, dd, explog, rounding, trig
from .power import exp2_dw, log2_dw

K = _core.Kind
Op = _core.Op

_W = {K.f32: "F32", K.f64: "F64"}
_TINY = 2.0**-60
_HUGE = {K.f32: 2.0**30, K.f64: 2.0**60}
# gamma(x) overflows beyond (float64: 171.62..., float32: 35.04...)
_GAMMA_MAX = {K.f32: 35.1, K.f64: 171.7}


def _c(b, k, name):
    return const(b, k, getattr(coeffs, f"{name}_{_W[k]}"))


def _dwc(b, k, name):
    return (_c(b, k, name), _c(b, k, f"{name}_R"))


def _dw(b, v):
    return (v, const(b, b.kind(v), 0.0))


def _ln_dw(b, x):
    """ln(xh + xl) as a double word, for xh > 0 normal and |xl| <= ulp(xh)."""
    xh, xl = x
    k = b.kind(xh)
    ln = dd.dw_mul(b, log2_dw(b, xh), _dwc(b, k, "LN2"))
    return dd.dw_add(b, ln, _dw(b, dd.driver_div(b, xl, xh)))  # a correction: xl <= ulp(xh)


def _stirling(b, y):
    """ln Gamma(y) as a double word for y (a double word) >= LGAMMA_STIRLING."""
    k = b.kind(y[0])
    t = dd.dw_mul(b, dd.dw_add(b, y, _dw(b, const(b, k, -0.5))), _ln_dw(b, y))
    t = dd.dw_add(b, t, (b.unary(Op.neg, y[0]), b.unary(Op.neg, y[1])))
    t = dd.dw_add(b, t, _dwc(b, k, "HALF_LN_2PI"))
    inv = dd.dw_div(b, _dw(b, const(b, k, 1.0)), y)
    s = dd.dw_mul(b, inv, _dwc(b, k, "TWELFTH"))
    z = b.binary(Op.mul, inv[0], inv[0])
    r = explog._horner(b, getattr(coeffs_special, f"LGAMMA_R_{_W[k]}"), z)
    tail = b.binary(Op.mul, b.binary(Op.mul, inv[0], z), r)
    return dd.dw_add(b, t, dd.dw_add(b, s, _dw(b, tail)))


def _ln_gamma_pos(b, x):
    """ln Gamma(x) as a double word for x (a double word, xh > 0 normal, finite)."""
    k = b.kind(x[0])
    n = int(coeffs_special.LGAMMA_STIRLING)
    lim = const(b, k, float(n))
    one = _dw(b, const(b, k, 1.0))
    y, prod = x, one
    for j in range(n):
        xj = dd.dw_add(b, x, _dw(b, const(b, k, float(j)))) if j else x
        need = b.compare(Op.lt, xj[0], lim)
        if j:
            p = dd.dw_mul(b, prod, xj)
            prod = (b.select(need, p[0], prod[0]), b.select(need, p[1], prod[1]))
        nxt = dd.dw_add(b, x, _dw(b, const(b, k, float(j + 1))))
        y = (b.select(need, nxt[0], y[0]), b.select(need, nxt[1], y[1]))
    small = b.compare(Op.lt, x[0], lim)
    ln_x = _ln_dw(b, x)
    ln_x = (b.select(small, ln_x[0], const(b, k, 0.0)), b.select(small, ln_x[1], const(b, k, 0.0)))
    ln_p = dd.dw_add(b, ln_x, _ln_dw(b, prod))
    g = _stirling(b, y)
    return dd.dw_add(b, g, (b.unary(Op.neg, ln_p[0]), b.unary(Op.neg, ln_p[1])))


def _ln_sinpi(b, d):
    """ln sin(pi d) as a double word for d in (0, 1/2] (exact)."""
    k = b.kind(d)
    far = b.compare(Op.gt, d, const(b, k, 0.25))
    e = b.select(far, b.binary(Op.sub, const(b, k, 0.5), d), d)  # exact
    ph, pl = dd.two_prod(b, e, trig_pi(b, k)[0])
    pl = b.binary(Op.add, pl, b.binary(Op.mul, e, trig_pi(b, k)[1]))
    rh, rl = dd.fast_two_sum(b, ph, pl)
    s = trig._sin_dw(b, rh, rl)
    c = trig._cos_dw(b, rh, rl)
    v = (b.select(far, c[0], s[0]), b.select(far, c[1], s[1]))
    return _ln_dw(b, v)


def trig_pi(b, k):
    return (_c(b, k, "PI"), _c(b, k, "PI_R"))


def _ln_abs_gamma(b, x):
    """(ln|Gamma(x)| as a double word, reflected) for finite non-integer x, |x| >= 2^-60."""
    k = b.kind(x)
    ax = bits.fabs(b, x)
    neg = bits.sign_bit(b, x)
    # 1 - x for x < 0, as an exact double word; x itself otherwise
    arg = dd.two_sum(b, const(b, k, 1.0), ax)
    arg = (b.select(neg, arg[0], x), b.select(neg, arg[1], const(b, k, 0.0)))
    g = _ln_gamma_pos(b, arg)
    d = bits.fabs(b, b.binary(Op.sub, x, bits.rint(b, x)))
    d = b.select(neg, d, const(b, k, 0.5))  # unused for x > 0 (keeps the lane finite)
    s = dd.dw_add(b, _ln_sinpi(b, d), g)
    refl = dd.dw_add(b, _dwc(b, k, "LN_PI"), (b.unary(Op.neg, s[0]), b.unary(Op.neg, s[1])))
    return (b.select(neg, refl[0], g[0]), b.select(neg, refl[1], g[1]))


def _is_int(b, x):
    return b.compare(Op.eq, rounding.trunc(b, x), x)


def _safe(b, x):
    """x where the general formulas apply (finite, not an integer <= 0, |x| >= 2^-60), else 3/2."""
    k = b.kind(x)
    ax = bits.fabs(b, x)
    pole = bits.both(b, bits.either(b, bits.sign_bit(b, x), b.compare(Op.eq, x, const(b, k, 0.0))),
                     _is_int(b, x))  # fmt: skip
    ok = bits.both(
        b,
        bits.is_finite(b, x),
        b.unary(Op.not_, pole),
        b.compare(Op.ge, ax, const(b, k, _TINY)),
        b.compare(Op.lt, ax, const(b, k, _HUGE[k])),
    )
    return ok, pole, b.select(ok, x, const(b, k, 1.5))


def gamma(b, x):
    k = b.kind(x)
    inf, nan = const(b, k, float("inf")), const(b, k, float("nan"))
    ok, pole, xs = _safe(b, x)
    xs = b.select(b.compare(Op.gt, xs, const(b, k, _GAMMA_MAX[k])), const(b, k, 1.5), xs)
    lg = _ln_abs_gamma(b, xs)
    mag = exp2_dw(b, dd.dw_mul(b, lg, _dwc(b, k, "INV_LN2")))
    # the sign: negative for x in (-1, 0), (-3, -2), ...: trunc(x) even
    t = b.binary(Op.mul, rounding.trunc(b, xs), const(b, k, 0.5))
    odd_neg = bits.both(b, bits.sign_bit(b, xs), _is_int(b, t))
    r = b.select(odd_neg, b.unary(Op.neg, mag), mag)
    # |x| < 2^-60: 1/x (the -euler_gamma is below the ulp), scaled so the quotient is normal
    ik = bits.int_kind(k)
    m, e = bits.frexp(b, x, ik)
    tiny = bits.ldexp(b, dd.div(b, const(b, k, 1.0), m), b.binary(Op.sub, const(b, ik, 0), e))
    is_tiny = b.compare(Op.lt, bits.fabs(b, x), const(b, k, _TINY))
    r = b.select(ok, r, b.select(is_tiny, tiny, r))
    r = b.select(b.compare(Op.gt, x, const(b, k, _GAMMA_MAX[k])), inf, r)
    r = b.select(b.compare(Op.eq, x, const(b, k, 0.0)), bits.copysign(b, inf, x), r)
    r = b.select(bits.both(b, pole, b.compare(Op.ne, x, const(b, k, 0.0))), nan, r)
    r = b.select(b.compare(Op.eq, x, const(b, k, float("-inf"))), nan, r)
    return b.select(bits.is_nan(b, x), x, r)


def lgamma(b, x):
    k = b.kind(x)
    inf = const(b, k, float("inf"))
    ok, pole, xs = _safe(b, x)
    lg = _ln_abs_gamma(b, xs)
    r = b.binary(Op.add, lg[0], lg[1])
    # around the zeros at 1 and 2: t P(t), t exact
    near = const(b, k, coeffs_special.LGAMMA_NEAR)
    for center in (1.0, 2.0):
        t = b.binary(Op.sub, x, const(b, k, center))
        p = explog._horner(b, getattr(coeffs_special, f"LGAMMA_{int(center)}_{_W[k]}"), t)
        close = b.compare(Op.le, bits.fabs(b, t), near)
        zero = b.compare(Op.eq, t, const(b, k, 0.0))  # lgamma(1) = lgamma(2) = +0, not -0
        tp = b.select(zero, const(b, k, 0.0), b.binary(Op.mul, t, p))
        r = b.select(close, tp, r)
    ax = bits.fabs(b, x)
    # |x| < 2^-60: -ln|x|; beyond 2^60 (float32 2^30): x (ln x - 1), the rest below the ulp
    tiny = b.unary(Op.neg, explog.log(b, b.select(ok, const(b, k, 1.0), ax)))
    big_ln = dd.dw_mul(b, log2_dw(b, b.select(ok, const(b, k, 2.0), ax)), _dwc(b, k, "LN2"))
    big_ln = dd.dw_add(b, big_ln, _dw(b, const(b, k, -1.0)))
    big = b.binary(Op.add, b.binary(Op.mul, ax, big_ln[0]), b.binary(Op.mul, ax, big_ln[1]))
    finite = bits.is_finite(b, x)
    r = b.select(ok, r, b.select(b.compare(Op.lt, ax, const(b, k, _TINY)), tiny, big))
    r = b.select(bits.either(b, pole, b.unary(Op.not_, finite)), inf, r)
    return b.select(bits.is_nan(b, x), x, r)
