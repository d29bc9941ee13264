"""complex64 / complex128 as pairs of floats (real, imaginary) in the front end.

A complex value is a tree of two KIR floats (f32 for complex64, f64 for
complex128, or f32 in a float-narrowed specialisation); a complex array
element is two consecutive floats in memory (NumPy's layout), so element k
of a complex array is floats 2k and 2k + 1 of the same buffer.

The arithmetic is Numba's (numba/cpython/numbers.py), operation for
operation, so that results agree with numba.njit bit for bit: + and - by
parts, (a+bi)(c+di) = (ac - bd) + (ad + bc)i, division by CPython's
_Py_c_quot (Smith's method). Where Numba raises ZeroDivisionError (a zero
divisor) a kernel cannot: the result is NaN + NaN i. ``abs(z)`` is
hypot(re, im) computed as m * sqrt((re/m)^2 + (im/m)^2) with m = max(|re|,
|im|), which neither overflows nor underflows spuriously (inf if either part
is inf, NaN if one is NaN and none is inf, as C's hypot); it may differ from
libm's hypot in the last bit. ``==`` / ``!=`` compare both parts.
"""

import operator

from numba.core import types

from .. import _core
from . import arith
from .errors import unsupported
from .types import compute_kind

Op = _core.Op
K = _core.Kind
M = _core.MathFn


def part_kind(ty, mode, loc=None):
    """The kind of each part of complex type `ty`."""
    return compute_kind(types.float32 if ty.bitwidth == 64 else types.float64, mode, loc)


def part_type(ty):
    return types.float32 if ty.bitwidth == 64 else types.float64


def cast(lo, value, from_ty, to_ty, loc):
    """Convert `value` of `from_ty` (complex or real scalar) to complex type `to_ty`."""
    b = lo.b
    k = part_kind(to_ty, lo.mode, loc)
    if isinstance(from_ty, types.Complex):
        return (arith.convert(b, value[0], k), arith.convert(b, value[1], k))
    return (arith.convert(b, value, k), arith.const(b, k, 0.0))


def constant(b, value, k):
    value = complex(value)
    return (arith.const(b, k, value.real), arith.const(b, k, value.imag))


def binop(lo, fn, x, y, sig, loc, sym):
    """x `fn` y for complex operands already cast to sig.args; returns a value tree."""
    b = lo.b
    (a, bi), (c, d) = x, y
    if fn in (operator.add, operator.iadd):
        return (b.binary(Op.add, a, c), b.binary(Op.add, bi, d))
    if fn in (operator.sub, operator.isub):
        return (b.binary(Op.sub, a, c), b.binary(Op.sub, bi, d))
    if fn in (operator.mul, operator.imul):
        re = b.binary(Op.sub, b.binary(Op.mul, a, c), b.binary(Op.mul, bi, d))
        im = b.binary(Op.add, b.binary(Op.mul, a, d), b.binary(Op.mul, bi, c))
        return (re, im)
    if fn in (operator.truediv, operator.itruediv):
        return _div(b, a, bi, c, d)
    if fn in (operator.eq, operator.ne):
        same = arith.logical_and(b, b.compare(Op.eq, a, c), b.compare(Op.eq, bi, d))
        return same if fn is operator.eq else arith.logical_not(b, same)
    raise unsupported(f"'{sym}' on complex numbers", loc)


def quotient(b, z, w):
    """z / w for complex value trees (re, im), as Numba divides complex numbers."""
    return _div(b, z[0], z[1], w[0], w[1])


