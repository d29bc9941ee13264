"""bfloat16 in kernels: values held in float32, every conversion to bfloat16 rounded in software.

A bfloat16 is the upper half of a float32: same sign and 8-bit exponent, 7 stored
mantissa bits. A bfloat16 value lives in a float32 register (types.compute_kind)
holding a number bfloat16 represents exactly, i.e. a float32 whose low 16 bits are
zero; in device memory it is the 16-bit word of those upper bits (KIR u16 storage,
which needs the device's 16-bit storage). So:

* a load widens exactly: the word shifted left by 16 (`widen`); a store keeps the
  upper 16 bits (`to_bits`): exact for the values held, NaN payloads included;
* every conversion to bfloat16 rounds to nearest, ties to even, with integer
  arithmetic on the bits (`round_value`), never the driver's conversions, as
  ml_dtypes does: a NaN becomes the quiet NaN of its sign (0x7FC0 or 0xFFC0), a
  finite value past the largest bfloat16 becomes an infinity.

  - float32 (`round_f32`): add 0x7FFF plus the last kept bit, drop the low 16 bits.
    A carry into the exponent is the next binade, into the infinity's exponent
    infinity; subnormals round the same way (the exponent field is 0 for both).
  - float64 (`round_f64`): rounded once from its own bits. The float64 is first
    narrowed to float32 bits *rounding to odd* (the dropped bits OR-ed into the last
    kept one), which the float32 rounding above then rounds correctly (24 bits >=
    8 + 2): no double rounding through float32's nearest.
  - integers (`round_int`): up to 16 bits exactly through float32; wider ones keep
    their top 24 bits with the rest OR-ed into the last (rounding to odd again), an
    exact float32, rounded, then scaled back by a power of two.

* bfloat16 op bfloat16 (``+ - * /``, and ``// % **``) computes in float32 and rounds
  once (exprs.binop, `rounded`): ml_dtypes' own definition of these operations. For
  ``+ - * /`` it is also the correctly rounded result: 24 >= 2 * 8 + 2 (Figueroa).
  Unary minus, abs, min, max and comparisons are exact on the float32.

* bfloat16's subnormals are float32's, which some devices flush (NVIDIA). Operations with
  a bfloat16 operand or result are built with `builder`: on a device that may flush, the
  math library's flush-safe builder, whose comparisons and negation work on the bits and
  whose float32 ``+ - * /`` are IEEE's through float64 (mathlib/denormals.py, ieee32).
"""

from .. import _core
from ..typing import bfloat16 as bf16_typing
from ..typing.bfloat16 import is_bfloat16
from . import arith
from .errors import internal, unsupported
from .types import BITS, is_float, is_scalar_type, is_signed

K = _core.Kind
Op = _core.Op

_QUIET_NAN = 0x7FC00000
_SIGN32 = 0x80000000
_INF32 = 0x7F800000


def _c(b, k, v):
    return arith.const(b, k, v)


def widen(b, bits):
    """The float32 equal to the bfloat16 of 16-bit word `bits` (a load)."""
    word = b.convert(K.u32, bits)
    return b.bitcast(K.f32, b.binary(Op.shl, word, _c(b, K.u32, 16)))


def to_bits(b, value):
    """The 16-bit word of bfloat16 `value` (a float32 the type holds exactly: a store)."""
    if b.kind(value) != K.f32:
        raise internal(f"a bfloat16 value held as {b.kind(value)}, not float32", None)
    upper = b.binary(Op.shr, b.bitcast(K.u32, value), _c(b, K.u32, 16))
    return b.convert(K.u16, upper)


def _round_bits32(b, u):
    """float32 bits `u` (u32) rounded to bfloat16, ties to even, as float32 bits (u32)."""
    lsb = b.binary(Op.and_, b.binary(Op.shr, u, _c(b, K.u32, 16)), _c(b, K.u32, 1))
    r = b.binary(Op.add, b.binary(Op.add, u, _c(b, K.u32, 0x7FFF)), lsb)
    r = b.binary(Op.and_, r, _c(b, K.u32, 0xFFFF0000))
    # A NaN: the quiet NaN of its sign (the rounding above could carry it out).
    mag = b.binary(Op.and_, u, _c(b, K.u32, 0x7FFFFFFF))
    nan = b.binary(Op.or_, b.binary(Op.and_, u, _c(b, K.u32, _SIGN32)), _c(b, K.u32, _QUIET_NAN))
    return b.select(b.compare(Op.gt, mag, _c(b, K.u32, _INF32)), nan, r)


def round_f32(b, x):
    """float32 `x` rounded to the nearest bfloat16, as a float32."""
    return b.bitcast(K.f32, _round_bits32(b, b.bitcast(K.u32, x)))


