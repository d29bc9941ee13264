"""float16 in kernels: values held in float32, every float16 result rounded to half precision.

A float16 value lives in a float32 register (types.compute_kind), holding a number
that float16 represents exactly. Each operation whose Numba type is float16 (the
typing is typing/float16.py) computes in float32 and rounds its result once to the
nearest float16, ties to even, as NumPy's half loops do (npy_half: to float, the
float operation, back to half):

* ``+ - * /`` and sqrt of float16 operands computed in float32 and rounded once are
  the correctly rounded float16 results: float32's 24 bits are at least 2 * 11 + 2,
  so the second rounding cannot move a result the first one did not already decide
  (Figueroa's condition). float32's division is correctly rounded here
  (kir/float_division.h), and no float16 value or product of two is a float32
  subnormal, so a device that flushes float32 subnormals computes the same.
* ``//``, ``%``, ``**`` and the math functions are NumPy's float32 computations
  rounded once, as NumPy's half loops compute them.

The rounding to float16 (`round_float`) is integer arithmetic on the bits, never the
driver's OpFConvert, whose rounding mode Vulkan leaves to the implementation:

    |x| >= 2^-14 (a normal half): drop the low (mantissa - 10) bits, adding half a
      unit of the kept last bit less one, plus that bit (ties to even); a carry
      into the exponent is the right next binade; 2^16 or more is infinity.
    |x| <  2^-14: k = |x| / 2^-24 rounded to an integer, ties to even, from the
      mantissa with its hidden bit shifted right (the remainder against half the
      shift's unit decides); k * 2^-24 is exact in float32 (k <= 1024).
    inf and NaN stay (a float64 NaN becomes a float32 NaN with its sign).

float64 sources round once from their own bits (no float32 step in between, which
could round twice); integers are clamped to +-65536 (from 65520 on every one rounds to
infinity) and converted exactly to float32 first. Every conversion to float16 goes
through `to_half` (the lowerer's casts: ``np.float16(x)``, stores into float16 arrays,
assignments to float16 variables), and every float16 result of an operator, math call,
reduction or subgroup operation through `rounded`. Values read from float16 arrays and
parameters are exact in float32 and need nothing; a float16 register stored into
float16 memory converts exactly (a NaN stays a NaN, its payload the driver's choice).

`fma` is CUDA's __hfma, a * b + c rounded once: a * b is exact in float32 (22 bits);
the sum's exact error comes from TwoSum, and where it is not zero the float32 sum is
made odd in its last bit toward the error (rounding to odd), which then rounds to the
right float16 (24 >= 11 + 2 bits).
"""

from .. import _core
from ..typing import float16 as half_typing
from . import arith
from .types import BITS, exact_kind, is_float, is_scalar_type, is_signed

K = _core.Kind
Op = _core.Op

# source float kind -> (int kind of its bits, mantissa bits, exponent bias)
_LAYOUT = {K.f32: (K.i32, 23, 127), K.f64: (K.i64, 52, 1023)}

_F32_INF = 0x7F800000
_F32_SIGN = -(1 << 31)
_HALF_MAX_INT = 65536  # integers clamped to this keep their float16 (inf from 65520 on)


def is_half(ty):
    """Whether Numba type `ty` is float16 (a scalar; literals included)."""
    return is_scalar_type(ty) and exact_kind(ty) == K.f16


def _c(b, k, v):
    return arith.const(b, k, v)


def _min(b, x, y):
    return b.select(b.compare(Op.lt, x, y), x, y)


def _max(b, x, y):
    return b.select(b.compare(Op.gt, x, y), x, y)


