"""sin, cos, tan within 1 ulp over the whole float range.

Argument reduction |x| = (q + f) pi/2, |f| <= 1/2, is an exact multi-word
product with 2/pi (Payne and Hanek's idea, written with float ops only so that
it stays branch-free): 2/pi is stored as integer chunks of `prec` bits
(coeffs.TWO_OVER_PI_CHUNKS_*, generated with mpmath). For x = m 2^e, the chunks
whose product with x is a multiple of 4 (they change neither the quadrant nor
the fraction) are skipped: the first chunk used, j0, is chosen from e, and its
constants are picked by a chain of selects. x is scaled by an exact power of
two so that the NCHUNK products x * chunk stay in range; each product is made
exact by Dekker's two_prod, each of its two words reduced mod 4 exactly
(t - 4 rint(t/4)), split into integer and fraction (by rint, so that the
fractions lie in [-1/2, 1/2] and are exact), and the fractions summed in
three words (Knuth's two_sum twice), the integer parts removed as they appear.
The fraction, known to about 2^-(3 prec), times pi/2 as a double word gives
r = r_hi + r_lo: even for the operands closest to a multiple of pi/2 (|r| ~
2^-61 for float64, 2^-29 for float32) r keeps more than prec + 10 good bits.

|x| <= pi/4 skips the reduction (q = 0, r = x).

A scalar call's sin or cos (`branch`) takes _short: q from the bits of |x| 2/pi + 1.5 2^(p-1),
r by Cody and Waite (with a fused Fma three full words of pi/2, otherwise reduce_fast's), sin's
and cos's polynomials both evaluated and the quadrant selecting the result (_kernel), the sign
by an xor; beyond FAST_LIMIT (inf too) the full reduction in a block of its own.

Kernels on |r| <= pi/4 (+ a little), coefficients from scripts/mathgen/gen_coeffs.py:
sin(r) = r_hi + (r_hi z S(z) + r_lo (1 - z/2)), z = r_hi^2; cos(r) = (1 - z/2) as an exact
two_sum of 1 and -z_hi/2 (z from Dekker's product), plus the small terms z^2 C(z), -z_lo/2,
-r_hi r_lo. tan = sin/cos as double words (dd.dw_div), -cos/sin in odd quadrants.

Special values as C99: NaN and +-inf give NaN; +-0 (and tiny |x|, where the result rounds to
x) give x itself for sin and tan, so the sign of zero is kept; cos(+-0) = 1.
"""

from ... import _core
from ..arith import const
from . import bits, coeffs, dd, denormals, rare

K = _core.Kind
Op = _core.Op

_W = {K.f32: "F32", K.f64: "F64"}
NCHUNK = 5  # products summed: truncation below 2^-(prec (NCHUNK - 2)), far below what r needs
# Below this |x| sin(x) and tan(x) round to x (x^3/3 < ulp(x)/2).
_TINY = {K.f32: 2.0**-13, K.f64: 2.0**-27}


def _add(b, x, y):
    return b.binary(Op.add, x, y)


def _sub(b, x, y):
    return b.binary(Op.sub, x, y)


def _mul(b, x, y):
    return b.binary(Op.mul, x, y)


def _horner(b, cs, x):
    k = b.kind(x)
    return dd.horner(b, [const(b, k, c) for c in cs], x)


def _mod4(b, t):
    """t - 4 rint(t / 4), in [-2, 2]: exact for every finite float t (0 when 4 divides t's
    ulp; |t| < 2 is unchanged; else the difference is a multiple of ulp(t) no larger than t).
    A floor instead would turn a tiny negative t into 4 - |t|, which rounds."""
    k = b.kind(t)
    return _sub(b, t, _mul(b, const(b, k, 4.0), bits.rint(b, _mul(b, t, const(b, k, 0.25)))))


