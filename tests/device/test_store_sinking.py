"""spirv::SinkStores on real kernels (src/core/spirv/store_sinking.h): a shared element stored
and then overwritten by guarded selections is stored once, with the value each path left.
Each kernel's result is checked against NumPy element by element, with guards that are
false for some invocations, true for others and nested; and the module is checked for the
single store where the pass applies, and for both stores where a read stands between."""

import re

import numpy as np
import pytest

import numba_vulkan as nv
from numba import float32, int64

pytestmark = [pytest.mark.device, pytest.mark.usefixtures("device")]

T = 16


def _shared_stores(kernel, *args):
    """OpStores into Workgroup memory in the kernel's SPIR-V (as compiled for the device)."""
    text = kernel.inspect_spirv(*args)
    workgroup = set(re.findall(r"(%\S+) = OpAccessChain %_ptr_Workgroup_\S+", text))
    stores = re.findall(r"OpStore (%\S+) ", text)
    return sum(1 for s in stores if s in workgroup)


@nv.jit
def _tile(a, out, limit):
    s = nv.shared.array(T, float32)
    t = nv.local_id(0)
    s[t] = 0
    if t < limit:
        if t % 3 != 0:
            s[t] = a[t]
        else:
            s[t] = -a[t]
    nv.syncthreads()
    out[t] = s[(t + 1) % T]


@pytest.mark.parametrize("limit", [0, 5, T])
def test_zero_then_guarded_values(limit):
    a = np.arange(1, T + 1, dtype=np.float32)
    out = np.zeros(T, np.float32)
    _tile[1, T](a, out, limit)
    t = np.arange(T)
    s = np.where(t < limit, np.where(t % 3 != 0, a, -a), 0).astype(np.float32)
    np.testing.assert_array_equal(out, s[(t + 1) % T])
    assert _shared_stores(_tile, a, out, limit) == 1


@nv.jit
def _read_between(a, out, seen):
    s = nv.shared.array(T, int64)
    t = nv.local_id(0)
    s[t] = 7
    if t < 8:
        seen[t] = s[t]  # reads the first store: it must stay
        s[t] = a[t]
    nv.syncthreads()
    out[t] = s[T - 1 - t]


def test_a_read_between_keeps_both_stores():
    a = np.arange(100, 100 + T, dtype=np.int64)
    out = np.zeros(T, np.int64)
    seen = np.zeros(T, np.int64)
    _read_between[1, T](a, out, seen)
    t = np.arange(T)
    s = np.where(t < 8, a, 7)
    np.testing.assert_array_equal(out, s[T - 1 - t])
    np.testing.assert_array_equal(seen, np.where(t < 8, 7, 0))
    assert _shared_stores(_read_between, a, out, seen) == 2


@nv.jit
def _two_tiles(a, b, out, n):
    sa = nv.shared.array(T, float32)
    sb = nv.shared.array(T, float32)
    t = nv.local_id(0)
    for i in range(2):
        sa[t] = 0
        sb[t] = 0
        if t + i * 4 < n:
            sa[t] = a[t + i * 4]
        if t < n - i:
            sb[t] = b[t]
        nv.syncthreads()
        acc = float32(0)
        for j in range(T):
            acc += sa[j] * sb[(t + j) % T]
        out[i, t] = acc
        nv.syncthreads()


def test_two_tiles_over_a_loop_as_the_tiled_matmul():
    rng = np.random.default_rng(3)
    a = rng.integers(-4, 5, T + 8).astype(np.float32)
    b = rng.integers(-4, 5, T).astype(np.float32)
    n = 11
    out = np.zeros((2, T), np.float32)
    _two_tiles[1, T](a, b, out, np.int64(n))
    t = np.arange(T)
    want = np.zeros((2, T), np.float32)
    for i in range(2):
        sa = np.where(t + i * 4 < n, a[np.minimum(t + i * 4, a.size - 1)], 0)
        sb = np.where(t < n - i, b, 0)
        for k in range(T):
            want[i, k] = sum(sa[j] * sb[(k + j) % T] for j in range(T))
    np.testing.assert_array_equal(out, want)
    assert _shared_stores(_two_tiles, a, b, out, np.int64(n)) == 2
