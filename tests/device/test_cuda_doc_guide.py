"""The kernels of numba-cuda's user guide pages (docs/source/user/*.rst, numba-cuda
snapshot b18b944, BSD-2-Clause) other than examples.rst, run with only the imports
changed, each checked against NumPy or numba.njit.

Each kernel is the page's text verbatim; an import line is the only change
(``from numba import cuda`` -> ``from numba_vulkan import cuda``; a page that imports
``vectorize`` from ``numba`` with ``target='cuda'`` gets numba_vulkan.cuda's, whose
target is this device; a page whose arrays come from CuPy gets NumPy under that name).
Where a page shows a kernel but not how it is launched or on what data, the launch
and the data here are ours, written as the page describes them. examples.rst's kernels
are in test_cuda_doc_examples.py, those Vulkan cannot run in test_cuda_doc_refused.py.
"""

import contextlib
import io

import numpy as np
import pytest

pytestmark = [pytest.mark.device, pytest.mark.usefixtures("device")]

# test -> (page and section, what it runs), as in test_cuda_doc_examples.py
DOC_KERNELS = {
    "test_increment_by_one_thread_indices": ("kernels.rst: Thread positioning",
                                             {"kernel": ["increment_by_one"]}),
    "test_increment_by_one_grid": ("kernels.rst: Absolute positions",
                                   {"kernel": ["increment_by_one"]}),
    "test_increment_a_2D_array": ("kernels.rst: Absolute positions",
                                  {"kernel": ["increment_a_2D_array"]}),
    "test_device_function": ("device-functions.rst", {"device function": ["a_device_function"]}),
    "test_dynamic_shared_memory_aliasing": ("memory.rst: Dynamic Shared Memory",
                                            {"kernel": ["f"]}),
    "test_dynamic_shared_memory_views": ("memory.rst: Dynamic Shared Memory",
                                         {"kernel": ["f_with_view"]}),
    "test_atomic_max_example": ("intrinsics.rst: Example", {"kernel": ["max_example"]}),
    "test_atomic_max_example_3d": ("intrinsics.rst: Example", {"kernel": ["max_example_3d"]}),
    "test_random_compute_pi": ("random.rst: A simple example", {"kernel": ["compute_pi"]}),
    "test_reduce_decorator": ("reduction.rst", {"cuda.reduce": ["sum_reduce"]}),
    "test_reduce_lambda": ("reduction.rst", {"cuda.reduce": ["lambda a, b: a + b"]}),
    "test_vectorize_basic_example": ("ufunc.rst: Basic Example",
                                     {"vectorize": ["cu_discriminant"]}),
    "test_vectorize_calling_device_function": ("ufunc.rst: Calling Device Functions",
                                               {"vectorize": ["cu_ufunc"],
                                                "device function": ["cu_device_fn"]}),
    "test_grid_stride_add": ("cuda_array_interface.rst: Synchronization", {"kernel": ["add"]}),
}