def reduce(b, ax):
    """(q, r_hi, r_lo): ax = (q + f) pi/2 + (error far below an ulp), r = f pi/2, for a finite
    ax >= 0; q a float of integer value (only q mod 4 matters)."""
    k = b.kind(ax)
    ik, _, _, prec = bits.LAYOUT[k]
    chunks = getattr(coeffs, f"TWO_OVER_PI_CHUNKS_{_W[k]}")
    # xs = ax 2^-(prec j0 + guard): the products (and their errors) stay in the normal range.
    guard = 2 * prec
    _, e = bits.frexp(b, ax, ik)
    # Chunk j's product has its last bit at 2^(e - prec - prec (j + 1)): a multiple of 4 for
    # j <= (e - 2)/prec - 2. So j0 = max(0, floor((e - 2)/prec) - 1).
    e2 = b.select(b.compare(Op.lt, e, const(b, ik, 2)), const(b, ik, 2), e)
    j0 = b.binary(Op.div, _sub(b, e2, const(b, ik, 2)), const(b, ik, prec))
    j0 = _sub(b, j0, const(b, ik, 1))
    j0 = b.select(b.compare(Op.lt, j0, const(b, ik, 0)), const(b, ik, 0), j0)
    jmax = (bits.LAYOUT[k][2] + 1 - 2) // prec - 1
    assert jmax + NCHUNK <= len(chunks)
    shift = b.unary(Op.neg, _add(b, b.binary(Op.mul, j0, const(b, ik, prec)), const(b, ik, guard)))
    xs = bits.ldexp(b, ax, shift)
    terms = []
    for i in range(NCHUNK):
        scale = 2.0 ** (guard - prec * (i + 1))
        c = const(b, k, float(chunks[i]) * scale)
        for j in range(1, jmax + 1):
            cj = const(b, k, float(chunks[j + i]) * scale)
            c = b.select(b.compare(Op.eq, j0, const(b, ik, j)), cj, c)
        terms.extend(dd.two_prod(b, xs, c))
    zero = const(b, k, 0.0)
    q, a0, a1, a2 = zero, zero, zero, zero
    for t in terms:
        # Integer parts by rint, fractions in [-1/2, 1/2]: t - rint(t) is exact.
        t = _mod4(b, t)
        n = bits.rint(b, t)
        q = _add(b, q, n)
        a0, e1 = dd.two_sum(b, a0, _sub(b, t, n))
        a1, e2_ = dd.two_sum(b, a1, e1)
        a2 = _add(b, a2, e2_)
        n = bits.rint(b, a0)
        q = _add(b, q, n)
        a0 = _sub(b, a0, n)
    n = bits.rint(b, _add(b, a0, a1))  # -1, 0 or 1: f into [-1/2, 1/2]
    q = _add(b, q, n)
    a0 = _sub(b, a0, n)
    s, err = dd.two_sum(b, a0, a1)
    s, err = dd.fast_two_sum(b, s, _add(b, err, a2))
    pio2 = (const(b, k, getattr(coeffs, f"PIO2_DW_HI_{_W[k]}")),
            const(b, k, getattr(coeffs, f"PIO2_DW_LO_{_W[k]}")))  # fmt: skip
    r_hi, r_lo = dd.dw_mul(b, (s, err), pio2)
    # Small operands need no reduction (and r = x keeps tiny and subnormal x exact).
    small = b.compare(Op.le, ax, const(b, k, 0.785398))
    return (b.select(small, zero, q), b.select(small, ax, r_hi), b.select(small, zero, r_lo))


def reduce_fast(b, ax):
    """(q, r_hi, r_lo) as `reduce` gives them, for 0 <= ax <= FAST_LIMIT (Cody and Waite):
    q = rint(ax 2/pi) < 2^(prec - bits), so that its products with the `bits`-bit words of
    pi/2 (coeffs.PIO2_CW_*) are exact; ax - q P0 is exact (Sterbenz), the next words are
    subtracted by Knuth's two_sum and the last (the rest, rounded) with the small terms.
    Even the operands closest to a multiple of pi/2 keep r to far below an ulp (when r is tiny
    the differences cancel exactly and only q times the rest's rounding remains)."""
    k = b.kind(ax)
    # any rounding of 2/pi will do: an error moves r beyond pi/4 by far less than the
    # polynomials' margin
    two_over_pi = const(b, k, 1.0 / getattr(coeffs, f"PIO2_DW_HI_{_W[k]}"))
    q = bits.rint_small(b, _mul(b, ax, two_over_pi))
    return (q,) + _cody_waite(b, ax, q)


