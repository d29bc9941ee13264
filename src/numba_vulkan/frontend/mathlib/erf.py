"""erf and erfc within 2 ulp (fdlibm's s_erf.c intervals, polynomials instead of its rationals).

With a = |x|:
- a < 0.84375: erf = x + x P(x^2). For a < 0.5, erfc = 1 - erf, written as
  0.5 - ((a - 0.5) + a P) for a >= 1/4 (a - 0.5 exact) so that the cancellation happens on
  exact terms; for x < 0, erfc = 1 + erf(a).
- 0.84375 <= a < 1.25 (erfc: 0.5 <= a < 1.25): erf = ERX + B(a - 1), ERX = erf(1) to 12 bits
  (1 +- ERX exact), erfc = (1 - ERX) - B, or (1 + ERX) + B for x < 0.
- 1.25 <= a < 27.5 (float32: erfc underflows near 10.05): erfc(a) = e^(-a^2) G_i(a - mid_i),
  with G_i a polynomial fit of erfc(a) e^(a^2) around the midpoint of interval i (ERFC_EDGES,
  coefficients chosen by selects). a^2 is kept exact (Dekker), e^(-a^2_hi) is a double word
  times 2^k (explog.exp_parts), the low word of a^2 enters as the factor (1 - a^2_lo), and the
  scaling by 2^k is the last, single rounding (subnormal results included). erf = 1 - erfc,
  erfc(x < 0) = 2 - erfc(a).
- beyond: erf = +-1, erfc = 0 (x > 0) or 2.

Special values as C99: erf(+-0) = +-0, erf(+-inf) = +-1, erfc(inf) = 0, erfc(-inf) = 2, NaN -> NaN.
Coefficients: scripts/mathgen/gen_coeffs.py (mpmath).
"""

from ... import _core
from ..arith import const
from . import bits, coeffs, coeffs_special, dd, explog, rounding

K = _core.Kind
Op = _core.Op

_W = {K.f32: "F32", K.f64: "F64"}
# erfc(a) < half the smallest subnormal beyond this (the edges go further for float64).
_XMAX = {K.f32: 10.1, K.f64: 27.3}


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


def _parts(b, x):
    """(a, small, mid, big, erf_a, erfc_a) for a = |x| (finite, else clamped): erf(a) and
    erfc(a) of each interval, selected by the caller's sign rules."""
    k = b.kind(x)
    w = _W[k]
    one, half = const(b, k, 1.0), const(b, k, 0.5)
    ax = bits.fabs(b, x)
    xmax = const(b, k, _XMAX[k])
    a = b.select(b.compare(Op.le, ax, xmax), ax, xmax)  # NaN compares false: clamped too
    # a < 0.84375
    pa = _horner(b, getattr(coeffs_special, f"ERF_A_{w}"), _mul(b, a, a))
    apa = _mul(b, a, pa)
    erf_s = _add(b, a, apa)
    h, lo = dd.two_sum(b, _sub(b, a, half), apa)
    erfc_s = b.select(b.compare(Op.lt, a, const(b, k, 0.25)), _sub(b, one, erf_s),
                      _sub(b, _sub(b, half, h), lo))  # fmt: skip
    # 0.84375 <= a < 1.25
    erx = const(b, k, coeffs_special.ERX)
    pb = _horner(b, getattr(coeffs_special, f"ERF_B_{w}"), _sub(b, a, one))
    erf_m = _add(b, erx, pb)
    erfc_m = _sub(b, const(b, k, 1.0 - coeffs_special.ERX), pb)
    # 1.25 <= a: erfc(a) = e^(-a^2) G(a - mid)
    edges = coeffs_special.ERFC_EDGES
    # Each G's coefficients plus its constant term's low word, as one list.
    gs = [getattr(coeffs_special, f"ERFC_G{i}_{w}")
          + (getattr(coeffs_special, f"ERFC_G{i}_{w}_C0LO"),)
          for i in range(len(edges) - 1)]  # fmt: skip
    cs = [const(b, k, c) for c in gs[0]]
    mid = const(b, k, (edges[0] + edges[1]) / 2)
    for i in range(1, len(gs)):
        if edges[i] >= _XMAX[k]:
            break
        inside = b.compare(Op.ge, a, const(b, k, edges[i]))
        cs = [b.select(inside, const(b, k, c), v) for c, v in zip(gs[i], cs)]
        mid = b.select(inside, const(b, k, (edges[i] + edges[i + 1]) / 2), mid)
    # G as a double word: the last Horner step (c0 + t r) summed exactly, c0's low word added.
    t = _sub(b, a, mid)
    r = _horner_v(b, cs[1:-1], t)
    g_hi, g_lo = dd.two_sum(b, cs[0], _mul(b, t, r))
    g_lo = _add(b, g_lo, cs[-1])
    zh, zl = dd.two_prod(b, a, a)
    m_hi, m_lo, kf = explog.exp_parts(b, b.unary(Op.neg, zh))
    # (m_hi + m_lo)(1 - zl)(g_hi + g_lo): one exact product, the small terms summed first.
    p, pe = dd.two_prod(b, m_hi, g_hi)
    small_terms = _add(b, _mul(b, m_hi, g_lo), _mul(b, _sub(b, m_lo, _mul(b, m_hi, zl)), g_hi))
    v = _add(b, p, _add(b, pe, small_terms))
    erfc_b = bits.ldexp(b, v, b.convert(bits.int_kind(k), kf))
    erfc_b = b.select(b.compare(Op.ge, ax, xmax), const(b, k, 0.0), erfc_b)
    erf_b = _sub(b, one, erfc_b)
    small = b.compare(Op.lt, a, const(b, k, 0.84375))
    big = b.compare(Op.ge, a, const(b, k, 1.25))
    return a, small, big, (erf_s, erf_m, erf_b), (erfc_s, erfc_m, erfc_b), (apa, pb)


