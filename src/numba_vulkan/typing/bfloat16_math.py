"""Math functions of bfloat16 values in kernels: the float32 function, rounded once.

``math.f(x)`` and ``np.f(x)`` of a bfloat16 give a bfloat16 (as ``math.f`` of a
float32 gives a float32 in Numba, and as ml_dtypes' NumPy loops give for
``np.f``), computed as ml_dtypes computes them: the float32 function of the
float32 equal to the operand (this package's float32 library), rounded to the
nearest bfloat16. Binary functions do so when both operands are bfloat16; a
mixed call keeps Numba's typing (the bfloat16 taken to float32 or float64).
``math.floor``, ``ceil``, ``trunc`` (ints), ``math.isnan`` & co. keep Numba's typing
too. ``np.isnan``, ``isinf``, ``isfinite`` and ``signbit`` of a bfloat16 are those of
its float32, and so are ``np.degrees`` and ``np.radians`` (float32 results: ml_dtypes
has no bfloat16 loops for them).

The bound: the float32 library is within a few float32 ulps (docs/math.md), 2^-16
of a bfloat16 ulp each, so the bfloat16 result is the correctly rounded one or,
when the exact value lies that close to a halfway point between two bfloat16
values, its neighbour: at most 1 bfloat16 ulp from ml_dtypes' result
(tests/device/test_bfloat16.py measures it).
"""

import math

import numpy as np
from numba.core.extending import overload

from .. import bfloat16_host
from .bfloat16 import is_bfloat16

UNARY = (
    math.sqrt, math.exp, math.expm1, math.log, math.log2, math.log10, math.log1p, math.sin,
    math.cos, math.tan, math.asin, math.acos, math.atan, math.sinh, math.cosh, math.tanh,
    math.asinh, math.acosh, math.atanh, math.erf, math.erfc, math.gamma, math.lgamma,
    math.fabs, math.degrees, math.radians,
    np.sqrt, np.cbrt, np.exp, np.exp2, np.expm1, np.log, np.log2, np.log10, np.log1p, np.sin,
    np.cos, np.tan, np.arcsin, np.arccos, np.arctan, np.sinh, np.cosh, np.tanh, np.arcsinh,
    np.arccosh, np.arctanh, np.fabs, np.absolute, np.floor, np.ceil, np.trunc, np.rint,
    np.sign, np.rad2deg, np.deg2rad,
) + tuple(getattr(math, name) for name in ("exp2", "cbrt") if hasattr(math, name))  # fmt: skip

BINARY = (
    math.atan2, math.hypot, math.pow, math.copysign, math.fmod,
    np.arctan2, np.hypot, np.power, np.copysign, np.fmod, np.remainder, np.maximum,
    np.minimum, np.fmax, np.fmin,
)  # fmt: skip

#: NumPy's arithmetic ufuncs: the bfloat16 operators, which compute the same (the float32
#: operation rounded once) and keep bfloat16's subnormals on a device that flushes
#: float32's (frontend/bfloat16.py), where the float32 operation would flush them.
OPERATORS = {
    np.negative: lambda x: -x,
    np.positive: lambda x: x,
    np.square: lambda x: x * x,
    np.add: lambda x, y: x + y,
    np.subtract: lambda x, y: x - y,
    np.multiply: lambda x, y: x * y,
    np.divide: lambda x, y: x / y,
    np.true_divide: lambda x, y: x / y,
    np.floor_divide: lambda x, y: x // y,
}

#: float32 results, as ml_dtypes has no bfloat16 loops for them (NumPy takes float32's).
FLOAT32_UNARY = (np.degrees, np.radians)

PREDICATES = (np.isnan, np.isinf, np.isfinite, np.signbit)


def _unary(fn):
    @overload(fn, target="vulkan")
    def _bfloat16_unary(x):
        if is_bfloat16(x):
            to_bfloat16 = bfloat16_host.scalar_type()  # imported: x is a bfloat16
            return lambda x: to_bfloat16(fn(np.float32(x)))
        return None


def _binary(fn):
    @overload(fn, target="vulkan")
    def _bfloat16_binary(x, y):
        if is_bfloat16(x) and is_bfloat16(y):
            to_bfloat16 = bfloat16_host.scalar_type()
            return lambda x, y: to_bfloat16(fn(np.float32(x), np.float32(y)))
        return None


def _of_float32(fn):
    @overload(fn, target="vulkan")
    def _bfloat16_of_float32(x):
        if is_bfloat16(x):
            return lambda x: fn(np.float32(x))
        return None


def _operator(fn, impl):
    if impl.__code__.co_argcount == 1:
        overload(fn, target="vulkan")(lambda x: impl if is_bfloat16(x) else None)
    else:
        overload(fn, target="vulkan")(
            lambda x, y: impl if is_bfloat16(x) and is_bfloat16(y) else None)


def _reciprocal(x):
    if is_bfloat16(x):
        one = bfloat16_host.scalar_type()(1)
        return lambda x: one / x
    return None


overload(np.reciprocal, target="vulkan")(_reciprocal)
for _fn, _impl in OPERATORS.items():
    _operator(_fn, _impl)
for _fn in UNARY:
    _unary(_fn)
for _fn in BINARY:
    _binary(_fn)
for _fn in PREDICATES + FLOAT32_UNARY:
    _of_float32(_fn)