def _cody_waite(b, ax, q):
    """(r_hi, r_lo): ax - q pi/2 by reduce_fast's words."""
    k = b.kind(ax)
    words = [const(b, k, w) for w in getattr(coeffs, f"PIO2_CW_{_W[k]}")]
    s = _sub(b, ax, _mul(b, q, words[0]))
    lo = const(b, k, 0.0)
    for w in words[1:-1]:
        s, e = dd.two_sum(b, s, b.unary(Op.neg, _mul(b, q, w)))
        lo = _add(b, lo, e)
    lo = _sub(b, lo, _mul(b, q, words[-1]))
    return dd.two_sum(b, s, lo)


# Beyond these the q of reduce_fast would need more bits than its words leave (2^20 for
# float64's 33-bit words, 2^10 for float32's 14-bit ones).
FAST_LIMIT = {K.f32: 512.0, K.f64: 2.0**20}


def _sin_dw(b, rh, rl):
    k = b.kind(rh)
    z = _mul(b, rh, rh)
    poly = _horner(b, getattr(coeffs, f"SIN_{_W[k]}"), z)
    tail = _add(b, _mul(b, _mul(b, rh, z), poly),
                _mul(b, rl, _sub(b, const(b, k, 1.0), _mul(b, const(b, k, 0.5), z))))  # fmt: skip
    return dd.fast_two_sum(b, rh, tail)


def _cos_dw(b, rh, rl):
    k = b.kind(rh)
    zh, zl = dd.two_prod(b, rh, rh)
    half = const(b, k, 0.5)
    w, we = dd.two_sum(b, const(b, k, 1.0), b.unary(Op.neg, _mul(b, half, zh)))
    poly = _horner(b, getattr(coeffs, f"COS_{_W[k]}"), zh)
    small = _sub(b, _sub(b, we, _mul(b, half, zl)), _mul(b, rh, rl))
    tail = _add(b, _mul(b, _mul(b, zh, zh), poly), small)
    return dd.fast_two_sum(b, w, tail)


def _setup(b, x, branch):
    """x's reduction (x, and the values after it, as the block after a branch sees them)."""
    k = b.kind(x)
    ax = bits.fabs(b, x)
    safe = b.select(bits.is_finite(b, x), ax, const(b, k, 0.0))
    if branch:
        x, q, rh, rl = _reduce_branching(b, x, safe)
    else:
        q, rh, rl = reduce(b, safe)
    finite = bits.is_finite(b, x)
    ik = bits.int_kind(k)
    qi = b.binary(Op.and_, b.convert(ik, q), const(b, ik, 3))
    return k, ik, x, finite, qi, rh, rl


def _reduce_branching(b, x, safe):
    """reduce_fast below FAST_LIMIT; beyond it (rare: each invocation branches alone) the full
    reduction in a block of its own. The results (and x) are passed through variables: values
    of the block before the branch may not be used after it (docs/kir.md), so the caller may
    use only what this returns."""
    k = b.kind(x)
    lim = const(b, k, FAST_LIMIT[k])
    far = b.compare(Op.gt, safe, lim)
    fast = reduce_fast(b, b.select(far, lim, safe))

    def full(xs, *_):
        ax = bits.fabs(b, xs)
        return (xs,) + reduce(b, b.select(bits.is_finite(b, xs), ax, const(b, k, 0.0)))

    return rare.branch(b, far, (x,) + fast, full, "trig")


def _quadrant(b, qi, ik, n):
    return b.compare(Op.eq, qi, const(b, ik, n))


def _neg(b, v):
    return b.unary(Op.neg, v)


def _finish(b, x, v, finite, tiny_is_x):
    k = b.kind(x)
    if tiny_is_x:
        v = b.select(bits.sign_bit(b, x), _neg(b, v), v)
        v = b.select(b.compare(Op.lt, bits.fabs(b, x), const(b, k, _TINY[k])), x, v)
    return b.select(finite, v, const(b, k, float("nan")))


