"""numba_vulkan.linalg.matmul, ``np.matmul`` and ``@`` on device arrays, against NumPy.

Integers and bool: bit for bit with NumPy's matmul (wrap-around included). float16: bit
for bit too, where k is not split (NumPy's float16 loop sums float32 products in k
order and rounds once, as the kernel does). float32 and float64: within the standard
bound of a sum of K products, |computed - exact| <= gamma_K * (|A| @ |B|) with
gamma_K = K u / (1 - K u), u the unit roundoff (2^-24, 2^-53), the exact product
taken from a wider type (its own gamma added); and exactly NumPy's result on
integer-valued data, whose sums are exact in any order.
"""

import dataclasses
import os

import numpy as np
import pytest

import numba_vulkan as nv
from numba_vulkan.errors import VulkanUnsupportedError
from numba_vulkan.linalg import blocked, kernels, matmul, plans, tiles
from numba_vulkan.runtime.layout import broadcast_to

pytestmark = pytest.mark.usefixtures("device")

INT_DTYPES = ["int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64"]
rng = np.random.default_rng(20261205)


def _random(shape, dtype):
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return rng.random(shape) < 0.3
    if dtype.kind in "iu":  # the whole range: products and sums wrap
        info = np.iinfo(dtype)
        return rng.integers(info.min, info.max, shape, dtype=dtype, endpoint=True)
    return rng.standard_normal(shape).astype(dtype)


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


def _check(got, a, b, **kwargs):
    """`got` (a DeviceArray) is NumPy's np.matmul of the host arrays: shape and dtype, bit
    for bit for bool/integers/float16, within the bound for float32/float64."""
    want = np.matmul(np.asarray(a), np.asarray(b), **kwargs)
    assert isinstance(got, nv.DeviceArray)
    host = got.copy_to_host()
    assert host.shape == want.shape and host.dtype == want.dtype
    if host.dtype.kind == "f" and host.dtype.itemsize >= 4:
        _check_float(host, a, b)
    else:
        np.testing.assert_array_equal(host, want)


@pytest.mark.parametrize("dtype", ["bool", *INT_DTYPES, "float16", "float32", "float64"])
def test_dtypes_against_numpy(dtype):
    a, b = _random((17, 33), dtype), _random((33, 65), dtype)
    got = nv.to_device(a) @ nv.to_device(b)
    _check(got, a, b)
    if dtype.startswith("float"):  # integer-valued data: NumPy's result exactly
        ai, bi = (rng.integers(-8, 9, s).astype(dtype) for s in ((17, 33), (33, 65)))
        got = nv.to_device(ai) @ nv.to_device(bi)
        np.testing.assert_array_equal(got.copy_to_host(), ai @ bi)


def test_float16_is_numpys_float32_sum_rounded_once():
    """NumPy's float16 matmul sums float32 products in k order and rounds once; so does
    the kernel (a float16 accumulator would differ in most elements at this K)."""
    a, b = _random((9, 300), "float16"), _random((300, 11), "float16")
    got = (nv.to_device(a) @ nv.to_device(b)).copy_to_host()
    np.testing.assert_array_equal(got, a @ b)
    acc16 = np.zeros((9, 11), np.float16)
    for k in range(300):
        acc16 = (acc16 + np.outer(a[:, k], b[k, :]).astype(np.float16)).astype(np.float16)
    assert np.mean(got == acc16) < 0.5


@pytest.mark.parametrize("m,k,n", [(1, 1, 1), (17, 33, 65), (128, 64, 96), (65, 1, 3),
                                   (2, 97, 1), (67, 5, 131)])
@pytest.mark.parametrize("dtype", ["float32", "int32"])
def test_sizes(m, k, n, dtype):
    a, b = _random((m, k), dtype), _random((k, n), dtype)
    _check(nv.to_device(a) @ nv.to_device(b), a, b)


def test_empty_operands():
    for sa, sb in [((0, 4), (4, 5)), ((3, 0), (0, 5)), ((2, 0, 3, 4), (4, 5)), ((0,), (0,))]:
        a, b = np.ones(sa, np.float32), np.ones(sb, np.float32)
        got = matmul(nv.to_device(a), nv.to_device(b))
        np.testing.assert_array_equal(got.copy_to_host(), a @ b)


@pytest.mark.parametrize("sa,sb", [
    ((3, 1, 5, 7), (4, 7, 6)),  # leading axes broadcast
    ((2, 5, 7), (7, 6)),
    ((7,), (3, 7, 4)),  # 1-d a: a row, its axis dropped
    ((2, 3, 5, 7), (7,)),  # 1-d b: a column
    ((7,), (7,)),  # a 0-d result
    ((5, 7), (7,)),
    ((7,), (7, 5)),
])
def test_batched_broadcast_and_vectors(sa, sb):
    a, b = _random(sa, "int16"), _random(sb, "int16")
    _check(nv.to_device(a) @ nv.to_device(b), a, b)
    a, b = _random(sa, "float64"), _random(sb, "float64")
    _check(np.matmul(nv.to_device(a), nv.to_device(b)), a, b)


