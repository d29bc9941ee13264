"""Numbers: complex64/complex128 arithmetic, and 8/16-bit integer and float16 arrays.

Against CPU numba.njit: complex + - * / (CPython's division algorithm, as
Numba's), .real/.imag/.conjugate(), complex(), == and != bit for bit; abs
bit for bit for complex64 and within one ulp of libm's hypot for complex128.
"""

import dataclasses
import types as pytypes

import numba
import numpy as np
import pytest

from math_support import plain_arith_comparable

import numba_vulkan as nv
from numba_vulkan.errors import VulkanSupportError, VulkanUnsupportedError

pytestmark = [
    pytest.mark.device,
    pytest.mark.usefixtures("device"),
]


def _arith(out, flags, mags, a, b, i):
    x, y = a[i], b[i]
    out[i, 0] = x + y
    out[i, 1] = x - y
    out[i, 2] = x * y
    out[i, 3] = x / y
    out[i, 4] = -x.conjugate() + 2.5
    out[i, 5] = complex(x.imag, y.real) * 1j
    z = x
    z *= y
    z += 1
    z -= 0.5j
    out[i, 6] = z / 3
    flags[i, 0] = x == y
    flags[i, 1] = x != y
    flags[i, 2] = x == x
    flags[i, 3] = x.real < y.imag
    mags[i, 0] = abs(x)
    mags[i, 1] = x.real
    mags[i, 2] = y.imag


_dev_arith = nv.jit(device=True)(_arith)


@nv.jit
def _arith_kernel(out, flags, mags, a, b):
    i = nv.global_id(0)
    if i < a.shape[0]:
        _dev_arith(out, flags, mags, a, b, i)


def _operands(dtype, n=64):
    rng = np.random.default_rng(11)
    big = 1e300 if dtype == np.complex128 else 1e30
    a = (rng.standard_normal(n) + 1j * rng.standard_normal(n)).astype(dtype)
    b = (rng.standard_normal(n) + 1j * rng.standard_normal(n)).astype(dtype)
    b[0] = a[0]
    b[2], b[3] = 3, 2j  # pure real and pure imaginary divisors: both branches
    a[4] = complex(big, big)  # abs must not overflow
    a[5] = complex(-0.0, 0.0)
    b[6] = complex(np.nan, 1.0)
    a[7] = complex(np.inf, np.nan)  # abs(inf + nan j) = inf
    b[8] = complex(1e-300 if dtype == np.complex128 else 1e-30, 0)
    return a, b


def _same_bits(x, y):
    return (x == y) | ((x != x) & (y != y))


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_complex_arithmetic_against_numba(dtype):
    ft = np.float32 if dtype == np.complex64 else np.float64
    a, b = _operands(dtype)
    n = a.size
    outs = [np.zeros((n, 7), dtype), np.zeros((n, 4), np.bool_), np.zeros((n, 3), ft)]
    dev = [o.copy() for o in outs]
    _arith_kernel.forall(n)(*dev, a, b)
    cpu = [o.copy() for o in outs]
    body = numba.njit(_arith)
    for i in range(n):
        body(*cpu, a, b, i)
    assert np.isinf(dev[2][7, 0]) and np.isfinite(dev[2][4, 0])  # abs: inf + nan j, no overflow
    # complex64 on a device that flushes float32 subnormals: rows that meet one are left out
    keep = plain_arith_comparable(a, b, *dev, *cpu)
    dev, cpu = [o[keep] for o in dev], [o[keep] for o in cpu]
    assert _same_bits(dev[0], cpu[0]).all(), np.argwhere(~_same_bits(dev[0], cpu[0]))
    np.testing.assert_array_equal(dev[1], cpu[1])
    np.testing.assert_array_equal(dev[2][:, 1:], cpu[2][:, 1:])
    mags_dev, mags_cpu = dev[2][:, 0], cpu[2][:, 0]
    if dtype == np.complex64:
        np.testing.assert_array_equal(mags_dev, mags_cpu)
    else:
        ulps = np.abs(mags_dev.view(np.int64) - mags_cpu.view(np.int64))
        assert ulps.max() <= 1, ulps


