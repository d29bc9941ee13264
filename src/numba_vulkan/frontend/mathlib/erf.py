"""erf and erfc: erf within 1.5 ulp, erfc within 2 (erfc: fdlibm's s_erf.c intervals, polynomials
instead of its rationals).

With a = |x|:
- a < 0.84375: erf = x + x P(x^2). For a < 0.5, erfc = 1 - erf, written as
  0.5 - ((a - 0.5) + a P) for a >= 1/4 (a - 0.5 exact) so that the cancellation happens on
  exact terms; for x < 0, erfc = 1 + erf(a).
- erf for a >= 0.84375: 1 - 2^L(a), L = -(a + a P(a)) with P a weighted least-squares fit of
  -log2(erfc(a))/a - 1 from 0.84375 to where erf rounds to 1 (ERF_L, weighted by the error it
  makes in erf; a clamped to its end, 4 in float32, 6 in float64), 2^L = 2^k (1 + f E(f))
  without conversions (_erf_big). 2^L = erfc(a) <= 0.23 there, so its rounding and L's are a
  fraction of an ulp of erf: 1.056 / 0.921 ulp (float32 / float64) at 10^6 samples on the H200
  (fused Fma), 1.179 / 1.049 on lavapipe; fdlibm's two intervals there (1.25 as the limit)
  cost about twice the instructions.
- erfc for 0.5 <= a < 1.25: (1 - ERX) - B(a - 1), or (1 + ERX) + B for x < 0, ERX = erf(1) to
  12 bits (1 +- ERX exact).
- erfc for 1.25 <= a < 27.5 (float32: it underflows near 10.05): e^(-a^2) G_i(a - mid_i),
  with G_i a polynomial fit of erfc(a) e^(a^2) around the midpoint of interval i
  (ERFC_EDGES; coefficients chosen by selects, or by cases: below). a^2 is kept exact
  (Dekker), e^(-a^2_hi) is a double word times 2^k (explog.exp_parts), the low word of a^2
  enters as the factor (1 - a^2_lo), and the scaling by 2^k is the last, single rounding
  (subnormal results included). erfc(x < 0) = 2 - erfc(a).
- beyond: erf = +-1, erfc = 0 (x > 0) or 2.

Special values as C99: erf(+-0) = +-0, erf(+-inf) = +-1, erfc(inf) = 0, erfc(-inf) = 2, NaN -> NaN.
Coefficients: scripts/mathgen/gen_coeffs.py (mpmath).

Two forms give the same bits. The general form (array ufuncs' element calls) evaluates every
interval and selects, erfc's G coefficients too (_erfc_selects). Where the call may branch
(mathlib.Call.may_branch), each interval is a case of its own (rare.cases), and so is each G
interval of erfc's tails (_g_cases), so that an invocation evaluates one polynomial:
- erf: small and big (inf and NaN included); on a device that flushes float32 subnormals,
  |x| < 2^-100 first (_tiny). Both take x itself for the sign (x + x P(x^2) is
  -(a + a P(a^2)) to the bit; big by a select).
- erfc: small, mid, tail (a < 4.5), far (a < _ERFC_FAR: the result is normal, so e^(-a^2)
  needs no clamps and 2^k is one product) and general, the general form for the rest (the
  underflow zone, inf, NaN).
The invocations that run together on a GPU (an NVIDIA warp) run each case that one of them
takes, one after the other (rare.py): operands spread over all intervals pay about what the
general form costs, plus the jumps.

Under fastmath float32 erf is the same with the driver's Exp for 2^L and without the tiny case
(erf(b, x, fast=True), from fast.py): none of the library's exact building blocks, so the
kernel keeps fastmath's freedoms (docs/math.md, "fastmath").
"""

import numpy as np

from ... import _core
from ..arith import const
from . import bits, coeffs_special, dd, denormals, explog, rare

K = _core.Kind
Op = _core.Op

