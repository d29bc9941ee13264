"""Arrays in kernels against NumPy: dtypes, 1-3 dimensions, indexing, shapes,
host and device arrays, and whole programs (saxpy, stencil, Mandelbrot).

Float results are compared bit for bit: the programs here use only +, -, *
and comparisons, which the Vulkan environment for SPIR-V requires to be
correctly rounded (appendix "Precision and Operation of SPIR-V Instructions"),
and numba_vulkan neither contracts nor reassociates them without `fastmath`.
"""

import numpy as np
import pytest
from conftest import requires_feature

import numba_vulkan as nv

pytestmark = [pytest.mark.device, pytest.mark.usefixtures("device")]

RNG = np.random.default_rng(7)

DTYPES = [np.bool_, np.int32, np.int64, np.uint32, np.float32, np.float64]
SHAPES = [(37,), (5, 9), (3, 4, 6)]


def sample(shape, dtype):
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return RNG.integers(0, 2, shape).astype(bool)
    if dtype.kind in "iu":
        # Full 32-bit range: copies must not lose bits even where arithmetic is narrowed.
        info = np.iinfo(np.int32 if dtype.kind == "i" else np.uint32)
        return RNG.integers(info.min, info.max, shape, dtype=np.int64).astype(dtype)
    return RNG.standard_normal(shape).astype(dtype) * 1000


def _feature_marks(dtype):
    if dtype is np.float64:
        return [requires_feature("float64")]
    if dtype is np.int64:
        return [requires_feature("int64")]
    return []


DTYPE_PARAMS = [pytest.param(d, marks=_feature_marks(d), id=np.dtype(d).name) for d in DTYPES]


@nv.jit
def copy1(a, out):
    i = nv.global_id(0)
    if i < a.shape[0]:
        out[i] = a[i]


@nv.jit
def copy2(a, out):
    i = nv.global_id(0)
    j = nv.global_id(1)
    if i < a.shape[0] and j < a.shape[1]:
        out[i, j] = a[i, j]


@nv.jit
def copy3(a, out):
    i = nv.global_id(0)
    j = nv.global_id(1)
    k = nv.global_id(2)
    if i < a.shape[0] and j < a.shape[1] and k < a.shape[2]:
        out[i, j, k] = a[i, j, k]


COPY = {1: copy1, 2: copy2, 3: copy3}


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: f"{len(s)}d")
@pytest.mark.parametrize("dtype", DTYPE_PARAMS)
def test_copy_every_dtype_and_rank(dtype, shape):
    a = sample(shape, dtype)
    out = np.zeros(shape, dtype)
    COPY[len(shape)].forall(shape)(a, out)
    np.testing.assert_array_equal(out, a)
    assert out.dtype == np.dtype(dtype)


@nv.jit
def scale_in_place(a):
    i = nv.global_id(0)
    if i < a.size:
        a[i] = a[i] * 3 - 1


@pytest.mark.parametrize("dtype", [np.int32, np.float32])
def test_numpy_argument_is_copied_back(dtype):
    a = np.arange(-20, 20).astype(dtype)
    want = a * 3 - 1
    scale_in_place.forall(a.size)(a)
    np.testing.assert_array_equal(a, want)


@nv.jit
def negative_indices_1d(a, out):
    i = nv.global_id(0)
    n = a.shape[0]
    if i < n:
        out[i, 0] = a[-1 - i]  # reversed
        out[i, 1] = a[i - n]  # the same element
        out[-1 - i, 2] = a[i]  # negative index on the written side


def test_negative_index_wraparound_1d():
    a = np.arange(11, dtype=np.int32) * 10
    out = np.zeros((11, 3), np.int32)
    negative_indices_1d.forall(11)(a, out)
    np.testing.assert_array_equal(out[:, 0], a[::-1])
    np.testing.assert_array_equal(out[:, 1], a)
    np.testing.assert_array_equal(out[:, 2], a[::-1])


@nv.jit
def negative_indices_3d(a, out):
    i = nv.global_id(0)
    j = nv.global_id(1)
    k = nv.global_id(2)
    if i < a.shape[0] and j < a.shape[1] and k < a.shape[2]:
        out[i, j, k] = a[-1 - i, j - a.shape[1], -a.shape[2] + k] + a[-1, -1, -1]


