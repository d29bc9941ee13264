"""Bit-level float helpers: sign, classification, neighbours, exact scaling by powers of
two, and rounding to the nearest integer (rint).

Everything here is built from integer ops on the float's bits and from
comparisons and selects, which Vulkan requires to be exact, so the results are
bit for bit those of C99 / NumPy on every device (no driver built-in whose
precision the Vulkan specification leaves loose). All functions are
branch-free (no new blocks), so their operands may be used after them.

rint (RoundEven is not in KIR's math set) is built from exact additions: for
|x| < 2**(prec-1), (|x| + 2**(prec-1)) - 2**(prec-1) rounds |x| to an integer
in the round-to-nearest-even mode that Vulkan's correctly rounded OpFAdd uses
(the kernel's float ops carry NoContraction, so the driver may not fold the
pair away); larger values are already integers. ldexp's flush-safe form rounds
its subnormal results with it.
"""

from ... import _core
from ..arith import const, fabs  # noqa: F401 (fabs: the library's |x|, one implementation)
from ..types import BITS
from . import denormals

K = _core.Kind
Op = _core.Op

# float kind -> (int kind of the same width, mantissa bits, exponent bias, precision)
LAYOUT = {K.f32: (K.i32, 23, 127, 24), K.f64: (K.i64, 52, 1023, 53)}


def int_kind(k):
    return LAYOUT[k][0]


def to_bits(b, v):
    return b.bitcast(int_kind(b.kind(v)), v)


def from_bits(b, k, i):
    return b.bitcast(k, i)


def sign_mask(k):
    return -(1 << (BITS[k] - 1))


def sign_bit(b, v):
    """True when the sign bit of v is set (-0.0 and negative NaNs included)."""
    ik = int_kind(b.kind(v))
    return b.compare(Op.lt, to_bits(b, v), const(b, ik, 0))


def copysign(b, x, y):
    """|x| with the sign bit of y (C99 copysign: NaNs and zeros included)."""
    k = b.kind(x)
    ik = int_kind(k)
    sign = const(b, ik, sign_mask(k))
    mag = b.binary(Op.and_, to_bits(b, x), b.unary(Op.not_, sign))
    return from_bits(b, k, b.binary(Op.or_, mag, b.binary(Op.and_, to_bits(b, y), sign)))


def fabs_operand(b, x):
    """|x| of a float64 that only float arithmetic and comparisons read (never its bits): the
    device's FAbs, which NVIDIA's compiler folds into the instruction using it as an operand
    modifier, where clearing the sign bit is an integer instruction of its own (the float64
    trig chain 2 % faster on the H200: benchmarks/results/history.json, run
    "h200 2026-12-02 02:39 trig variants"; docs/math.md). float32 keeps the bit form: a
    flushing device's FAbs may flush a subnormal."""
    if b.kind(x) == K.f64:
        return b.math(_core.MathFn.abs, [x])
    return fabs(b, x)


def is_nan(b, x):
    return b.compare(Op.ne, x, x)


def is_inf(b, x):
    return b.compare(Op.eq, fabs(b, x), const(b, b.kind(x), float("inf")))


def is_finite(b, x):
    return b.compare(Op.lt, fabs(b, x), const(b, b.kind(x), float("inf")))


def is_positive_finite(b, x):
    """0 < x < inf (subnormals included, NaN not): on the bits, 0 < bits(x) < bits(inf) as
    signed integers (three instructions, where the flush-safe x > 0 is a dozen)."""
    k = b.kind(x)
    ik = int_kind(k)
    i = to_bits(b, x)
    inf_bits = const(b, ik, to_int_bits(k, float("inf")))
    return both(b, b.compare(Op.gt, i, const(b, ik, 0)), b.compare(Op.lt, i, inf_bits))


def to_int_bits(k, v):
    """The bit pattern of the float constant v of kind k, as a Python int."""
    import struct

    if k == K.f32:
        return struct.unpack("<i", struct.pack("<f", v))[0]
    return struct.unpack("<q", struct.pack("<d", v))[0]


def either(b, *conds):
    r = conds[0]
    for c in conds[1:]:
        r = b.binary(Op.or_, r, c)
    return r


def both(b, *conds):
    r = conds[0]
    for c in conds[1:]:
        r = b.binary(Op.and_, r, c)
    return r