def test_strided_views_in_place():
    """Transposed, sliced and reversed views are read in place (the kernel sees their
    strides), also batch axes that cannot be merged into one."""
    A = nv.to_device(_random((40, 30), "int32"))
    B = nv.to_device(_random((30, 40), "int32"))
    hA, hB = A.copy_to_host(), B.copy_to_host()
    cases = [
        (A.T, B.T, hA.T, hB.T),
        (A[::2, 1:], B[1:, ::-1], hA[::2, 1:], hB[1:, ::-1]),
        (B.T[3:20], A.T[:, 5:9], hB.T[3:20], hA.T[:, 5:9]),
        (A[5], B, hA[5], hB),  # a row of a matrix as a vector
        (A, B[:, 7], hA, hB[:, 7]),  # a column: a strided vector
    ]
    for a, b, ha, hb in cases:
        _check(a @ b, ha, hb)
    S = nv.to_device(_random((2, 6, 5, 7), "float32"))
    T = nv.to_device(_random((2, 3, 7, 4), "float32"))
    hS, hT = S.copy_to_host(), T.copy_to_host()
    _check(S[:, ::2] @ T, hS[:, ::2], hT)  # batch strides (210, 70): not one axis
    _check(S[:, ::2].transpose(1, 0, 2, 3) @ T.transpose(1, 0, 2, 3),
           hS[:, ::2].transpose(1, 0, 2, 3), hT.transpose(1, 0, 2, 3))


def test_mixed_dtypes_promote_as_numpy():
    for da, db in [("int8", "float32"), ("bool", "int8"), ("int32", "float32"),
                   ("uint64", "int64"), ("float16", "float32"), ("uint8", "int8")]:
        a, b = _random((6, 5), da), _random((5, 3), db)
        if np.dtype(da).kind in "iu" and np.result_type(da, db).kind == "f":
            a = (a % 16).astype(da)  # values a float sum holds exactly
        if np.dtype(db).kind in "iu" and np.result_type(da, db).kind == "f":
            b = (b % 16).astype(db)
        got = nv.to_device(a) @ nv.to_device(b)
        want = a @ b
        assert got.dtype == want.dtype, (da, db)
        if want.dtype.kind == "f":
            _check_float(got.copy_to_host(), a.astype(want.dtype), b.astype(want.dtype))
        else:
            np.testing.assert_array_equal(got.copy_to_host(), want)


def test_bfloat16_sums_in_float32():
    """NumPy makes bfloat16 @ bfloat16 a float32 loop (ml_dtypes has no matmul of its own):
    the result is float32, the products exact, summed in float32; an `out` of bfloat16 is
    the float32 result rounded once."""
    bf16 = np.dtype(nv.bfloat16)
    a, b = _random((17, 33), "float32").astype(bf16), _random((33, 65), "float32").astype(bf16)
    got = nv.to_device(a) @ nv.to_device(b)
    assert got.dtype == np.float32 == (a @ b).dtype
    _check_float(got.copy_to_host(), a.astype(np.float32), b.astype(np.float32))
    ai, bi = (rng.integers(-8, 9, s).astype(bf16) for s in ((17, 33), (33, 65)))
    for dtype in (bf16, np.float16, np.float32):
        out = nv.device_array((17, 65), dtype)
        np.matmul(nv.to_device(ai), nv.to_device(bi), out=out)
        np.testing.assert_array_equal(out.copy_to_host(), np.matmul(ai, bi).astype(dtype))
    mixed = nv.to_device(a) @ nv.to_device(_random((33, 4), "float16"))
    assert mixed.dtype == np.float32


def test_dtype_keyword_picks_the_loop():
    a, b = _random((6, 9), "float64"), _random((9, 5), "float64")
    got = np.matmul(nv.to_device(a), nv.to_device(b), dtype=np.float16)  # inputs rounded first
    np.testing.assert_array_equal(got.copy_to_host(), np.matmul(a, b, dtype=np.float16))
    ai, bi = _random((6, 9), "int32"), _random((9, 5), "int32")
    got = np.matmul(nv.to_device(ai), nv.to_device(bi), dtype=np.int8)
    np.testing.assert_array_equal(got.copy_to_host(), np.matmul(ai, bi, dtype=np.int8))


def test_numpy_operands_and_host_out():
    a, b = _random((4, 6), "int32"), _random((6, 3), "int32")
    d = nv.to_device(b)
    _check(a @ d, a, b)  # ndarray @ DeviceArray: __rmatmul__ / __array_ufunc__
    _check(np.matmul(a, d), a, b)
    _check(matmul([[1, 2], [3, 4]], nv.to_device(np.eye(2, dtype=np.int64))),
           np.array([[1, 2], [3, 4]]), np.eye(2, dtype=np.int64))
    host = np.empty((4, 3), np.int64)
    assert np.matmul(nv.to_device(a), d, out=host) is host
    np.testing.assert_array_equal(host, a @ b)


