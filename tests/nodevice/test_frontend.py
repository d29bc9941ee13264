"""The front end (Numba typed IR -> KIR), tested without a device.

Each kernel is typed by the compiler's own Numba pipeline, lowered to KIR,
verified, and run by the KIR interpreter (``_core.interpret``) on the host;
its array outputs are compared with CPython running the same function on
NumPy arrays. Unsupported constructs must raise VulkanUnsupportedError with
the construct's name and source line.
"""

import math
import sys

import numba
import numpy as np
import pytest

from numba_vulkan import _core, compiler, errors, frontend, narrowing, stubs

INTS = narrowing.Mode(ints=True, floats=False)
EXACT = narrowing.Mode(ints=False, floats=False)
NARROW = narrowing.Mode(ints=True, floats=True)


def lower(fn, argtypes, mode=INTS):
    typed = compiler.type_kernel(fn, tuple(argtypes), compiler.Options())
    return frontend.lower_kernel(
        typed.func_ir, typed.typemap, typed.calltypes, tuple(argtypes), mode, fn.__name__
    )


def _storage_dtype(dtype, mode):
    if dtype == np.bool_:
        return np.dtype(np.int32)
    if mode.floats and dtype == np.float64:
        return np.dtype(np.float32)
    return dtype


def _param_bits(value, kind):
    K = _core.Kind
    if kind in (K.f32,):
        return int(np.array(value, np.float32).view(np.uint32))
    if kind == K.f64:
        return int(np.array(value, np.float64).view(np.uint64))
    bits = 32 if kind in (K.i32, K.u32) else 64
    return int(value) & ((1 << bits) - 1)


