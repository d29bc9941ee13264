"""The math library on a device that flushes float32 subnormals (NVIDIA: DenormPreserve is not
available for float32), simulated on lavapipe: with config.SUBNORMALS32 = "simulate" the library
takes the flush-safe forms a flushing device gets and its own float32 ops flush their subnormal
operands and results as such a device does (mathlib/denormals.py). The results must still be those of
the CPU, subnormals included: bit for bit for the exact functions, within the promised ulp for
the others, on operand samples rich in subnormals and in results that underflow gradually."""

import mpmath as mp

import numpy as np
import pytest
from math_support import (
    assert_all_same_bits,
    assert_same_bits,
    max_ulp,
    operands,
    random_floats,
    run_kernel,
    set_subnormals32,
)
from test_math_ulp import CASES

pytestmark = [pytest.mark.device, pytest.mark.usefixtures("device")]

F32 = np.float32
FI = np.finfo(F32)


@pytest.fixture(autouse=True, params=["simulate", "keep"])
def flushing(monkeypatch, request):
    """simulate: a flushing device; keep: the fast forms a device that keeps subnormals gets
    (lavapipe keeps them without promising it, so by default it gets the flush-safe forms)."""
    set_subnormals32(monkeypatch, request.param)
    return request.param


def _subnormals(n, seed=0):
    """Subnormal float32 of every magnitude, both signs, and the normals next to them."""
    rng = np.random.default_rng(seed)
    m = rng.integers(1, 2**23, n).astype(np.int32)
    m >>= rng.integers(0, 23, n).astype(np.int32)
    m[m == 0] = 1
    sign = rng.integers(0, 2, n).astype(np.int32) << 31
    sub = (m | sign).view(F32)
    near = random_floats(F32, n // 2, seed + 1, lo_exp=-126, hi_exp=-100)
    return np.concatenate([sub, near])


def _x():
    return np.concatenate([operands(F32, 200), _subnormals(400)])


EXACT_UNARY = [
    "math.fabs(x)", "abs(x)", "np.signbit(x)", "np.sign(x)", "math.isnan(x)", "math.isinf(x)",
    "math.isfinite(x)", "np.floor(x)", "np.ceil(x)", "np.trunc(x)", "np.rint(x)",
    "math.frexp(x)[0]", "math.frexp(x)[1]", "math.sqrt(x)", "math.degrees(x)",
    "math.radians(x)",
]  # fmt: skip


def test_exact_unary():
    assert_all_same_bits(EXACT_UNARY, _x())


def test_negation():
    """np.negative flips the sign bit, which neither mode flushes (exact on lavapipe); NVIDIA's
    compiler turns that xor back into its own negation, which flushes float32 subnormals
    (the H200, driver 580: np.negative(1e-45) gave -0.0): there those elements are left
    out, as for plain arithmetic (the probe nvidia_forms.py, added in bacd769 and since
    removed, tries others)."""
    assert_all_same_bits(["np.negative(x)", "-x"], _x(), plain_arith=True)


def test_to_int():
    x = _x()
    assert_all_same_bits(["math.floor(x)", "math.ceil(x)", "math.trunc(x)", "round(x)"],
                         x[np.isfinite(x)])  # fmt: skip


def test_exact_binary():
    x = _x()
    y = np.concatenate([_subnormals(x.size // 2, 5), operands(F32, x.size, 6)])[: x.size]
    y[::7] = x[::7]
    exprs = ["math.copysign(x, y)", "math.nextafter(x, y)", "np.fmin(x, y)", "np.fmax(x, y)",
             "np.minimum(x, y)", "np.maximum(x, y)", "np.fmod(x, y)"]  # fmt: skip
    assert_all_same_bits(exprs, x, y)
    # np.remainder: NumPy's zeros take y's sign (numba.njit's CPU code gives +0; kernels
    # follow NumPy, docs/math.md)
    with np.errstate(all="ignore"):
        assert_same_bits(run_kernel("np.remainder(x, y)", x, y), np.remainder(x, y), (x, y))


def test_ldexp():
    """Into and out of the subnormals, rounded once (ties to even included)."""
    x = np.concatenate([_x(), random_floats(F32, 300, 7, lo_exp=-20, hi_exp=20)])
    rng = np.random.default_rng(3)
    n = rng.integers(-160, 160, x.size).astype(np.int32)
    n[:6] = [0, 1, -1, 300, -300, -149]
    assert_all_same_bits(["math.ldexp(x, y)"], x, n)


SUBNORMAL_CASES = {
    # expr -> extra operands that reach or come from the subnormals
    "math.exp(x)": lambda: np.random.default_rng(8).uniform(-104, -85, 300),
    "np.exp2(x)": lambda: np.random.default_rng(9).uniform(-150, -125, 300),
    "math.expm1(x)": lambda: _subnormals(200),
    "math.log(x)": lambda: np.abs(_subnormals(300)),
    "math.log2(x)": lambda: np.abs(_subnormals(300)),
    "math.log10(x)": lambda: np.abs(_subnormals(300)),
    "math.log1p(x)": lambda: _subnormals(200),
    "np.cbrt(x)": lambda: _subnormals(300),
    "math.sin(x)": lambda: _subnormals(200),
    "math.cos(x)": lambda: _subnormals(200),
    "math.tan(x)": lambda: _subnormals(200),
    "math.atan(x)": lambda: _subnormals(200),
    "math.asin(x)": lambda: _subnormals(200),
    "math.acos(x)": lambda: _subnormals(200),
    "math.sinh(x)": lambda: _subnormals(200),
    "math.cosh(x)": lambda: _subnormals(200),
    "math.tanh(x)": lambda: _subnormals(200),
    "math.asinh(x)": lambda: _subnormals(200),
    "math.atanh(x)": lambda: _subnormals(200),
    "math.erf(x)": lambda: _subnormals(200),
    "math.erfc(x)": lambda: np.random.default_rng(10).uniform(9, 10.1, 300),
    "math.hypot(x, 1.5)": lambda: _subnormals(100),
    "np.float_power(x, 1.5)": lambda: np.abs(_subnormals(300)),
}


@pytest.mark.parametrize("expr", sorted(SUBNORMAL_CASES))
def test_ulp(expr):
    ref, sample, bound = CASES[expr]
    x = np.concatenate([sample(F32, 300), np.asarray(SUBNORMAL_CASES[expr](), F32)])
    out = run_kernel(expr, x)
    worst, at = max_ulp(out, x, ref)
    assert worst <= bound, f"{expr} (flushing device): {worst:.3f} ulp at x = {at!r}"


def test_hypot_and_pow_of_subnormals():
    x, y = _subnormals(300, 11), _subnormals(300, 12)
    out = run_kernel("math.hypot(x, y)", x, y)
    with mp.workdps(40):
        for xi, yi, oi in zip(x, y, out):
            ex = mp.sqrt(mp.mpf(float(xi)) ** 2 + mp.mpf(float(yi)) ** 2)
            ulp = max(mp.mpf(2) ** -149, mp.mpf(2) ** (mp.floor(mp.log(ex, 2)) - 23))
            assert abs(mp.mpf(float(oi)) - ex) <= ulp, (xi, yi, oi)
    y = np.random.default_rng(13).uniform(0.2, 3, x.size).astype(F32)
    out = run_kernel("np.abs(x) ** y", x, y)
    ref = (np.abs(x).astype(np.float64) ** y.astype(np.float64)).astype(F32)
    assert np.all(np.abs(out - ref) <= np.spacing(ref)), (x, y, out, ref)


def test_simulation_flushes(flushing):
    """The switch does simulate a flushing device: np.square is one plain product, as x * x in
    a kernel, and a flushing device gives 0 where the exact square is subnormal (docs/math.md:
    plain float32 arithmetic cannot be helped), while ldexp gives the subnormal."""
    x = np.array([2.0**-70, -(2.0**-66)], F32)
    flushed = np.zeros(2, F32) if flushing == "simulate" else np.square(x)
    assert np.array_equal(run_kernel("np.square(x)", x), flushed)
    assert np.array_equal(run_kernel("math.ldexp(x, -70)", x), np.ldexp(x, -70))


def test_gamma_lgamma():
    """gamma of subnormals is 1/x (finite above 2.9e-39), lgamma -ln|x|; both through frexp."""
    import test_math_gamma as tg

    rng = np.random.default_rng(14)
    x = np.concatenate([_subnormals(200, 15), rng.uniform(-30, 35, 300)]).astype(F32)
    away = x[~((x >= tg.NEG_ZEROS[0]) & (x <= tg.NEG_ZEROS[1]))]  # lgamma's relative bound
    for expr, ref, xs in (("math.gamma(x)", tg._gamma_ref, x),
                          ("math.lgamma(x)", tg._lgamma_ref, away)):  # fmt: skip
        worst, at = max_ulp(run_kernel(expr, xs), xs, ref)
        assert worst <= 4.0, f"{expr} (flushing device): {worst:.3f} ulp at x = {at!r}"


def test_atan2_pow_cbrt_of_subnormals():
    """Two-operand functions with subnormal operands and results (atan2(tiny, 1) is tiny)."""
    x = _subnormals(200, 16)
    one = np.ones_like(x) * np.float32(1.5)
    out = run_kernel("math.atan2(x, y)", x, one)
    worst = max_ulp(out, x, lambda v: mp.atan2(v, mp.mpf(1.5)))[0]
    assert worst <= 1.0, worst
    out = run_kernel("math.atan2(y, x)", x, one)  # +-pi/2
    assert np.all(np.abs(out) == np.float32(np.pi / 2)), out
    out = run_kernel("x ** y", np.abs(x), np.full_like(x, np.float32(0.5)))
    want = np.sqrt(np.abs(x))
    assert np.all(np.abs(out - want) <= np.spacing(want)), out  # pow: within 1 ulp