def nextafter(b, x, y):
    """C99 nextafter: the float next to x in the direction of y (x + y if either is NaN, y if x == y)."""
    k = b.kind(x)
    ik = int_kind(k)
    bits = to_bits(b, x)
    # Away from zero when x and y are on the same side of x, i.e. (y > x) == (x > 0).
    up = b.compare(Op.gt, y, x)
    away = b.binary(Op.xor, up, sign_bit(b, x))
    stepped = b.binary(Op.add, bits, b.select(away, const(b, ik, 1), const(b, ik, -1)))
    r = from_bits(b, k, stepped)
    # From a zero: the smallest subnormal with y's sign.
    tiny = copysign(b, from_bits(b, k, const(b, ik, 1)), y)
    r = b.select(b.compare(Op.eq, x, const(b, k, 0.0)), tiny, r)
    r = b.select(b.compare(Op.eq, x, y), y, r)
    return b.select(either(b, is_nan(b, x), is_nan(b, y)), b.binary(Op.add, x, y), r)


def pow2(b, k, n):
    """2.0 ** n for an int value n (of k's int kind) in the normal exponent range."""
    ik, mbits, bias, _ = LAYOUT[k]
    return from_bits(
        b, k, b.binary(Op.shl, b.binary(Op.add, n, const(b, ik, bias)), const(b, ik, mbits))
    )


def pow2_of(b, kf):
    """2.0 ** kf for a float kf of integer value in the normal exponent range (exp's k): the
    same as pow2 of kf converted, but a float64 kf is converted to int32 and the exponent field
    widened unsigned (a conversion to int64 is two 32-bit ones and a signed widening is hidden
    from NVIDIA's compiler: docs/codegen.md)."""
    k = b.kind(kf)
    if k == K.f32:
        return pow2(b, k, b.convert(K.i32, kf))
    _, mbits, bias, _ = LAYOUT[k]
    field = b.binary(Op.add, b.convert(K.i32, kf), const(b, K.i32, bias))
    wide = b.convert(K.u64, b.convert(K.u32, field))
    return from_bits(b, k, b.binary(Op.shl, wide, const(b, K.u64, mbits)))


def rint_small(b, x):
    """rint(x) for |x| < 2**(prec-2) (NaN stays NaN): (x + 1.5 * 2**(prec-1)) - 1.5 * 2**(prec-1),
    two exact additions (the sum lies in [2**(prec-1), 2**prec), where the spacing is 1), for
    arguments the caller has bounded (exp's k = rint(x / ln 2) on a clamped x)."""
    k = b.kind(x)
    shifter = const(b, k, 1.5 * 2.0 ** (LAYOUT[k][3] - 1))
    return b.binary(Op.sub, b.binary(Op.add, x, shifter), shifter)


def rint(b, x):
    """x rounded to the nearest integer, ties to even (C99 rint, NumPy rint, Python round)."""
    k = b.kind(x)
    prec = LAYOUT[k][3]
    big = const(b, k, 2.0 ** (prec - 1))
    ax = fabs(b, x)
    r = b.binary(Op.sub, b.binary(Op.add, ax, big), big)
    r = copysign(b, r, x)  # -0.4 -> -0.0, as C99 rint
    return b.select(b.compare(Op.lt, ax, big), r, x)  # NaN and inf fail the test and pass through


def ldexp(b, x, n):
    """x * 2**n rounded once (C99 scalbn, musl's algorithm), for an integer value n of any kind.

    Up to two exact pre-scalings bring n into the normal range; a scaling
    towards the subnormals stops 2**prec above them so that only the last
    multiplication rounds.
    """
    k = b.kind(x)
    ik, _, bias, prec = LAYOUT[k]
    if k == K.f32 and denormals.flushes(b):
        return _ldexp_f32_flushing(b, x, n)
    nk = b.kind(n)
    lim = 3 * bias  # beyond this the result is 0 or inf whatever x is
    if nk == K.bool:
        n = b.convert(ik, n)
        nk = ik
    if nk in (K.u32, K.u64, K.u8, K.u16):
        n = b.select(b.compare(Op.gt, n, const(b, nk, lim)), const(b, nk, lim), n)
    else:
        n = b.select(b.compare(Op.gt, n, const(b, nk, lim)), const(b, nk, lim), n)
        n = b.select(b.compare(Op.lt, n, const(b, nk, -lim)), const(b, nk, -lim), n)
    if nk != ik:
        n = b.convert(ik, n)
    return _ldexp_normal(b, x, n)