def round_f64(b, x):
    """float64 `x` rounded once to the nearest bfloat16, as a float32 (module docstring)."""
    u = b.bitcast(K.u64, x)
    mag = b.binary(Op.and_, u, _c(b, K.u64, (1 << 63) - 1))
    exp = b.binary(Op.shr, mag, _c(b, K.u64, 52))  # biased, 0 .. 2047
    frac = b.binary(Op.and_, mag, _c(b, K.u64, (1 << 52) - 1))
    # float32's biased exponent would be exp - 896: normal from 1 to 254.
    # Normal: the float32 bits are mag >> 29 less the bias difference; the 29 dropped
    # bits go into the last kept one (round to odd).
    dropped = b.binary(Op.and_, mag, _c(b, K.u64, (1 << 29) - 1))
    sticky = b.select(b.compare(Op.ne, dropped, _c(b, K.u64, 0)),
                      _c(b, K.u64, 1), _c(b, K.u64, 0))  # fmt: skip
    normal = b.binary(Op.sub, b.binary(Op.shr, mag, _c(b, K.u64, 29)),
                      _c(b, K.u64, 896 << 23))  # fmt: skip
    normal = b.binary(Op.or_, normal, sticky)
    # Below float32's normal range: the significand (hidden bit included, none for a
    # float64 subnormal) shifted right by 30 - (exp - 896) = 926 - exp, at most 63.
    hidden = b.select(b.compare(Op.eq, exp, _c(b, K.u64, 0)),
                      _c(b, K.u64, 0), _c(b, K.u64, 1 << 52))  # fmt: skip
    sig = b.binary(Op.or_, frac, hidden)
    shift = b.binary(Op.sub, _c(b, K.u64, 926), b.select(
        b.compare(Op.lt, exp, _c(b, K.u64, 863)), _c(b, K.u64, 863), exp))  # fmt: skip
    kept = b.binary(Op.shr, sig, shift)
    lost = b.binary(Op.and_, sig, b.binary(
        Op.sub, b.binary(Op.shl, _c(b, K.u64, 1), shift), _c(b, K.u64, 1)))  # fmt: skip
    small = b.binary(Op.or_, kept, b.select(
        b.compare(Op.ne, lost, _c(b, K.u64, 0)), _c(b, K.u64, 1), _c(b, K.u64, 0)))  # fmt: skip
    # 2^128 and more (and infinities): infinity; NaN: a NaN (made quiet below).
    nan = b.compare(Op.gt, mag, _c(b, K.u64, 0x7FF << 52))
    huge = b.compare(Op.ge, exp, _c(b, K.u64, 896 + 255))
    special = b.select(nan, _c(b, K.u64, 0x7FC00000), _c(b, K.u64, _INF32))
    bits = b.select(b.compare(Op.ge, exp, _c(b, K.u64, 897)), normal, small)
    bits = b.select(b.binary(Op.or_, nan, huge), special, bits)
    bits = b.convert(K.u32, bits)
    negative = b.compare(Op.ne, b.binary(Op.shr, u, _c(b, K.u64, 63)), _c(b, K.u64, 0))
    bits = b.select(negative, b.binary(Op.or_, bits, _c(b, K.u32, _SIGN32)), bits)
    return b.bitcast(K.f32, _round_bits32(b, bits))


def round_int(b, v):
    """Integer or bool `v` rounded to the nearest bfloat16, as a float32 (module docstring)."""
    k = b.kind(v)
    if k == K.bool or BITS[k] <= 16:  # exact in float32
        return round_f32(b, arith.convert(b, v, K.f32))
    uk = K.u32 if BITS[k] == 32 else K.u64
    if is_signed(k):
        negative = b.compare(Op.lt, v, _c(b, k, 0))
        mag = b.bitcast(uk, b.select(negative, b.binary(Op.sub, _c(b, k, 0), v), v))
    else:
        negative, mag = None, v
    # s: how far to shift the magnitude right to leave at most 24 bits. The exponent of
    # its float32 (rounded by the device any way: at most one binade off) bounds it.
    approx = b.bitcast(K.u32, b.convert(K.f32, mag))
    e = b.binary(Op.sub, b.binary(Op.shr, approx, _c(b, K.u32, 23)), _c(b, K.u32, 127 + 23))
    top = b.compare(Op.ge, approx, _c(b, K.u32, (127 + 24) << 23))  # |v| >= 2^24
    s = arith.convert(b, b.select(top, e, _c(b, K.u32, 0)), uk)
    kept = b.binary(Op.shr, mag, s)
    lost = b.binary(Op.and_, mag, b.binary(
        Op.sub, b.binary(Op.shl, _c(b, uk, 1), s), _c(b, uk, 1)))  # fmt: skip
    kept = b.binary(Op.or_, kept, b.select(b.compare(Op.ne, lost, _c(b, uk, 0)),
                                           _c(b, uk, 1), _c(b, uk, 0)))  # fmt: skip
    r = round_f32(b, b.convert(K.f32, kept))  # kept < 2^25: exact
    scale = b.bitcast(K.f32, b.binary(
        Op.shl, b.binary(Op.add, arith.convert(b, s, K.u32), _c(b, K.u32, 127)),
        _c(b, K.u32, 23)))  # 2^s: exact, s <= 40  # fmt: skip
    r = b.binary(Op.mul, r, scale)
    return r if negative is None else b.select(negative, arith.negate(b, r), r)


