"""exp, exp2, log, log2, log10 within 1 ulp, from fdlibm's published algorithms.

exp(x): Cody-Waite reduction x = k ln2 + r, |r| <= ln2/2, with ln2 split in a
short hi (k * hi is exact) and a lo part; e^r = 1 + (r + r^2 p(r)) with p a
near-minimax polynomial (scripts/mathgen/gen_coeffs.py); the result is
ldexp(e^r, k), which rounds once more only in the subnormal range and gives inf
and 0 on overflow and underflow. exp2 is the same with k = rint(x).

log(x): x = 2^k m, m in [sqrt(1/2), sqrt(2)), f = m - 1 (exact), s = f/(2+f);
log(1+f) = f - f^2/2 + s (f^2/2 + R(s^2)) (fdlibm's e_log.c). log2 and log10
keep f - f^2/2 as an exact short hi word plus a lo word and multiply by split
constants (fdlibm's e_log2.c, e_log10.c), so that the division by ln 2 or ln 10
adds no rounding error of its own. The division s = f/(2+f) uses dd.div
(Vulkan's own division may be off by several ulp).

Accuracy measured against mpmath: docs/math.md. Special values as C99: exp(NaN)
= NaN, exp(-inf) = 0, exp(inf) = inf; log(0) = -inf, log(x<0) = NaN, log(inf) = inf.
"""

from ... import _core
from ..arith import const
from . import bits, coeffs, dd, denormals, rare

K = _core.Kind
Op = _core.Op

_W = {K.f32: "F32", K.f64: "F64"}
# |x| beyond which exp over/underflows whatever the rounding (keeps k a small int).
_EXP_CLAMP = {K.f32: 200.0, K.f64: 1600.0}
_HI_MASK = {K.f32: ~0xFFF, K.f64: ~0xFFFFFFFF}  # clears all but ~12 (f32) / 21 (f64) bits


def _c(b, k, name):
    return const(b, k, getattr(coeffs, f"{name}_{_W[k]}"))


def _horner(b, cs, x):
    k = b.kind(x)
    return dd.horner(b, [const(b, k, c) for c in cs], x)


def _mul(b, x, y):
    return b.binary(Op.mul, x, y)


def _add(b, x, y):
    return b.binary(Op.add, x, y)


def _sub(b, x, y):
    return b.binary(Op.sub, x, y)


def _exp_one_plus(b, r, poly, ln2):
    """e^(c r) = 1 + (c r + r^2 poly(r)), c = 1 (exp) or ln 2 (exp2), rounded once at the end.

    1 + c*r is kept exact (Knuth's sum; for exp2 Dekker's product of r and a
    short ln2_hi, plus r*ln2_lo) so that the only large rounding is the last
    addition: about 0.5 ulp plus a small part from the polynomial.
    """
    k = b.kind(r)
    p = _horner(b, poly, r)
    rest = _mul(b, _mul(b, r, r), p)
    if ln2 is None:
        lead = r
    else:
        lead, err = dd.two_prod(b, r, ln2[0])
        rest = _add(b, rest, _add(b, err, _mul(b, r, ln2[1])))
    hi, lo = dd.two_sum(b, const(b, k, 1.0), lead)
    return _add(b, hi, _add(b, lo, rest))


def _exp_tail(b, x, kf, r, poly, ln2):
    """ldexp(e^(c r), k): _exp_one_plus scaled (any k; subnormal results rounded once)."""
    res = bits.scale_pow2(b, _exp_one_plus(b, r, poly, ln2), kf)  # e in [1/2, 2]
    return b.select(bits.is_nan(b, x), x, res)


def _clamped(b, x):
    k = b.kind(x)
    lim = _EXP_CLAMP[k]
    safe = b.select(bits.is_nan(b, x), const(b, k, 0.0), x)
    safe = b.select(b.compare(Op.gt, safe, const(b, k, lim)), const(b, k, lim), safe)
    return b.select(b.compare(Op.lt, safe, const(b, k, -lim)), const(b, k, -lim), safe)


