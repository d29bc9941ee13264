"""numba.cuda programs with only the import changed (``from numba_vulkan import cuda``).

Each kernel is written as numba.cuda's documentation writes it (vector add, naive
and shared-memory matrix multiply, atomic and shared-memory reductions, a
``@cuda.jit(device=True)`` helper) and checked against NumPy (the warp functions:
test_cuda_warps.py). The tests of refused names check the message names the missing
feature."""

import math

import numpy as np
import pytest
from numba import float32, int32

from numba_vulkan import cuda
from numba_vulkan.errors import VulkanUnsupportedError

pytestmark = [pytest.mark.device, pytest.mark.usefixtures("device")]


# ---------------------------------------------------------------- vector add


@cuda.jit
def vec_add(a, b, c):
    # like threadIdx.x + (blockIdx.x * blockDim.x)
    tid = cuda.grid(1)
    size = len(c)

    if tid < size:
        c[tid] = a[tid] + b[tid]


def test_vecadd_device_arrays():
    rng = np.random.default_rng(1)
    n = 100000
    a = cuda.to_device(rng.random(n))
    b = cuda.to_device(rng.random(n))
    c = cuda.device_array_like(a)
    nthreads = 256
    nblocks = (len(a) // nthreads) + 1
    vec_add[nblocks, nthreads](a, b, c)
    np.testing.assert_array_equal(c.copy_to_host(), a.copy_to_host() + b.copy_to_host())


@cuda.jit
def vec_add_explicit(a, b, c):
    i = cuda.threadIdx.x + cuda.blockIdx.x * cuda.blockDim.x
    if i < c.shape[0]:
        c[i] = a[i] + b[i]


def test_vecadd_thread_indices_numpy_arrays():
    a = np.arange(1000, dtype=np.float32)
    b = np.arange(1000, dtype=np.float32) * 3
    c = np.zeros_like(a)
    vec_add_explicit[(1000 + 127) // 128, 128](a, b, c)
    np.testing.assert_array_equal(c, a + b)


# ---------------------------------------------------------------- matrix multiply


@cuda.jit
def matmul(A, B, C):
    """Perform square matrix multiplication of C = A * B."""
    i, j = cuda.grid(2)
    if i < C.shape[0] and j < C.shape[1]:
        tmp = 0.
        for k in range(A.shape[1]):
            tmp += A[i, k] * B[k, j]
        C[i, j] = tmp


def test_matmul_naive():
    rng = np.random.default_rng(2)
    A = rng.random((37, 23))
    B = rng.random((23, 41))
    C = np.zeros((37, 41))
    threadsperblock = (16, 16)
    blockspergrid_x = math.ceil(C.shape[0] / threadsperblock[0])
    blockspergrid_y = math.ceil(C.shape[1] / threadsperblock[1])
    matmul[(blockspergrid_x, blockspergrid_y), threadsperblock](A, B, C)
    expect = np.zeros_like(C)  # the kernel's order of additions, exactly
    for k in range(A.shape[1]):
        expect += A[:, k:k + 1] * B[k:k + 1, :]
    np.testing.assert_array_equal(C, expect)


TPB = 16


@cuda.jit
def fast_matmul(A, B, C):
    # Define an array in the shared memory
    # The size and type of the arrays must be known at compile time
    sA = cuda.shared.array(shape=(TPB, TPB), dtype=float32)
    sB = cuda.shared.array(shape=(TPB, TPB), dtype=float32)

    x, y = cuda.grid(2)

    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    bpg = cuda.gridDim.x    # blocks per grid

    # Each thread computes one element in the result matrix.
    # The dot product is chunked into dot products of TPB-long vectors.
    tmp = float32(0.)
    for i in range(bpg):
        # Preload data into shared memory
        sA[ty, tx] = 0
        sB[ty, tx] = 0
        if y < A.shape[0] and (tx + i * TPB) < A.shape[1]:
            sA[ty, tx] = A[y, tx + i * TPB]
        if x < B.shape[1] and (ty + i * TPB) < B.shape[0]:
            sB[ty, tx] = B[ty + i * TPB, x]

        # Wait until all threads finish preloading
        cuda.syncthreads()

        # Computes partial product on the shared memory
        for j in range(TPB):
            tmp += sA[ty, j] * sB[j, tx]

        # Wait until all threads finish computing
        cuda.syncthreads()
    if y < C.shape[0] and x < C.shape[1]:
        C[y, x] = tmp


def test_matmul_tiled_shared_memory():
    rng = np.random.default_rng(3)
    n = 48  # square, as the documentation's blocks-per-grid loop assumes
    A = rng.integers(-8, 8, (n, n)).astype(np.float32)  # small integers: exact sums
    B = rng.integers(-8, 8, (n, n)).astype(np.float32)
    C = np.zeros((n, n), dtype=np.float32)
    dA, dB, dC = cuda.to_device(A), cuda.to_device(B), cuda.device_array_like(C)
    threadsperblock = (TPB, TPB)
    blockspergrid = (math.ceil(n / TPB), math.ceil(n / TPB))
    fast_matmul[blockspergrid, threadsperblock](dA, dB, dC)
    cuda.synchronize()
    np.testing.assert_array_equal(dC.copy_to_host(), A @ B)


# ---------------------------------------------------------------- reductions


@cuda.jit
def max_example(result, values):
    """Find the maximum value in values and store in result[0]"""
    tid = cuda.threadIdx.x
    bid = cuda.blockIdx.x
    bdim = cuda.blockDim.x
    i = (bid * bdim) + tid
    cuda.atomic.max(result, 0, values[i])


def test_atomic_max_reduction():
    arr = np.random.default_rng(4).random(16384)
    result = np.zeros(1, dtype=np.float64)
    max_example[256, 64](result, arr)
    assert result[0] == arr.max()


@cuda.jit
def atomic_sum(result, values):
    i = cuda.grid(1)
    if i < values.size:
        cuda.atomic.add(result, 0, values[i])


def test_atomic_add_reduction_integers():
    values = np.random.default_rng(5).integers(-1000, 1000, 5000).astype(np.int64)
    result = np.zeros(1, dtype=np.int64)
    atomic_sum[(values.size + 255) // 256, 256](result, values)
    assert result[0] == values.sum()


@cuda.jit
def histogram(x, xmin, xmax, histogram_out):
    nbins = histogram_out.shape[0]
    bin_width = (xmax - xmin) / nbins

    start = cuda.grid(1)
    stride = cuda.gridsize(1)

    for i in range(start, x.shape[0], stride):
        bin_number = np.int32((x[i] - xmin) / bin_width)
        if bin_number >= 0 and bin_number < histogram_out.shape[0]:
            cuda.atomic.add(histogram_out, bin_number, 1)


def test_grid_stride_histogram():
    x = np.random.default_rng(6).normal(size=20000).astype(np.float32)
    xmin, xmax = np.float32(-4.0), np.float32(4.0)
    out = np.zeros(16, dtype=np.int32)
    histogram[16, 128](x, xmin, xmax, out)
    width = (xmax - xmin) / np.float32(16)
    bins = ((x - xmin) / width).astype(np.int32)
    expect = np.bincount(bins[(bins >= 0) & (bins < 16)], minlength=16)
    np.testing.assert_array_equal(out, expect)


@cuda.jit
def block_sum(data, partial):
    shr = cuda.shared.array(128, int32)
    tid = cuda.threadIdx.x
    i = cuda.grid(1)
    shr[tid] = data[i]
    cuda.syncthreads()
    s = cuda.blockDim.x // 2
    while s > 0:
        if tid < s:
            shr[tid] += shr[tid + s]
        cuda.syncthreads()
        s //= 2
    if tid == 0:
        partial[cuda.blockIdx.x] = shr[0]


def test_shared_memory_tree_reduction():
    data = np.random.default_rng(7).integers(-100, 100, 128 * 8).astype(np.int32)
    partial = np.zeros(8, dtype=np.int32)
    block_sum[8, 128](data, partial)
    np.testing.assert_array_equal(partial, data.reshape(8, 128).sum(axis=1))


# ---------------------------------------------------------------- device functions


@cuda.jit(device=True)
def a_device_function(a, b):
    return a + b


@cuda.jit
def uses_device_function(x, y, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a_device_function(x[i], y[i])


def test_device_function():
    x = np.arange(300, dtype=np.int32)
    y = np.arange(300, dtype=np.int32) * 7
    out = np.zeros(300, dtype=np.int32)
    uses_device_function[3, 128](x, y, out)
    np.testing.assert_array_equal(out, x + y)


# ---------------------------------------------------------------- 2-d indices, local and const


COEFFS = np.array([1.0, -2.0, 0.5, 4.0], dtype=np.float64)


@cuda.jit
def poly_2d(x, out):
    c = cuda.const.array_like(COEFFS)
    tmp = cuda.local.array(4, dtype=float32)
    row = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    col = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if row < x.shape[0] and col < x.shape[1]:
        acc = 0.0
        for k in range(4):
            tmp[k] = c[k]
        for k in range(4):
            acc = acc * x[row, col] + tmp[k]
        out[row, col] = acc


def test_2d_indices_local_and_const_arrays():
    x = np.random.default_rng(8).random((20, 30))
    out = np.zeros_like(x)
    poly_2d[(4, 3), (8, 8)](x, out)
    expect = np.zeros_like(x)
    for k in range(4):
        expect = expect * x + COEFFS[k]
    np.testing.assert_array_equal(out, expect)


def test_gridsize_2d_and_grid_3d():
    @cuda.jit
    def dims(out):
        x, y, z = cuda.grid(3)
        w, h = cuda.gridsize(2)
        if x == 1 and y == 2 and z == 0:
            out[0] = w
            out[1] = h
            out[2] = cuda.gridDim.x * 100 + cuda.gridDim.y * 10 + cuda.gridDim.z

    out = np.zeros(3, dtype=np.int64)
    dims[(2, 3, 1), (4, 4, 1)](out)
    np.testing.assert_array_equal(out, [8, 12, 231])


# ---------------------------------------------------------------- host API


def test_host_api():
    assert cuda.is_available()
    assert len(cuda.gpus) >= 1
    assert cuda.detect()
    dev = cuda.select_device(0)
    assert dev == cuda.gpus.current and dev.compute_capability == (0, 0)
    s = cuda.stream()
    e0, e1 = cuda.event(), cuda.event()
    e0.record(s)
    a = cuda.to_device(np.arange(10.0), stream=s)
    e1.record(s)
    e1.synchronize()
    cuda.synchronize()
    np.testing.assert_array_equal(a.copy_to_host(), np.arange(10.0))
    p = cuda.pinned_array(5, dtype=np.float32)
    m = cuda.mapped_array((2, 3), dtype=np.int32)
    assert p.shape == (5,) and m.shape == (2, 3)
    d = cuda.device_array((4, 4), dtype=np.float32)
    assert d.shape == (4, 4)


def test_launch_with_stream_and_dynamic_shared_memory():
    @cuda.jit
    def rev(a, out):
        s = cuda.shared.array(0, dtype=float32)
        t = cuda.threadIdx.x
        s[t] = a[t]
        cuda.syncthreads()
        out[t] = s[cuda.blockDim.x - 1 - t]

    a = np.arange(32, dtype=np.float32)
    out = np.zeros_like(a)
    stream = cuda.stream()
    rev[1, 32, stream, 32 * 4](a, out)
    stream.synchronize()
    np.testing.assert_array_equal(out, a[::-1])


# ---------------------------------------------------------------- refused names


@pytest.mark.parametrize("name, words", [
    ("cudadrv", "driver"),
    ("compile_ptx", "PTX"), ("no_such_name_at_all", "not mapped"),
])
def test_unmapped_names_raise_naming_the_feature(name, words):
    with pytest.raises(VulkanUnsupportedError, match=words):
        obj = getattr(cuda, name)
        obj()


def test_cuda_random_as_an_attribute():
    assert cuda.random.create_xoroshiro128p_states(2, seed=0).shape == (2,)


def test_grid_sync_refused():
    @cuda.jit
    def k(a):
        g = cuda.cg.this_grid()
        a[cuda.grid(1)] = 1
        g.sync()

    with pytest.raises(VulkanUnsupportedError, match="(?i)grid"):
        k[1, 32](np.zeros(32))


def test_dim3_outside_kernel_is_clear():
    with pytest.raises(NotImplementedError, match="threadIdx.x"):
        cuda.threadIdx.x


def test_dim3_through_a_variable_and_from_import():
    from numba_vulkan.cuda import blockDim, threadIdx

    @cuda.jit
    def k(out):
        t = threadIdx
        b = cuda.blockIdx
        out[t.x + b.x * blockDim.x] = t.x * 10 + b.x

    out = np.zeros(64, dtype=np.int64)
    k[2, 32](out)
    np.testing.assert_array_equal(out, np.arange(64) % 32 * 10 + np.arange(64) // 32)


def test_dim3_as_a_value_refused():
    @cuda.jit
    def k(out):
        out[cuda.grid(1)] = cuda.threadIdx

    with pytest.raises(VulkanUnsupportedError, match="threadIdx.x, .y and .z"):
        k[1, 1](np.zeros(1))


def test_variables_assigned_twice():
    # Without SSA, `y = x` with x assigned twice has no single definition: the rewrite
    # pass must leave it alone (it raised KeyError once, on examples/mandelbrot.py).
    @cuda.jit
    def k(out):
        x = cuda.threadIdx.x
        y = x
        for _ in range(3):  # redefinitions in a loop keep one name
            y = x
            x = y + 1
        out[cuda.threadIdx.x] = y

    out = np.zeros(32, dtype=np.int64)
    k[1, 32](out)
    np.testing.assert_array_equal(out, np.arange(32) + 2)


def test_jit_with_signature_and_options():
    @cuda.jit("void(float32[:], float32[:])", fastmath=False, lineinfo=True)
    def copy(a, out):
        i = cuda.grid(1)
        if i < a.size:
            out[i] = a[i]

    a = np.arange(50, dtype=np.float32)
    out = np.zeros_like(a)
    copy[1, 64](a, out)
    np.testing.assert_array_equal(out, a)
    with pytest.raises(VulkanUnsupportedError, match="linking"):
        cuda.jit(link=["f.cu"])


# ---------------------------------------------------------------- numba-cuda's doc examples

#: The examples of numba-cuda's documentation that run (docs/cuda-compat.md); each runs
#: with only its numba.cuda imports changed, checked by the example's own assertions.
DOC_EXAMPLES_PASSING = {
    "test_cpu_gpu_compat.TestCpuGpuCompat.test_ex_cpu_gpu_compat",
    "test_globals.TestGlobals.test_ex_globals_constant_capture",
    "test_globals.TestGlobals.test_ex_globals_device_array_capture",
    "test_matmul",
    "test_random.TestRandom.test_ex_3d_grid",
    "test_montecarlo.TestMonteCarlo.test_ex_montecarlo",
    "test_reduction.TestReduction.test_ex_reduction",
    "test_ufunc.TestUFunc.test_ex_cuda_ufunc_call",
    "test_vecadd.TestVecAdd.test_ex_vecadd",
}


@pytest.mark.skipif(not __import__("os").environ.get("NUMBA_CUDA_SRC"),
                    reason="NUMBA_CUDA_SRC (a numba-cuda checkout) is not set")  # fmt: skip
def test_numba_cuda_doc_examples():
    """scripts/numba_cuda_doc_examples.py on a numba-cuda checkout, in a subprocess."""
    import os
    import subprocess
    import sys

    repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    script = os.path.join(repo, "scripts", "numba_cuda_doc_examples.py")
    names = sorted({name.split(".")[0] for name in DOC_EXAMPLES_PASSING})
    r = subprocess.run([sys.executable, script, os.environ["NUMBA_CUDA_SRC"], *names],
                       capture_output=True, text=True, timeout=600)  # fmt: skip
    assert r.returncode == 0, r.stderr[-2000:]
    passed = {line.split()[1] for line in r.stdout.splitlines() if line.startswith("PASS ")}
    assert DOC_EXAMPLES_PASSING <= passed, r.stdout