def _ldexp_normal(b, x, n):
    """ldexp for an int n of x's int kind in [-3 bias, 3 bias]."""
    k = b.kind(x)
    ik, _, bias, prec = LAYOUT[k]
    hi = bias  # largest normal exponent
    lo = 1 - bias  # smallest normal exponent
    down = lo + prec  # one step towards the subnormals, stopping 2**prec above them
    for _ in range(2):
        c = b.compare(Op.gt, n, const(b, ik, hi))
        x = b.select(c, b.binary(Op.mul, x, const(b, k, 2.0**hi)), x)
        n = b.select(c, b.binary(Op.sub, n, const(b, ik, hi)), n)
    for _ in range(2):
        c = b.compare(Op.lt, n, const(b, ik, lo))
        x = b.select(c, b.binary(Op.mul, x, const(b, k, 2.0**down)), x)
        n = b.select(c, b.binary(Op.sub, n, const(b, ik, down)), n)
    n = b.select(b.compare(Op.gt, n, const(b, ik, hi)), const(b, ik, hi), n)
    n = b.select(b.compare(Op.lt, n, const(b, ik, lo)), const(b, ik, lo), n)
    return b.binary(Op.mul, x, pow2(b, k, n))


def frexp(b, x, ek):
    """(m, e) with x = m * 2**e and 0.5 <= |m| < 1; (x, 0) for zeros, infinities and NaNs."""
    k = b.kind(x)
    ik, mbits, bias, prec = LAYOUT[k]
    if k == K.f32 and denormals.flushes(b):
        return _frexp_f32_flushing(b, x, ek)
    ax = fabs(b, x)
    sub = b.compare(Op.lt, ax, const(b, k, 2.0 ** (1 - bias)))
    xs = b.select(sub, b.binary(Op.mul, x, const(b, k, 2.0 ** (prec + 1))), x)
    bits = to_bits(b, xs)
    exp_mask = const(b, ik, ((1 << (BITS[k] - 1 - mbits)) - 1) << mbits)
    field = b.binary(Op.shr, b.binary(Op.and_, bits, exp_mask), const(b, ik, mbits))
    e = b.binary(Op.sub, field, const(b, ik, bias - 1))
    e = b.select(sub, b.binary(Op.sub, e, const(b, ik, prec + 1)), e)
    m_bits = b.binary(
        Op.or_,
        b.binary(Op.and_, bits, b.unary(Op.not_, exp_mask)),
        const(b, ik, (bias - 1) << mbits),
    )
    m = from_bits(b, k, m_bits)
    special = either(b, b.compare(Op.eq, x, const(b, k, 0.0)), b.unary(Op.not_, is_finite(b, x)))
    m = b.select(special, x, m)
    e = b.select(special, const(b, ik, 0), e)
    return m, (e if ek == ik else b.convert(ek, e))


# ---------------------------------------------------------------- float32 on a flushing device
# (denormals.py): subnormal operands are unpacked and subnormal results packed with integer ops.

_SUB_SCALE = 149  # a float32 subnormal is m * 2**-149 with m an integer below 2**23


def _unpack_f32(b, x):
    """(i, mag, sub, xs): x's bits, |bits|, whether x is subnormal, and a normal float32 xs with
    x = xs * 2**-149 when sub (else x): the integer mantissa converted exactly."""
    i = to_bits(b, x)
    mag = b.binary(Op.and_, i, const(b, K.i32, 0x7FFFFFFF))
    sub = both(
        b,
        b.compare(Op.lt, mag, const(b, K.i32, 0x00800000)),
        b.compare(Op.ne, mag, const(b, K.i32, 0)),
    )
    m = b.convert(K.f32, mag)  # exact: below 2**23, a normal result
    sign = b.binary(Op.and_, i, const(b, K.i32, sign_mask(K.f32)))
    m_signed = from_bits(b, K.f32, b.binary(Op.or_, to_bits(b, m), sign))
    return i, mag, sub, b.select(sub, m_signed, x)


def _exponent_field(b, i):
    return b.binary(
        Op.shr, b.binary(Op.and_, i, const(b, K.i32, 0x7F800000)), const(b, K.i32, 23)
    )