_W = {K.f32: "F32", K.f64: "F64"}
# erfc(a) < half the smallest subnormal beyond this (the edges go further for float64).
_XMAX = {K.f32: 10.1, K.f64: 27.3}
# erf(a) rounds to 1 beyond these (erfc(a) < 2^-(prec+1)): ERF_L's fit stops there, and a is
# clamped to them.
_ERF_ONE = {k: getattr(coeffs_special, f"ERF_L_{w}_EDGES")[1] for k, w in _W.items()}
# Where erf's small interval ends (x + x P(x^2) below).
_ERF_SMALL = 0.84375
# erfc's tail case (edges below 4.5) and far case (below these): erfc(a) normal, e^(-a^2) G
# scaled by one normal 2^k (float32: erfc(9) = 4.1e-37; float64: erfc(19) = 1e-158).
_ERFC_TAIL = 4.5
_ERFC_FAR = {K.f32: 9.0, K.f64: 19.0}
# On a device that flushes float32 subnormals, erf(x) below 2**-100 is x * 2/sqrt(pi) to the
# last bit; x + x P(x^2) would flush the small x P near the subnormals. 2/sqrt(pi) as a float32
# and its low word: the float32 alone is 5.2e-8 off, 0.87 ulp of a result just below 2^-124.
_TINY_BITS = 0x0D800000
_TWO_OVER_SQRT_PI = float(np.float32(2 / np.sqrt(np.pi)))
_TWO_OVER_SQRT_PI_LO = float(np.float32(2 / np.sqrt(np.pi) - _TWO_OVER_SQRT_PI))


def _add(b, x, y):
    return b.binary(Op.add, x, y)


def _sub(b, x, y):
    return b.binary(Op.sub, x, y)


def _mul(b, x, y):
    return b.binary(Op.mul, x, y)


def _horner_v(b, cs, x):
    """Horner's rule on coefficient values already in the IR (cs lowest degree first)."""
    return dd.horner(b, cs, x)


def _horner(b, cs, x):
    k = b.kind(x)
    return _horner_v(b, [const(b, k, c) for c in cs], x)


def _stop(limit):
    """The first G interval that starts at or beyond `limit` (the count below it)."""
    edges = coeffs_special.ERFC_EDGES
    return next((i for i in range(1, len(edges) - 1) if edges[i] >= limit), len(edges) - 1)


def _g(k, i):
    """G_i's coefficients (lowest degree first), then its constant term's low word."""
    return getattr(coeffs_special, f"ERFC_G{i}_{_W[k]}") + (
        getattr(coeffs_special, f"ERFC_G{i}_{_W[k]}_C0LO"),)  # fmt: skip


def _mid(i):
    edges = coeffs_special.ERFC_EDGES
    return (edges[i] + edges[i + 1]) / 2


def _g_value(b, a, cs, mid):
    """G(a - mid) as a double word (g_hi, g_lo) from its coefficients (_g): the last Horner
    step (c0 + t r) summed exactly, c0's low word added."""
    t = _sub(b, a, mid)
    r = _horner_v(b, cs[1:-1], t)
    g_hi, g_lo = dd.two_sum(b, cs[0], _mul(b, t, r))
    return g_hi, _add(b, g_lo, cs[-1])


def _g_select(b, a, first, stop):
    """G of the interval i holding a, among first..stop-1, its coefficients and midpoint
    chosen by selects (a below edges[first + 1] takes interval first, a beyond them stop - 1)."""
    k = b.kind(a)
    cs = [const(b, k, c) for c in _g(k, first)]
    mid = const(b, k, _mid(first))
    for i in range(first + 1, stop):
        inside = b.compare(Op.ge, a, const(b, k, coeffs_special.ERFC_EDGES[i]))
        cs = [b.select(inside, const(b, k, c), v) for c, v in zip(_g(k, i), cs)]
        mid = b.select(inside, const(b, k, _mid(i)), mid)
    return _g_value(b, a, cs, mid)