def _reduced(b, x):
    """(kf, r): x = k ln 2 + r, |r| <= ln2/2 (Cody and Waite), for |x| <= _EXP_CLAMP."""
    k = b.kind(x)
    kf = bits.rint_small(b, _mul(b, x, _c(b, k, "INV_LN2")))
    r = _sub(b, _sub(b, x, _mul(b, kf, _c(b, k, "LN2_HI"))), _mul(b, kf, _c(b, k, "LN2_LO")))
    return kf, r


def _exp_full(b, x):
    """e^x for any x: clamped, and scaled by scale_pow2."""
    kf, r = _reduced(b, _clamped(b, x))
    return _exp_tail(b, x, kf, r, getattr(coeffs, f"EXP_{_W[b.kind(x)]}"), None)


# exp's short path: |x| within these keeps e^x normal (float32: e^-87 > 2^-126; float64:
# e^-708 > 2^-1022), so nothing is clamped and 2^k is one normal power of two.
_EXP_DIRECT = {K.f32: 87.0, K.f64: 708.0}


def exp(b, x, branch=False):
    """e^x. Where the call may branch (mathlib.Call.may_branch), |x| within _EXP_DIRECT takes
    the short path, one product by 2^k, and the rest (over- and underflow, subnormal results,
    inf, NaN) _exp_full in a block of its own (rare.py); otherwise every x takes _exp_full."""
    if not branch:
        return _exp_full(b, x)
    return _exp_short(b, x)


def _exp_short(b, x):
    """exp's short path: t = x/ln2 + 1.5 2^(prec-1) (one Fma where it rounds once) holds
    k = rint(x/ln2) in its low bits, so that 2^k is (bits(t) + bias) << mantissa bits, no
    conversion; r = (x - k ln2_hi) - k ln2_lo (the first exact). The other operands' lanes
    compute garbage, which the rare block replaces: no clamp, no select. (A subnormal x,
    flushed or not, is inside and gives 1.)

    e^r = 1 + r + r^2 p(r): where Fma rounds once, e = fma(r, fma(r, p, 1), 1), the inner sum
    rounded once (its error, at most half an ulp of 1 + r p, times |r| <= ln2/2, is 0.35 ulp
    of a result below 1, 0.17 above), then e rounded once: 0.85 ulp and the polynomial's far
    smaller error, bounded below 1 ulp. Otherwise e = hi + (lo + r^2 p) with 1 + r = hi + lo
    by Fast2Sum (|r| < 1), whose roundings each cost more. float64's e 2^k stays normal (k >=
    -1021 for x >= -708), so k is added to e's exponent bits: bits(t) << 52 is k << 52 (t's
    bits are those of 1.5 2^52 plus k, and the high bits shift out), no product. float32's may
    be subnormal (k = -126 at -87): e times the normal 2^k."""
    k = b.kind(x)
    ik, mbits, bias, prec = bits.LAYOUT[k]
    ax = bits.fabs_operand(b, x)
    inside = denormals.compare_normal(b, Op.le, ax, const(b, k, _EXP_DIRECT[k]))
    magic = const(b, k, 1.5 * 2.0 ** (prec - 1))
    t = dd.mul_add(b, x, _c(b, k, "INV_LN2"), magic)
    kf = _sub(b, t, magic)
    neg_ln2 = getattr(coeffs, f"LN2_HI_{_W[k]}"), getattr(coeffs, f"LN2_LO_{_W[k]}")
    r = dd.mul_add(b, kf, const(b, k, -neg_ln2[0]), x)  # exact
    r = dd.mul_add(b, kf, const(b, k, -neg_ln2[1]), r)
    one = const(b, k, 1.0)
    coefs = getattr(coeffs, f"EXP_{_W[k]}")
    if dd.fused(b):
        e = dd.mul_add(b, r, dd.mul_add(b, r, _horner(b, coefs, r), one), one)
    else:
        hi = _add(b, one, r)
        lo = _add(b, _sub(b, one, hi), r)
        p = _horner(b, coefs, r)
        e = _add(b, hi, dd.mul_add(b, _mul(b, r, r), p, lo))
    tb = bits.to_bits(b, t)
    if k == K.f64:
        v = bits.from_bits(b, k, b.binary(Op.add, bits.to_bits(b, e),
                                          b.binary(Op.shl, tb, const(b, ik, mbits))))  # fmt: skip
    else:
        scale = b.binary(Op.shl, b.binary(Op.add, tb, const(b, ik, bias)), const(b, ik, mbits))
        v = _mul(b, e, bits.from_bits(b, k, scale))
    _, v = rare.branch(b, b.unary(Op.not_, inside), (x, v),
                       lambda xs, _: (xs, _exp_full(b, xs)), "exp")  # fmt: skip
    return v


