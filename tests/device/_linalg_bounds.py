"""The error bound of a float matrix product, for linalg's tests (test_linalg*.py)."""

import numpy as np


def _gamma(k, dtype):
    u = np.finfo(dtype).eps / 2
    return k * u / (1 - k * u)


def _check_float(got, a, b):
    """`got` (host) within gamma_K |A||B| of the exact product of host arrays a and b."""
    a, b = np.asarray(a), np.asarray(b)
    wide = np.longdouble if got.dtype == np.float64 else np.float64
    exact = np.matmul(a.astype(wide), b.astype(wide))
    k = a.shape[-1]
    bound = (_gamma(k, got.dtype) + _gamma(k, wide)) * np.matmul(np.abs(a).astype(wide),
                                                                 np.abs(b).astype(wide))
    err = np.abs(got.astype(wide) - exact)
    assert np.all(err <= bound), f"worst error {np.max(err - bound)} over the bound (K={k})"
