"""NumPy's ufuncs and Python's operators on device arrays, against NumPy itself.

Integers, booleans and the exact float operations must equal NumPy bit for bit
(value and dtype, -0.0 and NaN included); float math functions must be within
the math library's stated bound (docs/math.md: 1 ulp) of NumPy's result.
"""

import numpy as np
import pytest

import numba_vulkan as nv
from math_support import max_ulp, plain_arith_comparable
from numba_vulkan.errors import VulkanUnsupportedError

INTS = [np.int8, np.uint8, np.int16, np.int32, np.uint32, np.int64, np.uint64]


def _ints(dtype, n=64, seed=0):
    """Edge values of `dtype` (ends, 0, ±1, shift counts past the width) and random ones."""
    info = np.iinfo(dtype)
    edges = [info.min, info.max, 0, 1, 2, 3, 7, 8, 9, 15, 16, 31, 32, 63, 64, 65, info.max - 1]
    if info.min < 0:
        edges += [-1, -2, -3, -7, -8, -9, info.min + 1]
    edges = [e for e in edges if info.min <= e <= info.max]
    rng = np.random.default_rng(seed)
    rand = rng.integers(info.min, info.max, n - len(edges), dtype=dtype, endpoint=True)
    return np.concatenate([np.array(edges, dtype=dtype), rand])


def _floats(dtype, n=64, seed=0):
    t = np.dtype(dtype).type
    fi = np.finfo(dtype)
    edges = [0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 3.0, np.inf, -np.inf, np.nan, fi.max, -fi.max,
             fi.tiny, fi.tiny / 4, 7.0, -7.0, 1e-3]  # fmt: skip
    rng = np.random.default_rng(seed)
    rand = (rng.standard_normal(n - len(edges)) * 10).astype(dtype)
    return np.concatenate([np.array(edges, dtype=dtype), rand]).astype(t)


def _same(ours, ref, *operands):
    """Bit for bit: dtype, shape and bytes (NaNs compared as NaN, whatever their payload).
    Elements meeting float32 subnormals are left out on a device that flushes them."""
    ours = np.asarray(ours)
    assert ours.dtype == ref.dtype, (ours.dtype, ref.dtype)
    assert ours.shape == ref.shape
    if operands:
        keep = plain_arith_comparable(ours.ravel(), ref.ravel(), *(o.ravel() for o in operands))
        ours, ref = ours.ravel()[keep], ref.ravel()[keep]
    if ref.dtype.kind == "f":
        nan = np.isnan(ref)
        assert np.array_equal(np.isnan(ours), nan)
        ours, ref = ours[~nan], ref[~nan]
    bad = ours.tobytes() != ref.tobytes()
    assert not bad, np.stack([ours, ref])[:, ours != ref]


BINARY_INT = [np.add, np.subtract, np.multiply, np.floor_divide, np.remainder, np.fmod,
              np.left_shift, np.right_shift, np.bitwise_and, np.bitwise_or, np.bitwise_xor,
              np.maximum, np.minimum, np.less, np.less_equal, np.equal, np.not_equal,
              np.greater, np.greater_equal, np.logical_and, np.logical_xor,
              np.true_divide]  # fmt: skip


@pytest.mark.parametrize("dtype", INTS, ids=lambda d: np.dtype(d).name)
def test_integer_binary_ufuncs_bit_for_bit(device, dtype):
    x = _ints(dtype, seed=1)
    y = _ints(dtype, seed=2)[::-1].copy()
    dx, dy = nv.to_device(x), nv.to_device(y)
    with np.errstate(all="ignore"):
        for ufunc in BINARY_INT:
            _same(ufunc(dx, dy), ufunc(x, y))


@pytest.mark.parametrize("dtype", [np.int8, np.uint16, np.int64, np.uint64],
                         ids=lambda d: np.dtype(d).name)  # fmt: skip
