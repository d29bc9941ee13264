"""a * b + c rounded once (cuda.fma, libdevice.fma/fmaf), float32 and float64, on every device.

float32: the operands widened to float64 (exactly, subnormals too), a * b exact there (48
bits, never below 2^-298), the sum rounded to odd (dd.add_to_odd) and that narrowed once to
float32: rounding to odd at 53 bits and then to nearest at 24 or fewer (subnormals) is the
exact value rounded once, since 53 >= 24 + 2. No float64 subnormal appears (every value
and TwoSum error is a multiple of 2^-350 or more), and the widening and narrowing are the
flush-safe ones (denormals.FlushSafeBuilder) on a device that flushes float32 subnormals.

float64: the device's Fma where it rounds once (dd.fused: NVIDIA, AMD), else Boldo and
Melquiond's emulation ("Emulation of FMA and correctly rounded sums: proved algorithms using
rounding to odd", IEEE TC 2008): (uh, ul) = a*b exactly (Dekker), (th, tl) = c + uh exactly
(TwoSum), v = tl + ul rounded to odd, and th + v rounded to nearest is a*b + c rounded once.
Their proof assumes no underflow and no overflow, so the operands are scaled first:
a = ma 2^ea, b = mb 2^eb with ma, mb in [1, 2) (subnormals normalised), E = ea + eb, and
c 2^-E is made exactly from c's bits where its exponent lies within 2^+-200 of the
product's. Beyond, a c above wins outright (the product is below a quarter ulp of c: the
result is c; so is it where E < -1100: the product is below a quarter of the smallest
subnormal), and a c below only breaks ties (its sign as a sticky bit, copysign(2^-200, c)).
Everything in the scaled problem is then normal, and the result r (rounded to 53 bits with
an unbounded exponent) times 2^E is the answer wherever it is normal (an overflow gives the
infinity IEEE's rounding does). Where it is subnormal, the grid is 2^-1074, g = 2^(-1074-E)
in the scaled problem, and rounding at g is adding S = 2^52 g of x's sign, rounding to
nearest, subtracting S: RN(S + th + tl + ul) with one more TwoSum and rounding to odd
((h1, l1) = TwoSum(S, th), w = l1 + v rounded to odd, z = (h1 + w) - S), the sign of a zero
kept from r. Zeros, infinities and NaN take a * b + c as written (a or b zero or not
finite: exact), c itself (c not finite), or a * b (c zero: the product rounded once, its
sign kept where it underflows).

Checked bit for bit against Python's fractions on random and hard cases (tests/device/
test_fma.py), on the host against the same algorithm in NumPy before it was written here.
"""

from ... import _core
from ..arith import const
from . import dd

K = _core.Kind
Op = _core.Op
M = _core.MathFn

_MAG = (1 << 63) - 1
_EXP_MASK = 0x7FF << 52
_GAP = 200  # c's exponent beyond the product's at which it is c or only a sticky bit
_TINY_E = -1100  # a product exponent below which a non-zero c is the result


def fma32(b, x, y, z):
    """x * y + z of float32 values rounded once (b: the flush-safe builder on a flushing
    device, denormals.for_lowerer(..., ieee32=True))."""
    wx, wy, wz = (b.convert(K.f64, v) for v in (x, y, z))
    return b.convert(K.f32, dd.add_to_odd(b, b.binary(Op.mul, wx, wy), wz))


def fma64(b, x, y, z):
    """x * y + z of float64 values rounded once."""
    if dd.fused(b):
        return b.math(M.fma, [x, y, z])
    return _emulated(b, x, y, z)


def _i(b, v):
    return const(b, K.i64, v)


def _f(b, v):
    return const(b, K.f64, v)


def _bits(b, v):
    return b.bitcast(K.i64, v)


def _magnitude(b, v):
    return b.binary(Op.and_, _bits(b, v), _i(b, _MAG))


def _finite(b, v):
    return b.compare(Op.lt, _magnitude(b, v), _i(b, _EXP_MASK))


def _is_zero(b, v):
    return b.compare(Op.eq, _magnitude(b, v), _i(b, 0))


def _normalised(b, v):
    """(m, e): finite non-zero v = m 2^e, m in [1, 2) of v's sign; e an int64."""
    sub = b.compare(Op.lt, _magnitude(b, v), _i(b, 1 << 52))
    w = b.select(sub, b.binary(Op.mul, v, _f(b, 2.0**54)), v)  # exact
    bits = _bits(b, w)
    field = b.binary(Op.shr, b.binary(Op.and_, bits, _i(b, _EXP_MASK)), _i(b, 52))
    e = b.binary(Op.sub, field, b.select(sub, _i(b, 1023 + 54), _i(b, 1023)))
    m_bits = b.binary(Op.or_, b.binary(Op.and_, bits, _i(b, ~_EXP_MASK)), _i(b, 1023 << 52))
    return b.bitcast(K.f64, m_bits), e


