"""The exact math functions in kernels, bit for bit against the CPU (numba.njit, which follows
CPython's math and NumPy's ufuncs), on float32 and float64 operands that include -0.0, NaN,
infinities, subnormals, ties and the extremes (docs/math.md lists what is covered).

Expressions are grouped so that one kernel (and one CPU compile) checks a whole family.
"""

import numpy as np
import pytest
from conftest import requires_feature
from math_support import (
    _kernel,
    assert_all_same_bits,
    assert_same_bits,
    operands,
    plain_arith_comparable,
    run_kernel,
    run_many,
    special_floats,
)

import numba_vulkan as nv

pytestmark = [pytest.mark.device, pytest.mark.usefixtures("device")]

FLOATS = [np.float32, pytest.param(np.float64, marks=requires_feature("float64"))]

UNARY = {
    "sign": ["math.fabs(x)", "np.fabs(x)", "np.absolute(x)", "abs(x)", "np.signbit(x)", "np.sign(x)"],
    "class": ["math.isnan(x)", "np.isnan(x)", "math.isinf(x)", "np.isinf(x)", "math.isfinite(x)",
              "np.isfinite(x)"],
    "rounding": ["np.floor(x)", "np.ceil(x)", "np.trunc(x)", "np.rint(x)", "round(x, 0)",
                 "np.round(x)"],
    "scaling": ["math.degrees(x)", "math.radians(x)", "np.degrees(x)", "np.rad2deg(x)",
                "np.radians(x)", "np.deg2rad(x)", "math.frexp(x)[0]", "math.frexp(x)[1]"],
    "sqrt": ["math.sqrt(x)", "np.sqrt(x)"],
    "arith": ["np.square(x)", "np.negative(x)", "np.positive(x)"],
}  # fmt: skip

# Results converted to int: operands where the conversion is defined (finite, in range).
TO_INT = ["math.floor(x)", "math.ceil(x)", "math.trunc(x)", "round(x)"]

BINARY = {
    "sign": ["math.copysign(x, y)", "np.copysign(x, y)", "math.nextafter(x, y)",
             "np.nextafter(x, y)"],
    "minmax": ["np.fmin(x, y)", "np.fmax(x, y)", "np.minimum(x, y)", "np.maximum(x, y)",
               "np.isclose(x, y)"],
    "fmod": ["np.fmod(x, y)"],
    # IEEE 754 arithmetic rounded once; division too, where the driver's may be 2.5 ulp
    # off (kir/float_division.h)
    "arith": ["np.add(x, y)", "np.subtract(x, y)", "np.multiply(x, y)", "np.divide(x, y)"],
}  # fmt: skip


def _pairs(dtype, n=300, seed=1):
    sp = special_floats(dtype)
    x, y = np.meshgrid(sp, sp)
    rx, ry = operands(dtype, n, seed), operands(dtype, n, seed + 1)
    near = rx * (1 + np.finfo(dtype).eps * np.random.default_rng(seed).integers(-3, 4, rx.size))
    return (np.concatenate([x.ravel(), rx, rx]).astype(dtype),
            np.concatenate([y.ravel(), ry, near]).astype(dtype))  # fmt: skip


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("family", sorted(UNARY))
def test_unary(family, dtype):
    assert_all_same_bits(UNARY[family], operands(dtype, 400), plain_arith=family == "arith")


@pytest.mark.parametrize("dtype", FLOATS)
def test_to_int(dtype):
    x = operands(dtype, 300, lo_exp=-30, hi_exp=40)
    assert_all_same_bits(TO_INT, x[np.isfinite(x)])


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("family", sorted(BINARY))
def test_binary(family, dtype):
    assert_all_same_bits(BINARY[family], *_pairs(dtype), plain_arith=family == "arith")


