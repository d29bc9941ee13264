"""Global and closure NumPy arrays, scalars and tuples in kernels: frozen at compile time,
results equal to numba.njit's."""

import numba
import numpy as np
import pytest

import numba_vulkan as nv

pytestmark = [pytest.mark.device, pytest.mark.usefixtures("device")]

TABLE = np.array([3, -1, 4, 1, -5, 9, 2, 6], dtype=np.int32)
GRID = np.arange(12, dtype=np.float32).reshape(3, 4) * 0.5
FLAGS = np.array([True, False, True])
BIG_U = np.array([0, 2**32 - 1, 7], dtype=np.uint32)
SCALE = 3
PAIR = (2, 5)


def body(out, a, i):
    if i < out.size:
        j = a[i]
        v = TABLE[j % 8] * SCALE + TABLE[-1] + PAIR[1] + len(TABLE) + TABLE.size
        v += int(GRID[j % 3, -(j % 4)] * 4) + GRID.shape[1]
        v += BIG_U[j % 3] + (1 if FLAGS[j % 3] else 0)
        out[i] = v


def compare(body_fn, a):
    body_nv = nv.jit(body_fn)

    @nv.jit
    def kernel(out, a):
        body_nv(out, a, nv.global_id(0))

    got = np.zeros_like(a)
    kernel.forall(a.size)(got, a)
    want = np.zeros_like(a)
    cpu = numba.njit(body_fn)
    for i in range(a.size):
        cpu(want, a, i)
    return got, want, kernel


def test_global_arrays_scalars_tuples_match_numba():
    got, want, _ = compare(body, np.arange(-10, 30, dtype=np.int64))
    np.testing.assert_array_equal(got, want)


def test_closure_array():
    weights = np.array([0.25, -1.5, 2.0], dtype=np.float64)

    def body_closure(out, a, i):
        if i < out.size:
            out[i] = a[i] * weights[i % 3] + weights[-1]

    got, want, _ = compare(body_closure, np.linspace(-2, 2, 16))
    np.testing.assert_array_equal(got, want)


def test_changing_the_global_after_compilation_does_not_change_the_kernel():
    table = np.array([1, 2, 3], dtype=np.int64)

    @nv.jit
    def k(out):
        i = nv.global_id(0)
        if i < out.size:
            out[i] = table[i]

    out = np.zeros(3, np.int64)
    k.forall(3)(out)
    table[:] = 0
    k.forall(3)(out)
    np.testing.assert_array_equal(out, [1, 2, 3])


def test_storing_into_a_global_array_is_refused():
    @nv.jit
    def k(out):
        TABLE[0] = 1

    with pytest.raises(nv.VulkanUnsupportedError, match="setitem"):
        k.forall(1)(np.zeros(1))