def _with_exponent(b, m, e):
    """m (in [1, 2) in magnitude) times 2^e, for e within the normal range."""
    moved = b.binary(Op.add, _bits(b, m), b.binary(Op.shl, e, _i(b, 52)))
    return b.bitcast(K.f64, moved)


def _pow2(b, e):
    """2^e as a float64, e in [-1022, 1023]."""
    return b.bitcast(K.f64, b.binary(Op.shl, b.binary(Op.add, e, _i(b, 1023)), _i(b, 52)))


def _scaled(b, v, e):
    """v 2^e, e in [-2200, 2200]: four exact steps of about e/4 (each power normal); the
    result exact where it is representable, an infinity where it overflows."""
    q = b.binary(Op.shr, e, _i(b, 2))  # floor(e / 4): arithmetic shift of an int64
    for part in (q, q, q, b.binary(Op.sub, e, b.binary(Op.mul, q, _i(b, 3)))):
        v = b.binary(Op.mul, v, _pow2(b, part))
    return v


def _emulated(b, a, x, c):
    zero = _f(b, 0.0)
    ma, ea = _normalised(b, a)
    mx, ex = _normalised(b, x)
    mc, ec = _normalised(b, c)
    big_e = b.binary(Op.add, ea, ex)
    gap = b.binary(Op.sub, ec, big_e)
    # c wins where it is far above the product, and where the product is below 2^-1098 (a
    # non-zero c is a multiple of 2^-1074, and adding less than a quarter of that keeps it)
    c_wins = b.binary(
        Op.or_, b.compare(Op.gt, gap, _i(b, _GAP)), b.compare(Op.lt, big_e, _i(b, _TINY_E))
    )
    sticky = b.compare(Op.lt, gap, _i(b, -_GAP))
    safe_gap = b.select(b.binary(Op.or_, c_wins, sticky), _i(b, 0), gap)
    tiny = b.bitcast(
        K.f64,
        b.binary(
            Op.or_, _i(b, (1023 - _GAP) << 52), b.binary(Op.and_, _bits(b, c), _i(b, -(1 << 63)))
        ),
    )
    cs = b.select(sticky, tiny, _with_exponent(b, mc, safe_gap))

    uh, ul = dd.two_prod(b, ma, mx)  # Dekker's: b is never fused here
    th, tl = dd.two_sum(b, cs, uh)
    v = dd.add_to_odd(b, tl, ul)
    r = b.binary(Op.add, th, v)
    normal = _scaled(b, r, big_e)

    # The subnormal range: rounding at g = 2^(-1074-E) through S = 2^(-1022-E) of r's sign.
    _, er = _normalised(b, b.select(b.compare(Op.eq, r, zero), _f(b, 1.0), r))
    subnormal = b.compare(Op.lt, b.binary(Op.add, er, big_e), _i(b, -1022))
    s_exp = b.select(subnormal, b.binary(Op.sub, _i(b, -1022), big_e), _i(b, 0))
    sign = b.binary(Op.and_, _bits(b, r), _i(b, -(1 << 63)))
    s = b.bitcast(K.f64, b.binary(Op.or_, _bits(b, _with_exponent(b, _f(b, 1.0), s_exp)), sign))
    h1, l1 = dd.two_sum(b, s, th)
    w = dd.add_to_odd(b, l1, v)
    zs = b.binary(Op.sub, b.binary(Op.add, h1, w), s)
    zs = b.bitcast(K.f64, b.binary(Op.or_, _magnitude(b, zs), sign))  # a zero keeps r's sign
    tiny_result = _scaled(b, zs, big_e)

    result = b.select(subnormal, tiny_result, normal)
    result = b.select(b.compare(Op.eq, r, zero), r, result)  # an exact zero: +0 (TwoSum's)
    result = b.select(c_wins, c, result)
    result = b.select(_is_zero(b, c), b.binary(Op.mul, a, x), result)
    result = b.select(_finite(b, c), result, c)
    plain = b.binary(Op.add, b.binary(Op.mul, a, x), c)
    ordinary = b.binary(
        Op.and_,
        b.binary(Op.and_, _finite(b, a), _finite(b, x)),
        b.unary(Op.not_, b.binary(Op.or_, _is_zero(b, a), _is_zero(b, x))),
    )
    return b.select(ordinary, result, plain)