def test_out():
    a, b = _random((2, 5, 6), "float32"), _random((6, 4), "float32")
    da, db = nv.to_device(a), nv.to_device(b)
    out = nv.device_array((2, 5, 4), np.float32)
    assert matmul(da, db, out=out) is out
    _check(out, a, b)
    wide = nv.device_array((2, 5, 4), np.float64)  # float32 loop, cast to float64 at the end
    np.matmul(da, db, out=wide)
    np.testing.assert_array_equal(wide.copy_to_host(), out.copy_to_host().astype(np.float64))
    bigger = nv.device_array((3, 2, 5, 4), np.float32)  # leading axes the operands broadcast to
    np.matmul(da, db, out=bigger)
    for i in range(3):
        np.testing.assert_array_equal(bigger.copy_to_host()[i], out.copy_to_host())
    base = nv.device_array((2, 5, 8), np.float32)  # a strided view as out
    np.matmul(da, db, out=base[:, :, ::2])
    np.testing.assert_array_equal(base.copy_to_host()[:, :, ::2], out.copy_to_host())


def test_in_place_matmul_reads_before_writing():
    a = _random((6, 6), "int64")
    b = _random((6, 6), "int64")
    d = nv.to_device(a)
    d @= nv.to_device(b)
    np.testing.assert_array_equal(d.copy_to_host(), a @ b)
    d = nv.to_device(a)
    np.matmul(d, d, out=d)  # out is both operands
    np.testing.assert_array_equal(d.copy_to_host(), a @ a)
    d = nv.to_device(a)
    np.matmul(d[:3], d, out=d[3:])  # out overlaps an operand's memory
    want = a.copy()
    want[3:] = a[:3] @ a
    np.testing.assert_array_equal(d.copy_to_host(), want)
    x, y = _random((2, 5, 3, 3), "int32"), _random((3, 3), "int32")
    d = nv.to_device(x)
    np.matmul(d[:, :-1], nv.to_device(y), out=d[:, 1:])  # each stack reads the one before
    want = x.copy()
    np.matmul(want[:, :-1], y, out=want[:, 1:])
    np.testing.assert_array_equal(d.copy_to_host(), want)


def test_long_k_is_split():
    """A long k with few workgroups is split into chunks (partials summed in order by a
    second kernel), also past lavapipe's loop cap per invocation: no VulkanLoopLimitError,
    integers exact, floats within the bound."""
    for n in (20_000, 100_000):
        x, y = _random((n,), "int64"), _random((n,), "int64")
        got = nv.to_device(x) @ nv.to_device(y)
        assert got.copy_to_host() == x @ y
    a, b = _random((3, 30_000), "float32"), _random((30_000, 2), "float32")
    _check(nv.to_device(a) @ nv.to_device(b), a, b)


def test_errors_name_the_shapes():
    d = nv.to_device(np.ones((3, 4), np.float32))
    with pytest.raises(ValueError, match=r"\(3, 4\) and \(5, 6\).*4 columns.*5 rows"):
        d @ nv.to_device(np.ones((5, 6), np.float32))
    with pytest.raises(ValueError, match=r"\(3, 4\) and \(5,\)"):
        d @ nv.to_device(np.ones(5, np.float32))
    with pytest.raises(ValueError, match=r"\(2, 3, 4\) and \(3, 4, 5\).*\(2,\) and \(3,\)"):
        nv.to_device(np.ones((2, 3, 4))) @ nv.to_device(np.ones((3, 4, 5)))
    with pytest.raises(ValueError, match="scalar"):
        d @ 2.0
    with pytest.raises(ValueError, match="scalar"):
        matmul(np.float32(2), d)
    with pytest.raises(ValueError, match=r"out has shape \(3, 6\).*\(3, 5\)"):
        matmul(d, nv.to_device(np.ones((4, 5), np.float32)),
               out=nv.device_array((3, 6), np.float32))
    with pytest.raises(ValueError, match=r"out has shape \(3, 1\).*\(3,\)"):
        matmul(d, nv.to_device(np.ones(4, np.float32)), out=nv.device_array((3, 1), np.float32))
    with pytest.raises(TypeError, match="Cannot cast ufunc 'matmul' output from"):
        np.matmul(d, d.T, out=nv.device_array((3, 3), np.int32))
    with pytest.raises(VulkanUnsupportedError, match="complex"):
        d @ nv.to_device(np.ones((4, 2), np.complex64))
    with pytest.raises(TypeError, match="axes="):
        np.matmul(d, d.T, axes=[(0, 1), (0, 1), (0, 1)])
    with pytest.raises(ValueError, match=r"\(3, 4\).*\(3, 5\)"):  # @= needs a square b
        e = nv.to_device(np.ones((3, 4), np.float32))
        e @= nv.to_device(np.ones((4, 5), np.float32))


def test_kernels_compile_once_per_specialisation():
    """Calls of new shapes (and new views of one layout) reuse the compiled kernels: no
    new variant, no new specialisation."""
    def counts():
        return {key: len(k.specialisations) for key, k in kernels._kernels.items()}

    a, b = _random((20, 30), "float32"), _random((30, 10), "float32")
    (nv.to_device(a) @ nv.to_device(b)).copy_to_host()
    before = counts()
    for m, k, n in [(5, 7, 3), (64, 64, 64), (33, 1, 90)]:
        x, y = nv.to_device(_random((m, k), "float32")), nv.to_device(_random((k, n), "float32"))
        _check(x @ y, x.copy_to_host(), y.copy_to_host())
    assert counts() == before


# ---------------------------------------------------------------- units=True: cooperative matrices


def _ints(rng, shape, top=4, dtype=np.float16):
    """Integers in [-top, top] as float16 (or `dtype`): every product and partial sum of the
    tests is exact, so any order of summing gives NumPy's result."""
    return rng.integers(-top, top + 1, shape).astype(dtype)