def exp_parts(b, x, bounded=False):
    """e^x = (m_hi + m_lo) * 2^k for a finite x (clamped to the exp range): m as an exact-ish
    double word (relative error about 2^-(prec+4)), k as a float of integer value. `bounded`:
    the caller knows |x| <= _EXP_CLAMP, and the clamps (which would not change x) are left out."""
    k = b.kind(x)
    safe = x if bounded else _clamped(b, x)
    kf = bits.rint_small(b, _mul(b, safe, _c(b, k, "INV_LN2")))
    r_hi = _sub(b, safe, _mul(b, kf, _c(b, k, "LN2_HI")))  # exact
    r_lo = b.unary(Op.neg, _mul(b, kf, _c(b, k, "LN2_LO")))
    r = _add(b, r_hi, r_lo)
    rest = _add(b, r_lo, _mul(b, _mul(b, r, r), _horner(b, getattr(coeffs, f"EXP_{_W[k]}"), r)))
    hi, lo = dd.two_sum(b, const(b, k, 1.0), r_hi)
    m_hi, m_lo = dd.fast_two_sum(b, hi, _add(b, lo, rest))
    return m_hi, m_lo, kf


def exp2(b, x):
    k = b.kind(x)
    safe = _clamped(b, x)
    kf = bits.rint_small(b, safe)
    r = _sub(b, safe, kf)  # exact
    ln2 = (_c(b, k, "LN2_HI"), _c(b, k, "LN2_LO"))
    return _exp_tail(b, x, kf, r, getattr(coeffs, f"EXP2_{_W[k]}"), ln2)