def _printed(fn):
    """What fn() prints (kernel prints included: they print at synchronisation)."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        fn()
    return out.getvalue().split("\n")


# kernels.rst "Thread positioning": indices from threadIdx/blockIdx/blockDim
def test_increment_by_one_thread_indices():
    from numba_vulkan import cuda

    @cuda.jit
    def increment_by_one(an_array):
        # Thread id in a 1D block
        tx = cuda.threadIdx.x
        # Block id in a 1D grid
        ty = cuda.blockIdx.x
        # Block width, i.e. number of threads per block
        bw = cuda.blockDim.x
        # Compute flattened index inside the array
        pos = tx + ty * bw
        if pos < an_array.size:  # Check array boundaries
            an_array[pos] += 1

    an_array = np.arange(1000, dtype=np.float32)
    expected = an_array + 1
    # kernels.rst "Kernel invocation"
    threadsperblock = 32
    blockspergrid = (an_array.size + (threadsperblock - 1)) // threadsperblock
    increment_by_one[blockspergrid, threadsperblock](an_array)
    np.testing.assert_array_equal(an_array, expected)


# kernels.rst "Absolute positions": cuda.grid(1)
def test_increment_by_one_grid():
    from numba_vulkan import cuda

    @cuda.jit
    def increment_by_one(an_array):
        pos = cuda.grid(1)
        if pos < an_array.size:
            an_array[pos] += 1

    an_array = np.arange(1000, dtype=np.int64) * 7
    expected = an_array + 1
    threadsperblock = 32
    blockspergrid = (an_array.size + (threadsperblock - 1)) // threadsperblock
    increment_by_one[blockspergrid, threadsperblock](an_array)
    np.testing.assert_array_equal(an_array, expected)


# kernels.rst "Absolute positions": the 2D array and grid, with the page's launch
def test_increment_a_2D_array():
    import math

    from numba_vulkan import cuda

    @cuda.jit
    def increment_a_2D_array(an_array):
        x, y = cuda.grid(2)
        if x < an_array.shape[0] and y < an_array.shape[1]:
           an_array[x, y] += 1  # noqa: E111 (the page's indentation)

    an_array = np.arange(50 * 37, dtype=np.float64).reshape(50, 37)
    expected = an_array + 1
    threadsperblock = (16, 16)
    blockspergrid_x = math.ceil(an_array.shape[0] / threadsperblock[0])
    blockspergrid_y = math.ceil(an_array.shape[1] / threadsperblock[1])
    blockspergrid = (blockspergrid_x, blockspergrid_y)
    increment_a_2D_array[blockspergrid, threadsperblock](an_array)
    np.testing.assert_array_equal(an_array, expected)


# device-functions.rst: the page's device function, called by a kernel of ours (the page
# shows no kernel); counted as a device function, not as a kernel
def test_device_function():
    from numba_vulkan import cuda

    @cuda.jit(device=True)
    def a_device_function(a, b):
        return a + b

    @cuda.jit
    def caller(out, x, y):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = a_device_function(x[i], y[i])

    x = np.arange(100, dtype=np.int32)
    y = np.arange(100, dtype=np.int32) * 3
    out = np.zeros(100, dtype=np.int32)
    caller.forall(out.size)(out, x, y)
    np.testing.assert_array_equal(out, x + y)


# memory.rst "Dynamic Shared Memory": two dynamic shared arrays alias
def test_dynamic_shared_memory_aliasing():
    from numba_vulkan import cuda
    import numpy as np

    @cuda.jit
    def f():
       f32_arr = cuda.shared.array(0, dtype=np.float32)  # noqa: E111
       i32_arr = cuda.shared.array(0, dtype=np.int32)  # noqa: E111
       f32_arr[0] = 3.14  # noqa: E111
       print(f32_arr[0])  # noqa: E111
       print(i32_arr[0])  # noqa: E111

    def run():
        f[1, 1, 0, 4]()
        cuda.synchronize()

    lines = _printed(run)
    # The page shows "3.140000" and "1078523331": numba.cuda prints floats with
    # printf("%f"), numba_vulkan as numba.njit does (the float32 widened to a double).
    assert float(lines[0]) == float(np.float32(3.14))
    assert int(lines[1]) == 1078523331 == np.float32(3.14).view(np.int32)


# memory.rst "Dynamic Shared Memory": disjoint views of the dynamic shared memory
def test_dynamic_shared_memory_views():
    from numba_vulkan import cuda
    import numpy as np

    @cuda.jit
    def f_with_view():
       f32_arr = cuda.shared.array(0, dtype=np.float32)  # noqa: E111
       i32_arr = cuda.shared.array(0, dtype=np.int32)[1:] # 1 int32 = 4 bytes  # noqa
       f32_arr[0] = 3.14  # noqa: E111
       i32_arr[0] = 1  # noqa: E111
       print(f32_arr[0])  # noqa: E111
       print(i32_arr[0])  # noqa: E111

    def run():
        f_with_view[1, 1, 0, 8]()
        cuda.synchronize()

    lines = _printed(run)
    assert float(lines[0]) == float(np.float32(3.14))
    assert int(lines[1]) == 1


# intrinsics.rst "Example": cuda.atomic.max over a 1-d array
def test_atomic_max_example():
    from numba_vulkan import cuda
    import numpy as np

    @cuda.jit
    def max_example(result, values):
        """Find the maximum value in values and store in result[0]"""
        tid = cuda.threadIdx.x
        bid = cuda.blockIdx.x
        bdim = cuda.blockDim.x
        i = (bid * bdim) + tid
        cuda.atomic.max(result, 0, values[i])

    arr = np.random.rand(16384)
    result = np.zeros(1, dtype=np.float64)

    max_example[256,64](result, arr)
    print(result[0]) # Found using cuda.atomic.max
    print(max(arr))  # Print max(arr) for comparison (should be equal!)
    assert result[0] == max(arr)


# intrinsics.rst "Example": cuda.atomic.max with a tuple index into a 3-d array
def test_atomic_max_example_3d():
    from numba_vulkan import cuda
    import numpy as np

    @cuda.jit
    def max_example_3d(result, values):
        """
        Find the maximum value in values and store in result[0].
        Both result and values are 3d arrays.
        """
        i, j, k = cuda.grid(3)
        # Atomically store to result[0,1,2] from values[i, j, k]
        cuda.atomic.max(result, (0, 1, 2), values[i, j, k])

    arr = np.random.rand(1000).reshape(10,10,10)
    result = np.zeros((3, 3, 3), dtype=np.float64)
    max_example_3d[(2, 2, 2), (5, 5, 5)](result, arr)
    print(result[0, 1, 2], '==', np.max(arr))
    assert result[0, 1, 2] == np.max(arr)
    result[0, 1, 2] = 0
    assert not result.any()


# random.rst "A simple example": estimating pi with cuda.random (the page's first
# line, ``from __future__ import print_function, absolute_import``, a no-op import
# in Python 3, cannot stand inside a function and is left out)
def test_random_compute_pi():
    from numba_vulkan import cuda
    from numba_vulkan.cuda.random import create_xoroshiro128p_states, xoroshiro128p_uniform_float32
    import numpy as np

    @cuda.jit
    def compute_pi(rng_states, iterations, out):
        """Find the maximum value in values and store in result[0]"""
        thread_id = cuda.grid(1)

        # Compute pi by drawing random (x, y) points and finding what
        # fraction lie inside a unit circle
        inside = 0
        for i in range(iterations):
            x = xoroshiro128p_uniform_float32(rng_states, thread_id)
            y = xoroshiro128p_uniform_float32(rng_states, thread_id)
            if x**2 + y**2 <= 1.0:
                inside += 1

        out[thread_id] = 4.0 * inside / iterations

    threads_per_block = 64
    blocks = 24
    rng_states = create_xoroshiro128p_states(threads_per_block * blocks, seed=1)
    out = np.zeros(threads_per_block * blocks, dtype=np.float32)

    compute_pi[blocks, threads_per_block](rng_states, 10000, out)
    print('pi:', out.mean())
    assert abs(out.mean() - np.pi) < 1e-3
    # Thread 0's estimate replayed on the host with numba.cuda's generator
    # (xoroshiro128+, the float32 draw from the top bits), state 0 of seed 1.
    s = create_xoroshiro128p_states(1, seed=1).copy_to_host()[0]
    s0, s1, m = int(s["s0"]), int(s["s1"]), (1 << 64) - 1

    def draw():
        nonlocal s0, s1
        r = (s0 + s1) & m
        s1 ^= s0
        s0 = (((s0 << 55) | (s0 >> 9)) & m) ^ s1 ^ ((s1 << 14) & m)
        s1 = ((s1 << 36) | (s1 >> 28)) & m
        return np.float32((r >> 11) * (1.0 / (1 << 53)))

    inside = 0
    for _ in range(10000):
        x, y = draw(), draw()
        inside += float(x) ** 2 + float(y) ** 2 <= 1.0
    assert out[0] == np.float32(4.0 * inside / 10000)


# reduction.rst: @cuda.reduce
def test_reduce_decorator():
    import numpy
    from numba_vulkan import cuda

    @cuda.reduce
    def sum_reduce(a, b):
        return a + b

    A = (numpy.arange(1234, dtype=numpy.float64)) + 1
    expect = A.sum()      # NumPy sum reduction
    got = sum_reduce(A)   # cuda sum reduction
    assert expect == got


# reduction.rst: cuda.reduce of a lambda
def test_reduce_lambda():
    import numpy
    from numba_vulkan import cuda

    sum_reduce = cuda.reduce(lambda a, b: a + b)

    A = (numpy.arange(1234, dtype=numpy.float64)) + 1
    assert sum_reduce(A) == A.sum()


# ufunc.rst "Example: Basic Example" (``vectorize`` imported from numba_vulkan.cuda
# instead of numba: numba.vectorize(target='cuda') is numba-cuda's own target)
def test_vectorize_basic_example():
    import math
    from numba_vulkan.cuda import vectorize
    from numba_vulkan import cuda  # noqa: F401
    import numpy as np

    @vectorize(['float32(float32, float32, float32)',
                'float64(float64, float64, float64)'],
               target='cuda')
    def cu_discriminant(a, b, c):
        return math.sqrt(b ** 2 - 4 * a * c)

    N = 10000
    dtype = np.float32

    # prepare the input
    A = np.array(np.random.sample(N), dtype=dtype)
    B = np.array(np.random.sample(N) + 10, dtype=dtype)
    C = np.array(np.random.sample(N), dtype=dtype)

    D = cu_discriminant(A, B, C)

    print(D)  # print result
    import numba

    expected = numba.vectorize(["float32(float32, float32, float32)"])(
        lambda a, b, c: math.sqrt(b ** 2 - 4 * a * c))(A, B, C)  # on the CPU
    np.testing.assert_array_equal(D, expected)


# ufunc.rst "Example: Calling Device Functions" (vectorize as above; the page defines
# the ufunc without calling it: the call here is ours)
def test_vectorize_calling_device_function():
    from numba_vulkan.cuda import vectorize
    from numba_vulkan import cuda

    # define a device function
    @cuda.jit('float32(float32, float32, float32)', device=True, inline="always")
    def cu_device_fn(x, y, z):
        return x ** y / z

    # define a ufunc that calls our device function
    @vectorize(['float32(float32, float32, float32)'], target='cuda')
    def cu_ufunc(x, y, z):
        return cu_device_fn(x, y, z)

    import numba

    rng = np.random.default_rng(5)
    x = rng.uniform(0.5, 2.0, 1000).astype(np.float32)
    y = rng.uniform(-3.0, 3.0, 1000).astype(np.float32)
    z = rng.uniform(0.5, 2.0, 1000).astype(np.float32)
    got = cu_ufunc(x, y, z)
    expected = numba.vectorize(["float32(float32, float32, float32)"])(
        lambda x, y, z: x ** y / z)(x, y, z)
    # float32 pow: our math library's accuracy (docs/math.md: within 1 ulp), then a
    # correctly rounded division
    np.testing.assert_array_max_ulp(got, expected, maxulp=2)


# cuda_array_interface.rst "Synchronization" example: a grid-stride kernel on arrays
# from another library (CuPy there: NumPy under that name here, since CuPy arrays
# are CUDA memory)
def test_grid_stride_add():
    import numpy as cupy
    from numba_vulkan import cuda

    @cuda.jit
    def add(x, y, out):
        start = cuda.grid(1)
        stride = cuda.gridsize(1)
        for i in range(start, x.shape[0], stride):
            out[i] = x[i] + y[i]

    a = cupy.arange(10)
    b = a * 2
    out = cupy.zeros_like(a)

    add[1, 32](a, b, out)
    np.testing.assert_array_equal(out, a + b)