def _small(v):
    """Variant `v` with blocks of one tile per subgroup: the same generated code (stages,
    slab width, copies, loop and its last step, stores) with other constants, and a
    pipeline that lavapipe builds in 1 to 3 s instead of 5 to 13 (an emulated tile is a
    private array of 256 elements: lavapipe's compile time grows with their number)."""
    return dataclasses.replace(v, name=f"{v.name}-small", bm=v.sg_m * 16, bn=v.sg_n * 16)


@pytest.fixture
def small_default(monkeypatch):
    """matmul(units=True) on the default variant's _small twin: for the float32 result
    (out= of a dtype other than float16), a second pipeline of the default that would
    cost lavapipe 7 s to build; bench_matrix.py checks that kernel on the GPU."""
    v = _small(tiles.VARIANTS[tiles.DEFAULT])
    monkeypatch.setitem(tiles.VARIANTS, v.name, v)
    monkeypatch.setattr(tiles, "DEFAULT", v.name)
    return v


@pytest.mark.parametrize("shape", [(16, 16, 16), (70, 40, 45), (128, 96, 64), (1, 17, 3),
                                   (128, 64, 256), (5, 0, 7)])
def test_units_float16_against_numpy(shape):
    """matmul(units=True): float16 on 16x16x16 tiles (the matrix units, or their emulation
    here), exact on small integers, with the default variant as it is: sides cut by the
    blocks (operands and result through padded buffers), a = 128 x 96 read in place beside
    a padded b, every side a multiple of the block (nothing padded), and k = 0."""
    m, k, n = shape
    rng = np.random.default_rng(sum(shape))
    a, b = _ints(rng, (m, k)), _ints(rng, (k, n))
    got = nv.linalg.matmul(nv.to_device(a), nv.to_device(b), units=True)
    assert got.dtype == np.float16
    np.testing.assert_array_equal(got.copy_to_host(), np.matmul(a, b))


class _Counted:
    """tiles.pad or tiles.unpad, its launches counted in `calls`."""

    def __init__(self, name, calls):
        self.name, self.calls, self.real = name, calls, getattr(tiles, name)

    def forall(self, *args, **kwargs):
        self.calls.append(self.name)
        return self.real.forall(*args, **kwargs)


def _count_copies(monkeypatch):
    calls = []
    for name in ("pad", "unpad"):
        monkeypatch.setattr(tiles, name, _Counted(name, calls))
    return calls


def test_units_aligned_operands_are_not_copied(monkeypatch):
    """Operands and float16 result of the block's sides (C-contiguous, a stack of them,
    one broadcast along it) go straight to the default kernel, which converts its sums to
    float16: no padding copy, no conversion copy."""
    calls = _count_copies(monkeypatch)
    v = tiles.VARIANTS[tiles.DEFAULT]
    rng = np.random.default_rng(5)
    a, b = _ints(rng, (3, v.bm, 2 * v.k_step)), _ints(rng, (2 * v.k_step, v.bn))
    got = nv.linalg.matmul(nv.to_device(a), nv.to_device(b), units=True)
    np.testing.assert_array_equal(got.copy_to_host(), np.matmul(a, b))
    assert calls == []


def test_units_batched_views_and_out(small_default, monkeypatch):
    """Stacks, a transposed operand and out= of other dtypes (the float32 sums converted
    once, to out's dtype), through padded buffers and in place: a float32 out stored by
    the kernel, float64 and bfloat16 through a float32 buffer and the converting copy;
    an operand broadcast along the stack padded once."""
    v = small_default
    rng = np.random.default_rng(11)
    a, b = _ints(rng, (3, 20, 30)), _ints(rng, (10, 30))
    out = nv.device_array((3, 20, 10), np.float32)
    nv.linalg.matmul(nv.to_device(a), nv.to_device(b).T, out=out, units=True)
    np.testing.assert_array_equal(out.copy_to_host(), np.matmul(a, b.T).astype(np.float32))
    a, b = _ints(rng, (2, v.bm, v.k_step)), _ints(rng, (2, v.k_step, 2 * v.bn))
    calls = _count_copies(monkeypatch)
    for dtype in (np.float32, np.float64, nv.bfloat16):
        out = nv.device_array((2, v.bm, 2 * v.bn), dtype)
        nv.linalg.matmul(nv.to_device(a), nv.to_device(b), out=out, units=True)
        np.testing.assert_array_equal(out.copy_to_host(), np.matmul(a, b).astype(dtype))
    assert calls == ["unpad"] * 4
    b1 = _ints(rng, (v.k_step, v.bn - 1))  # padded once for the stack of two
    out = nv.device_array((2, v.bm, v.bn - 1), np.float32)
    nv.linalg.matmul(nv.to_device(a), nv.to_device(b1), out=out, units=True)
    np.testing.assert_array_equal(out.copy_to_host(), np.matmul(a, b1).astype(np.float32))
    assert calls[4:] == ["pad", "unpad", "unpad"]


#: Variants tested as they are (their pipelines build in seconds on lavapipe, or other
#: tests build them); the others as their ``_small`` twins, unless NVK_TEST_FULL_VARIANTS
#: is 1. bench_matrix.py checks every variant as it is on the GPU.
FULL_VARIANTS = {tiles.DEFAULT, "g64", "g128"}