def test_integer_unary_ufuncs_and_power(device, dtype):
    x = _ints(dtype, seed=3)
    dx = nv.to_device(x)
    with np.errstate(all="ignore"):
        for ufunc in [np.negative, np.positive, np.absolute, np.invert, np.sign, np.square,
                      np.logical_not, np.isnan, np.isfinite, np.floor, np.sqrt]:  # fmt: skip
            ref = ufunc(x)
            if ref.dtype.kind == "f":  # sqrt of ints: float64, correctly rounded
                np.testing.assert_array_equal(np.asarray(ufunc(dx)), ref)
            else:
                _same(ufunc(dx), ref)
        e = (np.arange(x.size) % 70).astype(dtype)
        _same(np.power(dx, nv.to_device(e)), np.power(x, e))
        _same(dx**3, x**3)


def test_bool_ufuncs(device):
    x = np.array([True, False, True, False])
    y = np.array([True, True, False, False])
    dx, dy = nv.to_device(x), nv.to_device(y)
    for ufunc in [np.add, np.multiply, np.maximum, np.minimum, np.logical_and, np.logical_or,
                  np.bitwise_xor, np.equal, np.less]:  # fmt: skip
        _same(ufunc(dx, dy), ufunc(x, y))
    _same(~dx, ~x)
    _same(dx + 1, x + 1)
    with pytest.raises(TypeError):
        np.subtract(dx, dy)  # NumPy refuses it too


FLOATS = [np.float16, np.float32, np.float64]
EXACT_BINARY = [np.add, np.subtract, np.multiply, np.true_divide, np.floor_divide, np.remainder,
                np.fmod, np.maximum, np.minimum, np.fmax, np.fmin, np.copysign, np.nextafter,
                np.less, np.equal, np.not_equal, np.greater_equal, np.logical_or]  # fmt: skip
EXACT_UNARY = [np.negative, np.absolute, np.sign, np.floor, np.ceil, np.trunc, np.rint,
               np.sqrt, np.square, np.isnan, np.isinf, np.isfinite, np.signbit,
               np.reciprocal]  # fmt: skip


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: np.dtype(d).name)
def test_float_exact_ufuncs_bit_for_bit(device, dtype):
    x = _floats(dtype, seed=4)
    y = _floats(dtype, seed=5)[::-1].copy()
    dx, dy = nv.to_device(x), nv.to_device(y)
    with np.errstate(all="ignore"):
        for ufunc in EXACT_BINARY:
            _same(ufunc(dx, dy), ufunc(x, y), x, y)
        for ufunc in EXACT_UNARY:
            _same(ufunc(dx), ufunc(x), x)
        q, r = np.divmod(dx, dy)
        _same(q, np.floor_divide(x, y), x, y)
        _same(r, np.remainder(x, y), x, y)


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=lambda d: np.dtype(d).name)
def test_float_math_within_an_ulp(device, dtype):
    """Against the exact value (mpmath), within the math library's 1 ulp (docs/math.md);
    NumPy's own float32 functions are not correctly rounded either, so the exact value,
    not NumPy's, is the reference. The dtype must be NumPy's."""
    import mpmath as mp

    rng = np.random.default_rng(6)
    x = (rng.standard_normal(60) * 3).astype(dtype)
    pos = np.abs(x) + dtype(0.1)
    unit = np.clip(x / 10, -0.99, 0.99).astype(dtype)
    cases = [(np.exp, x, mp.exp), (np.log, pos, mp.log), (np.sin, x, mp.sin),
             (np.cos, x, mp.cos), (np.tan, unit, mp.tan), (np.arctan, x, mp.atan),
             (np.arcsin, unit, mp.asin), (np.tanh, x, mp.tanh),
             (np.cbrt, x, lambda v: mp.sign(v) * mp.cbrt(abs(v))),
             (np.log1p, pos, mp.log1p), (np.expm1, x, mp.expm1),
             (np.log2, pos, lambda v: mp.log(v, 2)), (np.exp2, x, lambda v: mp.power(2, v)),
             (np.arcsinh, x, mp.asinh)]  # fmt: skip
    for ufunc, data, exact in cases:
        ours = np.asarray(ufunc(nv.to_device(data)))
        assert ours.dtype == ufunc(data).dtype
        worst, at = max_ulp(ours, data, exact)
        assert worst <= 1, (ufunc.__name__, worst, at)
    y = rng.standard_normal(60).astype(dtype)
    for ufunc, exact in [(np.arctan2, mp.atan2), (np.hypot, mp.hypot), (np.power, mp.power)]:
        a = pos if ufunc is np.power else x
        ours = np.asarray(ufunc(nv.to_device(a), nv.to_device(y)))
        def pair(k, a=a, exact=exact):
            return exact(mp.mpf(float(a[int(k)])), mp.mpf(float(y[int(k)])))

        worst, at = max_ulp(ours, np.arange(a.size), pair)
        assert worst <= 1, (ufunc.__name__, worst, at)


