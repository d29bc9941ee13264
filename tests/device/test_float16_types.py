"""Types of mixed float16 operations (numba-cuda's rules), float16 in reductions and in
local and shared arrays, against NumPy.

The oracle and its rules are test_float16.py's (NumPy; NaN matches NaN).
"""
import operator

import numpy as np
import pytest
from float16_support import random_halves
from half_support import assert_same, mixed_types, typemap
from numba.core import types
from numba.core.typing import Context

import numba_vulkan as nv

pytestmark = [
    pytest.mark.device,
    pytest.mark.usefixtures("device"),
]


# ---------------------------------------------------------------- types of mixed operations

_MIXED = [
    (types.float16, types.float16),
    (types.float16, types.float32),
    (types.float16, types.float64),
    (types.float16, types.int64),
    (types.float16, types.int32),
    (types.float16, types.int16),
    (types.float16, types.int8),
    (types.float16, types.uint8),
    (types.float16, types.boolean),
]
# numba-cuda's result of x * y: float16 where y converts to float16 exactly, by promotion or
# safely (Numba's rules: bool, int8); otherwise Numba's own rule.
_MIXED_RESULT = [types.float16, types.float32, types.float64, types.float64, types.float64,
                 types.float32, types.float16, types.float32, types.float16]


def test_mixed_operands_keep_numba_rules():
    for (tx, ty), want in zip(_MIXED, _MIXED_RESULT):
        assert mixed_types(tx, ty) == (want, want, types.boolean, want), (tx, ty)

    def literals(out, x):
        a = x * 2  # a Python int is an int64: float64, as in numba-cuda
        b = x * 0.5  # a float64
        c = x**2  # float ** int keeps the float's type in Numba: float32 for float16
        d = int(x)
        e = float(x)
        f = -x
        g = abs(x)
        out[0] = a + b + c + d + e + f + g

    tm = typemap(literals, (types.float64[::1], types.float16))
    assert [tm[v] for v in "abcdefg"] == [types.float64, types.float64, types.float32,
                                          types.int64, types.float64, types.float16,
                                          types.float16]  # fmt: skip


def test_float16_templates_win_over_numba_generic_ones():
    generic = Context()
    generic.refresh()
    sig = generic.resolve_function_type(operator.mul, (types.float16, types.float16), {})
    assert sig.return_type == types.float32  # Numba's own: float16 computed as float32

    def kernel(out, x):
        p = x * x
        out[0] = p

    assert typemap(kernel, (types.float16[::1], types.float16))["p"] == types.float16


def test_mixed_values_as_numpy():
    @nv.jit
    def mixed(o32, o64, o16, h, f, i, s):
        k = nv.global_id(0)
        if k < h.size:
            x = h[k]
            o32[0, k] = x * f[k]
            o32[1, k] = x - f[k]
            o64[0, k] = x * i[k]
            o64[1, k] = x / i[k]
            o16[0, k] = x * s[k]
            o16[1, k] = s[k] - x

    rng = np.random.default_rng(9)
    n = 1 << 16
    h = random_halves(rng, n)
    f = rng.standard_normal(n).astype(np.float32) * 100
    i = rng.integers(-(1 << 40), 1 << 40, n)
    s = rng.integers(-128, 128, n).astype(np.int8)
    o32, o64, o16 = np.zeros((2, n), np.float32), np.zeros((2, n)), np.zeros((2, n), np.float16)
    mixed.forall(n)(o32, o64, o16, h, f, i, s)
    with np.errstate(all="ignore"):
        for got, want, what in [(o32[0], h * f, "float16 * float32"),
                                (o32[1], h - f, "float16 - float32"),
                                (o64[0], h * i, "float16 * int64"),
                                (o64[1], h / i, "float16 / int64"),
                                (o16[0], h * s, "float16 * int8"),
                                (o16[1], s - h, "int8 - float16")]:  # fmt: skip
            assert got.dtype == want.dtype, what
            assert_same(got, want, what, (h,))


def test_sum_of_a_float16_array_rounds_once():
    @nv.jit
    def total(out, a):
        out[0] = a.sum()
        out[1] = a[0] + a[1] + a[2]

    a = np.array([1.0, 2.0**-11, 2.0**-11] + [2.0**-12] * 5, np.float16)
    out = np.zeros(2, np.float16)
    total.forall(1)(out, a)
    assert out[0] == np.float16(a.astype(np.float32).sum())  # 1 + 2^-10 + 5 * 2^-12
    assert out[1] == (a[0] + a[1]) + a[2] == np.float16(1.0)  # each + rounds (ties to even)


def test_local_and_shared_float16_arrays_hold_rounded_values():
    @nv.jit
    def arrays(out, a, b):
        i = nv.global_id(0)
        loc = nv.local.array(2, np.float16)
        sh = nv.shared.array(64, np.float16)
        if i < a.size:
            loc[0] = np.float32(a[i]) * np.float32(b[i])  # float32 stored: rounded once
            loc[1] = a[i] / b[i]
            sh[nv.local_id(0)] = loc[0] + loc[1]
            out[0, i] = loc[0]
            out[1, i] = sh[nv.local_id(0)]

    rng = np.random.default_rng(5)
    a, b = random_halves(rng, 1 << 14), random_halves(rng, 1 << 14)
    out = np.zeros((2, a.size), np.float16)
    arrays.forall(a.size)(out, a, b)
    with np.errstate(all="ignore"):
        product = (a.astype(np.float32) * b).astype(np.float16)
        assert_same(out[0], product, "float32 product stored in a local float16 array", (a, b))
        assert_same(out[1], product + a / b, "float16 sum stored in a shared array", (a, b))