def _quotient_cases(n=20000, seed=11):
    """float32 pairs whose quotients are hard to round: random mantissas over a wide exponent
    range, exact quotients and their neighbours, and the specials."""
    rng = np.random.default_rng(seed)
    x = (rng.uniform(1, 2, n) * np.exp2(rng.integers(-60, 60, n))).astype(np.float32)
    y = (rng.uniform(1, 2, n) * np.exp2(rng.integers(-60, 60, n))).astype(np.float32)
    q = rng.integers(1, 2**12, n // 4).astype(np.float32)
    exact = (y[: n // 4] * q).astype(np.float32)
    xs, ys = _pairs(np.float32)
    return (np.concatenate([x, exact, np.nextafter(exact, np.float32(0)), xs]),
            np.concatenate([y, y[: n // 4], y[: n // 4], ys]))  # fmt: skip


def test_float32_division_in_float64(monkeypatch):
    """Devices whose float32 division may be inexact (Vulkan allows 2.5 ulp; NVIDIA's is)
    divide in float64 and round once. lavapipe divides exactly without it: force it here, and
    check that the kernel really divides in float64."""
    from numba_vulkan import launchers

    real = launchers.codegen_controls
    monkeypatch.setattr(
        launchers, "codegen_controls", lambda d: real(d)._replace(divide_f32_in_f64=True)
    )
    x, y = _quotient_cases()
    kernel = _kernel(["x / y if y != 0 else np.divide(x, y)"], 2)
    out = np.zeros_like(x)
    kernel.forall(x.size)(x, y, out)
    assert "OpFDiv %double" in kernel.inspect_spirv(x, y, out)
    with np.errstate(all="ignore"):
        ref = np.divide(x, y)
    keep = plain_arith_comparable(x, y, ref)
    assert_same_bits(out[keep], ref[keep], (x[keep], y[keep]))


def test_float32_division_many():
    """The same operands with the device's own choice (lavapipe: its exact division)."""
    x, y = _quotient_cases(seed=12)
    out = run_kernel("np.divide(x, y)", x, y)
    with np.errstate(all="ignore"):
        ref = np.divide(x, y)
    keep = plain_arith_comparable(x, y, ref)
    assert_same_bits(out[keep], ref[keep], (x[keep], y[keep]))


@pytest.mark.parametrize("dtype", FLOATS)
def test_ldexp(dtype):
    x = operands(dtype, 300)
    rng = np.random.default_rng(3)
    lim = {np.float32: 300, np.float64: 2200}[dtype]
    n = rng.integers(-lim, lim, x.size).astype(np.int32)
    n[:8] = [0, 1, -1, lim, -lim, 2**31 - 1, -(2**31), 5]
    assert_all_same_bits(["math.ldexp(x, y)", "np.ldexp(x, y)"], x, n)


@pytest.mark.parametrize("dtype", FLOATS)
def test_sqrt_many(dtype):
    """Correct rounding over many operands: random mantissas, squares and their neighbours."""
    rng = np.random.default_rng(7)
    fi = np.finfo(dtype)
    ib = {np.float32: np.int32, np.float64: np.int64}[dtype]
    m = rng.integers(0, 2**fi.nmant, 20000).astype(ib)
    e = rng.integers(-20, 20, m.size).astype(ib) + {np.float32: 127, np.float64: 1023}[dtype]
    x = (m | (e << fi.nmant)).view(dtype)
    sq = rng.uniform(1, 2, 5000).astype(dtype)
    sq = (sq * sq).astype(dtype)
    x = np.concatenate([x, sq, np.nextafter(sq, dtype(0)), np.nextafter(sq, dtype(9))])
    out = run_kernel("math.sqrt(x)", x)
    assert_same_bits(out, np.sqrt(x), (x,))  # NumPy's sqrt is correctly rounded


@pytest.mark.parametrize("dtype", FLOATS)
def test_sqrt_short_path_edges(dtype):
    """sqrt's short path (roots._DIRECT, [2^-60, 2^60]) and the reduction beyond it, bit for bit
    against NumPy: each edge and its neighbours, squares near them, and the special values."""
    from math_support import _kernel

    edges = np.array([2.0**-60, 2.0**60, 2.0**-61, 2.0**61], dtype)
    near = [np.nextafter(edges, dtype(np.inf)), np.nextafter(edges, dtype(0))]
    rng = np.random.default_rng(5)
    roots = (rng.uniform(1, 2, 200) * np.exp2(rng.integers(-31, 31, 200))).astype(dtype)
    x = np.concatenate([edges, *near, roots * roots, np.nextafter(roots * roots, dtype(0)),
                        special_floats(dtype)]).astype(dtype)  # fmt: skip
    kernel = _kernel(["math.sqrt(x)"], 1)
    out = np.zeros_like(x)
    kernel.forall(x.size)(x, out)
    assert ".rare" in kernel.inspect_kir(x, out), "no short path"
    with np.errstate(invalid="ignore"):
        assert_same_bits(out, np.sqrt(x), (x,))


INTS = {
    np.int64: ["math.isnan(x)", "math.isfinite(x)", "np.sign(x)", "np.floor(x)", "round(x)",
               "math.fabs(x)", "np.signbit(x)", "math.sqrt(x)", "np.rint(x)"],
    np.int32: ["np.isinf(x)", "math.floor(x)", "np.absolute(x)", "np.sign(x)", "np.square(x)",
               "np.negative(x)"],
    np.uint32: ["np.absolute(x)"],
}  # fmt: skip


@pytest.mark.parametrize("dtype", sorted(INTS, key=str))
def test_int_operands(dtype):
    info = np.iinfo(dtype)
    x = np.array([0, 1, 2, 7, 100, 12345, info.max, info.min], dtype)
    assert_all_same_bits(INTS[dtype], x)


def test_int_binary():
    x = np.array([0, 1, -1, 7, -7, 100, 5, -3, 2], np.int64)
    y = np.array([3, 0, 2, -2, 3, 1, 0, 4, 10], np.int64)
    exprs = ["np.fmin(x, y)", "np.maximum(x, y)", "pow(x, y)", "np.remainder(x, y)",
             "np.floor_divide(x, y)", "np.add(x, y)", "np.subtract(x, y)", "np.multiply(x, y)",
             "np.divide(x, y)"]  # fmt: skip
    assert_all_same_bits(exprs, x, y)


def test_int_against_numpy():
    """Where Numba's CPU lowering departs from NumPy on ints, NumPy is followed: np.fmod on
    signed ints is C's remainder (Numba: an unsigned remainder), np.sign of a uint is 0 or 1."""
    x = np.array([0, 1, -1, 7, -7, 100, 5, -3, 2], np.int64)
    y = np.array([3, 0, 2, -2, 3, 1, 0, 4, 10], np.int64)
    with np.errstate(all="ignore"):
        ref = np.fmod(x, y)
    ref[y == 0] = 0
    assert_same_bits(run_kernel("np.fmod(x, y)", x, y), ref, (x, y))
    u = np.array([0, 1, 2**31, 2**32 - 1], np.uint32)
    assert_same_bits(run_kernel("np.sign(x)", u), np.sign(u), (u,))


def test_pow_float_integer_exponent():
    x = operands(np.float64, 50)
    n = np.resize(np.array([0, 1, 2, 3, -1, -2, 5], np.int64), x.size)
    n[(np.abs(x) < 1e-60) & (n < 0)] = 1  # where x**n underflows, x ** -n raises on the CPU
    assert_all_same_bits(["pow(x, y)"], x, n)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_round_with_ndigits_as_numba_njit(dtype):
    """round(x, n): CPython's fallback algorithm (x scaled by 10^n, rounded half to even,
    scaled back), which numba.njit and numba.cuda both use: bit for bit with numba.njit
    where 10^|n| is exact (|n| <= 22)."""
    x = np.resize(np.concatenate([operands(dtype, 60), np.array(
        [0.5425, 0.3425, 2.5, -2.5, 0.125, -1234.5678], dtype)]), 66 * 9)  # fmt: skip
    n = np.repeat(np.array([-5, -3, -1, 0, 1, 2, 3, 5, 13], np.int64), 66)
    assert_all_same_bits(["round(x, y)"], x, n)


@pytest.mark.parametrize(
    "expr, message",
    [
        ("math.log(x, 2.0)", "log"),
    ],
)
def test_refused(expr, message):
    x = np.ones(4, np.float64)
    with pytest.raises(nv.VulkanUnsupportedError, match=message):
        run_kernel(expr, x)


POW_GRID = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0, 3.0, -3.0, 2.5,
            -2.5, 1e-30, 1e30, 0.75, 10.0]  # fmt: skip


def _assert_special_exact_else_1ulp(exprs, x, y, dtype):
    """Bit for bit where the CPU result is 0, +-1, inf or NaN (the special cases), else within
    1 ulp (libm rounds those correctly; ours is within 1 ulp)."""
    for expr, out, ref in run_many(exprs, x, y):
        ref = ref.astype(dtype)
        special = ~np.isfinite(ref) | (ref == 0) | (np.abs(ref) == 1)
        assert_same_bits(np.where(special, out, ref), ref, (x, y))
        spacing = np.abs(np.spacing(ref[~special]))
        assert np.all(np.abs(out[~special] - ref[~special]) <= spacing), expr


@pytest.mark.parametrize("dtype", FLOATS)
def test_atan2_special_values(dtype):
    g = special_floats(dtype)
    x, y = (a.ravel() for a in np.meshgrid(g, g))
    _assert_special_exact_else_1ulp(["math.atan2(x, y)", "np.arctan2(x, y)"], x, y, dtype)


@pytest.mark.parametrize("dtype", FLOATS)
def test_pow_special_values(dtype):
    """C99's special cases of pow (zeros, infinities, NaN, +-1, negative bases with integer and
    non-integer exponents, overflow and underflow) bit for bit; other results (not exactly
    representable: libm rounds them correctly, ours is within 1 ulp) within 1 ulp."""
    g = np.array(POW_GRID, dtype)
    x, y = (a.ravel() for a in np.meshgrid(g, g))
    for expr, out, ref in run_many(["math.pow(x, y)", "np.power(x, y)", "x ** y"], x, y):
        ref = ref.astype(dtype)
        special = ~np.isfinite(ref) | (ref == 0) | (np.abs(ref) == 1) | (x == 1) | (y == 0)
        assert_same_bits(np.where(special, out, ref), ref, (x, y))
        spacing = np.abs(np.spacing(ref[~special]))
        assert np.all(np.abs(out[~special] - ref[~special]) <= spacing), expr
