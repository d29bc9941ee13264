"""pow(x, y) for float exponents within 1 ulp, with C99's special values.

|x|^y = 2^(y log2|x|). The rounding error of the exponent w = y log2|x| is
multiplied by |w| (up to ~1100) in the result's relative error, so log2|x| is
computed as a double word (hi + lo) to about 2^-67 absolute:

- |x| = 2^e m, m in [sqrt(1/2), sqrt(2)), f = m - 1, s = f/(2+f) as a double word;
- ln m = 2s + (2/3) s^3 + s^5 Q(s^2): the first two terms in double-word
  arithmetic (mathlib/dd.py), the tail (below 2^-13 of the sum) in working
  precision, Q near-minimax (scripts/mathgen/gen_coeffs.py);
- log2|x| = e + ln m * (1/ln 2) with 1/ln 2 as a double word.

w = y * log2|x| as a double word, then 2^w = 2^k * 2^r (k = rint(w_hi)) as in
explog.exp2, with the low word folded into the small terms. The sign, NaN for a
negative base with a non-integer exponent, and the zero/inf/NaN cases follow C99
(F.10.4.4), which is what Numba's CPU code (libm pow) gives.
"""

from ... import _core
from ..arith import const
from . import bits, coeffs, dd
from .explog import _c, _clamped, _horner

K = _core.Kind
Op = _core.Op

_W = {K.f32: "F32", K.f64: "F64"}
# |y| beyond which y * log2|x| over/underflows whatever |x| != 1 is (keeps w finite).
_Y_CLAMP = {K.f32: 2.0**34, K.f64: 2.0**66}


def _dwc(b, k, name):
    return (_c(b, k, name), _c(b, k, f"{name}_R"))


def log2_dw(b, ax):
    """log2(ax) as a double word, for a finite ax > 0."""
    k = b.kind(ax)
    ik = bits.int_kind(k)
    m, e = bits.frexp(b, ax, ik)
    low = b.compare(Op.lt, m, const(b, k, 0.5**0.5))
    m = b.select(low, b.binary(Op.mul, m, const(b, k, 2.0)), m)
    e = b.select(low, b.binary(Op.sub, e, const(b, ik, 1)), e)
    f = b.binary(Op.sub, m, const(b, k, 1.0))
    dh, dl = dd.two_sum(b, const(b, k, 2.0), f)
    sh, inv = dd.div_inv(b, f, dh)
    p, pe = dd.two_prod(b, sh, dh)
    rr = b.binary(Op.sub, b.binary(Op.sub, b.binary(Op.sub, f, p), pe), b.binary(Op.mul, sh, dl))
    sl = b.binary(Op.mul, rr, inv)  # a correction term: 1/dh to 2^-22 or better is plenty
    s = dd.fast_two_sum(b, sh, sl)
    z = dd.dw_mul(b, s, s)
    s3 = dd.dw_mul(b, z, s)
    tail = b.binary(Op.mul, _horner(b, getattr(coeffs, f"LOGQ_{_W[k]}"), z[0]),
                    b.binary(Op.mul, s3[0], z[0]))  # fmt: skip
    two = const(b, k, 2.0)
    lg = dd.dw_add(b, (b.binary(Op.mul, s[0], two), b.binary(Op.mul, s[1], two)),
                   dd.dw_mul(b, s3, _dwc(b, k, "TWO_THIRDS")))  # fmt: skip
    lg = dd.dw_add(b, lg, (tail, const(b, k, 0.0)))
    l2 = dd.dw_mul(b, lg, _dwc(b, k, "INV_LN2"))
    return dd.dw_add(b, (b.convert(k, e), const(b, k, 0.0)), l2)


