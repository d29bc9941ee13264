"""nv.atomic.*: every operation on global and shared arrays of int32, uint32, int64, uint64,
float32 and float64, with many invocations colliding on one element. The checks use the
values each invocation got back (the old values), not only the final element: a lost
update or a wrong old value fails them. Float operations also run as compare-and-swap
loops (NUMBA_VULKAN_ATOMIC_CAS=1)."""

import collections

import numpy as np
import pytest

import numba_vulkan as nv

pytestmark = [pytest.mark.device, pytest.mark.usefixtures("device")]

N = 256  # invocations, all on the same few elements
INTS = [np.int32, np.uint32, np.int64, np.uint64]
FLOATS = [np.float32, np.float64]


def _vals(dtype, n=N, seed=0):
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind == "f":
        return rng.integers(-8, 9, n).astype(dtype)  # integer-valued: sums are exact
    if np.dtype(dtype).kind == "u":
        return rng.integers(1, 1 << 20, n).astype(dtype)
    return rng.integers(-(1 << 20), 1 << 20, n).astype(dtype)


def _make_common(shared, dtype):
    """add, sub, max, min and exch on elements 0..4; shared: through a shared copy."""
    if shared:
        @nv.jit
        def kernel(arr, olds, vals):
            s = nv.shared.array(8, dtype)
            t = nv.local_id(0)
            if t < 8:
                s[t] = arr[t]
            nv.barrier()
            v = vals[t]
            olds[0, t] = nv.atomic.add(s, 0, v)
            olds[1, t] = nv.atomic.sub(s, 1, v)
            olds[2, t] = nv.atomic.max(s, 2, v)
            olds[3, t] = nv.atomic.min(s, (3,), v)
            olds[4, t] = nv.atomic.exch(s, 4, v)
            nv.barrier()
            if t < 8:
                arr[t] = s[t]
    else:
        @nv.jit
        def kernel(arr, olds, vals):
            i = nv.global_id(0)
            v = vals[i]
            olds[0, i] = nv.atomic.add(arr, 0, v)
            olds[1, i] = nv.atomic.sub(arr, 1, v)
            olds[2, i] = nv.atomic.max(arr, 2, v)
            olds[3, i] = nv.atomic.min(arr, (3,), v)
            olds[4, i] = nv.atomic.exch(arr, 4, v)
    return kernel


def _check_chain(init, olds, vals, final, step):
    """The old values of an add/sub chain: every invocation's old value and the final value
    are the initial value and the values the invocations left (old op val), as multisets.
    A lost update, or an old value that no invocation left, breaks the equality."""
    left = collections.Counter([step(o, v) for o, v in zip(olds.tolist(), vals.tolist())])
    left[init.item()] += 1
    seen = collections.Counter(olds.tolist())
    seen[final.item()] += 1
    assert left == seen


def _run_common(dtype, shared):
    vals = _vals(dtype)
    init = np.array([5, 1000, 3, 3, 7, 0, 0, 0], dtype=dtype)
    arr = init.copy()
    olds = np.zeros((5, N), dtype=dtype)
    kernel = _make_common(shared, dtype)
    kernel[1, N](arr, olds, vals)
    finite = vals
    with np.errstate(over="ignore"):
        _check_chain(init[0], olds[0], vals, arr[0], lambda c, v: (np.array([c], dtype) + np.array([v], dtype))[0].item())
        _check_chain(init[1], olds[1], vals, arr[1], lambda c, v: (np.array([c], dtype) - np.array([v], dtype))[0].item())
    assert arr[2] == max(init[2], finite.max())
    assert arr[3] == min(init[3], finite.min())
    assert all(o == init[2] or o in finite for o in olds[2])
    assert all(o == init[3] or o in finite for o in olds[3])
    # exch: every value is either some invocation's old value or the final one, once.
    got = sorted(olds[4].tolist() + [arr[4].item()], key=repr)
    want = sorted(vals.tolist() + [init[4].item()], key=repr)
    assert got == want


@pytest.mark.parametrize("dtype", INTS + FLOATS, ids=lambda d: np.dtype(d).name)
def test_global_atomics(dtype):
    _run_common(dtype, shared=False)