def test_negative_index_wraparound_3d():
    a = np.arange(2 * 3 * 5, dtype=np.float32).reshape(2, 3, 5)
    out = np.zeros_like(a)
    negative_indices_3d.forall(a.shape)(a, out)
    np.testing.assert_array_equal(out, a[::-1] + a[-1, -1, -1])


@nv.jit
def shapes(a, b, out):
    out[0] = a.shape[0]
    out[1] = a.shape[1]
    out[2] = a.shape[2]
    out[3] = a.size
    out[4] = len(a)
    out[5] = b.shape[0]
    out[6] = b.size
    out[7] = len(b)
    out[8] = out.size


def test_shape_size_len():
    a = np.zeros((3, 5, 7), np.float32)
    b = np.zeros(11, np.int32)
    out = np.zeros(9, np.int32)
    shapes[1, 1](a, b, out)
    np.testing.assert_array_equal(out, [3, 5, 7, 105, 3, 11, 11, 11, 9])


@nv.jit
def add_mixed(a, b, c, out):
    i = nv.global_id(0)
    if i < out.size:
        out[i] = a[i] + b[i] * c[i]


def test_mixed_dtypes_in_one_kernel():
    a = np.arange(50, dtype=np.int32)
    b = np.linspace(-1, 1, 50).astype(np.float32)
    c = RNG.integers(0, 2, 50).astype(bool)
    out = np.zeros(50, np.float32)
    add_mixed.forall(50)(a, b, c, out)
    # int32 + float32 is float64 in Numba's typing; stored into float32.
    want = (a.astype(np.float64) + b.astype(np.float64) * c).astype(np.float32)
    np.testing.assert_array_equal(out, want)


# ----------------------------------------------------------------- device arrays


@nv.jit
def saxpy(a, x, y, out):
    i = nv.global_id(0)
    if i < out.size:
        out[i] = a * x[i] + y[i]


def test_saxpy_bitwise_host_arrays():
    n = 1000
    x = RNG.standard_normal(n).astype(np.float32)
    y = RNG.standard_normal(n).astype(np.float32)
    a = np.float32(2.5)
    out = np.zeros(n, np.float32)
    saxpy.forall(n)(a, x, y, out)
    np.testing.assert_array_equal(out.view(np.uint32), (a * x + y).view(np.uint32))


def test_saxpy_device_arrays_and_repeated_launches():
    n = 4099  # not a multiple of the workgroup size
    x = RNG.standard_normal(n).astype(np.float32)
    y = RNG.standard_normal(n).astype(np.float32)
    dx, dy = nv.to_device(x), nv.to_device(y)
    dout = nv.device_array(n, np.float32)
    a = np.float32(-0.75)
    for _ in range(5):  # asynchronous launches; each sees the previous one's writes
        saxpy.forall(n)(a, dx, dy, dout)
        saxpy.forall(n)(a, dx, dout, dy)
    nv.synchronize()
    want_y = y.copy()
    for _ in range(5):
        want_out = a * x + want_y
        want_y = a * x + want_out
    np.testing.assert_array_equal(dout.copy_to_host(), want_out)
    np.testing.assert_array_equal(dy.copy_to_host(), want_y)
    np.testing.assert_array_equal(dx.copy_to_host(), x)  # untouched


