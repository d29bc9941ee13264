"""Front end: control flow, arrays, intrinsics and tuples, checked in the KIR interpreter."""

import numba
import numpy as np
import pytest
from kir_host import *  # lower, run_kir, check and the modes

from numba_vulkan import _core, stubs

# ---------------------------------------------------------------- control flow


def _loops(out, n, step):
    s = 0
    for i in range(n):
        s += i
    out[0] = s
    s = 0
    for i in range(2, n):
        s += i * i
    out[1] = s
    s = 0
    for i in range(n, -3, -2):
        s = s * 3 + i
    out[2] = s
    s = 0
    for i in range(-n, n, step):
        s = s * 2 + i
    out[3] = s
    s = 0
    for i in range(n):
        if i == 3:
            continue
        if i > 6:
            break
        s += i
    out[4] = s
    i = 0
    while i * i < n:
        i += 1
    out[5] = i
    s = 0
    for i in range(n):
        for j in range(i):
            if (i + j) % 3 == 0 and j > 1 or i == 7:
                s += 1
    out[6] = s


@pytest.mark.parametrize("n,step", [(0, 1), (1, 1), (5, 2), (9, 3), (10, -1), (4, -3), (6, 0)])
def test_loops(n, step):
    if step == 0:
        # range() with a zero step raises in CPython; the kernel must still terminate
        got = run_kir(_loops, (np.zeros(7, np.int64), n, step))[0]
        assert got[3] == 0
        return
    check(_loops, np.zeros(7, np.int64), n, step)


def _early_return(out, n):
    for i in range(n):
        for j in range(n):
            if i * j > 6:
                out[0] = i * 100 + j
                return
            out[1] += 1
    out[2] = -1


@pytest.mark.parametrize("n", [0, 2, 5])
def test_early_return_in_nested_loops(n):
    check(_early_return, np.zeros(3, np.int64), n)


def _and_or(out, a, b, c):
    if a > 0 and b > 0 or c:
        out[0] = 1
    if not (a > 0 or b > 0) and not c:
        out[1] = 1
    out[2] = 5 if a < b < 3 else 7
    x = a
    if x:
        out[3] = 1


@pytest.mark.parametrize("a,b,c", [(1, 1, False), (-1, 2, False), (0, -1, True), (0, 0, False),
                                   (1, 2, True), (-2, -1, False)])  # fmt: skip
def test_and_or_and_truthiness(a, b, c):
    check(_and_or, np.zeros(4, np.int64), a, b, c)


# ---------------------------------------------------------------- arrays and intrinsics


def _arrays(a, b, c, flags):
    n = a.shape[0]
    for i in range(n):
        a[i] = a[-1 - i] + len(a) + a.size + a.ndim
    r, s = b.shape
    for i in range(r):
        for j in range(s):
            b[i, j] = b[-i - 1, j] * 2 + i - j + b.shape[1]
    for i in range(c.shape[0]):
        c[i, -1, 0] = c[i, 0, -1] + c.size
    for i in range(flags.shape[0]):
        flags[i] = not flags[i]


def test_arrays_1d_2d_3d():
    a = np.arange(5, dtype=np.float64)
    b = np.arange(12, dtype=np.int64).reshape(3, 4)
    c = np.arange(24, dtype=np.int32).reshape(2, 3, 4)
    flags = np.array([True, False, True])
    check(_arrays, a, b, c, flags)


def test_non_contiguous_arrays_use_strides():
    b = np.arange(40, dtype=np.float32).reshape(5, 8)[:, ::2]
    a = np.arange(10.0)[::2]
    c = np.arange(24, dtype=np.int32).reshape(2, 3, 4).transpose(2, 1, 0)
    flags = np.array([True, False])
    argtypes = [numba.typeof(x) for x in (a, b, c, flags)]
    assert argtypes[1].layout == "A"
    lk = lower(_arrays, argtypes)
    assert [d.kind for d in lk.args] == ["array"] * 4


def _uint_and_bool(out, u, flag):
    out[0] = u + 1
    out[1] = u // 3
    out[2] = flag


def test_uint32_and_bool_arguments():
    lk = lower(_uint_and_bool, [numba.typeof(np.zeros(3, np.uint32)), numba.uint32, numba.boolean])
    K = _core.Kind
    # The argument's own type and the kind of its 4-byte slot (kir/abi.h).
    assert (lk.args[1].kind, lk.args[1].type, lk.args[1].slot) == ("scalar", K.u32, K.u32)
    assert (lk.args[2].kind, lk.args[2].type, lk.args[2].slot) == ("scalar", K.bool, K.u32)
    assert lk.args[2].slot_bytes == 4 and lk.args[2].dtype == ("bool", 4)
    check(_uint_and_bool, np.zeros(3, np.uint32), np.uint32(4000), True)
    # uint32 // int64 is int64 in Numba: exact only without integer narrowing
    check(_uint_and_bool, np.zeros(3, np.uint32), np.uint32(4000000000), False, mode=EXACT)


def _saxpy(out, x, y, a):
    i = stubs.global_id(0)
    if i < out.size:
        out[i] = a * x[i] + y[i]