@pytest.mark.parametrize("name", sorted(tiles.VARIANTS))
def test_units_every_variant_against_numpy(name, device, monkeypatch):
    """Each product kernel of linalg/tiles.py (the matrix units' or their emulation here),
    float16 result: blocks cut by the edges, one slab of k and several (odd and even
    counts: the two slabs of two-stage variants in both orders at the end), stacks of two
    products, a transposed operand, operands padded or read in place, the result stored
    through a buffer or in place; exact on small integers. A variant not in FULL_VARIANTS
    runs as its _small twin, as does one that needs more shared memory than the device
    has (lavapipe: 32 KiB), the full one then reported skipped with the reason."""
    v = tiles.VARIANTS[name]
    too_big = v.shared_bytes() > device.info.max_shared_memory
    if too_big or (name not in FULL_VARIANTS and
                   os.environ.get("NVK_TEST_FULL_VARIANTS") != "1"):
        v = _small(v)
        monkeypatch.setitem(tiles.VARIANTS, v.name, v)
    rng = np.random.default_rng(len(name))
    ks = v.k_step
    cases = [(2, 70, 50, 90, True), (1, 33, 7, 130, True),  # padded, b transposed
             (2, 2 * v.bm, 3 * ks, v.bn, False), (1, v.bm, 2 * ks, 2 * v.bn, False)]
    for nb, m, k, n, transposed in cases:
        a = _ints(rng, (nb, m, k), 2)  # sums within float16's integers (k <= 192)
        if transposed:
            bt = _ints(rng, (nb, n, k), 2)
            b, db = bt.transpose(0, 2, 1), nv.to_device(bt).transpose(0, 2, 1)
        else:
            b = _ints(rng, (nb, k, n), 2)
            db = nv.to_device(b)
        out = nv.device_array((nb, m, n), np.float16)
        tiles.run(nv.to_device(a), db, out, device, variant=v.name)
        np.testing.assert_array_equal(out.copy_to_host(), np.matmul(a, b))
    if too_big:
        pytest.skip(f"{name} needs {tiles.VARIANTS[name].shared_bytes()} bytes of shared "
                    f"memory, {device.info.name} has {device.info.max_shared_memory}: "
                    f"tested as {v.name}")


def test_units_column_major_operands_in_place(device, monkeypatch):
    """Operands that are the .T of C-contiguous arrays, of the block's sides, are read in
    place by the staged variants (their copies run along the columns), a and b
    column-major, into a float16 result; exact. On the default's _small twin (the same
    copies). The g variants' source is the same for every layout (column-major tile
    loads: test_matrix.py)."""
    v = _small(tiles.VARIANTS[tiles.DEFAULT])
    monkeypatch.setitem(tiles.VARIANTS, v.name, v)
    calls = _count_copies(monkeypatch)
    rng = np.random.default_rng(3)
    m, k, n = 2 * v.bm, 3 * v.k_step, v.bn
    at, bt = _ints(rng, (k, m)), _ints(rng, (n, k))
    da, db = nv.to_device(at).T, nv.to_device(bt).T
    assert da.is_f_contiguous() and not da.is_contiguous
    out = nv.device_array((1, m, n), np.float16)
    tiles.run(da[None], db[None], out, device, variant=v.name)
    np.testing.assert_array_equal(out.copy_to_host()[0], np.matmul(at.T, bt.T))
    assert calls == []


def test_units_variant_names():
    assert tiles.DEFAULT in tiles.VARIANTS
    x = nv.device_array((1, 16, 16), np.float16)
    with pytest.raises(ValueError, match="no product variant 'nope'; there are g64"):
        tiles.run(x, x, nv.device_array((1, 16, 16), np.float32), nv.get_device(),
                  variant="nope")
    big = dataclasses.replace(tiles.VARIANTS["s128k64"], name="big", bk=256)
    with pytest.raises(ValueError, match="big needs .* bytes of shared memory; .* has"):
        tiles.check_shared_memory(big, nv.get_device())


def test_units_bfloat16_against_numpy(small_default, monkeypatch):
    """Two bfloat16 operands on bfloat16 x bfloat16 + float32 tiles: NumPy's float32 result
    (the float32 product of the same inputs, exact on small integers) and an out= of
    bfloat16 that float32 result rounded once (sums past 256 round: bfloat16 keeps 8
    bits); sides cut by the blocks, a stack with a transposed operand broadcast along it,
    and aligned operands read in place with a float32 result stored in place."""
    bf16 = np.dtype(nv.bfloat16)
    f32 = np.float32
    assert plans.choose(f32, nv.get_device(), True, (bf16, bf16)).operands == "bfloat16"
    assert plans.choose(f32, nv.get_device(), True, (bf16, np.float16)).family == "simt"
    v = small_default
    rng = np.random.default_rng(13)
    a, b = _ints(rng, (70, 50), dtype=bf16), _ints(rng, (50, 90), dtype=bf16)
    got = nv.linalg.matmul(nv.to_device(a), nv.to_device(b), units=True)
    assert got.dtype == np.float32 == np.matmul(a, b).dtype
    np.testing.assert_array_equal(got.copy_to_host(), a.astype(f32) @ b.astype(f32))
    a, b = _ints(rng, (3, 20, 40), dtype=bf16), _ints(rng, (10, 40), dtype=bf16)
    out = nv.device_array((3, 20, 10), bf16)
    nv.linalg.matmul(nv.to_device(a), nv.to_device(b).T, out=out, units=True)
    want = np.matmul(a.astype(f32), b.astype(f32).T).astype(bf16)
    np.testing.assert_array_equal(out.copy_to_host().view(np.uint16), want.view(np.uint16))
    calls = _count_copies(monkeypatch)
    a, b = _ints(rng, (2, v.bm, v.k_step), dtype=bf16), _ints(rng, (v.k_step, v.bn), dtype=bf16)
    got = nv.linalg.matmul(nv.to_device(a), nv.to_device(b), units=True)
    np.testing.assert_array_equal(got.copy_to_host(), np.matmul(a.astype(f32), b.astype(f32)))
    assert calls == []