def _frexp_f32_flushing(b, x, ek):
    i, mag, sub, xs = _unpack_f32(b, x)
    xi = to_bits(b, xs)
    field = _exponent_field(b, xi)
    e = b.binary(Op.sub, field, const(b, K.i32, 126))
    e = b.select(sub, b.binary(Op.sub, e, const(b, K.i32, _SUB_SCALE)), e)
    m_bits = b.binary(
        Op.or_,
        b.binary(Op.and_, xi, const(b, K.i32, ~0x7F800000)),
        const(b, K.i32, 126 << 23),
    )
    m = from_bits(b, K.f32, m_bits)
    special = either(
        b,
        b.compare(Op.eq, mag, const(b, K.i32, 0)),
        b.compare(Op.ge, mag, const(b, K.i32, 0x7F800000)),
    )
    m = b.select(special, x, m)
    e = b.select(special, const(b, K.i32, 0), e)
    return m, (e if ek == K.i32 else b.convert(ek, e))


def _ldexp_f32_flushing(b, x, n, lo=None):
    """x * 2**n rounded once, without a subnormal operand or result in any float op: a
    subnormal x is unpacked (x = xs * 2**-149); a result below the normal range is rounded
    as an integer multiple of 2**-149 (rint of a float in [2**-2, 2**23], exact) and
    assembled from the bits. `lo` (optional, |lo| <= ulp(x)/2, x normal): (x + lo) * 2**n
    rounded once, lo deciding the ties."""
    lim = 3 * 127 + _SUB_SCALE
    nk = b.kind(n)
    if nk == K.bool:
        n = b.convert(K.i32, n)
        nk = K.i32
    n = b.select(b.compare(Op.gt, n, const(b, nk, lim)), const(b, nk, lim), n)
    if nk not in (K.u32, K.u64, K.u8, K.u16):
        n = b.select(b.compare(Op.lt, n, const(b, nk, -lim)), const(b, nk, -lim), n)
    if nk != K.i32:
        n = b.convert(K.i32, n)
    i, mag, sub, xs = _unpack_f32(b, x)
    n = b.select(sub, b.binary(Op.sub, n, const(b, K.i32, _SUB_SCALE)), n)
    xi = to_bits(b, xs)
    # the result's exponent, were it normal
    big_e = b.binary(Op.add, b.binary(Op.sub, _exponent_field(b, xi), const(b, K.i32, 127)), n)
    n_clamped = b.select(
        b.compare(Op.lt, n, const(b, K.i32, -lim)), const(b, K.i32, -lim), n
    )
    normal = _ldexp_normal(b, xs, n_clamped)
    # below the normal range: t = |mantissa| * 2**(E + 149) in [2**-2, 2**23), then rint
    s = b.binary(Op.add, big_e, const(b, K.i32, _SUB_SCALE))
    s = b.select(b.compare(Op.lt, s, const(b, K.i32, -2)), const(b, K.i32, -2), s)
    t_bits = b.binary(
        Op.or_,
        b.binary(Op.and_, xi, const(b, K.i32, 0x007FFFFF)),
        b.binary(Op.shl, b.binary(Op.add, s, const(b, K.i32, 127)), const(b, K.i32, 23)),
    )
    t = from_bits(b, K.f32, t_bits)
    m = rint(b, t)
    m_int = b.convert(K.i32, m)  # exact: an integer in [0, 2**23]
    if lo is not None:  # a tie t = m +- 1/2 goes the way lo points (lo is below t's last bit)
        d = b.binary(Op.sub, t, m)
        toward = b.compare(Op.ne, sign_bit(b, lo), sign_bit(b, x))
        lo_nz = b.compare(Op.ne, fabs(b, lo), const(b, K.f32, 0.0))
        up = both(b, b.compare(Op.eq, d, const(b, K.f32, 0.5)), lo_nz, b.unary(Op.not_, toward))
        down = both(b, b.compare(Op.eq, d, const(b, K.f32, -0.5)), lo_nz, toward)
        m_int = b.binary(Op.add, m_int, b.select(up, const(b, K.i32, 1), const(b, K.i32, 0)))
        m_int = b.binary(Op.sub, m_int, b.select(down, const(b, K.i32, 1), const(b, K.i32, 0)))
    sign = b.binary(Op.and_, i, const(b, K.i32, sign_mask(K.f32)))
    tiny = from_bits(b, K.f32, b.binary(Op.or_, m_int, sign))
    below = both(
        b,
        b.compare(Op.lt, big_e, const(b, K.i32, -126)),
        b.compare(Op.ne, mag, const(b, K.i32, 0)),
        b.compare(Op.lt, mag, const(b, K.i32, 0x7F800000)),
    )
    return b.select(below, tiny, normal)