def round_float(b, x):
    """float32 or float64 `x` rounded to the nearest float16 (ties to even), as a float32.

    Branch-free integer arithmetic on x's bits (module docstring); inf, NaN and the sign
    of zero are kept.
    """
    k = b.kind(x)
    ik, mbits, bias = _LAYOUT[k]
    width = BITS[k]
    drop = mbits - 10  # mantissa bits a half does not keep
    u = b.bitcast(ik, x)
    a = b.binary(Op.and_, u, _c(b, ik, (1 << (width - 1)) - 1))  # |x|'s bits
    exp_all = (2 * bias + 1) << mbits  # the bits of infinity

    # |x| >= 2^-14: round the mantissa to 10 bits; 2^16 or more is infinity.
    lsb = b.binary(Op.and_, b.binary(Op.shr, a, _c(b, ik, drop)), _c(b, ik, 1))
    r = b.binary(Op.add, b.binary(Op.add, a, _c(b, ik, (1 << (drop - 1)) - 1)), lsb)
    r = b.binary(Op.and_, r, _c(b, ik, -(1 << drop)))
    overflow = b.compare(Op.ge, r, _c(b, ik, (bias + 16) << mbits))
    if k == K.f64:  # the same number in float32's layout (a half's exponent fits it)
        r = b.binary(Op.sub, b.binary(Op.shr, r, _c(b, ik, 29)), _c(b, ik, (1023 - 127) << 23))
        r = b.convert(K.i32, r)
    normal = b.select(overflow, _c(b, K.i32, _F32_INF), r)

    # |x| < 2^-14: k = |x| / 2^-24 rounded to an integer. |x| = m * 2^(e - bias - mbits)
    # with m the mantissa and its hidden bit, so k = m >> (bias + mbits - 24 - e), rounded
    # by the bits shifted out; shifts past mbits + 2 give 0 as that one does.
    e = b.binary(Op.shr, a, _c(b, ik, mbits))
    m = b.binary(
        Op.or_, b.binary(Op.and_, a, _c(b, ik, (1 << mbits) - 1)), _c(b, ik, 1 << mbits)
    )
    shift = b.binary(Op.sub, _c(b, ik, bias + mbits - 24), e)
    shift = _max(b, _min(b, shift, _c(b, ik, mbits + 2)), _c(b, ik, drop + 1))
    q = b.binary(Op.shr, m, shift)
    unit = b.binary(Op.shl, _c(b, ik, 1), shift)
    rest = b.binary(Op.and_, m, b.binary(Op.sub, unit, _c(b, ik, 1)))
    half = b.binary(Op.shr, unit, _c(b, ik, 1))
    odd = b.compare(Op.ne, b.binary(Op.and_, q, _c(b, ik, 1)), _c(b, ik, 0))
    up = b.binary(
        Op.or_,
        b.compare(Op.gt, rest, half),
        b.binary(Op.and_, b.compare(Op.eq, rest, half), odd),
    )
    q = b.select(up, b.binary(Op.add, q, _c(b, ik, 1)), q)  # at most 1024
    tiny = b.binary(Op.mul, arith.convert(b, q, K.f32), _c(b, K.f32, 2.0**-24))
    tiny = b.bitcast(K.i32, tiny)

    if k == K.f32:
        special = a  # inf, or a NaN as it is
        sign = b.binary(Op.and_, u, _c(b, K.i32, _F32_SIGN))
    else:  # a float64 NaN as a float32 one: quiet, its leading payload bits kept
        payload = b.convert(K.i32, b.binary(Op.shr, b.binary(
            Op.and_, a, _c(b, ik, (1 << mbits) - 1)), _c(b, ik, 29)))  # fmt: skip
        is_nan = b.compare(Op.gt, a, _c(b, ik, exp_all))
        nan = b.binary(Op.or_, payload, _c(b, K.i32, _F32_INF | 0x400000))
        special = b.select(is_nan, nan, _c(b, K.i32, _F32_INF))
        negative = b.compare(Op.lt, u, _c(b, ik, 0))
        sign = b.select(negative, _c(b, K.i32, _F32_SIGN), _c(b, K.i32, 0))
    is_special = b.compare(Op.ge, a, _c(b, ik, exp_all))
    is_normal = b.compare(Op.ge, a, _c(b, ik, (bias - 14) << mbits))
    mag = b.select(is_special, special, b.select(is_normal, normal, tiny))
    return b.bitcast(K.f32, b.binary(Op.or_, mag, sign))


