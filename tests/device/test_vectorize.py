"""vectorize / guvectorize with target="vulkan" (Numba's decorators and nv.*), against NumPy
and against the same functions compiled for the CPU by Numba."""

import math

import numba
import numpy as np
import pytest

import numba_vulkan as nv
from numba_vulkan import cuda


@numba.vectorize(["float32(float32, float32)", "float64(float64, float64)"], target="vulkan")
def hypot_v(a, b):
    return math.sqrt(a * a + b * b)


@numba.vectorize(["float32(float32, float32)", "float64(float64, float64)"])
def hypot_cpu(a, b):
    return math.sqrt(a * a + b * b)


def test_numba_vectorize_target_vulkan_on_numpy(device):
    x = np.linspace(-3, 3, 101, dtype=np.float32)
    r = hypot_v(x, np.float32(4))
    assert isinstance(r, np.ndarray) and r.dtype == np.float32
    np.testing.assert_array_equal(r, hypot_cpu(x, np.float32(4)))
    r64 = hypot_v(x.astype(np.float64), 4.0)
    assert r64.dtype == np.float64
    np.testing.assert_array_equal(r64, hypot_cpu(x.astype(np.float64), 4.0))
    # A weak Python float fits the float32 signature, chosen first (NumPy's loop search).
    assert hypot_v(x, 4.0).dtype == np.float32
    # int32 is not float32-safe, but float64-safe: the float64 signature.
    assert hypot_v(np.arange(3, dtype=np.int32), np.float64(1)).dtype == np.float64
    assert hypot_v.types == ["ff->f", "dd->d"]


def test_device_arrays_broadcasting_and_out(device):
    a = np.arange(12, dtype=np.float64).reshape(3, 4)
    b = np.arange(4, dtype=np.float64)
    d = nv.to_device(a)
    r = hypot_v(d, b)  # device and host operands: a device result
    assert isinstance(r, nv.DeviceArray) and r.shape == (3, 4)
    np.testing.assert_array_equal(r.copy_to_host(), hypot_cpu(a, b))
    out = nv.device_array((2, 3, 4), np.float64)
    assert hypot_v(a, b[::-1], out=out) is out  # out shape (2, 3, 4): inputs broadcast to it
    expected = np.broadcast_to(hypot_cpu(a, b[::-1]), (2, 3, 4))
    np.testing.assert_array_equal(out.copy_to_host(), expected)
    host_out = np.empty((3, 4))
    assert hypot_v(a, 1.0, out=host_out) is host_out
    np.testing.assert_array_equal(host_out, hypot_cpu(a, 1.0))
    # A strided, transposed view and a scalar; rank 5 is cut into launches.
    np.testing.assert_array_equal(hypot_v(d.T[::2], 2.0).copy_to_host(), hypot_cpu(a.T[::2], 2.0))
    five = np.arange(2 * 2 * 3 * 2 * 5, dtype=np.float32).reshape(2, 2, 3, 2, 5)[..., ::2]
    np.testing.assert_array_equal(hypot_v(five, np.float32(1)), hypot_cpu(five, np.float32(1)))
    assert hypot_v(3.0, 4.0) == 5.0
    s = nv.stream()
    on_stream = hypot_v(d, d, stream=s)
    s.synchronize()
    np.testing.assert_array_equal(on_stream.copy_to_host(), hypot_cpu(a, a))
    np.testing.assert_array_equal(hypot_v(a, a, stream=0), hypot_cpu(a, a))
    with pytest.raises(ValueError):
        hypot_v(a, np.ones(3))
    with pytest.raises(TypeError, match="no signature"):
        hypot_v(np.ones(2, np.complex128), 1.0)


def test_lazy_vectorize_types_follow_numba(device):
    @nv.vectorize
    def poly(x, y):
        return x * x - 3 * y + 1

    @numba.vectorize
    def poly_cpu(x, y):
        return x * x - 3 * y + 1

    @numba.vectorize(target="vulkan")  # Numba's decorator without signatures
    def poly_numba(x, y):
        return x * x - 3 * y + 1

    x4 = np.arange(4.0)
    np.testing.assert_array_equal(poly_numba(x4, 1.0), x4 * x4 - 3 * 1.0 + 1)

    @numba.guvectorize("(n)->()", target="vulkan")  # dynamic: the output is passed
    def total(a, out):
        out[0] = 0
        for v in a:
            out[0] += v

    out = np.zeros(3)
    total(np.arange(12.0).reshape(3, 4), out)
    np.testing.assert_array_equal(out, np.arange(12.0).reshape(3, 4).sum(axis=1))

    for x, y in [(np.arange(-5, 5, dtype=np.int8), np.int8(2)),
                 (np.arange(10, dtype=np.uint64), np.arange(10, dtype=np.uint64)),
                 (np.linspace(0, 1, 7, dtype=np.float32), 2)]:  # fmt: skip
        ours, ref = poly(x, y), poly_cpu(x, y)
        assert ours.dtype == ref.dtype, (x.dtype, ours.dtype, ref.dtype)
        np.testing.assert_array_equal(ours, ref)