@pytest.mark.parametrize("dtype", INTS + FLOATS, ids=lambda d: np.dtype(d).name)
def test_shared_atomics(dtype):
    _run_common(dtype, shared=True)


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: np.dtype(d).name)
def test_float_min_max_follow_python(dtype):
    """max(old, val)/min(old, val) as Python computes them: a NaN val is ignored, a NaN
    element stays NaN."""

    @nv.jit
    def kernel(arr, vals):
        i = nv.global_id(0)
        nv.atomic.max(arr, 0, vals[i])
        nv.atomic.min(arr, 1, vals[i])
        nv.atomic.max(arr, 2, vals[i])

    vals = _vals(dtype)
    vals[::7] = np.nan
    arr = np.array([0, 0, np.nan], dtype=dtype)
    kernel[1, N](arr, vals)
    assert arr[0] == max(0, np.nanmax(vals))
    assert arr[1] == min(0, np.nanmin(vals))
    assert np.isnan(arr[2])


@pytest.mark.parametrize("shared", [False, True], ids=["global", "shared"])
@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: np.dtype(d).name)
def test_float_atomics_as_cas_loops(dtype, shared, monkeypatch):
    monkeypatch.setenv("NUMBA_VULKAN_ATOMIC_CAS", "1")
    _run_common(dtype, shared)  # a fresh kernel: compiled with the loops


def _int_ops_kernel():
    @nv.jit
    def kernel(arr, olds, n):
        i = nv.global_id(0)
        if i < n:
            olds[0, i] = nv.atomic.or_(arr, 0, 1 << (i % 31))
            olds[1, i] = nv.atomic.and_(arr, 1, ~(1 << (i % 31)))
            olds[2, i] = nv.atomic.xor(arr, 2, i * 7919)
            olds[3, i] = nv.atomic.inc(arr, 3, 10)
            olds[4, i] = nv.atomic.dec(arr, 4, 10)
            olds[5, i] = nv.atomic.cas(arr, 5, 0, i + 1)
    return kernel


_INT_KERNEL = _int_ops_kernel()


@pytest.mark.parametrize("dtype", INTS, ids=lambda d: np.dtype(d).name)
def test_integer_only_atomics(dtype):
    n = 100
    arr = np.zeros(8, dtype=dtype)
    arr[1] = np.array(-1).astype(dtype) if np.dtype(dtype).kind == "i" else np.iinfo(dtype).max
    olds = np.zeros((6, n), dtype=dtype)
    _INT_KERNEL[2, 64](arr, olds, n)
    idx = np.arange(n)
    bits = np.array([1 << (i % 31) for i in idx], dtype=dtype)
    assert arr[0] == np.bitwise_or.reduce(bits)
    assert arr[1] == np.bitwise_and.reduce(np.concatenate([[arr[1] | np.bitwise_or.reduce(bits)],
                                                           ~bits]).astype(dtype))
    assert arr[2] == np.bitwise_xor.reduce((idx * 7919).astype(dtype))
    # inc wraps at 10 (CUDA's atomicInc): the old values are 0..10 repeated, in some order.
    assert sorted(olds[3].tolist()) == sorted(k % 11 for k in range(n))
    assert arr[3] == n % 11
    # dec: 0 -> 10 -> 9 ... -> 0 -> 10 (CUDA's atomicDec).
    seq, cur = [], 0
    for _ in range(n):
        seq.append(cur)
        cur = 10 if cur == 0 or cur > 10 else cur - 1
    assert sorted(olds[4].tolist()) == sorted(seq)
    assert arr[4] == cur
    # cas: exactly one invocation found 0 and stored its id + 1; the rest saw that value.
    winners = np.flatnonzero(olds[5] == 0)
    assert len(winners) == 1
    assert arr[5] == winners[0] + 1
    assert np.all(np.delete(olds[5], winners) == arr[5])


