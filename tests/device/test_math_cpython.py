"""math.fmod, math.remainder and math.modf in kernels (numba.cuda types them, numba.njit
does not; frontend/mathlib/math_extra.py): bit for bit CPython's math module, signs of
zeros, infinities and NaN included (CPython's ValueError cases give NaN, as numba.cuda)."""

import math

import numpy as np
import pytest

from numba_vulkan import cuda

pytestmark = [pytest.mark.device, pytest.mark.usefixtures("device")]

_SPECIAL = [0.0, -0.0, np.inf, -np.inf, np.nan, 5.0, -5.0, 2.5, -2.5, 7.5, 1e-310, 1e308, 3.0]


@cuda.jit
def _kernel(x, y, f, r, frac, whole):
    i = cuda.grid(1)
    if i < x.size:
        f[i] = math.fmod(x[i], y[i])
        r[i] = math.remainder(x[i], y[i])
        a, b = math.modf(x[i])
        frac[i] = a
        whole[i] = b


def _cpython(fn, *args):
    try:
        return fn(*args)
    except ValueError:  # remainder(x, 0), remainder(inf, y)
        return math.nan


def _same(got, want):
    return (np.isnan(got) and np.isnan(want)) or (got == want and
                                                  np.signbit(got) == np.signbit(want))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_fmod_remainder_modf_as_cpython(dtype):
    rng = np.random.default_rng(1)
    vals = np.concatenate([rng.uniform(-50, 50, 40), _SPECIAL])
    xs, ys = np.meshgrid(vals, vals[:20])
    x, y = xs.ravel().astype(dtype), ys.ravel().astype(dtype)
    outs = [np.zeros_like(x) for _ in range(4)]
    _kernel.forall(x.size)(x, y, *outs)
    for i in range(x.size):
        X, Y = float(x[i]), float(y[i])
        frac, whole = math.modf(X)
        want = [_cpython(math.fmod, X, Y), _cpython(math.remainder, X, Y), frac, whole]
        for name, out, w in zip(("fmod", "remainder", "modf[0]", "modf[1]"), outs, want):
            assert _same(out[i], dtype(w)), (name, X, Y, out[i], w)