def test_promotion_and_weak_python_scalars(device):
    i8 = np.arange(-4, 4, dtype=np.int8)
    u8 = np.arange(8, dtype=np.uint8)
    f32 = np.linspace(-1, 1, 8, dtype=np.float32)
    d8, du8, df = nv.to_device(i8), nv.to_device(u8), nv.to_device(f32)
    _same(d8 + du8, i8 + u8)  # int16
    _same(d8 * 3, i8 * 3)  # stays int8
    _same(df * 2.5, f32 * 2.5)  # stays float32
    _same(d8 / 2, i8 / 2)  # float64
    _same(d8 + np.float32(1), i8 + np.float32(1))
    _same(df + np.float64(1.5), f32 + np.float64(1.5))  # NumPy scalars are strong (float64)
    _same(df * d8.sum(), f32 * i8.sum())
    assert (df == None) is False and (df != "a") is True  # noqa: E711
    _same(d8 + f32, i8 + f32)  # float32 (int8 fits)
    _same(2 - d8, 2 - i8)
    _same(d8 < 1000, i8 < 1000)  # NumPy 2 compares out-of-range ints exactly
    _same(d8 != -1000, i8 != -1000)
    with pytest.raises(OverflowError):
        d8 + 1000
    big = np.array([0, 2**63, 2**64 - 1], dtype=np.uint64)
    neg = np.array([-1, 2**62, -(2**63)], dtype=np.int64)
    for ufunc in [np.less, np.less_equal, np.greater, np.greater_equal, np.equal, np.not_equal]:
        _same(ufunc(nv.to_device(neg), nv.to_device(big)), ufunc(neg, big))
        _same(ufunc(nv.to_device(big), nv.to_device(neg)), ufunc(big, neg))


def test_operators_broadcasting_and_results(device):
    a = np.arange(24, dtype=np.int32).reshape(2, 3, 4)
    b = np.arange(4, dtype=np.int32)
    d = nv.to_device(a)
    r = d + b
    assert isinstance(r, nv.DeviceArray)
    _same(r, a + b)
    _same(b + d, b + a)
    _same(d[:, ::-1, 1:] * d[0, :, :3], a[:, ::-1, 1:] * a[0, :, :3])
    _same(d.T - 1, a.T - 1)
    for op in ["+", "-", "*", "//", "%", "&", "|", "^", "<<", ">>", "<", "<=", "==", "!=",
               ">", ">=", "**", "/"]:  # fmt: skip
        _same(eval(f"d {op} 3"), eval(f"a {op} 3"))
    _same(-d, -a)
    _same(~d, ~a)
    _same(abs(d - 10), abs(a - 10))
    five = np.arange(2 * 3 * 2 * 2 * 3).reshape(2, 3, 2, 2, 3)
    _same(nv.to_device(five)[..., ::2] + 1, five[..., ::2] + 1)  # rank 5: cut into launches
    np.testing.assert_array_equal(np.asarray(d), a)
    zero_d = nv.to_device(np.array(5.0))
    _same(zero_d * 2, np.array(10.0))