def test_atomic_2d_index_and_histogram_collisions():
    @nv.jit
    def hist2d(data, out):
        i = nv.global_id(0)
        if i < data.size:
            nv.atomic.add(out, (data[i] % 4, data[i] // 4 % 4), 1)

    data = np.random.default_rng(1).integers(0, 16, 20000).astype(np.int32)
    out = np.zeros((4, 4), np.int32)
    hist2d.forall(data.size)(data, out)
    want = np.zeros((4, 4), np.int32)
    np.add.at(want, (data % 4, data // 4 % 4), 1)
    np.testing.assert_array_equal(out, want)


def test_atomics_refuse_bad_arrays():
    @nv.jit
    def on_local(out):
        a = nv.local.array(4, np.int32)
        a[0] = 0
        out[0] = nv.atomic.add(a, 0, 1)

    with pytest.raises(nv.VulkanUnsupportedError, match="local array"):
        on_local[1, 1](np.zeros(1, np.int32))

    @nv.jit
    def on_int8(out):
        nv.atomic.add(out, 0, 1)

    with pytest.raises(Exception, match="int8"):
        on_int8[1, 1](np.zeros(1, np.int8))

    @nv.jit
    def float_and(out):
        nv.atomic.and_(out, 0, 1.0)

    with pytest.raises(Exception, match="float"):
        float_and[1, 1](np.zeros(1, np.float32))


# ---------------------------------------------------------------- numba.cuda's nanmin/nanmax


def _nan_kernel(op, shared):
    @nv.jit
    def kernel(arr, olds, vals):
        t = nv.local_id(0)
        if shared:
            s = nv.shared.array(4, np.float64)
            if t < 4:
                s[t] = arr[t]
            nv.barrier()
            olds[t] = op(s, t % 4, vals[t])
            nv.barrier()
            if t < 4:
                arr[t] = s[t]
        else:
            olds[t] = op(arr, t % 4, vals[t])
    return kernel


@pytest.mark.parametrize("shared", [False, True], ids=["global", "shared"])
@pytest.mark.parametrize("name", ["nanmin", "nanmax"])
def test_nanmin_nanmax_treat_nan_as_missing(name, shared):
    """A NaN value changes nothing; a NaN element takes the value (numba.cuda's rule, where
    atomic.min/max would leave the NaN); the old values returned are a serial order's."""
    vals = _vals(np.float64, 64, seed=4)
    vals[::5] = np.nan
    arr = np.array([np.nan, 3.0, np.nan, -2.0])
    orig = arr.copy()
    olds = np.zeros(64)
    _nan_kernel(getattr(nv.atomic, name), shared)[1, 64](arr, olds, vals)
    pick = np.fmin if name == "nanmin" else np.fmax
    for e in range(4):
        mine = vals[e::4]
        assert np.array_equal(arr[e], pick.reduce(np.append(orig[e], mine)), equal_nan=True)
        # each old value is the element after some subset of the others' updates
        assert all(np.isnan(o) and np.isnan(orig[e]) or o in np.append(orig[e], mine)
                   for o in olds[e::4])


def test_nanmin_nanmax_on_integers_are_min_max():
    @nv.jit
    def kernel(arr, vals):
        t = nv.global_id(0)
        nv.atomic.nanmax(arr, 0, vals[t])
        nv.atomic.nanmin(arr, 1, vals[t])

    vals = _vals(np.int64, 256, seed=5)
    arr = np.array([vals[0], vals[0]])
    kernel[4, 64](arr, vals)
    assert arr.tolist() == [vals.max(), vals.min()]


@pytest.mark.parametrize("dtype", INTS)
def test_compare_and_swap_is_cas_on_element_0(dtype):
    @nv.jit
    def kernel(arr, olds):
        t = nv.global_id(0)
        olds[t] = nv.atomic.compare_and_swap(arr, 0, t + 1)  # one invocation wins

    arr = np.zeros(3, dtype)
    olds = np.zeros(128, dtype)
    kernel[2, 64](arr, olds)
    winner = int(arr[0]) - 1
    assert 0 <= winner < 128 and arr[1:].tolist() == [0, 0]
    assert olds[winner] == 0 and np.all(np.delete(olds, winner) == winner + 1)


@nv.jit
def _shared_op_helper(arr, vals, op, n):
    s = nv.shared.array(n, np.float64)  # written by a float CAS loop: held as bits
    t = nv.local_id(0)
    if t < n:
        s[t] = arr[t]
    nv.barrier()
    op(s, t % n, vals[t])
    nv.barrier()
    if t < n:
        arr[t] = s[t]


def test_float_atomic_passed_to_a_helper_on_its_shared_array():
    @nv.jit
    def kernel(arr, vals):
        _shared_op_helper(arr, vals, nv.atomic.max, 4)

    vals = _vals(np.float64, 64, seed=6)
    arr = np.full(4, -100.0)
    kernel[1, 64](arr, vals)
    np.testing.assert_array_equal(arr, vals.reshape(16, 4).max(axis=0))