def _pick(b, small, big, vals):
    return b.select(small, vals[0], b.select(big, vals[2], vals[1]))


# erf(a) rounds to 1 beyond these (erfc(a) < 2^-(prec+1)): erf's own tail stops there.
_ERF_ONE = {K.f32: 4.5, K.f64: 6.5}


def _exp_neg(b, z):
    """e^z for z in [-43, 0] in working precision (a few ulp): Cody-Waite by ln 2, the exp
    polynomial, and 2^k by the bits (k >= -62, a normal power of two)."""
    k = b.kind(z)
    w = _W[k]
    kf = rounding.rint_small(b, _mul(b, z, const(b, k, getattr(coeffs, f"INV_LN2_{w}"))))
    r = _sub(b, dd.mul_add(b, b.unary(Op.neg, kf), const(b, k, getattr(coeffs, f"LN2_HI_{w}")), z),
             _mul(b, kf, const(b, k, getattr(coeffs, f"LN2_LO_{w}"))))  # fmt: skip
    p = _horner(b, getattr(coeffs, f"EXP_{w}"), r)
    e = _add(b, const(b, k, 1.0), dd.mul_add(b, _mul(b, r, r), p, r))
    return _mul(b, e, bits.pow2(b, k, b.convert(bits.int_kind(k), kf)))


def erf(b, x):
    """erf alone, cheaper than erfc's accurate tail: for a >= 1.25 erf = 1 - erfc(a) with
    erfc(a) <= 0.08, so erfc's relative error counts about 12 times less, and a^2, e^(-a^2)
    and G in working precision (a few ulp of erfc: well below an ulp of erf) will do. The
    intervals beyond _ERF_ONE, where erf rounds to 1, are left out."""
    k = b.kind(x)
    w = _W[k]
    one = const(b, k, 1.0)
    ax = bits.fabs(b, x)
    top = const(b, k, _ERF_ONE[k])
    a = b.select(b.compare(Op.le, ax, top), ax, top)  # NaN compares false: clamped too
    erf_s = dd.mul_add(b, a, _horner(b, getattr(coeffs_special, f"ERF_A_{w}"), _mul(b, a, a)), a)
    pb = _horner(b, getattr(coeffs_special, f"ERF_B_{w}"), _sub(b, a, one))
    erf_m = _add(b, const(b, k, coeffs_special.ERX), pb)
    edges = coeffs_special.ERFC_EDGES
    gs = [getattr(coeffs_special, f"ERFC_G{i}_{w}") for i in range(len(edges) - 1)]
    cs = [const(b, k, c) for c in gs[0]]
    mid = const(b, k, (edges[0] + edges[1]) / 2)
    for i in range(1, len(gs)):
        if edges[i] >= _ERF_ONE[k]:
            break
        inside = b.compare(Op.ge, a, const(b, k, edges[i]))
        cs = [b.select(inside, const(b, k, c), v) for c, v in zip(gs[i], cs)]
        mid = b.select(inside, const(b, k, (edges[i] + edges[i + 1]) / 2), mid)
    g = _horner_v(b, cs, _sub(b, a, mid))
    erfc_b = _mul(b, _exp_neg(b, b.unary(Op.neg, _mul(b, a, a))), g)
    erf_b = _sub(b, one, erfc_b)
    small = b.compare(Op.lt, a, const(b, k, 0.84375))
    big = b.compare(Op.ge, a, const(b, k, 1.25))
    v = _pick(b, small, big, (erf_s, erf_m, erf_b))
    # erf is odd and each step rounds symmetrically: -(a + aP) = x + xP, and -0 stays -0.
    v = b.select(bits.sign_bit(b, x), b.unary(Op.neg, v), v)
    return b.select(bits.is_nan(b, x), x, v)


def erfc(b, x):
    k = b.kind(x)
    one = const(b, k, 1.0)
    a, _, big, erfs, erfcs, (_, pb) = _parts(b, x)
    # Below 0.5 only: on [0.5, 0.84375) 0.5 - ((a - 0.5) + aP) cancels in P (measured 2 ulp),
    # while (1 - ERX) - B(a - 1) adds terms of one sign (B's fit covers [-0.5, 0.25]).
    small = b.compare(Op.lt, a, const(b, k, 0.5))
    pos = _pick(b, small, big, erfcs)
    # x < 0: 1 + erf(a) = 1 + (a + aP), (1 + ERX) + B, 2 - erfc(a)
    neg_s = _add(b, one, erfs[0])
    neg_m = _add(b, const(b, k, 1.0 + coeffs_special.ERX), pb)
    neg_b = _sub(b, const(b, k, 2.0), erfcs[2])
    neg = _pick(b, small, big, (neg_s, neg_m, neg_b))
    v = b.select(b.compare(Op.lt, x, const(b, k, 0.0)), neg, pos)
    return b.select(bits.is_nan(b, x), x, v)