@nv.jit
def _complex_views(out, a):
    i = nv.global_id(0)
    if i < out.shape[0]:
        row = a[i, ::-1]
        acc = 0j
        for j in range(row.shape[0]):
            acc = acc * 0.5 + row[j].conjugate()
        out[i] = acc
        a[i, 0] = a.T[1, i] * 2


def test_complex_views_and_stores():
    a = (np.arange(12) + 1j * np.arange(12)[::-1]).reshape(4, 3)
    out = np.zeros(4, np.complex128)
    dev_a = a.copy()
    _complex_views.forall(4)(out, dev_a)
    cpu_a = a.copy()
    expected = np.zeros(4, np.complex128)
    for i in range(4):
        acc = 0j
        for v in cpu_a[i, ::-1]:
            acc = acc * 0.5 + np.conj(v)
        expected[i] = acc
        cpu_a[i, 0] = cpu_a.T[1, i] * 2
    np.testing.assert_array_equal(out, expected)
    np.testing.assert_array_equal(dev_a, cpu_a)


def test_complex_device_arrays_round_trip():
    x = (np.arange(5) - 2j).astype(np.complex64)
    d = nv.to_device(x)
    assert d.dtype == np.complex64
    np.testing.assert_array_equal(d.copy_to_host(), x)
    _complex_views.forall(1)(nv.to_device(np.zeros(1, np.complex128)),
                             nv.to_device(np.ones((1, 3), np.complex128)))  # fmt: skip


# -- 8/16-bit integers and float16


def _narrow(out, a, i):
    out[i] = a[i] * 3 + a[i] - 7
    out[i - 1 if i > 0 else 0] += a[::-1][i] // 3


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int16, np.uint16])
def test_narrow_integer_arrays_bit_for_bit(dtype):
    a = (np.arange(50) * 37 - 900).astype(dtype)
    body = nv.jit(device=True)(_narrow)

    @nv.jit
    def kernel(out, a):
        i = nv.global_id(0)
        if i == 0:
            for k in range(out.size):
                body(out, a, k)

    dev = np.zeros(50, dtype)
    kernel.forall(1)(dev, a)
    cpu = np.zeros(50, dtype)
    cpu_body = numba.njit(_narrow)
    for k in range(50):
        cpu_body(cpu, a, k)
    np.testing.assert_array_equal(dev, cpu)


@nv.jit
def _half(out, a):
    i = nv.global_id(0)
    if i < out.size:
        out[i] = a[i] * np.float32(3) + np.float32(0.1)


def test_float16_storage_rounds_as_numpy():
    a = (np.arange(64) * 0.37 - 9).astype(np.float16)
    out = np.zeros(64, np.float16)
    _half.forall(64)(out, a)
    expected = (a.astype(np.float32) * np.float32(3) + np.float32(0.1)).astype(np.float16)
    np.testing.assert_array_equal(out, expected)


@pytest.mark.parametrize(
    "dtype, cap", [(np.int8, "storage8"), (np.int16, "storage16"), (np.float16, "storage16")]
)
def test_devices_without_narrow_storage_refuse_clearly(device, dtype, cap):
    @nv.jit
    def kernel(out, a):
        i = nv.global_id(0)
        if i < out.size:
            out[i] = a[i]

    sig = (numba.from_dtype(np.dtype(dtype))[::1],) * 2
    compiled = kernel.compile(sig)
    assert cap in compiled.capabilities
    fake = pytypes.SimpleNamespace(info=dataclasses.replace(device.info, **{cap: False}))
    with pytest.raises(VulkanSupportError, match=cap):
        type(device).check_support(fake, compiled)


def _complex_reductions(out, a, i):
    r = a[i]
    out[i, 0] = r.sum()
    out[i, 1] = r[::-1].prod()
    out[i, 2] = r.mean()
    out[i, 3] = np.sum(a[:, i % 3])
    acc = 0j
    for j, z in enumerate(r):
        acc = acc * 0.5 + z * j
    for z, w in zip(r, a[(i + 1) % 4]):
        acc -= z / w
    out[i, 4] = acc
    out[i, 5:].fill(r[0] * 1j)


