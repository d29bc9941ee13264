"""LLVM integers in KIR, and the ``llvm.*`` functions an @intrinsic may call.

LLVM integers are signless and come in any width; KIR's have a signedness and
compute reliably only at 32 and 64 bits (drivers keep 8- and 16-bit values in
wider registers without wrapping them). An LLVM ``iN`` is therefore held as:

* ``i1``: a KIR bool;
* ``i8``, ``i16``, ``i32``: a KIR ``i32`` holding the value *sign-extended*
  from N bits (canonical form, restored after every operation that can leave
  it: add, sub, mul, shl, truncation);
* ``i64``: a KIR ``i64``.

Operations that read the bits as unsigned (``udiv``, ``lshr``, ``icmp ult``,
``zext``, ``uitofp``, the bit-counting functions) work on the zero-extended
value in ``u32``/``u64``. Every function here is branch-free (no new KIR
blocks), except ``frem`` (C's fmod, a loop: arith.fmod).

The ``llvm.*`` functions translated are those with one exact answer:
ctpop, ctlz, cttz, bitreverse, bswap, abs, smin/smax/umin/umax, fabs,
copysign, sqrt (correctly rounded, as LLVM's), floor, ceil, trunc, rint and
nearbyint, fma and fmuladd on float32 (exactly rounded: below), expect and
assume. Anything else is refused by the translator.
"""

from .. import _core
from . import arith
from .arith import const
from .types import BITS

K = _core.Kind
M = _core.MathFn
Op = _core.Op


def int_kind(width):
    """The KIR kind holding an LLVM integer of `width` bits, or None (not translated)."""
    if width == 1:
        return K.bool
    if width in (8, 16, 32):
        return K.i32
    if width == 64:
        return K.i64
    return None


def canon(b, v, width):
    """`v` (an i32) wrapped to `width` bits and sign-extended again (canonical form)."""
    if width not in (8, 16):
        return v
    n = const(b, K.i32, 32 - width)
    return b.binary(Op.shr, b.binary(Op.shl, v, n), n)


def unsigned(b, v, width):
    """The bits of canonical `v` as an unsigned value (u32 up to 32 bits, else u64)."""
    uk = K.u32 if width <= 32 else K.u64
    u = arith.convert(b, v, uk)
    if width < 32:
        u = b.binary(Op.and_, u, const(b, uk, (1 << width) - 1))
    return u


def from_unsigned(b, u, width):
    """The canonical value of the low `width` bits of the unsigned `u`."""
    return canon(b, arith.convert(b, u, int_kind(width)), width)


def signed_const(width, value):
    """`value` read as a `width`-bit two's complement integer (the canonical constant)."""
    value = int(value) & ((1 << width) - 1)
    return value - (1 << width) if value >> (width - 1) else value


# ---------------------------------------------------------------- bit counting on unsigned values


def _masks(uk, step):
    """The mask whose groups of `step` bits alternate 1s and 0s, low group of 1s (0x5555...)."""
    width = BITS[uk]
    group = (1 << step) - 1
    return sum(group << i for i in range(0, width, 2 * step))


def _halves(b, u):
    """(low, high) 32-bit halves of the u64 `u`."""
    lo = b.convert(K.u32, u)
    hi = b.convert(K.u32, b.binary(Op.shr, u, const(b, K.u64, 32)))
    return lo, hi


def popcount(b, u):
    """The number of set bits of the unsigned `u` (u32 or u64), of u's kind: OpBitCount, which
    Vulkan defines on 32 bits only (a u64 is counted in halves)."""
    if b.kind(u) == K.u32:
        return b.math(M.bit_count, [u])
    lo, hi = _halves(b, u)
    n = b.binary(Op.add, b.math(M.bit_count, [lo]), b.math(M.bit_count, [hi]))
    return b.convert(K.u64, n)


def leading_zeros(b, u, width):
    """Leading zeros of the unsigned `u` (u32 or u64) holding a `width`-bit value (`width` for
    0), as a u32: (width - 1) - FindUMsb, whose -1 for 0 wraps to width."""
    c = lambda v: const(b, K.u32, v)  # noqa: E731
    if b.kind(u) == K.u32:
        return b.binary(Op.sub, c(width - 1), b.math(M.find_umsb, [u]))
    lo, hi = _halves(b, u)
    in_hi = b.binary(Op.sub, c(31), b.math(M.find_umsb, [hi]))
    in_lo = b.binary(Op.sub, c(63), b.math(M.find_umsb, [lo]))
    return b.select(b.compare(Op.ne, hi, c(0)), in_hi, in_lo)


def trailing_zeros(b, u, width):
    """Trailing zeros of the unsigned `u` (u32 or u64) holding a `width`-bit value (`width` for
    0), as a u32, from FindILsb (-1 for 0)."""
    c = lambda v: const(b, K.u32, v)  # noqa: E731
    if b.kind(u) == K.u32:
        low = b.math(M.find_ilsb, [u])
        return b.select(b.compare(Op.eq, u, c(0)), c(width), low)
    lo, hi = _halves(b, u)
    in_hi = b.binary(Op.add, c(32), b.math(M.find_ilsb, [hi]))
    n = b.select(b.compare(Op.ne, lo, c(0)), b.math(M.find_ilsb, [lo]), in_hi)
    return b.select(b.compare(Op.eq, u, const(b, K.u64, 0)), c(width), n)


def _swap_groups(b, u, steps):
    uk = b.kind(u)
    for step in steps:
        m = const(b, uk, _masks(uk, step))
        n = const(b, uk, step)
        u = b.binary(Op.or_, b.binary(Op.and_, b.binary(Op.shr, u, n), m),
                     b.binary(Op.shl, b.binary(Op.and_, u, m), n))  # fmt: skip
    return u


