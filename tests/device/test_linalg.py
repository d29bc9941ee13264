"""numba_vulkan.linalg.matmul, ``np.matmul`` and ``@`` on device arrays, against NumPy.

Integers and bool: bit for bit with NumPy's matmul (wrap-around included). float16: bit
for bit too, where k is not split (NumPy's float16 loop sums float32 products in k
order and rounds once, as the kernel does). float32 and float64: within the standard
bound of a sum of K products, |computed - exact| <= gamma_K * (|A| @ |B|) with
gamma_K = K u / (1 - K u), u the unit roundoff (2^-24, 2^-53), the exact product
taken from a wider type (its own gamma added); and exactly NumPy's result on
integer-valued data, whose sums are exact in any order.
"""


import numpy as np
import pytest
from _linalg_bounds import _check_float

import numba_vulkan as nv
from numba_vulkan.errors import VulkanUnsupportedError
from numba_vulkan.linalg import kernels, matmul, products

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


@pytest.mark.parametrize("along_k", [False, True], ids=["thin", "dots"])
def test_long_k_is_split(along_k, monkeypatch):
    """A long k is split into chunks (partials summed by a second kernel), also past
    lavapipe's loop cap per invocation: no VulkanLoopLimitError, integers exact, floats
    within the bound; for few outputs (vectors, 6 elements: the thin kernel or the dots
    kernel, forced here, whose 98 chunks of a dot product of 100,000 a tree adds) and for
    a block of 400 (the tiled kernel, k split to occupy more workgroups)."""
    monkeypatch.setattr(products, "_along_k", lambda *args: along_k)
    for n in (20_000, 100_000):
        x, y = _random((n,), "int64"), _random((n,), "int64")
        got = nv.to_device(x) @ nv.to_device(y)
        assert got.copy_to_host() == x @ y
    for shape in ((3, 30_000, 2), (20, 3_000, 20)):
        for dtype in ("float32", "int32"):
            a, b = _random(shape[:2], dtype), _random(shape[1:], dtype)
            _check(nv.to_device(a) @ nv.to_device(b), a, b)


@pytest.mark.parametrize("along_k", [False, True], ids=["thin", "dots"])
@pytest.mark.parametrize("dtype", ["bool", *INT_DTYPES, "float16", "float32", "float64"])
def test_few_outputs_against_numpy(dtype, along_k, monkeypatch):
    """Products of few outputs take the thin kernel (an invocation per output and chunk
    of k) or, on GPUs, the dots kernel (a workgroup per output and chunk, a tree adding
    its invocations' sums), each forced here: a row times a matrix, a matrix times a
    column, a 3 x 2 result with k in chunks (3,000: float16's integer-valued data, exact
    in any order), a stack of them, a transposed matrix times a column, a k shorter than
    the dots kernel's workgroup; every dtype's loop as NumPy's."""
    monkeypatch.setattr(products, "_along_k", lambda *args: along_k)
    for sa, sb in (((70,), (70, 40)), ((50, 70), (70, 1)), ((3, 3_000), (3_000, 2)),
                   ((4, 2, 90), (4, 90, 3)), ((5,), (5, 3))):
        a, b = _random(sa, dtype), _random(sb, dtype)
        if dtype == "float16":
            a, b = (rng.integers(-3, 4, s).astype(dtype) for s in (sa, sb))
        _check(nv.to_device(a) @ nv.to_device(b), a, b)
    at, b = _random((300, 40), dtype), _random((300, 1), dtype)
    if dtype == "float16":
        at, b = (rng.integers(-3, 4, x.shape).astype(dtype) for x in (at, b))
    _check(nv.to_device(at).T @ nv.to_device(b), at.T, b)


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
    new variant, no new specialisation (of the tiled kernel, and of the thin one for
    products of few outputs)."""
    def counts():
        return {key: len(k.specialisations) for key, k in kernels._kernels.items()}

    for shape in ((20, 30, 10), (40, 30, 50)):  # thin (200 outputs), tiled
        a, b = _random(shape[:2], "float32"), _random(shape[1:], "float32")
        (nv.to_device(a) @ nv.to_device(b)).copy_to_host()
    before = counts()
    for m, k, n in [(5, 7, 3), (64, 64, 64), (33, 1, 90), (1, 50, 7), (300, 20, 1)]:
        x, y = nv.to_device(_random((m, k), "float32")), nv.to_device(_random((k, n), "float32"))
        _check(x @ y, x.copy_to_host(), y.copy_to_host())
    assert counts() == before