def test_cuda_style_launch_covers_exactly_groups_times_local_size():
    n = 1000
    x = np.ones(n, np.float32)
    y = np.zeros(n, np.float32)
    out = np.full(n, -1, np.float32)
    saxpy[(n + 63) // 64, 64](np.float32(1), x, y, out)
    np.testing.assert_array_equal(out, np.ones(n, np.float32))
    out[:] = -1
    saxpy[4, 32](np.float32(1), x, y, out)  # only the first 128 invocations
    np.testing.assert_array_equal(out[:128], 1)
    np.testing.assert_array_equal(out[128:], -1)


# ---------------------------------------------------------------------- stencil


@nv.jit
def stencil5(a, out):
    i = nv.global_id(0)
    j = nv.global_id(1)
    n = a.shape[0]
    m = a.shape[1]
    if i < n and j < m:
        if i == 0 or j == 0 or i == n - 1 or j == m - 1:
            out[i, j] = a[i, j]
        else:
            out[i, j] = a[i, j] - 0.25 * (a[i - 1, j] + a[i + 1, j] + a[i, j - 1] + a[i, j + 1])


def stencil5_numpy(a):
    out = a.copy()
    out[1:-1, 1:-1] = a[1:-1, 1:-1] - 0.25 * (
        ((a[:-2, 1:-1] + a[2:, 1:-1]) + a[1:-1, :-2]) + a[1:-1, 2:]
    )
    return out


@requires_feature("float64")
def test_stencil_5_point_2d_bitwise():
    a = RNG.standard_normal((33, 47))
    out = np.zeros_like(a)
    stencil5.forall(a.shape)(a, out)
    np.testing.assert_array_equal(out.view(np.uint64), stencil5_numpy(a).view(np.uint64))


@nv.jit
def stencil5_int(a, out):
    i = nv.global_id(0)
    j = nv.global_id(1)
    if 0 < i < a.shape[0] - 1 and 0 < j < a.shape[1] - 1:
        out[i, j] = 4 * a[i, j] - a[i - 1, j] - a[i + 1, j] - a[i, j - 1] - a[i, j + 1]


def test_stencil_5_point_2d_int32():
    a = RNG.integers(-1000, 1000, (20, 30), dtype=np.int32)
    out = np.zeros_like(a)
    stencil5_int.forall(a.shape, local_size=(4, 8))(a, out)
    want = np.zeros_like(a)
    want[1:-1, 1:-1] = 4 * a[1:-1, 1:-1] - a[:-2, 1:-1] - a[2:, 1:-1] - a[1:-1, :-2] - a[1:-1, 2:]
    np.testing.assert_array_equal(out, want)


# ------------------------------------------------------------------- Mandelbrot


@nv.jit
def mandelbrot(xs, ys, max_iter, counts):
    i = nv.global_id(0)
    j = nv.global_id(1)
    if i < counts.shape[0] and j < counts.shape[1]:
        x0 = xs[j]
        y0 = ys[i]
        zr = x0 - x0  # zero of the coordinates' type
        zi = zr
        n = 0
        while n < max_iter:
            zr2 = zr * zr
            zi2 = zi * zi
            if zr2 + zi2 > 4.0:
                break
            zi = (zr + zr) * zi + y0
            zr = zr2 - zi2 + x0
            n += 1
        counts[i, j] = n


def mandelbrot_numpy(xs, ys, max_iter):
    """The same iteration, vectorised, with the same operations in the same order."""
    x0 = np.broadcast_to(xs[None, :], (ys.size, xs.size))
    y0 = np.broadcast_to(ys[:, None], (ys.size, xs.size))
    zr = np.zeros_like(x0)
    zi = np.zeros_like(x0)
    counts = np.full(x0.shape, max_iter, np.int32)
    active = np.ones(x0.shape, bool)
    with np.errstate(all="ignore"):
        for n in range(max_iter):
            zr2 = zr * zr
            zi2 = zi * zi
            escaped = active & (zr2 + zi2 > 4.0)
            counts[escaped] = n
            active &= ~escaped
            zi = (zr + zr) * zi + y0
            zr = zr2 - zi2 + x0
    return counts


@pytest.mark.parametrize(
    "dtype",
    [
        pytest.param(np.float32, id="float32"),
        pytest.param(np.float64, id="float64", marks=requires_feature("float64")),
    ],
)
def test_mandelbrot_iteration_counts_exact(dtype):
    xs = np.linspace(-2.2, 0.8, 90).astype(dtype)
    ys = np.linspace(-1.2, 1.2, 61).astype(dtype)
    counts = np.zeros((ys.size, xs.size), np.int32)
    mandelbrot.forall(counts.shape)(xs, ys, 200, counts)
    want = mandelbrot_numpy(xs, ys, 200)
    assert (want == 200).any() and (want < 5).any()  # the picture has both kinds of points
    mismatch = np.argwhere(counts != want)
    assert mismatch.size == 0, [(tuple(p), counts[tuple(p)], want[tuple(p)]) for p in mismatch[:5]]