def sin(b, x, branch=False):
    """sin(x); `branch`: reduce moderate operands by Cody and Waite, branching to the full
    reduction for the others (the caller then uses only the result: see _reduce_branching)."""
    if branch:
        return _short(b, x, False)
    k, ik, x, finite, qi, rh, rl = _setup(b, x, branch)
    s = _sin_dw(b, rh, rl)[0]
    c = _cos_dw(b, rh, rl)[0]
    v = b.select(bits.either(b, _quadrant(b, qi, ik, 1), _quadrant(b, qi, ik, 3)), c, s)
    v = b.select(b.compare(Op.ge, qi, const(b, ik, 2)), _neg(b, v), v)
    return _finish(b, x, v, finite, True)


def cos(b, x, branch=False):
    """cos(x); `branch`: reduce moderate operands by Cody and Waite, branching to the full
    reduction for the others (the caller then uses only the result: see _reduce_branching)."""
    if branch:
        return _short(b, x, True)
    k, ik, x, finite, qi, rh, rl = _setup(b, x, branch)
    s = _sin_dw(b, rh, rl)[0]
    c = _cos_dw(b, rh, rl)[0]
    v = b.select(bits.either(b, _quadrant(b, qi, ik, 1), _quadrant(b, qi, ik, 3)), s, c)
    neg = bits.either(b, _quadrant(b, qi, ik, 1), _quadrant(b, qi, ik, 2))
    v = b.select(neg, _neg(b, v), v)
    return _finish(b, x, v, finite, False)


def _nearest_quarter(b, ax):
    """(qb, q): q = rint(ax 2/pi) as a float and qb, an int whose two low bits are q mod 4
    (the bits of t = ax 2/pi + 1.5 2^(p-1), whose spacing is 1: t = 1.5 2^(p-1) + q, no
    conversion), for 0 <= ax <= FAST_LIMIT (NaN passes through)."""
    k = b.kind(ax)
    magic = const(b, k, 1.5 * 2.0 ** (bits.LAYOUT[k][3] - 1))
    two_over_pi = const(b, k, 1.0 / getattr(coeffs, f"PIO2_DW_HI_{_W[k]}"))
    t = dd.mul_add(b, ax, two_over_pi, magic)
    return bits.to_bits(b, t), _sub(b, t, magic)


def _reduce_short(b, ax):
    """(qb, r_hi, r_lo) for 0 <= ax <= FAST_LIMIT, NaN passing through as r_hi: r = r_hi + r_lo
    as reduce_fast gives it, qb an int whose two low bits are q mod 4 (the bits of
    t = ax 2/pi + 1.5 2^52, whose spacing is 1: t = 1.5 2^52 + q, no conversion).

    With a fused Fma (P0, P1, P2: pi/2 in full-precision words, coeffs.PIO2_FMA_*; float32's
    figures in brackets): r1 = ax - q P0 is one exact Fma (q > 0 only where ax >= 1/2, so the
    difference, below 1 and a multiple of 2^-53 [2^-24], is a float); s = r1 - fl(q P1) and
    its error e are exact by Fast2Sum (r1 is a multiple of ulp(q P1) <= 2^-86 [2^-39], which
    suffices), so that r1 - s is exact and one Fma gives (r1 - s) - q P1 = e - (q P1's
    rounding error), rounded once; minus q P2, that is r_lo. The three words hold pi/2 to
    2^-159 [2^-72]: r is known to 2^-61 or better [q < 2^9], against |r| >= 2^-29 for the
    float32 operands closest to a multiple of pi/2. Without a fused Fma, reduce_fast's shorter
    words and Knuth's sums.
    """
    k = b.kind(ax)
    qb, q = _nearest_quarter(b, ax)
    if not dd.fused(b):
        return (qb,) + _cody_waite(b, ax, q)
    p0, p1, p2 = (const(b, k, w) for w in getattr(coeffs, f"PIO2_FMA_{_W[k]}"))
    nq = _neg(b, q)
    r1 = dd.mul_add(b, nq, p0, ax)  # exact
    s = _sub(b, r1, _mul(b, q, p1))
    # (r1 - s) - q P1 = e - pl (e: Fast2Sum's error of s, pl: the product's), rounded once
    lo = dd.mul_add(b, nq, p1, _sub(b, r1, s))
    return qb, s, dd.mul_add(b, nq, p2, lo)