def _g_cases(b, x, a, first, stop):
    """(x, a, g_hi, g_lo) with G as _g_select gives it, but each interval a case of its own
    (rare.cases): an invocation evaluates its own polynomial, without the selects."""
    k = b.kind(a)

    def body(i):
        def run(xs, a, *_):
            cs = [const(b, k, c) for c in _g(k, i)]
            return (xs, a) + _g_value(b, a, cs, const(b, k, _mid(i)))

        return run

    edges = coeffs_special.ERFC_EDGES
    paths = [(f"g{i}", b.compare(Op.lt, a, const(b, k, edges[i + 1])), body(i))
             for i in range(first, stop - 1)]  # fmt: skip
    paths.append((f"g{stop - 1}", None, body(stop - 1)))
    return rare.cases(b, (x, a, a, a), paths, "erfg")


def _signed(b, x, v):
    """v with the sign of x: -v where x's sign bit is set."""
    return b.select(bits.sign_bit(b, x), b.unary(Op.neg, v), v)


def _pick(b, small, big, vals):
    return b.select(small, vals[0], b.select(big, vals[2], vals[1]))


# ---------------------------------------------------------------------------------- erfc


def _erfc_small(b, a):
    """(erfc(a), erfc(-a)) for a < 0.5: 1 - erf(a), or 0.5 - ((a - 0.5) + a P) from 1/4 on,
    and 1 + erf(a)."""
    k = b.kind(a)
    one, half = const(b, k, 1.0), const(b, k, 0.5)
    apa = _mul(b, a, _horner(b, getattr(coeffs_special, f"ERF_A_{_W[k]}"), _mul(b, a, a)))
    erf_s = _add(b, a, apa)
    h, lo = dd.two_sum(b, _sub(b, a, half), apa)
    pos = b.select(b.compare(Op.lt, a, const(b, k, 0.25)), _sub(b, one, erf_s),
                   _sub(b, _sub(b, half, h), lo))  # fmt: skip
    return pos, _add(b, one, erf_s)


def _erfc_mid(b, a):
    """(erfc(a), erfc(-a)) for 0.5 <= a < 1.25: (1 - ERX) - B(a - 1) and (1 + ERX) + B (terms
    of one sign: B's fit covers [-0.5, 0.25])."""
    k = b.kind(a)
    pb = _horner(b, getattr(coeffs_special, f"ERF_B_{_W[k]}"), _sub(b, a, const(b, k, 1.0)))
    return (_sub(b, const(b, k, 1.0 - coeffs_special.ERX), pb),
            _add(b, const(b, k, 1.0 + coeffs_special.ERX), pb))  # fmt: skip


def _erfc_scaled(b, a, g_hi, g_lo, normal):
    """erfc(a) = e^(-a^2) (g_hi + g_lo), rounded once. `normal`: a is below _ERFC_FAR (the
    result is normal), so e^(-a^2) needs no clamps and the scaling by 2^k is one product by a
    normal power of two; otherwise a bits.ldexp."""
    k = b.kind(a)
    zh, zl = dd.two_prod(b, a, a)
    m_hi, m_lo, kf = explog.exp_parts(b, b.unary(Op.neg, zh), bounded=normal)
    # (m_hi + m_lo)(1 - zl)(g_hi + g_lo): one exact product, the small terms summed first.
    p, pe = dd.two_prod(b, m_hi, g_hi)
    small_terms = _add(b, _mul(b, m_hi, g_lo), _mul(b, _sub(b, m_lo, _mul(b, m_hi, zl)), g_hi))
    v = _add(b, p, _add(b, pe, small_terms))
    if normal:
        return _mul(b, v, bits.pow2_of(b, kf))
    return bits.ldexp(b, v, b.convert(bits.int_kind(k), kf))


