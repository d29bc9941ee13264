"""math.gamma and math.lgamma (mathlib/gamma.py) against mpmath in ulps, and their special
values bit for bit against the CPU (numba.njit: CPython's algorithm without its ValueError, so
poles give inf or NaN as in numba.cuda)."""

import math

import mpmath as mp
import numpy as np
import pytest
from conftest import requires_feature
from math_support import assert_all_same_bits, max_ulp, random_floats, run_kernel

pytestmark = [pytest.mark.device, pytest.mark.usefixtures("device")]

FLOATS = [np.float32, pytest.param(np.float64, marks=requires_feature("float64"))]
# lgamma's error is absolute (not relative) near its zeros on the negative axis
# (-2.457..., -2.747..., -3.143..., ...): libdevice documents its bound outside this interval too
NEG_ZEROS = (-11.0001, -2.2637)


def _gamma_ref(v):
    if v <= 0 and v == mp.floor(v):
        return mp.nan
    return mp.gamma(v)


def _lgamma_ref(v):
    if v <= 0 and v == mp.floor(v):
        return mp.inf
    return mp.re(mp.loggamma(v))


def _sample(dtype, n, lo, hi):
    rng = np.random.default_rng(41)
    x = np.concatenate([
        rng.uniform(lo, hi, n), rng.uniform(0, 8, n // 2), rng.uniform(-8, 0, n // 2),
        random_floats(dtype, n // 3, seed=42),
        1 + rng.uniform(-0.04, 0.04, n // 6), 2 + rng.uniform(-0.04, 0.04, n // 6),
        np.array([0.5, 1.5, 2.5, -0.5, -1.5, 1e-20, -1e-20, 8.0, 7.999, 3.0, 10.0]),
    ])  # fmt: skip
    return x.astype(dtype)


@pytest.mark.parametrize("dtype", FLOATS)
def test_gamma_ulp(dtype):
    hi = 36.0 if dtype == np.float32 else 172.0
    x = _sample(dtype, 900, -hi - 5, hi)
    worst, at = max_ulp(run_kernel("math.gamma(x)", x), x, _gamma_ref)
    assert worst <= 4.0, f"gamma {dtype.__name__}: {worst:.3f} ulp at {at!r}"


@pytest.mark.parametrize("dtype", FLOATS)
def test_lgamma_ulp(dtype):
    x = _sample(dtype, 900, -60.0, 200.0)
    x = x[~((x >= NEG_ZEROS[0]) & (x <= NEG_ZEROS[1]))]
    worst, at = max_ulp(run_kernel("math.lgamma(x)", x), x, _lgamma_ref)
    assert worst <= 4.0, f"lgamma {dtype.__name__}: {worst:.3f} ulp at {at!r}"


@pytest.mark.parametrize("dtype", FLOATS)
def test_lgamma_near_negative_zeros(dtype):
    """Between -11 and -2.26 the error is bounded in absolute terms: 2^-48 (float64), 2^-20."""
    x = np.random.default_rng(43).uniform(*NEG_ZEROS, 600).astype(dtype)
    x = x[x != np.round(x)]
    out = run_kernel("math.lgamma(x)", x)
    bound = 2.0**-48 if dtype == np.float64 else 2.0**-20
    with mp.workdps(40):
        worst = max(abs(mp.mpf(float(o)) - _lgamma_ref(mp.mpf(float(v)))) for v, o in zip(x, out))
    assert worst <= bound, float(worst)


@pytest.mark.parametrize("dtype", FLOATS)
def test_special_values(dtype):
    """Poles, infinities, NaN, zeros, overflow, underflow and the tiniest operands, bit for bit
    against numba.njit (which returns inf / NaN where CPython raises)."""
    fi = np.finfo(dtype)
    x = np.array([0.0, -0.0, -1.0, -2.0, -100.0, np.inf, -np.inf, np.nan, 1.0, 2.0,
                  float(fi.max), -float(fi.max), float(fi.smallest_subnormal),
                  -float(fi.smallest_subnormal), float(fi.tiny), 2.0**-70, -(2.0**-70),
                  200.0, -200.5, -180.5, 2.0**40, 2.0**70], dtype)  # fmt: skip
    assert_all_same_bits(["math.gamma(x)"], x)
    # lgamma: the exact cases (elsewhere it is within the ulp bounds above)
    assert_all_same_bits(["math.lgamma(x)"], x[:12])


def test_gamma_of_integers_is_exact():
    """gamma(n) = (n-1)! exactly where it is representable (float64: n <= 23)."""
    x = np.arange(1, 24, dtype=np.float64)
    out = run_kernel("math.gamma(x)", x)
    assert np.array_equal(out, [float(math.factorial(n - 1)) for n in range(1, 24)])
