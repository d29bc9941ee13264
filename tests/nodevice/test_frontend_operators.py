"""Front end: operators with Python semantics, checked in the KIR interpreter against CPython."""

import math

import numba
import numpy as np
import pytest
from kir_host import *  # lower, run_kir, check and the modes

# ---------------------------------------------------------------- operators on ints


def _int_ops(out, a, b):
    out[0] = a + b
    out[1] = a - b
    out[2] = a * b
    out[3] = a // b if b != 0 else 0
    out[4] = a % b if b != 0 else 0
    out[5] = a & b
    out[6] = a | b
    out[7] = a ^ b
    out[8] = -a
    out[9] = ~a
    out[10] = +a
    out[11] = abs(a)
    out[12] = min(a, b)
    out[13] = max(a, b, 3)
    out[14] = (a < b) + 2 * (a <= b) + 4 * (a > b) + 8 * (a >= b) + 16 * (a == b) + 32 * (a != b)
    out[15] = not a


INT_PAIRS = [(7, 2), (-7, 2), (7, -2), (-7, -2), (6, 3), (-6, 3), (0, 5), (5, 0), (-5, 0), (0, 0)]


@pytest.mark.parametrize("a,b", INT_PAIRS)
@pytest.mark.parametrize("mode", [INTS, EXACT], ids=["ints32", "ints64"])
def test_int_operators(a, b, mode):
    check(_int_ops, np.zeros(16, np.int64), a, b, mode=mode)


def _int_div_raw(out, a, b):
    out[0] = a // b
    out[1] = a % b
    q, r = divmod(a, b)
    out[2] = q
    out[3] = r