def _short(b, x, cosine):
    """sin(x) or cos(x) of a scalar call: |x| <= FAST_LIMIT (and NaN) by _reduce_short and
    _kernel, the others (inf too) by the full reduction in a block of their own (rare.branch).
    sin(|x|) with x's sign put back by an xor, so that -0 stays -0; on a device that flushes
    float32 subnormals, sin(x) = x below _TINY (as _finish)."""
    k = b.kind(x)
    ik = bits.int_kind(k)
    ax = bits.fabs_operand(b, x)
    far = b.compare(Op.gt, ax, const(b, k, FAST_LIMIT[k]))
    qb, rh, rl = _reduce_short(b, ax)
    x, qb, rh, rl = rare.branch(b, far, (x, qb, rh, rl), lambda xs, *_: _far(b, xs), "trig")
    if cosine:  # cos(r + q pi/2) = sin(r + (q + 1) pi/2)
        qb = b.binary(Op.add, qb, const(b, ik, 1))
    v = _signed(b, x, qb, _kernel(b, qb, rh, rl), cosine)
    if cosine or k != K.f32 or not denormals.flushes(b):
        return v
    return b.select(b.compare(Op.lt, bits.fabs(b, x), const(b, k, _TINY[k])), x, v)


def fast(b, x, cosine, branch):
    """fastmath's float64 sin(x) or cos(x), within numba.cuda's documented 2 ulp (measured:
    docs/math.md), where the device's Fma rounds once and the call may branch; otherwise None
    (the accurate form). Against _short: r in one word, by three Fmas (r1 = ax - q P0 is exact
    as there; r1 - q P1 and that minus q P2 each rounded once, relative to r itself, so even
    the operands nearest a multiple of pi/2 keep r to about an ulp), and without the second
    word's corrections: sin r + r z S(z), cos 1 + z (-1/2 + z C(z)) (z = r^2, S and C the
    accurate path's), each ending in one Fma, and a select: 24 float64 operations outside
    the rare block where _short takes 36. (One polynomial whose coefficients are selected
    by the quadrant's parity, as libdevice's, takes 15, but the selects, two integer
    operations each, made it slower on the H100: sin 371-376 against 468 x10^9 calls/s.)"""
    k = b.kind(x)
    if k != K.f64 or not branch or not dd.fused(b):
        return None
    ik = bits.int_kind(k)
    ax = bits.fabs_operand(b, x)
    far = b.compare(Op.gt, ax, const(b, k, FAST_LIMIT[k]))
    qb, q = _nearest_quarter(b, ax)
    nq = _neg(b, q)
    r = ax
    for w in coeffs.PIO2_FMA_F64:
        r = dd.mul_add(b, nq, const(b, k, w), r)
    x, qb, r = rare.branch(b, far, (x, qb, r), lambda xs, *_: _far(b, xs)[:3], "trig")
    if cosine:  # cos(r + q pi/2) = sin(r + (q + 1) pi/2)
        qb = b.binary(Op.add, qb, const(b, ik, 1))
    odd = _quadrant_odd(b, qb)
    z = _mul(b, r, r)
    vs = dd.mul_add(b, _mul(b, r, z), _horner(b, coeffs.SIN_SHORT_F64, z), r)
    vc = dd.mul_add(b, z, _horner(b, (-0.5,) + coeffs.COS_SHORT_F64, z), const(b, k, 1.0))
    return _signed(b, x, qb, b.select(odd, vc, vs), cosine)


def _far(b, xs):
    """(xs, q's bits, r_hi, r_lo) of the full reduction, for the rare block of a scalar call
    (the operands beyond FAST_LIMIT; inf and NaN give a NaN r)."""
    k = b.kind(xs)
    finite = bits.is_finite(b, xs)
    q, h, lo = reduce(b, b.select(finite, bits.fabs(b, xs), const(b, k, 0.0)))
    return xs, b.convert(bits.int_kind(k), q), b.select(finite, h, const(b, k, float("nan"))), lo


def _quadrant_odd(b, qb):
    """Whether the quadrant whose bits are qb is odd (cos's polynomial, for sin)."""
    ik = b.kind(qb)
    return b.compare(Op.ne, b.binary(Op.and_, qb, const(b, ik, 1)), const(b, ik, 0))


