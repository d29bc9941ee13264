"""NumPy's ufuncs on complex64 / complex128 elements, as numba.njit computes them
(numba/np/npyfuncs.py), for ufunc calls with an output array inside kernels
(``np.sin(z, out)``: frontend/array_ufuncs.py).

A complex value is a pair (re, im) of KIR floats (frontend/complexnum.py). The
transcendental ufuncs are cmath's (cmathlib.py: the formulas numba.njit uses for both);
``log2`` is numba.njit's ``log(z) * log2(e)`` by parts. The comparisons order complex
numbers lexicographically, NumPy's rule (npy_math's CLT/CLE/CGT/CGE: a NaN imaginary part
makes an ordering of the real parts false); ``maximum``/``minimum`` propagate a NaN operand
(either part NaN), ``fmax``/``fmin`` return the other operand, as NumPy does. The logical
ufuncs take a complex number as true when either part is non-zero (a NaN part too).
"""

import cmath
import math

import numpy as np
from numba.core import types

from ... import _core
from ..types import compute_kind
from . import cmathlib, denormals

Op = _core.Op

_UNARY = {
    np.sin: cmath.sin, np.cos: cmath.cos, np.tan: cmath.tan,
    np.arcsin: cmath.asin, np.arccos: cmath.acos, np.arctan: cmath.atan,
    np.sinh: cmath.sinh, np.cosh: cmath.cosh, np.tanh: cmath.tanh,
    np.arcsinh: cmath.asinh, np.arccosh: cmath.acosh, np.arctanh: cmath.atanh,
    np.exp: cmath.exp, np.log: cmath.log, np.log10: cmath.log10, np.sqrt: cmath.sqrt,
}  # fmt: skip


def _log2(f, x, y):
    re, im = cmathlib.COMPLEX_UNARY[cmath.log](f, x, y)
    log2e = f.c(1 / math.log(2))
    return f.mul(re, log2e), f.mul(im, log2e)


def _true(f, z):
    zero = f.c(0.0)
    return f.either(f.not_(f.cmp(Op.eq, z[0], zero)), f.not_(f.cmp(Op.eq, z[1], zero)))


def _order(op):
    """NumPy's CLT / CLE / CGT / CGE for the strict comparison `op` (< or >); `eq` adds
    the case of equal real parts and imaginary parts in `op` or equal."""

    def compare(f, a, b, or_equal):
        both_numbers = f.both(f.not_(f.nan(a[1])), f.not_(f.nan(b[1])))
        by_real = f.both(f.cmp(op, a[0], b[0]), both_numbers)
        imag_op = {Op.lt: Op.le, Op.gt: Op.ge}[op] if or_equal else op
        by_imag = f.both(f.cmp(Op.eq, a[0], b[0]), f.cmp(imag_op, a[1], b[1]))
        return f.either(by_real, by_imag)

    return compare


_LT, _GT = _order(Op.lt), _order(Op.gt)


def _nan(f, z):
    return f.either(f.nan(z[0]), f.nan(z[1]))


_BINARY = {
    np.equal: lambda f, a, b: f.both(f.cmp(Op.eq, a[0], b[0]), f.cmp(Op.eq, a[1], b[1])),
    np.not_equal: lambda f, a, b: f.not_(
        f.both(f.cmp(Op.eq, a[0], b[0]), f.cmp(Op.eq, a[1], b[1]))),
    np.less: lambda f, a, b: _LT(f, a, b, False),
    np.less_equal: lambda f, a, b: _LT(f, a, b, True),
    np.greater: lambda f, a, b: _GT(f, a, b, False),
    np.greater_equal: lambda f, a, b: _GT(f, a, b, True),
    np.logical_and: lambda f, a, b: f.both(_true(f, a), _true(f, b)),
    np.logical_or: lambda f, a, b: f.either(_true(f, a), _true(f, b)),
    np.logical_xor: lambda f, a, b: f.b.compare(Op.ne, _true(f, a), _true(f, b)),
    np.maximum: lambda f, a, b: f.sel(f.either(_GT(f, a, b, True), _nan(f, a)), a, b),
    np.minimum: lambda f, a, b: f.sel(f.either(_LT(f, a, b, True), _nan(f, a)), a, b),
    np.fmax: lambda f, a, b: f.sel(f.either(_GT(f, a, b, True), _nan(f, b)), a, b),
    np.fmin: lambda f, a, b: f.sel(f.either(_LT(f, a, b, True), _nan(f, b)), a, b),
}  # fmt: skip


def handles(ufunc):
    """Whether `ufunc` on complex operands is one of this module's."""
    try:
        return ufunc in _UNARY or ufunc in _BINARY or ufunc in (np.log2, np.logical_not)
    except TypeError:  # unhashable
        return False


def lower(lo, ufunc, args, sig, loc):
    """`ufunc` of complex values `args` (already cast to the loop's input types of `sig`):
    a (re, im) pair for a complex result, a bool value for the comparisons and the logical
    ufuncs."""
    part = types.float32 if sig.args[0].bitwidth == 64 else types.float64
    f = cmathlib._F(denormals.for_lowerer(lo), compute_kind(part, lo.mode, loc))
    if ufunc in _UNARY:
        return cmathlib.COMPLEX_UNARY[_UNARY[ufunc]](f, *args[0])
    if ufunc is np.log2:
        return _log2(f, *args[0])
    if ufunc is np.logical_not:
        return f.not_(_true(f, args[0]))
    return _BINARY[ufunc](f, args[0], args[1])


__all__ = ["handles", "lower"]
