"""``arr.dtype`` in kernels: a compile-time value, as numba.njit types it (``DType``).

numba.cuda programs size scratch arrays by their input's type,
``cuda.local.array(4, dtype=x.dtype)`` or ``cuda.shared.array((16, 16), x.dtype)``; the
front end keeps ``x.dtype`` as a constant (no KIR), which local/shared arrays and
``np.empty/zeros/full`` take as their dtype. ``x.dtype == y.dtype``, ``x.dtype is y.dtype``,
``x.dtype.kind == 'f'`` and ``x.dtype.type(v)`` are constants or casts, compared with
numba.njit of the same function; what njit refuses (``!=`` of dtypes, ``.itemsize``) is
refused with an error naming it."""

import numba
import numpy as np
import pytest

import numba_vulkan as nv
from numba_vulkan import cuda
from numba_vulkan.errors import VulkanUnsupportedError

pytestmark = [pytest.mark.device, pytest.mark.usefixtures("device")]

DTYPES = [np.float32, np.float64, np.int32, np.int64, np.uint8]
N = 16
TILE = 8


def _input(dtype, n=N):
    return (np.arange(n) % 50 + 1).astype(dtype)


# ---------------------------------------------------------------- local arrays


@nv.jit
def local_of_input_dtype(x, out):
    i = nv.global_id(0)
    if i < x.shape[0]:
        t = nv.local.array(4, dtype=x.dtype)
        for j in range(4):
            t[j] = x[i] + j
        out[i] = t[0] * 2 + t[3]


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_local_array_of_input_dtype(dtype):
    x = _input(dtype)
    out = np.zeros_like(x)
    local_of_input_dtype[1, N](x, out)
    wide = x.astype(np.int64)  # small integers: exact in every dtype here (at most 153)
    np.testing.assert_array_equal(out, (wide * 2 + wide + 3).astype(dtype))


@nv.jit
def local_positional_2d(x, out):
    i = nv.global_id(0)
    if i < x.shape[0]:
        t = nv.local.array((2, 3), x.dtype)  # positional dtype, 2-d
        for r in range(2):
            for c in range(3):
                t[r, c] = x[i] + r * 3 + c
        out[i] = t[1, 2] - t[0, 0]  # 5 in the element type


@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.uint8],
                         ids=lambda d: np.dtype(d).name)  # fmt: skip
def test_local_2d_array_dtype_positional(dtype):
    x = _input(dtype)
    out = np.zeros_like(x)
    local_positional_2d[1, N](x, out)
    np.testing.assert_array_equal(out, np.full(N, 5, dtype))


# ---------------------------------------------------------------- np.empty/zeros/full, njit


def numpy_likes(x, i):
    e = np.empty(4, dtype=x.dtype)
    z = np.zeros(4, x.dtype)
    f = np.full(3, 2, x.dtype)
    for j in range(4):
        e[j] = x[i] + j
    return e[3] + z[1] + f[2] + e.sum()


numpy_likes_dev = nv.jit(numpy_likes)
numpy_likes_cpu = numba.njit(numpy_likes)


@nv.jit
def numpy_likes_kernel(x, out):
    i = nv.global_id(0)
    if i < x.shape[0]:
        out[i] = numpy_likes_dev(x, i)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_numpy_constructors_take_input_dtype_as_njit(dtype):
    x = _input(dtype)
    out = np.zeros(N, np.float64)
    numpy_likes_kernel[1, N](x, out)
    expect = np.array([numpy_likes_cpu(x, i) for i in range(N)], np.float64)
    np.testing.assert_array_equal(out, expect)


# ---------------------------------------------------------------- shared arrays: a 2-d tile


@nv.jit
def transpose_tile(a, out):
    tile = nv.shared.array((TILE, TILE + 1), a.dtype)  # padded tile of the input's dtype
    x, y = nv.local_id(0), nv.local_id(1)
    bx, by = nv.group_id(0) * TILE, nv.group_id(1) * TILE
    tile[y, x] = a[by + y, bx + x]
    nv.barrier()
    out[bx + y, by + x] = tile[x, y]


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.uint8],
                         ids=lambda d: np.dtype(d).name)  # fmt: skip