def test_units_int8_against_numpy(small_default, monkeypatch):
    """Two int8 operands with ``dtype=np.int32`` on int8 x int8 + int32 tiles (16x16x32)
    (and two uint8 ones with ``dtype=np.uint32`` on uint8 tiles):
    NumPy's int32 loop bit for bit over the whole int8 range, sides cut by the blocks, a
    stack with a transposed operand broadcast along it, an out= of int64 and of int16
    (wrapping as NumPy's cast), aligned operands read in place and the result stored in
    place; without dtype= the int8 loop stays on its SIMT kernel; a variant whose slab is
    narrower than the tiles' k is refused by name."""
    i8, i32 = np.dtype(np.int8), np.dtype(np.int32)
    assert plans.choose(i32, nv.get_device(), True, (i8, i8)).operands == "int8"
    assert plans.choose(i8, nv.get_device(), True, (i8, i8)).family == "simt"
    assert plans.choose(i32, nv.get_device(), True, (i8, np.dtype(np.uint8))).family == "simt"
    v = small_default
    rng = np.random.default_rng(17)
    a, b = rng.integers(-128, 128, (70, 100), i8), rng.integers(-128, 128, (100, 50), i8)
    got = nv.linalg.matmul(nv.to_device(a), nv.to_device(b), dtype=np.int32, units=True)
    assert got.dtype == i32
    np.testing.assert_array_equal(got.copy_to_host(), np.matmul(a, b, dtype=np.int32))
    a, b = rng.integers(-128, 128, (3, 20, 40), i8), rng.integers(-128, 128, (10, 40), i8)
    for dtype in (np.int64, np.int16):
        out = nv.device_array((3, 20, 10), dtype)
        nv.linalg.matmul(nv.to_device(a), nv.to_device(b).T, out=out, dtype=np.int32,
                         units=True, casting="unsafe")
        want = np.matmul(a, b.T, dtype=np.int32).astype(dtype)
        np.testing.assert_array_equal(out.copy_to_host(), want)
    calls = _count_copies(monkeypatch)
    k = v.k_step_of("int8")
    a, b = rng.integers(-128, 128, (2, v.bm, k), i8), rng.integers(-128, 128, (k, v.bn), i8)
    got = nv.linalg.matmul(nv.to_device(a), nv.to_device(b), dtype=np.int32, units=True)
    np.testing.assert_array_equal(got.copy_to_host(), np.matmul(a, b, dtype=np.int32))
    assert calls == []
    u8 = np.dtype(np.uint8)
    assert plans.choose(np.dtype(np.uint32), nv.get_device(), True, (u8, u8)).operands == "uint8"
    a, b = rng.integers(0, 256, (40, 70), u8), rng.integers(0, 256, (70, 30), u8)
    got = nv.linalg.matmul(nv.to_device(a), nv.to_device(b), dtype=np.uint32, units=True)
    assert got.dtype == np.uint32
    np.testing.assert_array_equal(got.copy_to_host(), np.matmul(a, b, dtype=np.uint32))
    x = nv.device_array((1, 16, 32), np.int8)
    with pytest.raises(ValueError, match="s128x256 steps k by 16; tiles of int8 multiply 32"):
        tiles.run(x, x.transpose(0, 2, 1), nv.device_array((1, 16, 16), np.int32),
                  nv.get_device(), variant="s128x256", operands="int8")


@pytest.mark.parametrize("name", ["g64", tiles.LARGE, "s128k64"])
def test_units_int8_on_other_variants(name, device, monkeypatch):
    """The int8 kernels of variants other than the default (tiles from device memory with
    k steps of 32, a large block's and a 64-wide slab's, as _small twins where they are
    staged): NumPy's int32 loop over the int8 range, k of one step and of three, a
    transposed operand read in place."""
    v = tiles.VARIANTS[name]
    if v.staging == "shared":
        v = _small(v)
        monkeypatch.setitem(tiles.VARIANTS, v.name, v)
    rng = np.random.default_rng(len(name))
    k = v.k_step_of("int8")
    for m, kk, n in ((v.bm, k, v.bn), (v.bm + 5, 3 * k - 7, 2 * v.bn)):
        a = rng.integers(-128, 128, (1, m, kk), np.int8)
        bt = rng.integers(-128, 128, (1, n, kk), np.int8)
        out = nv.device_array((1, m, n), np.int32)
        tiles.run(nv.to_device(a), nv.to_device(bt).transpose(0, 2, 1), out, device,
                  variant=v.name, operands="int8")
        np.testing.assert_array_equal(out.copy_to_host(),
                                      np.matmul(a, bt.transpose(0, 2, 1), dtype=np.int32))