def expm1(b, x):
    """e^x - 1 within 1 ulp: 2^k (1 + em1(r)) - 1 = ((2^k - 1) + 2^k r_hi) + 2^k (r_lo + r^2 p(r)),
    the first sum kept exact (Knuth), r = r_hi + r_lo the exact-ish reduced argument; k = 0
    near 0. Where 2^k dominates (k > prec + 1) it is exp(x) - 1; below 2^-(prec+2), -1."""
    k = b.kind(x)
    ik = bits.int_kind(k)
    prec = bits.LAYOUT[k][3]
    safe = _clamped(b, x)
    kf = bits.rint_small(b, _mul(b, safe, _c(b, k, "INV_LN2")))
    r_hi = _sub(b, safe, _mul(b, kf, _c(b, k, "LN2_HI")))
    r_lo = b.unary(Op.neg, _mul(b, kf, _c(b, k, "LN2_LO")))
    r = _add(b, r_hi, r_lo)
    # Small k: (2^k - 1) is exact (-prec <= k <= prec - 3; below, -1 dominates) and is
    # summed exactly with 2^k r_hi.
    lim = float(prec - 3)
    kc = b.select(b.compare(Op.gt, kf, const(b, k, lim)), const(b, k, lim), kf)
    low = float(-(prec + 2))  # below: e^x < 2^-(prec+2), so expm1 rounds to -1
    kc = b.select(b.compare(Op.lt, kc, const(b, k, low)), const(b, k, low), kc)
    t = bits.pow2(b, k, b.convert(ik, kc))
    rest = _add(b, r_lo, _mul(b, _mul(b, r, r), _horner(b, getattr(coeffs, f"EXP_{_W[k]}"), r)))
    hi, lo = dd.two_sum(b, _sub(b, t, const(b, k, 1.0)), _mul(b, t, r_hi))
    small = _add(b, hi, _add(b, lo, _mul(b, t, rest)))
    # Large k: 2^k ((1 + r_hi) + (rest - 2^-k)), the -1 folded in below the leading word.
    bias = bits.LAYOUT[k][2]
    kb = b.select(b.compare(Op.gt, kf, const(b, k, float(bias))), const(b, k, float(bias)), kf)
    kb = b.select(b.compare(Op.lt, kb, const(b, k, 0.0)), const(b, k, 0.0), kb)
    inv_t = bits.pow2(b, k, b.unary(Op.neg, b.convert(ik, kb)))
    inv_t = b.select(b.compare(Op.ge, kf, const(b, k, float(bias))), const(b, k, 0.0), inv_t)
    hi2, lo2 = dd.two_sum(b, const(b, k, 1.0), r_hi)
    e = _add(b, hi2, _add(b, lo2, _sub(b, rest, inv_t)))
    big = bits.ldexp(b, e, b.convert(ik, kf))
    v = b.select(b.compare(Op.gt, kf, const(b, k, lim)), big, small)
    v = b.select(b.compare(Op.lt, kf, const(b, k, low)), const(b, k, -1.0), v)
    v = b.select(b.compare(Op.eq, x, const(b, k, 0.0)), x, v)  # expm1(-0) = -0 (C99)
    return b.select(bits.is_nan(b, x), x, v)


def _log_parts(b, x):
    """(ok, dk, f, hfsq, r) for log(x) = dk ln2 + f - hfsq + r, and ok = x is finite and > 0."""
    k = b.kind(x)
    ik = bits.int_kind(k)
    ok = bits.is_positive_finite(b, x)
    m, e = bits.frexp(b, b.select(ok, x, const(b, k, 1.0)), ik)
    low = b.compare(Op.lt, m, const(b, k, 0.5**0.5))
    m = b.select(low, _mul(b, m, const(b, k, 2.0)), m)
    e = b.select(low, _sub(b, e, const(b, ik, 1)), e)
    return (ok, b.convert(k, e)) + _log_series(b, m)


def _log_series(b, m):
    """(f, hfsq, r) with log(m) = f - hfsq + r, for m in [sqrt(1/2), sqrt(2))."""
    k = b.kind(m)
    f = _sub(b, m, const(b, k, 1.0))
    s = dd.div(b, f, _add(b, const(b, k, 2.0), f), moderate=True)  # 2 + f in [1.7, 2.5]
    z = _mul(b, s, s)
    big_r = _horner(b, getattr(coeffs, f"LOG_{_W[k]}"), z)
    hfsq = _mul(b, const(b, k, 0.5), _mul(b, f, f))
    r = _mul(b, s, _add(b, hfsq, big_r))
    return f, hfsq, r


# The bits of sqrt(1/2): a positive normal x's bits minus these split x = 2^e m with m in
# [sqrt(1/2), sqrt(2)) by integer ops alone (the exponent field above, the mantissa below).
_SQRT_HALF_BITS = {K.f32: 0x3F3504F3, K.f64: 0x3FE6A09E667F3BCD}