def test_shared_2d_tile_of_input_dtype(dtype):
    a = (np.arange(16 * 24) % 251).astype(dtype).reshape(16, 24)
    out = np.zeros((24, 16), dtype)
    transpose_tile[(3, 2), (TILE, TILE)](a, out)
    np.testing.assert_array_equal(out, a.T)


# ---------------------------------------------------------------- the numba.cuda spelling


@cuda.jit(device=True)
def cuda_product(a, dt):
    tmp = cuda.local.array(shape=2, dtype=dt)  # a dtype passed to a device function
    tmp[0] = a[0]
    tmp[1] = a[1]
    return tmp[0] * tmp[1]


@cuda.jit
def cuda_reverse(x, out):
    tid = cuda.threadIdx.x
    i = cuda.grid(1)
    tmp = cuda.local.array(4, dtype=x.dtype)
    s = cuda.shared.array(shape=(2, 32), dtype=x.dtype)
    s[0, tid] = x[i]
    cuda.syncthreads()
    tmp[0] = s[0, cuda.blockDim.x - 1 - tid]
    out[i] = tmp[0] + cuda_product(x, x.dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.int64], ids=lambda d: np.dtype(d).name)
def test_cuda_layer_local_and_shared_of_x_dtype(dtype):
    x = _input(dtype, 64)
    out = np.zeros_like(x)
    cuda_reverse[2, 32](x, out)
    expect = x.reshape(2, 32)[:, ::-1].ravel() + x[0] * x[1]
    np.testing.assert_array_equal(out, expect)


# ---------------------------------------------------------------- other uses, against njit


def dtype_facts(x, y, out):
    out[0] = x.dtype == y.dtype
    out[1] = x.dtype is y.dtype
    out[2] = x.dtype.kind == "f"
    out[3] = x.dtype.type(2.75)  # np.float32(2.75), np.int32(2.75)...
    if x.dtype == y.dtype:
        out[4] = 1
    else:
        out[4] = 2


dtype_facts_kernel = nv.jit(dtype_facts)
dtype_facts_cpu = numba.njit(dtype_facts)


@pytest.mark.parametrize("pair", [(np.float32, np.float32), (np.float32, np.int32),
                                  (np.int64, np.int64), (np.uint8, np.float64)],
                         ids=lambda p: f"{np.dtype(p[0]).name}-{np.dtype(p[1]).name}")  # fmt: skip
def test_compare_is_kind_and_type_as_njit(pair):
    x, y = np.zeros(2, pair[0]), np.zeros(3, pair[1])
    out = np.zeros(5, np.float64)
    expect = np.zeros(5, np.float64)
    dtype_facts_kernel[1, 1](x, y, out)
    dtype_facts_cpu(x, y, expect)
    np.testing.assert_array_equal(out, expect)


@nv.jit
def string_dtypes(out):
    t = nv.local.array(2, "float32")  # numba.cuda takes dtype names too
    z = np.zeros(2, "int16")
    t[0] = 1.5
    t[1] = z[1]
    out[0] = t[0] + t[1]


def test_dtype_names_as_strings():
    out = np.zeros(1, np.float32)
    string_dtypes[1, 1](out)
    assert out[0] == 1.5


# ---------------------------------------------------------------- refusals name the feature


def test_local_array_of_complex_dtype():
    @nv.jit
    def k(x, out):
        t = nv.local.array(2, x.dtype)
        t[0] = x[0]
        t[1] = x[1] * 2j
        out[0] = t[0] + t[1]

    x = np.array([1 + 2j, 3 - 1j], np.complex64)
    out = np.zeros(1, np.complex64)
    k[1, 1](x, out)
    assert out[0] == x[0] + x[1] * 2j


def test_what_njit_refuses_is_refused_naming_dtype():
    @nv.jit
    def ne(x, y, out):
        out[0] = x.dtype != y.dtype  # njit has no != of dtypes either

    @nv.jit
    def itemsize(x, out):
        out[0] = x.dtype.itemsize  # nor dtype.itemsize (x.itemsize works)

    x, y = np.zeros(1, np.float32), np.zeros(1, np.int32)
    with pytest.raises(VulkanUnsupportedError, match=r"dtype\(float32\)"):
        ne[1, 1](x, y, np.zeros(1, np.int32))
    with pytest.raises(VulkanUnsupportedError, match=r"'\.itemsize' of dtype\(float32\)"):
        itemsize[1, 1](x, np.zeros(1, np.int32))