def round_value(b, v):
    """Scalar `v` of any KIR kind rounded to the nearest bfloat16, as a float32."""
    k = b.kind(v)
    if k == K.f64:
        return round_f64(b, v)
    if is_float(k):
        return round_f32(b, arith.convert(b, v, K.f32))  # float16 into float32: exact
    return round_int(b, v)


def cast(b, value, from_ty, to_ty):
    """`value` of scalar type `from_ty` as bfloat16 `to_ty`, rounded; None where `to_ty` is
    not bfloat16 or `from_ty` is bfloat16 already (lower.py's cast converts those)."""
    if not is_bfloat16(to_ty) or is_bfloat16(from_ty) or not is_scalar_type(from_ty):
        return None
    return round_value(b, value)


def builder(lo, *tys, b=None):
    """The builder for an operation on Numba types `tys` in the kernel `lo` lowers: `b` (by
    default lo.b), or where one is bfloat16 the flush-safe one over it (module docstring)."""
    if not any(is_bfloat16(t) for t in tys):
        return lo.b if b is None else b
    from .mathlib import denormals

    return denormals.for_lowerer(lo, b=b, ieee32=True)


def rounded(b, value, ty):
    """`value`, the float32 result of an operation of Numba type `ty`, rounded to bfloat16
    where `ty` is bfloat16 (exprs.binop)."""
    return round_f32(b, value) if is_bfloat16(ty) else value


#: Reductions whose steps ml_dtypes rounds to bfloat16 one by one (``x.sum()`` of a
#: bfloat16 array is a bfloat16 accumulated in order): refused rather than computed in
#: another order or precision. min, max, argmin, argmax, any, all are exact and lowered.
_STEPWISE = ("sum", "prod", "mean", "dot")


def check_reduction(name, arrays, loc):
    """Refuse reduction `name` of `arrays` (ArrayArgs) when one holds bfloat16."""
    if name in _STEPWISE and any(is_bfloat16(a.ty.dtype) for a in arrays):
        raise unsupported(
            f"'{name}' of a bfloat16 array (NumPy with ml_dtypes rounds every step to "
            "bfloat16, in order: write the loop, with the accumulator type you want)",
            loc,
        )


def fma(b, x, y, z):
    """x * y + z of bfloat16 values held in float32, rounded once to bfloat16 (CUDA's __hfma):
    x * y is exact in float32 (16 bits) down to 2^-133, and the sum rounded to odd in
    float32 (mathlib/dd.py add_to_odd) rounds to the right bfloat16 (24 >= 8 + 2 bits).
    Below, the float32 product is rounded, but too far below bfloat16's smallest subnormal
    (2^-133) or its half to change the result, save the sign of a zero: a product that
    underflows to -0 plus a +0 is -0 (the exact sum is negative), not float32's +0, so a
    zero `z` takes the product itself where x and y are not zero. An overflowing sum is an
    infinity either way (float32's threshold lies past bfloat16's)."""
    from .mathlib.dd import add_to_odd

    p = b.binary(Op.mul, x, y)
    s = add_to_odd(b, p, z)
    zero = arith.const(b, K.u32, 0)

    def is_zero(v):
        mag = b.binary(Op.and_, b.bitcast(K.u32, v), arith.const(b, K.u32, 0x7FFFFFFF))
        return b.compare(Op.eq, mag, zero)

    product_only = b.binary(Op.and_, is_zero(z), b.unary(
        Op.not_, b.binary(Op.or_, is_zero(x), is_zero(y))))  # fmt: skip
    u = b.bitcast(K.u32, b.select(product_only, p, s))
    return b.bitcast(K.f32, _round_bits32(b, u))


#: cuda.bf16's intrinsics (typing/bfloat16.py), lowered by `lower_intrinsic`.
INTRINSICS = frozenset({bf16_typing.fma, bf16_typing.as_bits, bf16_typing.from_bits})


def lower_intrinsic(lowerer, fn, expr, sig, target):
    """A call of one of INTRINSICS: (value, Numba type)."""
    b = lowerer.b
    args = [lowerer.load_cast(a, t) for a, t in zip(expr.args, sig.args)]
    if fn is bf16_typing.fma:
        lowerer.exact_math = True  # TwoSum needs the float ops exactly rounded, as written
        return fma(builder(lowerer, *sig.args), *args), sig.return_type  # subnormals kept
    if fn is bf16_typing.as_bits:
        return to_bits(b, args[0]), sig.return_type
    return widen(b, arith.convert(b, args[0], K.u16)), sig.return_type  # from_bits: low 16