def _log_direct_parts(b, x):
    """(inside, dk, f, hfsq, r) as _log_parts, inside = x is positive and normal, from the
    bits (no frexp, no flush-safe forms); the other lanes' parts are those of a number next to
    sqrt(1/2), which the caller discards."""
    k = b.kind(x)
    ik, mbits, _, _ = bits.LAYOUT[k]
    i = bits.to_bits(b, x)
    smallest = 1 << mbits  # the smallest normal's bits
    inf = ((1 << (bits.BITS[k] - 1 - mbits)) - 1) << mbits
    inside = bits.both(b, b.compare(Op.ge, i, const(b, ik, smallest)),
                       b.compare(Op.lt, i, const(b, ik, inf)))  # fmt: skip
    i = b.select(inside, i, const(b, ik, _SQRT_HALF_BITS[k] + 1))
    d = b.binary(Op.sub, i, const(b, ik, _SQRT_HALF_BITS[k]))
    e = b.binary(Op.shr, d, const(b, ik, mbits))
    m = bits.from_bits(b, k, b.binary(Op.add, b.binary(Op.and_, d, const(b, ik, smallest - 1)),
                                      const(b, ik, _SQRT_HALF_BITS[k])))  # fmt: skip
    return (inside, b.convert(k, e)) + _log_series(b, m)


def _log_special(b, x):
    """C99: log(+-0) = -inf, log(x < 0) = NaN, log(inf) = inf, log(NaN) = NaN."""
    k = b.kind(x)
    special = b.select(b.compare(Op.eq, x, const(b, k, 0.0)), const(b, k, float("-inf")), x)
    special = b.select(b.compare(Op.lt, x, const(b, k, 0.0)), const(b, k, float("nan")), special)
    return special


def _log_join(b, dk, f, hfsq, r, extra):
    """log(x) = dk ln2 + f - hfsq + r (+ extra), summed as fdlibm's e_log.c does."""
    k = b.kind(f)
    if extra is not None:
        r = _add(b, r, extra)
    # dk*ln2_hi - ((hfsq - (r + dk*ln2_lo)) - f)
    inner = _sub(b, _sub(b, hfsq, _add(b, r, _mul(b, dk, _c(b, k, "LN2_LO")))), f)
    return _sub(b, _mul(b, dk, _c(b, k, "LN2_HI")), inner)


def log(b, x, extra=None, branch=False):
    """log(x) (+ extra, a term far below an ulp of x's log added before the last roundings).

    Where the call may branch (mathlib.Call.may_branch), a positive normal x is split by its
    bits alone, and the rest (zeros, subnormals, negatives, inf, NaN) takes frexp and the
    special values in a block of its own (rare.py)."""
    if branch:
        inside, dk, f, hfsq, r = _log_direct_parts(b, x)
        v = _log_join(b, dk, f, hfsq, r, extra)
        _, v = rare.branch(b, b.unary(Op.not_, inside), (x, v),
                           lambda xs, _: (xs, log(b, xs, extra)), "log")  # fmt: skip
        return v
    ok, dk, f, hfsq, r = _log_parts(b, x)
    return b.select(ok, _log_join(b, dk, f, hfsq, r, extra), _log_special(b, x))