def _erfc_selects(b, x):
    """erfc(x) for any x: every interval evaluated, the result selected."""
    k = b.kind(x)
    ax = bits.fabs(b, x)
    xmax = const(b, k, _XMAX[k])
    a = b.select(b.compare(Op.le, ax, xmax), ax, xmax)  # NaN compares false: clamped too
    pos_s, neg_s = _erfc_small(b, a)
    pos_m, neg_m = _erfc_mid(b, a)
    erfc_b = _erfc_scaled(b, a, *_g_select(b, a, 0, _stop(_XMAX[k])), normal=False)
    erfc_b = b.select(b.compare(Op.ge, ax, xmax), const(b, k, 0.0), erfc_b)
    # Below 0.5 only: on [0.5, 0.84375) 0.5 - ((a - 0.5) + aP) cancels in P (measured 2 ulp),
    # while (1 - ERX) - B(a - 1) adds terms of one sign.
    small = b.compare(Op.lt, a, const(b, k, 0.5))
    big = b.compare(Op.ge, a, const(b, k, 1.25))
    pos = _pick(b, small, big, (pos_s, pos_m, erfc_b))
    neg = _pick(b, small, big, (neg_s, neg_m, _sub(b, const(b, k, 2.0), erfc_b)))
    v = b.select(b.compare(Op.lt, x, const(b, k, 0.0)), neg, pos)
    return b.select(bits.is_nan(b, x), x, v)


def erfc(b, x, branch=False):
    """erfc(x); `branch`: one case per interval (module docstring), the caller then uses only
    the result (rare.py)."""
    if not branch:
        return _erfc_selects(b, x)
    k = b.kind(x)

    def signed(xs, pos_neg):  # x is not NaN in these cases; -0 gives 1 either way
        return b.select(bits.sign_bit(b, xs), pos_neg[1], pos_neg[0])

    def tail(xs, a, first, stop):
        xs, a, g_hi, g_lo = _g_cases(b, xs, a, first, stop)
        e = _erfc_scaled(b, a, g_hi, g_lo, normal=True)
        return xs, signed(xs, (e, _sub(b, const(b, k, 2.0), e)))

    def small(xs, a):
        return xs, signed(xs, _erfc_small(b, a))

    def mid(xs, a):
        return xs, signed(xs, _erfc_mid(b, a))

    def general(xs, _):
        return xs, _erfc_selects(b, xs)

    # (x, a): each case returns x and, in a's place, the result.
    a = bits.fabs(b, x)
    tail_stop, far_stop = _stop(_ERFC_TAIL), _stop(_ERFC_FAR[k])
    paths = [
        ("small", b.compare(Op.lt, a, const(b, k, 0.5)), small),
        ("mid", b.compare(Op.lt, a, const(b, k, 1.25)), mid),
        ("tail", b.compare(Op.lt, a, const(b, k, _ERFC_TAIL)),
         lambda xs, a: tail(xs, a, 0, tail_stop)),
        ("far", b.compare(Op.lt, a, const(b, k, _ERFC_FAR[k])),
         lambda xs, a: tail(xs, a, tail_stop, far_stop)),
        ("general", None, general),
    ]  # fmt: skip
    _, v = rare.cases(b, (x, a), paths, "erfc")
    return v


# ----------------------------------------------------------------------------------- erf


def _erf_small(b, x, fast=False):
    """x + x P(x^2) for |x| < 0.84375 (x or a: the rounding is symmetric). `fast`: x (1 + P),
    since without NoContraction the driver may split an Fma, and a flushed x P made erf of a
    small normal x off by 12 % on the H200."""
    p = _horner(b, getattr(coeffs_special, f"ERF_A_{_W[b.kind(x)]}"), _mul(b, x, x))
    if fast:
        return _mul(b, x, _add(b, const(b, b.kind(x), 1.0), p))
    return dd.mul_add(b, x, p, x)