def _rows_against_numba(fn, a, columns):
    """out[i] by `fn(out, a, i)` for every row i of `a`, in a kernel (fn a device function)
    and in numba.njit: the same bits."""
    body = nv.jit(device=True)(fn)

    @nv.jit
    def kernel(out, a):
        i = nv.global_id(0)
        if i < out.shape[0]:
            body(out, a, i)

    dev = np.zeros((a.shape[0], columns), a.dtype)
    kernel.forall(a.shape[0])(dev, a)
    cpu = np.zeros_like(dev)
    cpu_body = numba.njit(fn)
    for i in range(a.shape[0]):
        cpu_body(cpu, a, i)
    np.testing.assert_array_equal(dev, cpu)


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_complex_reductions_and_iteration(dtype):
    rng = np.random.default_rng(2)
    a = (rng.standard_normal((4, 5)) + 1j * rng.standard_normal((4, 5))).astype(dtype)
    _rows_against_numba(_complex_reductions, a, 7)


def _complex_scratch(out, a, i):
    """Complex scratch arrays as numba.njit has them (np.zeros/ones/full): element and view
    stores, negative indices, iteration, reductions, a 2-d array's row."""
    t = np.zeros(4, a.dtype)
    u = np.full((2, 3), 1 - 2j, a.dtype)
    w = np.ones(3, a.dtype)
    for j in range(4):
        t[j] = a[i, j] * (j + 1j)
    t[-1] += t[0].conjugate()
    row = u[1]
    row[2] = t[1] - w[0]
    v = t[1:3]
    v[1] = v[0] * 2
    acc = 0j
    for x in t:
        acc = acc * 0.5 + x
    out[i, 0] = acc
    out[i, 1] = t.sum() + u.sum()
    out[i, 2] = u[-1, -1] + u[0, 0] * w[2]
    out[i, 3] = t.prod()


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_complex_scratch_arrays_against_numba(dtype):
    rng = np.random.default_rng(4)
    a = (rng.standard_normal((8, 4)) + 1j * rng.standard_normal((8, 4))).astype(dtype)
    _rows_against_numba(_complex_scratch, a, 4)


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_complex_local_and_shared_arrays(dtype):
    """nv.local.array / nv.shared.array of complex elements (numba.cuda's culocalcomplex),
    a shared tile read back transposed after a barrier."""
    @nv.jit
    def tiles(a, out):
        tid = nv.local_id(0)
        loc = nv.local.array(3, a.dtype)
        tile = nv.shared.array((4, 8), a.dtype)
        for j in range(3):
            loc[j] = a[tid] * j
        tile[tid // 8, tid % 8] = loc[2] - loc[1].conjugate()
        nv.barrier()
        out[tid] = tile[3 - tid // 8, 7 - tid % 8] + loc[-1]

    a = (np.arange(32) + 1j * np.arange(32)[::-1]).astype(dtype)
    out = np.zeros(32, dtype)
    tiles[1, 32](a, out)
    t = (a * 2 - np.conj(a)).reshape(4, 8)
    np.testing.assert_array_equal(out, t[::-1, ::-1].reshape(32) + a * 2)


def test_dynamic_shared_array_of_complex_is_refused():
    @nv.jit
    def dyn(out):
        s = nv.shared.array(0, np.complex128)
        s[0] = 1j
        out[0] = s[0]

    with pytest.raises(VulkanUnsupportedError, match=r"dynamic shared array .* of complex128"):
        dyn[1, 1, None, 64](np.zeros(1, np.complex128))


def test_star_arguments_are_not_dropped():
    """``complex(*cmath.polar(z))`` (numba-cuda's test_polar): the star argument was once
    dropped, making ``complex()`` = 0j, a wrong answer; it is unpacked now, as Numba does,
    and gives numba.njit's value."""
    import cmath

    def starred(out, z):
        out[0] = complex(*cmath.polar(z[0]))

    z = np.array([1j, -2.5 + 0.25j, 0j], np.complex128)
    got, want = np.zeros(1, np.complex128), np.zeros(1, np.complex128)
    for k in range(z.size):
        nv.jit(starred)[1, 1](got, z[k:k + 1])
        numba.njit(starred)(want, z[k:k + 1])
        assert got.view(np.uint64).tolist() == want.view(np.uint64).tolist(), z[k]
    nv.jit(starred)[1, 1](got, z[:1])
    assert got[0] == complex(1, np.pi / 2)