def _all_steps(uk, first):
    steps, s = [], first
    while s < BITS[uk]:
        steps.append(s)
        s *= 2
    return steps


def ctpop(b, x, width):
    return from_unsigned(b, popcount(b, unsigned(b, x, width)), width)


def ctlz(b, x, width):
    """Leading zeros of the `width`-bit value (`width` for 0, LLVM's answer when 0 is not
    declared poison; where it is, any answer is LLVM's)."""
    u = unsigned(b, x, width)
    return from_unsigned(b, arith.convert(b, leading_zeros(b, u, width), b.kind(u)), width)


def cttz(b, x, width):
    u = unsigned(b, x, width)
    return from_unsigned(b, arith.convert(b, trailing_zeros(b, u, width), b.kind(u)), width)


def bitreverse(b, x, width):
    u = unsigned(b, x, width)
    uk = b.kind(u)
    r = _swap_groups(b, u, _all_steps(uk, 1))
    if width < BITS[uk]:
        r = b.binary(Op.shr, r, const(b, uk, BITS[uk] - width))
    return from_unsigned(b, r, width)


def bswap(b, x, width):
    u = unsigned(b, x, width)
    uk = b.kind(u)
    if width == 16:
        # The two bytes as a rotation: u * 0x10001 is u twice (u < 2^16), and bits 8..23 of
        # that are the swapped bytes. The masks-and-shifts form below gave the H200 (driver
        # 580) a wrong int16 result (out[i] = i), apparently from its compiler's own 16-bit
        # byte swap, which recognises such forms; a multiply is not one (not yet run there:
        # the probe nvidia_forms.py, added in bacd769 and since removed).
        twice = b.binary(Op.mul, u, const(b, uk, 0x10001))
        r = b.binary(Op.and_, b.binary(Op.shr, twice, const(b, uk, 8)), const(b, uk, 0xFFFF))
        return from_unsigned(b, r, width)
    r = _swap_groups(b, u, _all_steps(uk, 8))
    if width < BITS[uk]:
        r = b.binary(Op.shr, r, const(b, uk, BITS[uk] - width))
    return from_unsigned(b, r, width)


def umul_overflows(b, ux, uy, width):
    """Whether the product of the unsigned `width`-bit values ux, uy (u32, width 8, 16 or 32)
    needs more than `width` bits, from their halves, all in u32.

    Not as `zext(x) * zext(y) > max` in twice the width: NVIDIA's compiler failed on that
    (the H200's driver 580: vkCreateComputePipelines gave VK_ERROR_UNKNOWN, "NVVM compilation
    failed"), presumably once LLVM's instcombine made it a umul.with.overflow, which is
    exactly what that idiom is rewritten to (not yet run there). With halves
    (x = xh * 2^h + xl), the product overflows iff both high halves are non-zero, or
    xh*yl + xl*yh (one term only, below 2^width) plus the carry (xl*yl >> h) reaches 2^h.
    """
    h = width // 2
    low = const(b, K.u32, (1 << h) - 1)
    zero = const(b, K.u32, 0)
    xh, yh = (b.binary(Op.shr, v, const(b, K.u32, h)) for v in (ux, uy))
    xl, yl = (b.binary(Op.and_, v, low) for v in (ux, uy))
    both = b.binary(Op.and_, b.compare(Op.ne, xh, zero), b.compare(Op.ne, yh, zero))
    mid = b.binary(Op.add, b.binary(Op.mul, xh, yl), b.binary(Op.mul, xl, yh))
    carry = b.binary(Op.shr, b.binary(Op.mul, xl, yl), const(b, K.u32, h))
    return b.binary(Op.or_, both, b.compare(Op.gt, b.binary(Op.add, mid, carry), low))


# ---------------------------------------------------------------- exact float32 fma


def fma_f32(b, x, y, z):
    """x*y + z rounded once, for float32, from float64 ops (each rounded once in Vulkan).

    The product of two float32 values is exact in float64 (48 bits, exponents well
    inside float64's range); the sum is rounded to odd (Boldo and Melquiond): Knuth's
    two-sum gives the exact error e of s = fl(p + z), and where e != 0 and s's last
    bit is even, s moves one ulp toward e. A float64 rounded to odd, then to float32
    by the correctly rounded conversion, is the correctly rounded float32 result
    (53 >= 24 + 2). Infinities and NaNs pass through (e is then NaN: no move).
    """
    from .mathlib import dd

    xd, yd, zd = (arith.convert(b, v, K.f64) for v in (x, y, z))
    p = b.binary(Op.mul, xd, yd)
    s, e = dd.two_sum(b, p, zd)
    zero = const(b, K.f64, 0.0)
    inexact = b.binary(Op.or_, b.compare(Op.lt, e, zero), b.compare(Op.gt, e, zero))
    bits = b.bitcast(K.i64, s)
    even = b.compare(Op.eq, b.binary(Op.and_, bits, const(b, K.i64, 1)), const(b, K.i64, 0))
    # Toward e: away from zero (bits + 1) when e has s's sign, else toward zero (bits - 1).
    same_sign = b.compare(Op.eq, b.compare(Op.lt, e, zero), b.compare(Op.lt, s, zero))
    moved = b.binary(Op.add, bits, b.select(same_sign, const(b, K.i64, 1), const(b, K.i64, -1)))
    odd = b.select(b.binary(Op.and_, inexact, even), b.bitcast(K.f64, moved), s)
    return arith.convert(b, odd, K.f32)
