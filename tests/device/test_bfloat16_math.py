"""bfloat16 math functions and the types of mixed operations, against ml_dtypes and NumPy.

The oracle and its rules are test_bfloat16.py's (ml_dtypes; NaN matches NaN).
"""
import math

import numpy as np
import pytest
from bfloat16_support import ALL, BF, random_bf16, signalling
from conftest import requires_feature
from half_support import assert_ulps, mixed_types, rows_kernel, typemap, ulps
from numba.core import types
from numba.np import numpy_support

import numba_vulkan as nv
from numba_vulkan.typing.bfloat16 import bfloat16 as bf16_type

pytestmark = [pytest.mark.device, pytest.mark.usefixtures("device"),
              requires_feature("storage16")]  # fmt: skip


# ---------------------------------------------------------------- math functions

_MATH = ("erf", "erfc", "gamma", "lgamma")  # no ml_dtypes loops: Python's float64 ones
_UNARY = ("sqrt", "cbrt", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sin",
          "cos", "tan", "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh", "arcsinh",
          "arccosh", "arctanh", "floor", "ceil", "trunc", "rint", "square", "reciprocal",
          "sign", "rad2deg")  # fmt: skip


def _unary_kernel():
    lines = ["x = a[i]"] + [f"out[{k}, i] = np.{name}(x)" for k, name in enumerate(_UNARY)]
    lines += [f"out[{len(_UNARY) + k}, i] = math.{name}(x)" for k, name in enumerate(_MATH)]
    return rows_kernel("out, a", lines, "bfloat16 unary")


def test_math_on_every_bfloat16_within_one_ulp():
    out = np.zeros((len(_UNARY) + len(_MATH), ALL.size), BF)
    _unary_kernel().forall(ALL.size)(out, ALL)
    x32 = ALL.astype(np.float32)
    worst = {}
    with np.errstate(all="ignore"):
        for k, name in enumerate(_UNARY):
            want = getattr(np, name)(ALL)  # ml_dtypes: the host's float32 function, rounded
            assert want.dtype == BF
            d = ulps(out[k], want)
            worst[name] = (int(d.max()), float((d == 0).mean()))
        for k, name in enumerate(_MATH, start=len(_UNARY)):
            want = np.array([_math(name, v) for v in x32.tolist()]).astype(BF)
            finite = np.isfinite(want.astype(np.float32))  # poles, overflow: C's values
            worst[name] = (int(ulps(out[k][finite], want[finite]).max()), None)
    assert all(d <= 1 for d, _ in worst.values()), sorted(worst.items())
    for name in ("sqrt", "floor", "ceil", "trunc", "rint", "square", "reciprocal", "sign"):
        assert worst[name][0] == 0, f"{name} is correctly rounded: {worst[name]}"
    assert min(share for d, share in worst.values() if share is not None) > 0.99, worst


def _math(name, v):
    try:
        return getattr(math, name)(v)
    except (ValueError, OverflowError):  # a pole, or past float64's range
        return math.nan


_BINARY = ("arctan2", "hypot", "power", "copysign", "fmod", "remainder", "floor_divide",
           "maximum", "minimum", "fmax", "fmin")  # fmt: skip


def test_binary_math_within_one_ulp():
    lines = [f"out[{k}, i] = np.{name}(a[i], b[i])" for k, name in enumerate(_BINARY)]
    lines += [f"out[{len(_BINARY)}, i] = math.atan2(a[i], b[i])"]
    rng = np.random.default_rng(11)
    a, b = random_bf16(rng, 1 << 16), random_bf16(rng, 1 << 16)
    out = np.zeros((len(_BINARY) + 1, a.size), BF)
    rows_kernel("out, a, b", lines, "bfloat16 binary").forall(a.size)(out, a, b)
    quiet = ~(signalling(a) | signalling(b))  # glibc's powf: NaN for pow(sNaN, 0)
    with np.errstate(all="ignore"):
        for k, name in enumerate(_BINARY):
            exact = name not in ("arctan2", "hypot", "power")
            assert_ulps(out[k][quiet], getattr(np, name)(a, b)[quiet], 0 if exact else 1,
                        f"np.{name}", (a[quiet], b[quiet]))  # fmt: skip
        assert_ulps(out[-1], np.arctan2(a, b), 1, "math.atan2", (a, b))