def _erf_big(b, a, fast):
    """erf(a) for 0.84375 <= a <= _ERF_ONE: 1 - 2^L(a), L = -(a + a P(a)) = -M (module
    docstring). 2^L = 2^k (1 + f E(f)): k = rint(-M) is in the low bits of t = 1.5 2^(prec-1)
    - M (2^k from them, no conversion; k >= -prec-3, so 2^k is normal), and f = L - k =
    -(a P + (a + k)): a + k rounds by at most half an ulp of a number below 2 where erfc(a) is
    above 2^-9 (k >= -8), which halves the error of rounding L itself. `fast`: the driver's
    Exp of L ln 2."""
    k = b.kind(a)
    w = _W[k]
    ik, mbits, bias, prec = bits.LAYOUT[k]
    p = _horner(b, getattr(coeffs_special, f"ERF_L_{w}"), a)
    m = dd.mul_add(b, p, a, a)
    if fast:
        e = b.math(_core.MathFn.exp, [_mul(b, m, const(b, k, -float(np.log(2))))])
    else:
        magic = const(b, k, 1.5 * 2.0 ** (prec - 1))
        t = _sub(b, magic, m)
        f = denormals.neg_normal(b, dd.mul_add(b, p, a, _add(b, a, _sub(b, t, magic))))
        scale = b.binary(Op.shl, b.binary(Op.add, bits.to_bits(b, t), const(b, ik, bias)),
                         const(b, ik, mbits))  # fmt: skip
        e1 = dd.mul_add(b, f, _horner(b, getattr(coeffs_special, f"ERF_E_{w}"), f),
                        const(b, k, 1.0))  # fmt: skip
        e = _mul(b, e1, bits.from_bits(b, k, scale))
    return _sub(b, const(b, k, 1.0), e)


def _big(b, x, a, fast):
    """erf(x) for |x| = a >= 0.84375, inf and NaN: a clamped to _ERF_ONE (NaN goes through
    and gives NaN, but for the driver's Exp), the sign of x by its bit (the value is
    positive)."""
    k = b.kind(a)
    top = const(b, k, _ERF_ONE[k])
    a = b.select(denormals.compare_normal(b, Op.gt, a, top), top, a)
    v = bits.to_bits(b, _erf_big(b, a, fast))
    sign = b.binary(Op.and_, bits.to_bits(b, x), const(b, bits.int_kind(k), bits.sign_mask(k)))
    v = bits.from_bits(b, k, b.binary(Op.or_, v, sign))
    # The driver's Exp of NaN is undefined (it gave 0 on the H200): NaN is selected.
    return b.select(bits.is_nan(b, x), x, v) if fast else v


def _tiny(b, x):
    """|x| < 2**-100 (float32, on the bits)."""
    mag = b.binary(Op.and_, bits.to_bits(b, x), const(b, K.i32, 0x7FFFFFFF))
    return b.compare(Op.lt, mag, const(b, K.i32, _TINY_BITS))


def _erf_tiny(b, x):
    """x * 2/sqrt(pi) rounded once, for |x| < 2**-100 on a device that flushes subnormals."""
    return bits.mul_const_f32_flushing(b, x, _TWO_OVER_SQRT_PI, _TWO_OVER_SQRT_PI_LO)


def erf(b, x, branch=False, fast=False):
    """erf(x); `branch`: one case per interval (module docstring), the caller then uses only
    the result (rare.py). On a device that flushes float32 subnormals, |x| < 2**-100 gives
    x * 2/sqrt(pi) rounded once (a case of its own where the call branches). `fast` (float32,
    from fast.py): fastmath's form, 2^L by the driver's Exp and no tiny case (a subnormal x may
    give a flushed result, as fastmath allows)."""
    k = b.kind(x)
    tiny = k == K.f32 and not fast and denormals.flushes(b)
    a = bits.fabs(b, x)
    small = b.compare(Op.lt, a, const(b, k, _ERF_SMALL))
    if not branch:
        v = b.select(small, _erf_small(b, x, fast), _big(b, x, a, fast))
        return b.select(_tiny(b, x), _erf_tiny(b, x), v) if tiny else v
    # (x, a): each case returns x and, in a's place, the result.
    paths = [("small", small, lambda xs, _: (xs, _erf_small(b, xs, fast))),
             ("big", None, lambda xs, a: (xs, _big(b, xs, a, fast)))]  # fmt: skip
    if tiny:
        paths.insert(0, ("tiny", _tiny(b, x), lambda xs, _: (xs, _erf_tiny(b, xs))))
    _, v = rare.cases(b, (x, a), paths, "erf")
    return v