def test_units_leave_other_loops_to_their_kernel():
    a = np.arange(12, dtype=np.int32).reshape(3, 4)
    got = nv.linalg.matmul(nv.to_device(a), nv.to_device(a.T.copy()), units=True)
    np.testing.assert_array_equal(got.copy_to_host(), a @ a.T)


def test_matmul_chooses_the_large_blocks_for_large_products_on_matrix_units():
    """tiles.choose: 128 x 256 blocks where they make at least LARGE_GROUPS workgroups on
    a device with matrix units (and the shared memory for their slabs), else s128; an
    emulating device (lavapipe) always gets s128."""
    from types import SimpleNamespace

    from numba_vulkan import matrix_shapes

    def device(emulated, shared=48 * 1024):
        shapes = tuple(s._replace(emulated=emulated) for s in matrix_shapes.EMULATED)
        return SimpleNamespace(info=SimpleNamespace(matrix_shapes=shapes, max_shared_memory=shared))

    large, small = tiles.VARIANTS[tiles.LARGE], tiles.DEFAULT
    side = 128 * 16  # 8 x 16 = 128 blocks of 256 x 128: too few
    assert tiles.choose(side, side, device(False)) == small
    assert tiles.choose(2 * side, 2 * side, device(False)) == tiles.LARGE  # 512 blocks
    assert tiles.choose(2 * side, 2 * side, device(True)) == small
    assert tiles.choose(2 * side, 2 * side, device(False, large.shared_bytes() - 1)) == small


def _loop_product(a, b):
    """NumPy's own loop for a (nb, M, K) by (nb, K, N) product: sums over k in increasing
    order from zero, each product and sum rounded in the operands' dtype."""
    c = np.zeros(a.shape[:-1] + b.shape[-1:], a.dtype)
    for k in range(a.shape[-1]):
        c = c + a[..., k:k + 1] * b[..., k:k + 1, :]
    return c


#: blocked.py's kernels with small blocks (the same generated code with other constants):
#: runs of four with two runs per invocation on one side, one run or less on the other;
#: one stage and two; workgroups in bands of up to 4 rows of blocks (tiles.block_origin).
SMALL_BLOCKINGS = [blocked.Blocking("t32", bm=32, bn=32, tm=4, tn=4, bk=4),
                   blocked.Blocking("t64x16", bm=64, bn=16, tm=8, tn=2, bk=4, stages=1),
                   blocked.Blocking("t32w4", bm=32, bn=32, tm=4, tn=4, bk=4, swizzle=4)]


@pytest.mark.parametrize("v", SMALL_BLOCKINGS, ids=lambda v: v.name)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_blocked_is_numpys_loop_bit_for_bit(v, dtype, device, monkeypatch):
    """linalg/blocked.py's kernel: NumPy's loop order bit for bit, padded sides (edges of
    the blocks and of k; a padded k adds +0.0 products), sides of whole blocks read and
    written in place, a column-major operand in place, a stack with one operand broadcast
    along it, and infinities and NaNs where the padding meets them."""
    monkeypatch.setitem(blocked.BLOCKINGS, v.name, v)
    rng = np.random.default_rng(7)
    cases = [(1, 37, 9, 50, False), (2, v.bm, 3 * v.bk, 2 * v.bn, False),
             (1, 2 * v.bm, 2 * v.bk, v.bn, True), (3, 20, 5, 11, False),
             (1, 4 * v.bm - 3, 7, 3 * v.bn, False)]  # 4 rows of blocks: a band of 4
    for nb, m, k, n, transposed in cases:
        a = rng.standard_normal((nb, m, k)).astype(dtype)
        b = rng.standard_normal((1 if nb == 3 else nb, k, n)).astype(dtype)
        a[0, 0, -1], a[0, 1, 0] = np.inf, np.nan
        da = nv.to_device(a)
        if transposed:  # a column-major b (the .T of a C-contiguous array)
            db = nv.to_device(np.ascontiguousarray(b.transpose(0, 2, 1))).transpose(0, 2, 1)
        else:
            db = broadcast_to(nv.to_device(b), (nb, k, n))  # stride 0 where b is one
        out = nv.device_array((nb, m, n), dtype)
        blocked.run(da, db, out, device, blocking=v.name)
        want = _loop_product(a, np.broadcast_to(b, (nb, k, n)))
        np.testing.assert_array_equal(out.copy_to_host(), want)


def test_blocked_refuses_what_it_cannot_take(device):
    x = nv.device_array((1, 8, 8), np.float32)
    with pytest.raises(ValueError, match="no blocking 'nope'; there are b128"):
        blocked.run(x, x, x, device, blocking="nope")
    with pytest.raises(ValueError, match="does not divide into runs"):
        blocked.Blocking("bad", bm=48, tm=6)
    v = blocked.BLOCKINGS["b128k16"]  # 67,584 bytes of float64 slabs
    if v.shared_bytes(8) > device.info.max_shared_memory:
        with pytest.raises(ValueError, match="needs 67584 bytes of shared memory"):
            blocked.run(nv.device_array((1, 8, 8)), nv.device_array((1, 8, 8)),
                        nv.device_array((1, 8, 8)), device, blocking="b128k16")