def test_types_follow_numpy_with_ml_dtypes_and_numba():
    f32, f64 = types.float32, types.float64
    for other, want in [(bf16_type, bf16_type), (types.int8, bf16_type),
                        (types.uint8, bf16_type), (types.boolean, bf16_type),
                        (types.int16, f32), (types.uint16, f32), (types.float16, f32),
                        (f32, f32), (types.int32, f64), (types.int64, f64),
                        (types.uint64, f64), (f64, f64)]:  # fmt: skip
        # NumPy with ml_dtypes: np.promote_types(bfloat16, other)
        as_dtype = numpy_support.as_dtype
        assert np.promote_types(BF, BF if other == bf16_type else as_dtype(other)) == (
            BF if want == bf16_type else as_dtype(want)
        ), other
        assert mixed_types(bf16_type, other) == (want, want, types.boolean, want), other

    def scalars(out, x, f):
        a = x * 2  # a Python int is an int64 in Numba: float64 (float32 * 2 is one too)
        b = x + 0.5  # a float64
        c = x**2  # float ** int keeps the float's type in Numba
        d = int(x)
        e = float(x)
        g = -x + abs(x)
        h = math.sqrt(x)  # math.f of a bfloat16: a bfloat16 (of a float32: a float32)
        i = np.exp(x)  # ml_dtypes' loop: bfloat16
        j = np.degrees(x)  # ml_dtypes has no bfloat16 loop: NumPy's float32 one
        k = math.floor(x)  # an int, as of a float32
        m = math.atan2(x, f)  # mixed: Numba's float32 function
        n = np.isnan(x)
        out[0] = a + b + c + d + e + g + h + i + j + k + m + n

    tm = typemap(scalars, (types.float64[::1], bf16_type, f32))
    assert [tm[v] for v in "abcdeghijkmn"] == [f64, f64, bf16_type, types.int64, f64,
                                               bf16_type, bf16_type, bf16_type, f32,
                                               types.int64, f32, types.boolean]  # fmt: skip


def test_mixed_values_as_numpy():
    @nv.jit
    def k(o_f32, o_f64, o_bf, a, f32, f64, i8, i16, i64, f16):
        x = a[0]
        o_f32[0] = x + f32[0]
        o_f32[1] = x * i16[0]
        o_f32[2] = x - f16[0]
        o_f64[0] = x + f64[0]
        o_f64[1] = x * i64[0]
        o_bf[0] = x + i8[0]
        o_bf[1] = x * True
        o_bf[2] = x + nv.bfloat16(0.1)
        o_bf[3] = x**3

    a = np.array([1.00390625 * 3], BF)
    f32, f64 = np.array([0.1], np.float32), np.array([0.1])
    i8, i16, i64 = np.array([100], np.int8), np.array([1001], np.int16), np.array([2**40 + 1])
    f16 = np.array([0.1], np.float16)
    o_f32, o_f64, o_bf = np.zeros(3, np.float32), np.zeros(2), np.zeros(4, BF)
    k.forall(1)(o_f32, o_f64, o_bf, a, f32, f64, i8, i16, i64, f16)
    for got, want in [(o_f32[0], a + f32), (o_f32[1], a * i16), (o_f32[2], a - f16),
                      (o_f64[0], a + f64), (o_f64[1], a * i64), (o_bf[0], a + i8),
                      (o_bf[1], a * np.array([True])), (o_bf[2], a + BF(0.1)),
                      (o_bf[3], a**3)]:  # fmt: skip
        assert got.dtype == want.dtype and got == want[0], (got, want)