def widen(b, bits):
    """The float32 equal to the float16 of 16-bit word `bits` (an unsigned value below 2^16:
    a packed tile element, frontend/matrix.py), in integer arithmetic as ``round_float``:
    normal halves rebias their exponent, subnormals are their mantissa times 2^-24 (exact),
    infinities and NaNs keep their payload's leading bits."""
    u = b.convert(K.u32, bits)
    sign = b.binary(Op.shl, b.binary(Op.and_, u, _c(b, K.u32, 0x8000)), _c(b, K.u32, 16))
    e = b.binary(Op.and_, b.binary(Op.shr, u, _c(b, K.u32, 10)), _c(b, K.u32, 0x1F))
    m = b.binary(Op.and_, u, _c(b, K.u32, 0x3FF))
    m13 = b.binary(Op.shl, m, _c(b, K.u32, 13))
    normal = b.binary(Op.or_, b.binary(Op.shl, b.binary(Op.add, e, _c(b, K.u32, 127 - 15)),
                                       _c(b, K.u32, 23)), m13)
    special = b.binary(Op.or_, m13, _c(b, K.u32, _F32_INF))
    tiny = b.bitcast(K.u32, b.binary(Op.mul, arith.convert(b, m, K.f32),
                                     _c(b, K.f32, 2.0**-24)))
    mag = b.select(b.compare(Op.eq, e, _c(b, K.u32, 0x1F)), special,
                   b.select(b.compare(Op.eq, e, _c(b, K.u32, 0)), tiny, normal))
    return b.bitcast(K.f32, b.binary(Op.or_, mag, sign))


def from_int(b, v):
    """Integer (or bool) `v` rounded to the nearest float16, as a float32."""
    k = b.kind(v)
    if k == K.bool or BITS[k] <= 8:  # |v| <= 255: exact
        return arith.convert(b, v, K.f32)
    if BITS[k] > 16:  # clamped: the value is exact in float32, and inf stays inf
        v = _min(b, v, _c(b, k, _HALF_MAX_INT))
        if is_signed(k):
            v = _max(b, v, _c(b, k, -_HALF_MAX_INT))
    return round_float(b, b.convert(K.f32, v))


def to_half(b, v):
    """Scalar KIR value `v` (any float, int or bool kind) as a float16 held in float32."""
    k = b.kind(v)
    if is_float(k):
        if k == K.f16:
            return b.convert(K.f32, v)  # exact
        return round_float(b, v)
    return from_int(b, v)


def cast(b, value, from_ty, to_ty):
    """`value` (of Numba type `from_ty`, in its compute kind) converted to Numba scalar type
    `to_ty`, when that is float16 and `from_ty` is not; None for every other cast."""
    if not is_half(to_ty) or is_half(from_ty):
        return None
    return to_half(b, value)


def rounded(b, value, ty):
    """`value` rounded to float16 where Numba type `ty` is float16 (an operation's result
    computed in float32); other values as they are."""
    return round_float(b, value) if is_half(ty) else value


def fma(b, x, y, z):
    """x * y + z rounded once to float16 (CUDA's __hfma), for float16 values held in float32:
    x * y is exact in float32, and the sum rounded to odd in float32 (mathlib/dd.py
    add_to_odd) rounds to the right float16."""
    from .mathlib.dd import add_to_odd

    return round_float(b, add_to_odd(b, b.binary(Op.mul, x, y), z))


#: The float16 fma intrinsic (typing/float16.py), lowered by `lower_fma`.
FMA = half_typing.fma


def lower_fma(lowerer, fn, expr, sig, target):
    """A call of the float16 fma intrinsic: (value, Numba type)."""
    x, y, z = (lowerer.load_cast(a, t) for a, t in zip(expr.args, sig.args))
    lowerer.exact_math = True  # TwoSum needs the float ops exactly rounded, as written
    return fma(lowerer.b, x, y, z), sig.return_type
