"""Bit-level float helpers: sign, classification, neighbours and exact scaling by powers of two.

Everything here is built from integer ops on the float's bits and from
comparisons and selects, which Vulkan requires to be exact, so the results are
bit for bit those of C99 / NumPy on every device (no driver built-in whose
precision the Vulkan specification leaves loose). All functions are
branch-free (no new blocks), so their operands may be used after them.
"""

from ... import _core
from ..arith import const
from ..types import BITS

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


def fabs(b, v):
    """|v| by clearing the sign bit (exact for every value, NaN included)."""
    k = b.kind(v)
    ik = int_kind(k)
    return from_bits(b, k, b.binary(Op.and_, to_bits(b, v), const(b, ik, (1 << (BITS[k] - 1)) - 1)))


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


def is_nan(b, x):
    return b.compare(Op.ne, x, x)


def is_inf(b, x):
    return b.compare(Op.eq, fabs(b, x), const(b, b.kind(x), float("inf")))


def is_finite(b, x):
    return b.compare(Op.lt, fabs(b, x), const(b, b.kind(x), float("inf")))


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


def ldexp(b, x, n):
    """x * 2**n rounded once (C99 scalbn, musl's algorithm), for an integer value n of any kind.

    Up to two exact pre-scalings bring n into the normal range; a scaling
    towards the subnormals stops 2**prec above them so that only the last
    multiplication rounds.
    """
    k = b.kind(x)
    ik, _, bias, prec = LAYOUT[k]
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