def scale_pow2(b, v, kf):
    """v * 2**k rounded once, for v in [2**-6, 2**6] (or NaN: garbage, which callers replace)
    and kf a float of integer value (exp's k): a cheaper ldexp for exp-like results.

    k is clamped to where the result is 0 or inf anyway; v * 2**k1 * 2**k2 (k1 = floor(k/2),
    both factors normal) rounds once, at the second product, subnormal results included. On a
    device that flushes float32 subnormals, a result below the normal range is made from the
    bits instead: t = v * 2**(k + 149) is exact, its rint the result's integer mantissa."""
    k = b.kind(v)
    ik, _, bias, prec = LAYOUT[k]
    lim = bias + prec + 8  # beyond: 0 or inf for any v in [2**-6, 2**6]
    kc = b.select(b.compare(Op.gt, kf, const(b, k, float(lim))), const(b, k, float(lim)), kf)
    kc = b.select(b.compare(Op.lt, kc, const(b, k, float(-lim))), const(b, k, float(-lim)), kc)
    n = b.convert(ik, kc)
    n1 = b.binary(Op.shr, n, const(b, ik, 1))
    n2 = b.binary(Op.sub, n, n1)
    normal = b.binary(Op.mul, b.binary(Op.mul, v, pow2(b, k, n1)), pow2(b, k, n2))
    if not (k == K.f32 and denormals.flushes(b)):
        return normal
    s = b.binary(Op.add, n, const(b, ik, _SUB_SCALE))
    s = b.select(b.compare(Op.gt, s, const(b, ik, 30)), const(b, ik, 30), s)
    s = b.select(b.compare(Op.lt, s, const(b, ik, -30)), const(b, ik, -30), s)
    t = b.binary(Op.mul, v, pow2(b, k, s))  # normal, exact
    two23 = const(b, k, 2.0**23)
    m = b.binary(Op.sub, b.binary(Op.add, t, two23), two23)  # rint(t) for 0 <= t < 2**23
    tiny = from_bits(b, k, b.convert(ik, m))
    return b.select(b.compare(Op.lt, t, two23), tiny, normal)


def is_subnormal(b, x):
    """True for a subnormal x (from the bits: whatever the device does with subnormals)."""
    k = b.kind(x)
    ik, mbits = LAYOUT[k][0], LAYOUT[k][1]
    mag = b.binary(Op.and_, to_bits(b, x), const(b, ik, (1 << (BITS[k] - 1)) - 1))
    return both(
        b,
        b.compare(Op.lt, mag, const(b, ik, 1 << mbits)),
        b.compare(Op.ne, mag, const(b, ik, 0)),
    )


def mul_const_f32_flushing(b, x, c, c_lo=0.0):
    """fl(x * c) for a float32 constant c in [2**-20, 2**20] on a device that flushes
    subnormals: where x or the product is tiny, x is scaled to xs = x * 2**s exactly (unpacked
    from the bits when subnormal), xs * c made exact (Dekker) and scaled back rounding once.
    `c_lo`: the low word of a constant that float32 does not hold (c + c_lo), added to the
    exact product before that rounding (for |x| < 2**-100; the others get fl(x * c))."""
    from .dd import fast_two_sum, two_prod

    i, mag, sub, xs = _unpack_f32(b, x)
    small = b.compare(Op.lt, mag, const(b, K.i32, 0x0D800000))  # |x| < 2**-100
    xs = b.select(sub, xs, b.binary(Op.mul, x, const(b, K.f32, 2.0**100)))
    shift = b.select(sub, const(b, K.i32, -_SUB_SCALE), const(b, K.i32, -100))
    p, e = two_prod(b, xs, const(b, K.f32, c))
    if c_lo:  # the sum's sign is p's (a zero's too: -0 + 0 would be +0)
        s, e = fast_two_sum(b, p, b.binary(Op.add, e, b.binary(Op.mul, xs, const(b, K.f32, c_lo))))
        p = copysign(b, s, p)
    tiny = _ldexp_f32_flushing(b, p, shift, lo=e)
    return b.select(small, tiny, b.binary(Op.mul, x, const(b, K.f32, c)))