def exp2_dw(b, w):
    """2^(w_hi + w_lo) within about 0.6 ulp (ldexp gives inf and 0 beyond the range)."""
    wh, wl = w
    k = b.kind(wh)
    clamped = _clamped(b, wh)
    # Beyond the clamp the result is inf or 0 whatever the low word says: drop it.
    wl = b.select(b.compare(Op.eq, clamped, wh), wl, const(b, k, 0.0))
    wh = clamped
    kf = bits.rint(b, wh)
    rh, rl = dd.two_sum(b, b.binary(Op.sub, wh, kf), wl)
    lead, err = dd.two_prod(b, rh, _c(b, k, "LN2_HI"))
    p = _horner(b, getattr(coeffs, f"EXP2_{_W[k]}"), rh)
    rest = b.binary(Op.mul, b.binary(Op.mul, rh, rh), p)
    rest = b.binary(Op.add, rest, b.binary(Op.add, err, b.binary(Op.mul, rh, _c(b, k, "LN2_LO"))))
    rest = b.binary(Op.add, rest, b.binary(Op.mul, rl, _c(b, k, "LN2")))
    hi, lo = dd.two_sum(b, const(b, k, 1.0), lead)
    e = b.binary(Op.add, hi, b.binary(Op.add, lo, rest))
    return bits.ldexp(b, e, b.convert(bits.int_kind(k), kf))


def pow_(b, x, y):
    k = b.kind(x)
    zero, one = const(b, k, 0.0), const(b, k, 1.0)
    inf, nan = const(b, k, float("inf")), const(b, k, float("nan"))
    ax = bits.fabs(b, x)
    y_fin = bits.is_finite(b, y)
    y_int = bits.both(b, b.compare(Op.eq, b.math(_core.MathFn.trunc, [y]), y), y_fin)
    half = b.binary(Op.mul, y, const(b, k, 0.5))
    y_odd = bits.both(b, y_int, b.compare(Op.ne, b.math(_core.MathFn.trunc, [half]), half))
    neg = bits.sign_bit(b, x)
    odd_neg = bits.both(b, y_odd, neg)

    ok = bits.both(b, bits.is_finite(b, ax), b.compare(Op.gt, ax, zero), y_fin)
    axs = b.select(ok, ax, one)
    lim = _Y_CLAMP[k]
    ys = b.select(ok, y, zero)
    ys = b.select(b.compare(Op.gt, ys, const(b, k, lim)), const(b, k, lim), ys)
    ys = b.select(b.compare(Op.lt, ys, const(b, k, -lim)), const(b, k, -lim), ys)
    w = dd.dw_mul(b, (ys, zero), log2_dw(b, axs))
    mag = exp2_dw(b, w)
    r = b.select(odd_neg, b.unary(Op.neg, mag), mag)
    r = b.select(bits.both(b, b.compare(Op.lt, x, zero), b.unary(Op.not_, y_int)), nan, r)

    y_neg = b.compare(Op.lt, y, zero)
    zero_case = b.select(y_neg, b.select(y_odd, bits.copysign(b, inf, x), inf),
                         b.select(y_odd, x, zero))  # fmt: skip
    inf_case = b.select(y_neg, b.select(odd_neg, const(b, k, -0.0), zero),
                        b.select(odd_neg, const(b, k, float("-inf")), inf))  # fmt: skip
    below_one = b.compare(Op.lt, ax, one)
    yinf_case = b.select(b.compare(Op.eq, ax, one), one,
                         b.select(b.binary(Op.xor, below_one, y_neg), zero, inf))  # fmt: skip
    r = b.select(bits.is_inf(b, y), yinf_case, r)
    r = b.select(bits.both(b, bits.is_inf(b, x), y_fin), inf_case, r)
    r = b.select(bits.both(b, b.compare(Op.eq, x, zero), y_fin), zero_case, r)
    r = b.select(bits.either(b, bits.is_nan(b, x), bits.is_nan(b, y)), nan, r)
    r = b.select(b.compare(Op.eq, x, one), one, r)
    return b.select(b.compare(Op.eq, y, zero), one, r)