@pytest.mark.parametrize("a,b", INT_PAIRS)
def test_int_division_by_zero_gives_zero(a, b):
    out = np.zeros(4, np.int64)
    (got,) = run_kir(_int_div_raw, (out, a, b))
    if b == 0:
        assert list(got) == [0, 0, 0, 0]
    else:
        assert list(got) == [a // b, a % b, a // b, a % b]


def _int_true_div(out, a, b):
    out[0] = a / b


def test_int_true_division_gives_float():
    got = run_kir(_int_true_div, (np.zeros(1), 7, -2))[0]
    assert got[0] == -3.5


def _shifts(out, a, n):
    out[0] = a << n
    out[1] = a >> n


@pytest.mark.parametrize("a,n", [(5, 1), (-5, 1), (-64, 3), (1, 30), (123, 0), (-1, 31)])
def test_shifts(a, n):
    check(_shifts, np.zeros(2, np.int32), np.int32(a), np.int32(n))


def test_shift_past_the_width():
    out = np.zeros(2, np.int32)
    got = run_kir(_shifts, (out, np.int32(-8), np.int32(40)))[0]
    assert list(got) == [0, -1]


def _int_pow(out, a, n):
    out[0] = a**n
    out[1] = a**2
    out[2] = a**3
    out[3] = a**0


@pytest.mark.parametrize("a,n", [(3, 4), (-2, 5), (2, 0), (7, 1), (-3, 3), (2, 10)])
def test_int_power(a, n):
    check(_int_pow, np.zeros(4, np.int64), a, n)


def test_int_power_negative_exponent_follows_numba():
    for a, n in [(2, -1), (1, -3), (-1, -3), (-1, -2), (5, -2)]:
        got = run_kir(_int_pow, (np.zeros(4, np.int64), a, n))[0]
        assert got[0] == numba.njit(lambda x, y: x**y)(a, n), (a, n)


# ---------------------------------------------------------------- operators on floats


def _float_ops(out, a, b):
    out[0] = a + b
    out[1] = a - b
    out[2] = a * b
    out[3] = a / b
    out[4] = a // b
    out[5] = a % b
    out[6] = -a
    out[7] = abs(a)
    out[8] = min(a, b)
    out[9] = max(a, b)
    out[10] = (a < b) + 2 * (a <= b) + 4 * (a > b) + 8 * (a >= b) + 16 * (a == b)
    out[11] = a**3
    out[12] = a**-2 if a != 0 else 0.0
    out[13] = int(a)
    out[14] = float(int(b))
    out[15] = bool(a) + 0.5


FLOAT_PAIRS = [(7.5, 2.0), (-7.5, 2.0), (7.5, -2.0), (-7.5, -2.0), (6.0, 3.0), (-6.0, 3.0),
               (0.0, -5.0), (1e-100, 3.0), (5.25, 0.5), (-0.0, 1.0)]  # fmt: skip


@pytest.mark.parametrize("a,b", FLOAT_PAIRS)
def test_float_operators(a, b):
    got = check(_float_ops, np.zeros(16), a, b)[0]
    # signed zeros of // and % as CPython gives them
    assert math.copysign(1, got[4]) == math.copysign(1, a // b)
    assert math.copysign(1, got[5]) == math.copysign(1, a % b)


def _float_div(out, a, b):
    out[0] = a // b
    out[1] = a % b


def test_float_division_by_zero_follows_numpy():
    with np.errstate(all="ignore"):
        for a in (1.0, -1.0, 0.0):
            got = run_kir(_float_div, (np.zeros(2), a, 0.0))[0]
            exp = [np.floor_divide(a, 0.0), np.remainder(a, 0.0)]
            np.testing.assert_array_equal(got, exp)


def _float_divmod_arrays(q, r, x, y):
    for i in range(x.size):
        q[i] = x[i] // y[i]
        r[i] = x[i] % y[i]


def _fmod_operands(dtype, n=120):
    """Signed zeros, inf, nan, subnormals, extremes, huge ratios and random bit patterns."""
    fi = np.finfo(dtype)
    special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 3.0, -3.0, 1.0, -0.5, fi.tiny,
                        fi.smallest_subnormal, -fi.smallest_subnormal, fi.tiny / 3, fi.max,
                        -fi.max, 1e30, -651.3, -45.59], dtype)  # fmt: skip
    xs, ys = (g.ravel() for g in np.meshgrid(special, special))
    rng = np.random.default_rng(7)
    ik = np.int32 if dtype == np.float32 else np.int64
    bits = rng.integers(0, np.iinfo(ik).max, (2, n), dtype=ik)
    rand = bits.view(dtype) * rng.choice(np.array([-1, 1], dtype), (2, n))
    rand[~np.isfinite(rand)] = 1.5
    near = rng.uniform(-1e3, 1e3, (2, n)).astype(dtype)
    x = np.concatenate([xs, rand[0], near[0]]).astype(dtype)
    y = np.concatenate([ys, rand[1], near[1] / 20]).astype(dtype)
    return x, y


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_float_floordiv_mod_exact_bitwise(dtype):
    # Float % and // use an exact fmod (shift and subtract), not OpFRem: bit for bit
    # NumPy's results, subnormals, signed zeros, inf and nan included.
    x, y = _fmod_operands(dtype)
    q, r = np.zeros_like(x), np.zeros_like(x)
    got_q, got_r = run_kir(_float_divmod_arrays, (q, r, x, y), mode=EXACT,
                           max_steps=50_000_000)[:2]  # fmt: skip
    with np.errstate(all="ignore"):
        want_q, want_r = np.floor_divide(x, y), np.remainder(x, y)
    ut = np.uint32 if dtype == np.float32 else np.uint64
    for got, want in ((got_q, want_q), (got_r, want_r)):
        same = (got.view(ut) == want.view(ut)) | (np.isnan(got) & np.isnan(want))
        bad = np.flatnonzero(~same)[:5]
        assert same.all(), [(x[j], y[j], got[j], want[j]) for j in bad]


def test_float_mod_known_value():
    # OpFRem gives -13.039978 here on lavapipe.
    x, y = np.array([-651.3], np.float32), np.array([-45.59], np.float32)
    got = run_kir(_float_divmod_arrays, (np.zeros(1, np.float32), np.zeros(1, np.float32), x, y),
                  mode=EXACT)[1]  # fmt: skip
    assert got[0] == np.float32(-13.039986)


def _f32_pow(out, a, b):
    out[0] = a**b


def test_float32_power_of_float():
    got = run_kir(_f32_pow, (np.zeros(1, np.float32), np.float32(2.0), np.float32(0.5)))[0]
    assert abs(got[0] - 2**0.5) < 1e-6


def test_float_mode_narrows_float64():
    got = check(_float_ops, np.zeros(16), 7.5, -2.0, mode=NARROW, rtol=1e-6)[0]
    assert got[3] == -3.75