@pytest.mark.parametrize("contract", [False, True])
def test_matmul_on_the_blocked_kernel(contract, device, monkeypatch):
    """matmul's "blocked" plan (GPUs' float32 and float64 loops; lavapipe runs the SIMT
    kernel, faster there, so the plan is forced here): products of enough blocks on
    blocked.py's kernel, bit for bit the SIMT kernel's sums; others (a result of another
    dtype, too few blocks, a k that the SIMT kernel splits) on the SIMT kernel. With
    `contract` (products fused into their sums where the driver fuses) within the bound."""
    v = SMALL_BLOCKINGS[0]
    monkeypatch.setitem(blocked.BLOCKINGS, v.name, v)
    monkeypatch.setattr(blocked, "DEFAULT", v.name)
    monkeypatch.setattr(blocked, "MIN_GROUPS", 4)
    choose = plans.choose

    def forced(loop, dev, **kwargs):
        plan = choose(loop, dev, **kwargs)
        return dataclasses.replace(plan, family="blocked") if plan.family == "simt" else plan

    monkeypatch.setattr(plans, "choose", forced)
    ran = []
    real_run = blocked.run
    monkeypatch.setattr(blocked, "run", lambda *a, **k: ran.append(k) or real_run(*a, **k))
    rng = np.random.default_rng(3)
    a = rng.standard_normal((70, 40)).astype(np.float32)
    b = rng.standard_normal((40, 90)).astype(np.float32)
    got = matmul(nv.to_device(a), nv.to_device(b), contract=contract)
    assert ran == [{"contract": contract}]
    if contract:
        _check_float(got.copy_to_host(), a, b)
    else:
        np.testing.assert_array_equal(got.copy_to_host(), _loop_product(a, b))
    ran.clear()
    out = nv.device_array((70, 90), np.float64)  # the result cast: the SIMT kernel
    matmul(nv.to_device(a), nv.to_device(b), out=out)
    small = matmul(nv.to_device(a[:20]), nv.to_device(b[:, :20]))  # one block
    assert ran == []
    np.testing.assert_array_equal(out.copy_to_host(), _loop_product(a, b).astype(np.float64))
    np.testing.assert_array_equal(small.copy_to_host(), _loop_product(a[:20], b[:, :20]))

    def no_room(*args, **kwargs):  # the padded copies do not fit: the SIMT kernel needs none
        ran.append("no room")
        raise MemoryError("out of device memory")

    monkeypatch.setattr(blocked, "run", no_room)
    got = matmul(nv.to_device(a), nv.to_device(b))
    assert ran == ["no room"]
    np.testing.assert_array_equal(got.copy_to_host(), _loop_product(a, b))


def test_units_workgroups_in_bands(device, monkeypatch):
    """A matrix-unit kernel whose workgroups take bands of rows of blocks (``swizzle``,
    tiles.block_origin): bands of 4, of 2 (6 rows of blocks) and of 1 (3 rows), exact;
    the launch grid covers every block once."""
    v = dataclasses.replace(_small(tiles.VARIANTS[tiles.DEFAULT]), name="banded", swizzle=4)
    monkeypatch.setitem(tiles.VARIANTS, v.name, v)
    assert [tiles.band(rows, 4) for rows in (4, 6, 3, 8)] == [4, 2, 1, 4]
    assert tiles.grid(4 * v.bm, 3 * v.bn, v.bm, v.bn, 4) == (12, 1)
    rng = np.random.default_rng(9)
    for rows in (4, 6, 3):
        m, k, n = rows * v.bm - 5, 2 * v.k_step, 3 * v.bn
        a, b = _ints(rng, (1, m, k), 2), _ints(rng, (1, k, n), 2)
        out = nv.device_array((1, m, n), np.float16)
        tiles.run(nv.to_device(a), nv.to_device(b), out, device, variant=v.name)
        np.testing.assert_array_equal(out.copy_to_host(), np.matmul(a, b))
    with pytest.raises(ValueError, match="3 is not a power of 2"):
        dataclasses.replace(v, swizzle=3)


def test_blocked_default_as_gpus_run_it(device):
    """blocked.DEFAULT itself (the kernel matmul runs on GPUs; lavapipe builds it in about
    2 s), contracted and not, on two blocks with a padded k: NumPy's loop bit for bit
    without `contract`, within the bound with it."""
    v = blocked.BLOCKINGS[blocked.DEFAULT]
    rng = np.random.default_rng(21)
    a = rng.standard_normal((1, v.bm, 13)).astype(np.float32)
    b = rng.standard_normal((1, 13, 2 * v.bn)).astype(np.float32)
    for contract in (False, True):
        out = nv.device_array((1, v.bm, 2 * v.bn), np.float32)
        blocked.run(nv.to_device(a), nv.to_device(b), out, device, contract=contract)
        if contract:
            _check_float(out.copy_to_host(), a, b)
        else:
            np.testing.assert_array_equal(out.copy_to_host(), _loop_product(a, b))