def _div(b, a, bi, c, d):
    """CPython's _Py_c_quot, as Numba lowers complex division."""
    k = b.kind(a)
    zero, nan = arith.const(b, k, 0.0), arith.const(b, k, float("nan"))
    one = arith.const(b, k, 1.0)
    by_real = b.compare(Op.ge, arith.fabs(b, c), arith.fabs(b, d))
    # Branch 1: |c| >= |d|: ratio = d / c, denom = c + d * ratio.
    c_safe = b.select(b.compare(Op.eq, c, zero), one, c)
    r1 = b.binary(Op.div, d, c_safe)
    den1 = b.binary(Op.add, c, b.binary(Op.mul, d, r1))
    re1 = b.binary(Op.div, b.binary(Op.add, a, b.binary(Op.mul, bi, r1)), den1)
    im1 = b.binary(Op.div, b.binary(Op.sub, bi, b.binary(Op.mul, a, r1)), den1)
    bad1 = b.compare(Op.eq, c, zero)
    # Branch 2: ratio = c / d, denom = c * ratio + d.
    d_safe = b.select(b.compare(Op.eq, d, zero), one, d)
    r2 = b.binary(Op.div, c, d_safe)
    den2 = b.binary(Op.add, b.binary(Op.mul, c, r2), d)
    re2 = b.binary(Op.div, b.binary(Op.add, b.binary(Op.mul, a, r2), bi), den2)
    im2 = b.binary(Op.div, b.binary(Op.sub, b.binary(Op.mul, bi, r2), a), den2)
    bad2 = b.compare(Op.eq, d, zero)
    re = b.select(by_real, b.select(bad1, nan, re1), b.select(bad2, nan, re2))
    im = b.select(by_real, b.select(bad1, nan, im1), b.select(bad2, nan, im2))
    return (re, im)


def absolute(b, z, wide=K.f32):
    """hypot(re, im) without spurious overflow or underflow (see the module docstring).
    complex64 with a float64 kind at hand: sqrt(re^2 + im^2) in float64, rounded once, as
    glibc's hypotf computes it (bit for bit with Numba there)."""
    re, im = z
    k = b.kind(re)
    if k == K.f32 and wide == K.f64:
        x, y = arith.convert(b, re, K.f64), arith.convert(b, im, K.f64)
        s = b.binary(Op.add, b.binary(Op.mul, x, x), b.binary(Op.mul, y, y))
        r = arith.convert(b, b.math(M.sqrt, [s]), K.f32)
        inf = arith.const(b, K.f32, float("inf"))
        either_inf = arith.logical_or(b, b.compare(Op.eq, arith.fabs(b, re), inf),
                                      b.compare(Op.eq, arith.fabs(b, im), inf))  # fmt: skip
        return b.select(either_inf, inf, r)
    x, y = arith.fabs(b, re), arith.fabs(b, im)
    m = b.select(b.compare(Op.gt, x, y), x, y)
    small = b.select(b.compare(Op.gt, x, y), y, x)
    zero, inf = arith.const(b, k, 0.0), arith.const(b, k, float("inf"))
    m_safe = b.select(b.compare(Op.eq, m, zero), arith.const(b, k, 1.0), m)
    q = b.binary(Op.div, small, m_safe)
    r = b.binary(Op.mul, m, b.math(M.sqrt, [b.binary(Op.add, arith.const(b, k, 1.0),
                                                     b.binary(Op.mul, q, q))]))  # fmt: skip
    r = b.select(b.compare(Op.eq, m, zero), zero, r)
    either_inf = arith.logical_or(b, b.compare(Op.eq, x, inf), b.compare(Op.eq, y, inf))
    return b.select(either_inf, inf, r)


def unary(lo, fn, z, loc, sym):
    b = lo.b
    if fn is operator.neg:
        return (b.unary(Op.neg, z[0]), b.unary(Op.neg, z[1]))
    if fn is operator.pos:
        return z
    raise unsupported(f"'{sym}' on complex numbers", loc)


def attribute(lo, z, ty, attr, loc):
    """z.real / z.imag; (value, Numba type)."""
    if attr == "real":
        return z[0], part_type(ty)
    if attr == "imag":
        return z[1], part_type(ty)
    raise unsupported(f"the attribute '.{attr}' of {ty}", loc)


def method(lo, z, ty, name, args, loc):
    """z.conjugate() (and the NumPy spelling z.conj())."""
    if name in ("conjugate", "conj") and not args:
        return (z[0], lo.b.unary(Op.neg, z[1])), ty
    raise unsupported(f"the method '.{name}()' of {ty}", loc)