def _signed(b, x, qb, v, cosine):
    """v, sin(|r|) or cos(r) of the quadrant qb (the bits whose two lowest are q mod 4, q
    already advanced by one for cos), with sin's or cos's sign: bit 1 of the quadrant,
    xored with x's sign for sin (the sign bit either way), put on by an xor."""
    k = b.kind(v)
    ik = bits.int_kind(k)
    sign = b.binary(Op.shl, qb, const(b, ik, bits.BITS[k] - 2))
    if not cosine:
        sign = b.binary(Op.xor, sign, bits.to_bits(b, x))
    sign = b.binary(Op.and_, sign, const(b, ik, bits.sign_mask(k)))
    return bits.from_bits(b, k, b.binary(Op.xor, bits.to_bits(b, v), sign))


def _kernel(b, qb, rh, rl):
    """sin(r) (q even) or cos(r) (q odd) for r = rh + rl, |r| <= pi/4 (+ a little): both
    polynomials (coeffs.SIN_SHORT_*, COS_SHORT_*; the same error as SIN_* and COS_*, a degree
    less) evaluated and the result selected (one select, where choosing the coefficients took
    one per coefficient and three for the terms around them), v = A + (M P(z) + corr):
    sin: A = rh, M = rh z, corr = rl (1 - z/2), as _sin_dw; cos: A = w, M = z^2, corr = we -
    rh rl, where w + we = 1 - rh^2/2 (with a fused Fma from rh itself, to 2^-107; otherwise
    1 - z_hi/2 by Fast2Sum and -z_lo/2, as _cos_dw)."""
    k = b.kind(rh)
    odd = _quadrant_odd(b, qb)
    one, mhalf = const(b, k, 1.0), const(b, k, -0.5)
    if dd.fused(b):
        # w = 1 - rh^2/2 rounded once from the exact square (mh = -rh/2 is exact); 1 - w is
        # exact (Sterbenz), and its sum with -rh^2/2, w's rounding error, is one Fma away
        # (rounded at 2^-107): z_lo is not needed
        z = _mul(b, rh, rh)
        mh = _mul(b, rh, mhalf)
        w = dd.mul_add(b, rh, mh, one)
        we = dd.mul_add(b, rh, mh, _sub(b, one, w))
    else:
        z, zl = dd.two_prod(b, rh, rh)
        w = dd.mul_add(b, z, mhalf, one)
        we = _add(b, _sub(b, _sub(b, one, w), _mul(b, const(b, k, 0.5), z)),
                  _mul(b, zl, mhalf))  # fmt: skip
    ps = _horner(b, getattr(coeffs, f"SIN_SHORT_{_W[k]}"), z)
    pc = _horner(b, getattr(coeffs, f"COS_SHORT_{_W[k]}"), z)
    vs = _add(b, rh, dd.mul_add(b, _mul(b, rh, z), ps, _mul(b, rl, w)))
    corr = dd.mul_add(b, _neg(b, rh), rl, we)
    vc = _add(b, w, dd.mul_add(b, _mul(b, z, z), pc, corr))
    return b.select(odd, vc, vs)


def tan(b, x, branch=False):
    """tan(x); `branch`: reduce moderate operands by Cody and Waite, branching to the full
    reduction for the others (the caller then uses only the result: see _reduce_branching)."""
    k, ik, x, finite, qi, rh, rl = _setup(b, x, branch)
    s = _sin_dw(b, rh, rl)
    c = _cos_dw(b, rh, rl)
    odd = b.compare(Op.eq, b.binary(Op.and_, qi, const(b, ik, 1)), const(b, ik, 1))
    # |r| <= pi/4: in odd quadrants sin(r) may be tiny (>= 2^-62 away from 0 unless r == 0).
    zero = b.compare(Op.eq, s[0], const(b, k, 0.0))
    one = const(b, k, 1.0)
    s_safe = (b.select(zero, one, s[0]), b.select(zero, const(b, k, 0.0), s[1]))
    num = (b.select(odd, c[0], s[0]), b.select(odd, c[1], s[1]))
    den = (b.select(odd, s_safe[0], c[0]), b.select(odd, s_safe[1], c[1]))
    v = dd.dw_div(b, num, den)[0]
    v = b.select(odd, _neg(b, v), v)
    return _finish(b, x, v, finite, True)