def test_in_place_and_out(device):
    a = np.arange(10, dtype=np.float64)
    d = nv.to_device(a)
    d += 1
    d *= d
    a += 1
    a *= a
    _same(d, a)
    # Overlapping input and output: NumPy's result, as if the inputs were read first.
    a2, d2 = a.copy(), nv.to_device(a)
    np.add(d2[1:], d2[:-1], out=d2[1:])
    np.add(a2[1:], a2[:-1], out=a2[1:])
    _same(d2, a2)
    out = nv.device_array(10, np.float32)
    np.multiply(d, 2, out=out, casting="same_kind")
    _same(out, (a * 2).astype(np.float32))
    host_out = np.empty(10)
    assert np.sqrt(d, out=host_out) is host_out
    _same(host_out, np.sqrt(a))
    i = nv.to_device(np.arange(5))
    with pytest.raises(TypeError, match="same_kind"):
        i += 1.5
    np.add(i, 1.5, out=i, casting="unsafe")  # as NumPy: truncated into the int64 array
    _same(i, np.add(np.arange(5), 1.5).astype(np.int64))
    _same(np.add(nv.to_device(np.int8([100])), np.int8(100), dtype=np.float64),
          np.add(np.int8([100]), np.int8(100), dtype=np.float64))


def test_clear_errors(device):
    d = nv.to_device(np.arange(5.0))
    with pytest.raises(TypeError, match="where"):
        np.add(d, 1, where=np.ones(5, bool))
    with pytest.raises(TypeError, match="accumulate"):
        np.add.accumulate(d)
    with pytest.raises(TypeError, match="not supported"):
        np.multiply.reduce(d)
    assert np.add.reduce(d) == 10.0
    assert np.maximum.reduce(d, axis=None) == 4.0
    with pytest.raises(ValueError, match="ambiguous"):
        bool(d > 1)
    assert bool(d[1:2] > 0)
    with pytest.raises(TypeError):
        hash(d)
    with pytest.raises(ValueError, match="copy"):
        np.asarray(d, copy=False)
    with pytest.raises(VulkanUnsupportedError, match="gcd"):
        np.gcd(nv.to_device(np.arange(4)), 2)


def test_complex_ufuncs(device):
    rng = np.random.default_rng(7)
    for dtype in (np.complex64, np.complex128):
        x = (rng.standard_normal(40) + 1j * rng.standard_normal(40)).astype(dtype)
        y = (rng.standard_normal(40) + 1j * rng.standard_normal(40)).astype(dtype)
        dx, dy = nv.to_device(x), nv.to_device(y)
        for ufunc in [np.add, np.subtract, np.equal, np.not_equal]:
            _same(ufunc(dx, dy), ufunc(x, y))
        for ufunc in [np.negative, np.conjugate, np.positive]:
            _same(ufunc(dx), ufunc(x))
        # Products round twice per part (NumPy's SIMD loops may fuse one): a few ulp.
        tol = 4 * np.finfo(dtype).eps
        for ours, ref in [(dx * dy, x * y), (dx / dy, x / y), (abs(dx), abs(x)),
                          (np.square(dx), np.square(x)), (dx * 2j, x * 2j)]:  # fmt: skip
            assert np.asarray(ours).dtype == ref.dtype
            np.testing.assert_allclose(np.asarray(ours), ref, rtol=tol)


def test_astype_on_the_device(device):
    x = np.array([-2.7, -0.5, 0.0, 0.5, 3.9, 1e3], np.float64)
    d = nv.to_device(x)
    for dtype in (np.int32, np.int64, np.float32, np.bool_, np.uint8):
        with np.errstate(all="ignore"):
            ref = x.astype(dtype) if dtype is not np.uint8 else x.clip(0, 255).astype(dtype)
        src = d if dtype is not np.uint8 else nv.to_device(x.clip(0, 255))
        _same(src.astype(dtype), ref)
    _same(nv.to_device(np.arange(12).reshape(3, 4))[:, ::-2].astype(np.float32),
          np.arange(12).reshape(3, 4)[:, ::-2].astype(np.float32))