def log1p(b, x, x_lo=None):
    """log(1 + x + x_lo) within 1 ulp: u = 1 + x rounded, c = x - (u - 1) its exact error, then
    log(u) + c / u, the correction (below an ulp of u, but not of the result where u is
    1 - 2^-prec: its division is dd.div) added to log's small terms before its last
    roundings."""
    k = b.kind(x)
    one = const(b, k, 1.0)
    u = _add(b, one, x)
    c = _sub(b, x, _sub(b, u, one))
    # |x| > 1 makes u - 1 exact: then c is the error of the addition the other way round.
    c = b.select(b.compare(Op.gt, bits.fabs(b, x), one), _sub(b, one, _sub(b, u, x)), c)
    ok = bits.is_positive_finite(b, u)
    if x_lo is not None:  # the argument's low word (a double-word argument)
        c = _add(b, c, x_lo)
    # c / u accurately (dd.div): for x just below 0 (u = 1 - 2^-24, |x| ~ 3e-8) the correction
    # is most of the result, and the driver's division (NVIDIA: about 2 ulp) measured 1.16 ulp.
    # (dd.div's Dekker split would overflow near the top of the range; from 2^60 on, c/u is
    # below 2^-60 and log(u) above 41: the correction vanishes.)
    u_ok = b.select(ok, u, one)
    moderate = b.compare(Op.lt, u_ok, const(b, k, 2.0**60))
    w = b.select(moderate, dd.div(b, c, b.select(moderate, u_ok, one), moderate=True),
                 const(b, k, 0.0))  # fmt: skip
    # Where u rounded to 1, c / u is c: dd.div's remainder (below an ulp of c) would underflow
    # for |c| < 2^-100 (float32) and leave the driver's quotient (2.5 ulp) uncorrected.
    w = b.select(b.compare(Op.eq, u_ok, one), c, w)
    # log(1 + w) = w - w^2/2: the square matters only where u rounded to 1 (w = x, tiny).
    w = _sub(b, w, _mul(b, const(b, k, 0.5), _mul(b, w, w)))
    corr = b.select(ok, w, const(b, k, 0.0))
    v = log(b, u, corr)
    # x == -1 -> -inf, x < -1 -> NaN (log of u <= 0 gives those), inf -> inf, NaN -> NaN.
    v = b.select(b.compare(Op.eq, x, const(b, k, -1.0)), const(b, k, float("-inf")), v)
    if x_lo is None:  # log1p(-0) = -0 (C99)
        v = b.select(b.compare(Op.eq, x, const(b, k, 0.0)), x, v)
    return b.select(b.compare(Op.lt, x, const(b, k, -1.0)), const(b, k, float("nan")), v)


def _hi_lo(b, f, hfsq, r):
    """f - hfsq + r as hi + lo with hi short (its products with the split constants are exact)."""
    k = b.kind(f)
    ik = bits.int_kind(k)
    hi = _sub(b, f, hfsq)
    hi = bits.from_bits(b, k, b.binary(Op.and_, bits.to_bits(b, hi), const(b, ik, _HI_MASK[k])))
    lo = _add(b, _sub(b, _sub(b, f, hi), hfsq), r)
    return hi, lo


def log2(b, x):
    k = b.kind(x)
    ok, dk, f, hfsq, r = _log_parts(b, x)
    hi, lo = _hi_lo(b, f, hfsq, r)
    val_hi = _mul(b, hi, _c(b, k, "INV_LN2_HI"))
    val_lo = _add(
        b, _mul(b, _add(b, lo, hi), _c(b, k, "INV_LN2_LO")), _mul(b, lo, _c(b, k, "INV_LN2_HI"))
    )
    w = _add(b, dk, val_hi)
    val_lo = _add(b, val_lo, _add(b, _sub(b, dk, w), val_hi))
    v = _add(b, val_lo, w)
    return b.select(ok, v, _log_special(b, x))


def log10(b, x):
    k = b.kind(x)
    ok, dk, f, hfsq, r = _log_parts(b, x)
    hi, lo = _hi_lo(b, f, hfsq, r)
    val_hi = _mul(b, hi, _c(b, k, "INV_LN10_HI"))
    y2 = _mul(b, dk, _c(b, k, "LOG10_2_HI"))
    val_lo = _add(
        b,
        _add(
            b,
            _mul(b, dk, _c(b, k, "LOG10_2_LO")),
            _mul(b, _add(b, lo, hi), _c(b, k, "INV_LN10_LO")),
        ),
        _mul(b, lo, _c(b, k, "INV_LN10_HI")),
    )
    w = _add(b, y2, val_hi)
    val_lo = _add(b, val_lo, _add(b, _sub(b, y2, w), val_hi))
    v = _add(b, val_lo, w)
    return b.select(ok, v, _log_special(b, x))