def run_kir(fn, args, mode=INTS, builtins=(), max_steps=2_000_000):
    """Lower `fn` for `args`, run it in the KIR interpreter; returns the arrays after the run."""
    argtypes = [numba.typeof(a) for a in args]
    lk = lower(fn, argtypes, mode)
    lk.module.verify()
    params, memory, outs = [], [], []
    base = 1 << 20
    K = _core.Kind
    for a, spec in zip(args, lk.argspecs):
        if spec[0] == "array":
            host = np.ascontiguousarray(a).astype(_storage_dtype(a.dtype, mode))
            memory.append((base, host.tobytes()))
            outs.append((a, host))
            ik = K.i32 if spec[6] == 4 else K.i64
            params.append(base)
            params += [_param_bits(e, ik) for e in a.shape]
            params += [_param_bits(s // a.itemsize, ik) for s in a.strides]
            base += max(host.nbytes, 8) + (1 << 16)
        else:
            _, code, nbytes, _ = spec
            if code == "b":
                params.append(1 if a else 0)
            else:
                kind = {("f", 4): K.f32, ("f", 8): K.f64, ("i", 4): K.i32, ("i", 8): K.i64,
                        ("u", 4): K.u32, ("u", 8): K.u64}[(code, nbytes)]  # fmt: skip
                params.append(_param_bits(a, kind))
    finished, _, regions = _core.interpret(lk.module, params, list(builtins), memory, max_steps)
    assert finished, "the kernel did not finish (endless loop?)"
    results = []
    for (a, host), raw in zip(outs, regions):
        out = np.frombuffer(raw, dtype=host.dtype).reshape(a.shape)
        results.append(out.astype(a.dtype))
    return results


def check(fn, *args, mode=INTS, rtol=0.0):
    """Run `fn` in CPython and in KIR; every array must match."""
    expected = [np.array(a, copy=True) if isinstance(a, np.ndarray) else a for a in args]
    fn(*expected)
    got = run_kir(fn, args, mode)
    exp_arrays = [e for e in expected if isinstance(e, np.ndarray)]
    for g, e in zip(got, exp_arrays):
        if rtol:
            np.testing.assert_allclose(g, e, rtol=rtol)
        else:
            np.testing.assert_array_equal(g, e)
    return got


# ---------------------------------------------------------------- operators on ints


def _int_ops(out, a, b):
    out[0] = a + b
    out[1] = a - b
    out[2] = a * b
    out[3] = a // b if b != 0 else 0
    out[4] = a % b if b != 0 else 0
    out[5] = a & b
    out[6] = a | b
    out[7] = a ^ b
    out[8] = -a
    out[9] = ~a
    out[10] = +a
    out[11] = abs(a)
    out[12] = min(a, b)
    out[13] = max(a, b, 3)
    out[14] = (a < b) + 2 * (a <= b) + 4 * (a > b) + 8 * (a >= b) + 16 * (a == b) + 32 * (a != b)
    out[15] = not a


INT_PAIRS = [(7, 2), (-7, 2), (7, -2), (-7, -2), (6, 3), (-6, 3), (0, 5), (5, 0), (-5, 0), (0, 0)]


@pytest.mark.parametrize("a,b", INT_PAIRS)
@pytest.mark.parametrize("mode", [INTS, EXACT], ids=["ints32", "ints64"])
def test_int_operators(a, b, mode):
    check(_int_ops, np.zeros(16, np.int64), a, b, mode=mode)


def _int_div_raw(out, a, b):
    out[0] = a // b
    out[1] = a % b
    q, r = divmod(a, b)
    out[2] = q
    out[3] = r


@pytest.mark.parametrize("a,b", INT_PAIRS)
def test_int_division_by_zero_gives_zero(a, b):
    out = np.zeros(4, np.int64)
    (got,) = run_kir(_int_div_raw, (out, a, b))
    if b == 0:
        assert list(got) == [0, 0, 0, 0]
    else:
        assert list(got) == [a // b, a % b, a // b, a % b]


def _int_true_div(out, a, b):
    out[0] = a / b


def test_int_true_division_gives_float():
    got = run_kir(_int_true_div, (np.zeros(1), 7, -2))[0]
    assert got[0] == -3.5


def _shifts(out, a, n):
    out[0] = a << n
    out[1] = a >> n


@pytest.mark.parametrize("a,n", [(5, 1), (-5, 1), (-64, 3), (1, 30), (123, 0), (-1, 31)])
def test_shifts(a, n):
    check(_shifts, np.zeros(2, np.int32), np.int32(a), np.int32(n))


def test_shift_past_the_width():
    out = np.zeros(2, np.int32)
    got = run_kir(_shifts, (out, np.int32(-8), np.int32(40)))[0]
    assert list(got) == [0, -1]


def _int_pow(out, a, n):
    out[0] = a**n
    out[1] = a**2
    out[2] = a**3
    out[3] = a**0


@pytest.mark.parametrize("a,n", [(3, 4), (-2, 5), (2, 0), (7, 1), (-3, 3), (2, 10)])
def test_int_power(a, n):
    check(_int_pow, np.zeros(4, np.int64), a, n)


def test_int_power_negative_exponent_follows_numba():
    for a, n in [(2, -1), (1, -3), (-1, -3), (-1, -2), (5, -2)]:
        got = run_kir(_int_pow, (np.zeros(4, np.int64), a, n))[0]
        assert got[0] == numba.njit(lambda x, y: x**y)(a, n), (a, n)


# ---------------------------------------------------------------- operators on floats


def _float_ops(out, a, b):
    out[0] = a + b
    out[1] = a - b
    out[2] = a * b
    out[3] = a / b
    out[4] = a // b
    out[5] = a % b
    out[6] = -a
    out[7] = abs(a)
    out[8] = min(a, b)
    out[9] = max(a, b)
    out[10] = (a < b) + 2 * (a <= b) + 4 * (a > b) + 8 * (a >= b) + 16 * (a == b)
    out[11] = a**3
    out[12] = a**-2 if a != 0 else 0.0
    out[13] = int(a)
    out[14] = float(int(b))
    out[15] = bool(a) + 0.5


FLOAT_PAIRS = [(7.5, 2.0), (-7.5, 2.0), (7.5, -2.0), (-7.5, -2.0), (6.0, 3.0), (-6.0, 3.0),
               (0.0, -5.0), (1e-100, 3.0), (5.25, 0.5), (-0.0, 1.0)]  # fmt: skip


@pytest.mark.parametrize("a,b", FLOAT_PAIRS)
def test_float_operators(a, b):
    got = check(_float_ops, np.zeros(16), a, b)[0]
    # signed zeros of // and % as CPython gives them
    assert math.copysign(1, got[4]) == math.copysign(1, a // b)
    assert math.copysign(1, got[5]) == math.copysign(1, a % b)


def _float_div(out, a, b):
    out[0] = a // b
    out[1] = a % b


def test_float_division_by_zero_follows_numpy():
    with np.errstate(all="ignore"):
        for a in (1.0, -1.0, 0.0):
            got = run_kir(_float_div, (np.zeros(2), a, 0.0))[0]
            exp = [np.floor_divide(a, 0.0), np.remainder(a, 0.0)]
            np.testing.assert_array_equal(got, exp)


def _float_divmod_arrays(q, r, x, y):
    for i in range(x.size):
        q[i] = x[i] // y[i]
        r[i] = x[i] % y[i]


def _fmod_operands(dtype, n=120):
    """Signed zeros, inf, nan, subnormals, extremes, huge ratios and random bit patterns."""
    fi = np.finfo(dtype)
    special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 3.0, -3.0, 1.0, -0.5, fi.tiny,
                        fi.smallest_subnormal, -fi.smallest_subnormal, fi.tiny / 3, fi.max,
                        -fi.max, 1e30, -651.3, -45.59], dtype)  # fmt: skip
    xs, ys = (g.ravel() for g in np.meshgrid(special, special))
    rng = np.random.default_rng(7)
    ik = np.int32 if dtype == np.float32 else np.int64
    bits = rng.integers(0, np.iinfo(ik).max, (2, n), dtype=ik)
    rand = bits.view(dtype) * rng.choice(np.array([-1, 1], dtype), (2, n))
    rand[~np.isfinite(rand)] = 1.5
    near = rng.uniform(-1e3, 1e3, (2, n)).astype(dtype)
    x = np.concatenate([xs, rand[0], near[0]]).astype(dtype)
    y = np.concatenate([ys, rand[1], near[1] / 20]).astype(dtype)
    return x, y


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_float_floordiv_mod_exact_bitwise(dtype):
    # Float % and // use an exact fmod (shift and subtract), not OpFRem: bit for bit
    # NumPy's results, subnormals, signed zeros, inf and nan included.
    x, y = _fmod_operands(dtype)
    q, r = np.zeros_like(x), np.zeros_like(x)
    got_q, got_r = run_kir(_float_divmod_arrays, (q, r, x, y), mode=EXACT,
                           max_steps=50_000_000)[:2]  # fmt: skip
    with np.errstate(all="ignore"):
        want_q, want_r = np.floor_divide(x, y), np.remainder(x, y)
    ut = np.uint32 if dtype == np.float32 else np.uint64
    for got, want in ((got_q, want_q), (got_r, want_r)):
        same = (got.view(ut) == want.view(ut)) | (np.isnan(got) & np.isnan(want))
        bad = np.flatnonzero(~same)[:5]
        assert same.all(), [(x[j], y[j], got[j], want[j]) for j in bad]


def test_float_mod_known_value():
    # OpFRem gives -13.039978 here on lavapipe.
    x, y = np.array([-651.3], np.float32), np.array([-45.59], np.float32)
    got = run_kir(_float_divmod_arrays, (np.zeros(1, np.float32), np.zeros(1, np.float32), x, y),
                  mode=EXACT)[1]  # fmt: skip
    assert got[0] == np.float32(-13.039986)


def _f32_pow(out, a, b):
    out[0] = a**b


def test_float32_power_of_float():
    got = run_kir(_f32_pow, (np.zeros(1, np.float32), np.float32(2.0), np.float32(0.5)))[0]
    assert abs(got[0] - 2**0.5) < 1e-6


def test_float_mode_narrows_float64():
    got = check(_float_ops, np.zeros(16), 7.5, -2.0, mode=NARROW, rtol=1e-6)[0]
    assert got[3] == -3.75


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
    assert [s[0] for s in lk.argspecs] == ["array"] * 4


def _uint_and_bool(out, u, flag):
    out[0] = u + 1
    out[1] = u // 3
    out[2] = flag


def test_uint32_and_bool_arguments():
    lk = lower(_uint_and_bool, [numba.typeof(np.zeros(3, np.uint32)), numba.uint32, numba.boolean])
    assert lk.argspecs[1][:3] == ("scalar", "u", 4)
    assert lk.argspecs[2][:3] == ("scalar", "b", 4)
    check(_uint_and_bool, np.zeros(3, np.uint32), np.uint32(4000), True)
    # uint32 // int64 is int64 in Numba: exact only without integer narrowing
    check(_uint_and_bool, np.zeros(3, np.uint32), np.uint32(4000000000), False, mode=EXACT)


def _saxpy(out, x, y, a):
    i = stubs.global_id(0)
    if i < out.size:
        out[i] = a * x[i] + y[i]


def test_global_id_and_argspecs():
    x = np.arange(8, dtype=np.float32)
    argtypes = [numba.typeof(v) for v in (x, x, x, np.float32(2.0))]
    lk = lower(_saxpy, argtypes)
    # a.addr, 1 extent, 1 stride per array (i32 under mode.ints), then the f32 scalar
    assert lk.argspecs[0] == ("array", np.dtype(np.float32), 1, 0, (8,), (12,), 4)
    assert lk.argspecs[1] == ("array", np.dtype(np.float32), 1, 16, (24,), (28,), 4)
    assert lk.argspecs[3] == ("scalar", "f", 4, 48)
    assert lk.param_size == 56 and lk.writes == (True, False, False, False)
    lk64 = lower(_saxpy, argtypes, EXACT)
    assert lk64.argspecs[0] == ("array", np.dtype(np.float32), 1, 0, (8,), (16,), 8)
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


# ---------------------------------------------------------------- rejected constructs


def _uses_print(a):
    print(a[0])


def _raises(a):
    if a[0] < 0:
        raise ValueError("negative")


def _slices(a):
    b = a[1:]
    b[0] = 1


def _returns(a):
    return a[0]


def _lists(a):
    x = [1, 2, 3]
    a[0] = x[1]


def _partial_index(a):
    a[0][1] = 2


def _f64_pow(a, x):
    a[0] = x**x


def _unknown_call(a):
    a[0] = math.gamma(a[1])


@pytest.mark.parametrize(
    "fn,argtypes,words",
    [
        (_uses_print, [numba.float32[:]], "calling 'print'"),
        (_raises, [numba.float32[:]], "raise statements"),
        (_slices, [numba.float32[:]], "slicing arrays"),
        (_returns, [numba.float32[:]], "returning a value from a kernel"),
        (_lists, [numba.int64[:]], "lists"),
        (_f64_pow, [numba.float64[:], numba.float64], "'**' on float64"),
        (_unknown_call, [numba.float64[:]], "calling 'math.gamma'"),
        (_partial_index, [numba.float64[:, :]], "indexing a 2-d array with 1 indices"),
        (_returns, [numba.complex128[:]], "array arguments with dtype complex128"),
    ],
)
def test_unsupported_constructs_name_the_construct_and_line(fn, argtypes, words):
    with pytest.raises(errors.VulkanUnsupportedError) as info:
        lower(fn, argtypes)
    assert words in str(info.value)
    loc = info.value.loc
    assert loc is not None and loc.filename == __file__
    first = fn.__code__.co_firstlineno
    assert first <= loc.line <= first + 4


def test_source_locations_are_recorded():
    lk = lower(_saxpy, [numba.float32[:]] * 3 + [numba.float32])
    assert lk.module.files == [__file__]
    text = lk.module.print()
    assert "elemptr" in text


# ---------------------------------------------------------------- through the backend

COMPILE_CASES = [
    (_int_ops, [numba.int64[:], numba.int64, numba.int64]),
    (_int_div_raw, [numba.int64[:], numba.int64, numba.int64]),
    (_shifts, [numba.int32[:], numba.int32, numba.int32]),
    (_int_pow, [numba.int64[:], numba.int64, numba.int64]),
    (_float_ops, [numba.float64[:], numba.float64, numba.float64]),
    (_f32_pow, [numba.float32[:], numba.float32, numba.float32]),
    (_loops, [numba.int64[:], numba.int64, numba.int64]),
    (_early_return, [numba.int64[:], numba.int64]),
    (_and_or, [numba.int64[:], numba.int64, numba.int64, numba.boolean]),
    (_arrays, [numba.float64[:], numba.int64[:, :], numba.int32[:, :, :], numba.boolean[:]]),
    (_saxpy, [numba.float32[:]] * 3 + [numba.float32]),
    (_intrinsics, [numba.int64[:]]),
    (_globals_and_tuples, [numba.float64[:], numba.int64, numba.int64]),
    (_inplace_and_tuple_index, [numba.float64[:], numba.int32[:, :], numba.int64]),
]


@pytest.mark.parametrize("fn,argtypes", COMPILE_CASES, ids=[c[0].__name__ for c in COMPILE_CASES])
@pytest.mark.parametrize("mode", [INTS, EXACT, NARROW], ids=["ints", "exact", "narrow"])
def test_kernels_compile_to_valid_spirv(fn, argtypes, mode):
    lk = lower(fn, argtypes, mode)
    lk.module.verify()
    try:
        ck = _core.compile(lk.module)
    except errors.InternalCompilerError as e:
        if "TODO" in str(e):
            pytest.skip(f"backend not ready: {e}")
        raise
    assert ck.param_size == lk.param_size
    _core.validate(ck.words)


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q"]))
