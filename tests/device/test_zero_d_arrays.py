"""0-d NumPy and device arrays as kernel arguments (``np.array(5.0)``, which numba.njit types
as a 0-d array): ``a[()]`` read and written, ``.shape``, ``.size``, reductions; against
numba.njit, bit for bit."""

import numba
import numpy as np
import pytest

import numba_vulkan as nv
from numba_vulkan import VulkanUnsupportedError

pytestmark = [
    pytest.mark.device,
    pytest.mark.usefixtures("device"),
]

DTYPES = [np.float64, np.float32, np.int32, np.int64, np.uint8, np.complex64, np.complex128]


def _copy_scaled(r, x):
    r[()] = x[()] * 3 + x.size + len(x.shape) + x.ndim


def _reduce(out, x):
    out[0] = x.sum() + x.max() * 2 + x.min() * 3 + x.mean() + x.argmax() + np.count_nonzero(x)
    x[()] += 1  # written: copied back


@pytest.mark.parametrize("dtype", DTYPES)
def test_zero_d_arguments(dtype):
    kernel = nv.jit(_copy_scaled)
    cpu = numba.njit(_copy_scaled)
    for value in (5, -3, 0):
        x = np.array(value).astype(dtype)
        r, expect = np.zeros((), dtype), np.zeros((), dtype)
        kernel[1, 1](r, x)
        cpu(expect, x)
        assert r.tobytes() == expect.tobytes(), (value, r, expect)
        d = nv.to_device(np.zeros((), dtype))  # device arrays too
        kernel[1, 1](d, nv.to_device(x))
        assert d.copy_to_host().tobytes() == expect.tobytes()


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int32])
def test_reductions_of_zero_d_arrays(dtype):
    kernel = nv.jit(_reduce)
    cpu = numba.njit(_reduce)
    for value in (2.5, -7, 0):
        x, xe = np.array(value, dtype), np.array(value, dtype)
        out, expect = np.zeros(1), np.zeros(1)
        kernel[1, 1](out, x)
        cpu(expect, xe)
        assert out.tobytes() == expect.tobytes() and x.tobytes() == xe.tobytes(), value


def test_repeated_launches_keep_each_arrays_value():
    """NumPy 0-d arrays are copied by the slow path at each launch; device arrays take the
    C++ launcher: each launch reads its own 0-d array."""
    kernel = nv.jit(_copy_scaled)
    for value in range(4):
        r = np.zeros((), np.float32)
        kernel[1, 1](r, np.array(value, np.float32))
        assert r[()] == value * 3 + 1
    slow = kernel.slow_path_count
    r = nv.device_array((), np.float32)
    for value in range(4):
        kernel[1, 1](r, nv.to_device(np.array(value, np.float32)))
        assert r.copy_to_host()[()] == value * 3 + 1
    assert kernel.slow_path_count == slow  # the launcher the NumPy launches made


def test_zero_d_indexing_other_than_the_empty_tuple_is_refused():
    @nv.jit
    def ellipsis(x):
        x[...] = 1.0

    with pytest.raises(VulkanUnsupportedError, match=r"'\.\.\.'"):
        ellipsis[1, 1](np.zeros(()))