def test_vectorize_spellings_and_reduce(device):
    @nv.vectorize(["int64(int64, int64)", "float64(float64, float64)"], identity=0)
    def add(a, b):
        return a + b

    @cuda.vectorize("float32(float32)")
    def twice(x):
        return 2 * x

    assert twice(np.float32([1, 2])).tolist() == [2.0, 4.0]
    x = np.arange(1001, dtype=np.int64)
    assert add.reduce(x) == x.sum()
    assert add.reduce(nv.to_device(x)) == x.sum()
    assert add.reduce(np.zeros(0, np.int64)) == 0
    assert add.reduce(np.arange(12.0).reshape(3, 4), axis=None) == 66.0


def test_kernels_are_cached_per_signature(device):
    @nv.vectorize(["float32(float32)"])
    def inc(x):
        return x + 1

    x = np.ones(8, np.float32)
    inc(x)
    from numba_vulkan.ufunc import elementwise

    before = len(elementwise._kernels)
    for _ in range(3):
        inc(x)
        inc(nv.to_device(x))
    assert len(elementwise._kernels) == before


@numba.guvectorize(["void(float32[:], float32[:], float32[:])",
                    "void(float64[:], float64[:], float64[:])"],
                   "(n),(n)->()", target="vulkan")  # fmt: skip
def dot_v(a, b, out):
    s = 0.0
    for i in range(a.shape[0]):
        s += a[i] * b[i]
    out[0] = s


def test_guvectorize(device):
    a = np.arange(24, dtype=np.float32).reshape(2, 4, 3)
    b = np.arange(3, dtype=np.float32)
    r = dot_v(a, b)
    assert r.dtype == np.float32 and r.shape == (2, 4)
    np.testing.assert_array_equal(r, a @ b)
    d = dot_v(nv.to_device(a.astype(np.float64)), b.astype(np.float64))
    assert isinstance(d, nv.DeviceArray)
    np.testing.assert_array_equal(d.copy_to_host(), a.astype(np.float64) @ b)
    ints = dot_v(nv.to_device(a.astype(np.int32)), b.astype(np.float64))  # converted on device
    assert ints.dtype == np.float64
    np.testing.assert_array_equal(ints.copy_to_host(), a.astype(np.float64) @ b)
    out = np.empty((2, 4), np.float32)
    dot_v(a, b, out)
    np.testing.assert_array_equal(out, a @ b)

    @nv.guvectorize(["void(float64[:,:], float64[:,:], float64[:,:])"], "(m,n),(n,p)->(m,p)")
    def matmul(A, B, C):
        for i in range(A.shape[0]):
            for j in range(B.shape[1]):
                s = 0.0
                for k in range(A.shape[1]):
                    s += A[i, k] * B[k, j]
                C[i, j] = s

    A = np.random.default_rng(0).random((5, 2, 3))
    B = np.random.default_rng(1).random((3, 4))
    np.testing.assert_allclose(matmul(A, B), A @ B, rtol=1e-15)

    @nv.guvectorize(["void(float64[:], float64, float64[:])"], "(n),()->(n)")
    def scale(x, a, out):
        for i in range(x.shape[0]):
            out[i] = a * x[i]

    x = np.arange(8.0).reshape(2, 4)
    np.testing.assert_array_equal(scale(x, 3.0), x * 3)
    np.testing.assert_array_equal(scale(x, np.array([1.0, 2.0])[:, None][:, 0]), x * [[1], [2]])
    with pytest.raises(ValueError, match="core dimension"):
        dot_v(a, np.ones(4, np.float32))
    with pytest.raises(NameError, match="undefined output symbols"):  # Numba's layout parser
        nv.guvectorize(["void(float64[:], float64[:])"], "()->(n)")(lambda a, o: None)(1.0)


def test_kernel_cache_never_confuses_functions(device):
    """Functions made one after another (a new one may reuse a dead one's id()) keep their
    own kernels."""
    x = np.arange(4, dtype=np.float64)
    for k in range(3):
        f = nv.vectorize(["float64(float64)"])(eval(f"lambda v: v + {k}"))
        np.testing.assert_array_equal(f(x), x + k)
        del f


def test_foreign_ufuncs_are_refused_on_device_arrays(device):
    cpu = numba.vectorize(["float64(float64)"])(lambda v: v * 2)
    with pytest.raises(TypeError, match="NumPy's ufuncs"):
        cpu(nv.to_device(np.ones(3)))


def test_guvectorize_refuses_a_return_type_and_nopython_false():
    """A gufunc's outputs are its arguments: a signature with a return type would lose the
    value, and nopython=False cannot be honoured; both raise TypeError (numba.cuda's words)
    instead of being accepted and ignored."""
    from numba import float32, int32, void

    def f(x, y):
        for i in range(x.shape[0]):
            y[i] = x[0] + i

    with pytest.raises(TypeError, match="cannot return values.*specifies int32 return type"):
        nv.guvectorize([int32(int32[:], int32[:])], "(m)->(m)")(f)
    with pytest.raises(TypeError, match="nopython flag must be True"):
        nv.guvectorize([void(float32[:], float32[:])], "(m)->(m)", nopython=False)(f)
    g = nv.guvectorize([void(float32[:], float32[:])], "(m)->(m)", nopython=True)(f)
    np.testing.assert_array_equal(g(np.arange(3, dtype=np.float32) + 5), [5, 6, 7])