def test_global_id_and_argument_declarations():
    x = np.arange(8, dtype=np.float32)
    argtypes = [numba.typeof(v) for v in (x, x, x, np.float32(2.0))]
    lk = lower(_saxpy, argtypes)
    # a.addr, 1 extent, 1 stride per array (i32 in a 32-bit-index specialisation), then the
    # f32 scalar: its exact type, its slot's kind and offset
    K = _core.Kind
    a0, a1, _, a3 = lk.args[:4]
    assert (a0.kind, a0.dtype, a0.ndim, a0.offset, a0.extents, a0.strides, a0.index) == (
        "array", ("f", 4), 1, 0, [8], [12], K.i32
    )
    assert (a1.offset, a1.extents, a1.strides, a1.slot) == (16, [24], [28], K.f32)
    assert (a3.kind, a3.type, a3.slot, a3.offset) == ("scalar", K.f32, K.f32, 48)
    # then the hidden grid base (frontend/grid.py): global_id reads it
    hidden = [(d.name, d.offset, d.slot) for d in lk.args[4:]]
    assert hidden == [(f"grid.base.{a}", o, K.u32) for a, o in zip("xyz", (52, 56, 60))]
    assert lk.grid == ((52, 56, 60), None, 4)
    assert lk.param_size == 64 and lk.writes == (True, False, False, False)
    assert [d.written for d in lk.args[:4]] == [True, False, False, False]
    # The declarations pickle (the disk cache keeps them).
    import pickle

    back = pickle.loads(pickle.dumps(lk.args))
    assert [repr(d) for d in back] == [repr(d) for d in lk.args]
    assert [(d.extents, d.written, d.index) for d in back] == [
        (d.extents, d.written, d.index) for d in lk.args
    ]
    lk64 = lower(_saxpy, argtypes, INDEX64)
    assert (lk64.args[0].extents, lk64.args[0].strides, lk64.args[0].index) == ([8], [16], K.i64)
    assert lk64.args[4].index == K.i64
    out = np.zeros(8, np.float32)
    for gid in (0, 5, 9):
        builtins = [(_core.Builtin.global_id, 0, gid)]
        args = (out, x, x + 1, np.float32(2.0))
        got = run_kir_builtins(_saxpy, args, builtins)[0]
        if gid < 8:
            out[gid] = 2.0 * x[gid] + x[gid] + 1
        np.testing.assert_array_equal(got, out)


def run_kir_builtins(fn, args, builtins):
    return run_kir(fn, args, INTS, builtins)


def _intrinsics(out):
    out[0] = stubs.local_id(1)
    out[1] = stubs.group_id(2)
    out[2] = stubs.local_size(0)
    out[3] = stubs.num_groups(1)


def test_all_intrinsics():
    B = _core.Builtin
    builtins = [(B.local_id, 1, 3), (B.group_id, 2, 4), (B.local_size, 0, 64), (B.num_groups, 1, 9)]
    got = run_kir(_intrinsics, (np.zeros(4, np.int64),), INTS, builtins)[0]
    assert list(got) == [3, 4, 64, 9]


SCALE = 3
OFFSET = 0.5


def _globals_and_tuples(out, a, b):
    t = (a, b, a + b)
    x, _, z = t
    out[0] = x * SCALE + OFFSET + z
    out[1] = t[2] - t[-1] + len(t)
    q, r = divmod(a, b)
    out[2] = q * 10 + r
    out[3] = max(t)


def test_globals_and_tuples():
    check(_globals_and_tuples, np.zeros(4), 7, -3)


def _inplace_and_tuple_index(a, b, k):
    for i in range(a.shape[0]):
        a[i] += 1.5
        a[i] *= 2
    idx = (1, 2)
    b[idx] = b[0, 0] + 1
    t = (10, 20, 30)
    b[0, 1] = t[k] + t[-k]
    b[1, 1] = b[1, 0] > b[0, 0]


@pytest.mark.parametrize("k", [0, 1, 2])
def test_inplace_ops_and_dynamic_tuple_index(k):
    check(_inplace_and_tuple_index, np.arange(4.0), np.arange(9, dtype=np.int32).reshape(3, 3), k)


def _c_and_f(c, f, out):
    for i in range(c.shape[0]):
        for j in range(c.shape[1]):
            out[i, j] = c[i, j] * 100 + f[i, j] * 10 + c[i, -1] + f[-1, j]


@pytest.mark.parametrize("mode", [EXACT, INDEX64], ids=["index32", "index64"])
def test_c_and_f_arrays_index_their_own_layout(mode):
    """2-d 'C' and 'F' arguments, negative indices included, in both index widths: with 64-bit
    indices the innermost dimension (the last of 'C', the first of 'F') indexes without the
    stride multiply (frontend/arrays.py unit_stride_dim)."""
    c = np.arange(12, dtype=np.int64).reshape(3, 4)
    f = np.asfortranarray(np.arange(12, dtype=np.int64).reshape(3, 4) * 3)
    out = np.zeros((3, 4), np.int64)
    (got_c, got_f, got) = run_kir(_c_and_f, (c, f, out), mode)
    want = np.zeros_like(out)
    numba.njit(_c_and_f)(c, f, want)
    np.testing.assert_array_equal(got, want)
