"""Device functions and Numba helpers called from kernels, against CPU numba.njit.

Every kernel here is also compiled with numba.njit (the same Python source,
with the helpers jitted for the CPU) and run over the same inputs; integer
results must agree bit for bit.
"""

import operator
from collections import namedtuple

import numba
import numpy as np
import pytest
from numba import literal_unroll
from numba.core import types
from numba.extending import overload, overload_method, register_jitable

import numba_vulkan as nv

pytestmark = [
    pytest.mark.device,
    pytest.mark.usefixtures("device"),
]


def _with_globals(func, helpers):
    g = dict(func.__globals__)
    g.update(helpers)
    return type(func)(func.__code__, g, func.__name__, func.__defaults__, func.__closure__)


def run_both(body, helpers_nv, helpers_cpu, *arrays):  # arrays: (a,)
    """Run ``body(out, *arrays, i)`` for every i: on the device through a kernel that calls it
    as an @nv.jit device function (helpers: `helpers_nv`), and on the CPU with numba.njit
    (helpers: `helpers_cpu`). Returns (device result, CPU result)."""
    out_nv = np.zeros_like(arrays[0])
    out_cpu = np.zeros_like(arrays[0])
    body_nv = nv.jit(_with_globals(body, helpers_nv))

    @nv.jit
    def kernel(out, a):
        i = nv.global_id(0)
        if i < out.size:
            body_nv(out, a, i)

    kernel.forall(out_nv.size)(out_nv, *arrays)
    cpu = numba.njit(_with_globals(body, helpers_cpu))
    for i in range(out_cpu.size):
        cpu(out_cpu, *arrays, i)
    return out_nv, out_cpu


# -- helpers written once, jitted for both targets

def _sq(x):
    return x * x


def _qr(a, b=3):
    """Several returns and a tuple result, with a default argument."""
    if b == 0:
        return 0, 0
    return a // b, a % b


def _clamp(x, lo=0, hi=10):
    if x < lo:
        return lo
    elif x > hi:
        return hi
    return x


def _level3(x):
    return _clamp(x, hi=5) + 1


def _level2(x):
    q, r = _qr(x, b=4)
    return _sq(q) + _level3(r)


def _level1(x):
    return _level2(x) - _level2(-x)


def _sum_in_loop(x):
    acc = 0
    for k in range(4):
        acc += _sq(x + k)
    return acc


def _store(arr, i, v):
    arr[i] = v


HELPERS = ("_sq", "_qr", "_clamp", "_level3", "_level2", "_level1", "_sum_in_loop", "_store")


def _jitted(decorator):
    """Every helper jitted with `decorator`, resolving each other's names to jitted versions."""
    g = dict(globals())
    out = {}
    for name in HELPERS:
        f = globals()[name]
        out[name] = decorator(type(f)(f.__code__, g, name, f.__defaults__, f.__closure__))
    g.update(out)
    return out


NV = _jitted(nv.jit)
NV_DEVICE = _jitted(nv.jit(device=True))
NJIT = _jitted(numba.njit)


def k_calls(out, a, i):
    if i < out.size:
        x = a[i]
        q, r = _qr(x)
        out[i] = _level1(x) * 7 + q + r + _qr(x, 5)[1] + _clamp(x, hi=3, lo=-2) + _sum_in_loop(x)


def k_store(out, a, i):
    if i < out.size:
        _store(out, i, _sq(a[i]) - 3)


INPUTS = np.arange(-40, 40, dtype=np.int64)


@pytest.mark.parametrize("helpers", [NV, NV_DEVICE, NJIT], ids=["nv.jit", "device=True", "njit"])
def test_device_functions_match_numba(helpers):
    got, want = run_both(k_calls, helpers, NJIT, INPUTS)
    np.testing.assert_array_equal(got, want)


def test_device_function_stores_into_array_argument():
    got, want = run_both(k_store, NV, NJIT, INPUTS)
    np.testing.assert_array_equal(got, want)


def test_int32_helper_keeps_int32_semantics():
    a = np.array([2**31 - 1, -(2**31), 12345, -7], dtype=np.int32)
    got, want = run_both(k_calls, NV, NJIT, a)
    np.testing.assert_array_equal(got, want)


def test_float_helpers_match_numba():
    a = np.linspace(-3, 3, 64).astype(np.float32)

    def body(out, a, i):
        if i < out.size:
            out[i] = _clamp(a[i], -1.5, 2.25) * _sq(a[i])

    got, want = run_both(body, NV, NJIT, a)
    np.testing.assert_array_equal(got, want)


# -- Numba helpers: overload, register_jitable, overload_method


def triple(x):
    return x * 3


@overload(triple)
def _ov_triple(x):
    if isinstance(x, types.Integer):
        return lambda x: x * 3
    return None


@register_jitable
def scaled(a, b=2):
    return a * 10 + b


@overload_method(types.Array, "first_plus")
def _ov_first_plus(arr, k):
    def impl(arr, k):
        return arr[0] + k

    return impl


def k_numba_helpers(out, a, i):
    if i < out.size:
        out[i] = triple(a[i]) + scaled(a[i]) + scaled(a[i], b=-4) + a.first_plus(i)


def test_overload_register_jitable_overload_method():
    got, want = run_both(k_numba_helpers, {}, {}, INPUTS)
    np.testing.assert_array_equal(got, want)


# -- tuples, namedtuples, literal_unroll

Point = namedtuple("Point", ["x", "y"])


def _make_point(v):
    return Point(v, y=v * 2 + 1)


def _swap(t):
    a, b = t
    return b, a


def k_tuples(out, a, i):
    if i < out.size:
        v = a[i]
        p = _make_point(v)
        s = _swap((v, p.y))
        acc = 0
        for e in literal_unroll((1, 2.5, np.int32(3), True)):
            acc += int(e * v)
        t = (v, v + 1, v + 2)
        out[i] = p.x - p[1] + s[0] * 3 + s[1] + acc + t[2] + t[-1] + len(t)


def test_tuples_namedtuples_literal_unroll():
    helpers_nv = {"_make_point": nv.jit(_make_point), "_swap": nv.jit(_swap)}
    helpers_cpu = {"_make_point": numba.njit(_make_point), "_swap": numba.njit(_swap)}
    got, want = run_both(k_tuples, helpers_nv, helpers_cpu, INPUTS)
    np.testing.assert_array_equal(got, want)


_UNROLL_ARRAYS = (np.float64([1.0, 2.0]), np.float64([3.0, 4.0, 5.0]))


def test_literal_unroll_over_arrays_of_one_type():
    """numba-cuda's test_array_reductions style: one loop body per array (the loop's index
    cannot choose among compile-time arrays; typing/literal_unroll.py)."""

    def body(out):
        i = 0
        for a in literal_unroll(_UNROLL_ARRAYS):
            out[i] = a.sum()
            i += 1  # noqa: SIM113 -- literal_unroll takes no enumerate

    got, want = np.zeros(2), np.zeros(2)
    nv.jit(body)[1, 1](got)
    numba.njit(body)(want)
    np.testing.assert_array_equal(got, want)


def test_same_helper_called_from_two_kernels_and_types():
    @nv.jit
    def add1(x):
        return x + 1

    @nv.jit
    def k_int(out):
        i = nv.global_id(0)
        if i < out.size:
            out[i] = add1(i) + add1(add1(i))

    @nv.jit
    def k_float(out):
        i = nv.global_id(0)
        if i < out.size:
            out[i] = add1(i * 0.5)

    a = np.zeros(8, np.int64)
    b = np.zeros(8, np.float32)
    k_int.forall(8)(a)
    k_float.forall(8)(b)
    np.testing.assert_array_equal(a, 2 * np.arange(8) + 3)
    np.testing.assert_array_equal(b, np.arange(8) * 0.5 + 1)


# -- control flow: returns from nested loops inside callees, calls inside loops


def _find(a, x):
    for j in range(a.size):
        for m in range(3):
            if a[j] + m == x:
                return j * 3 + m  # leaves two loops of the callee at once
    return -1


def _collatz(n):
    steps = 0
    while n != 1:
        if steps > 50:
            return -steps
        if n % 2 == 0:
            n //= 2
        else:
            n = 3 * n + 1
        steps += 1
    return steps


def k_control(out, a, i):
    if i < out.size:
        acc = 0
        for t in range(3):
            r = _find(a, a[i] + t)
            if r < 0:
                continue
            acc += r + _collatz(abs(a[i]) + 1 + t)
            if acc > 100:
                break
        out[i] = acc


def test_returns_from_nested_loops_and_calls_in_loops():
    a = np.array([5, 3, 9, -2, 7, 7, 1, 30, 12, 0, 27, -9], dtype=np.int64)
    got, want = run_both(
        k_control,
        {"_find": nv.jit(_find), "_collatz": nv.jit(_collatz)},
        {"_find": numba.njit(_find), "_collatz": numba.njit(_collatz)},
        a,
    )
    np.testing.assert_array_equal(got, want)


def test_intrinsics_inside_device_functions():
    @nv.jit(device=True)
    def where():
        return nv.global_id(0), nv.local_id(0), nv.group_id(0)

    @nv.jit
    def k(out):
        g, l, w = where()
        if g < out.shape[0]:
            out[g, 0] = g
            out[g, 1] = l
            out[g, 2] = w

    out = np.zeros((100, 3), np.int64)
    k[4, 32](out)
    g = np.arange(100)
    np.testing.assert_array_equal(out, np.stack([g, g % 32, g // 32], axis=1))


# -- None defaults, *args, namedtuples through calls, mixed tuples

P3 = namedtuple("P3", "a b c")


def _opt(x, y=None):
    if y is None:
        return x
    return x + y


def _star(*args):
    return args[0] + len(args)


def _rotate(p):
    return P3(p.c, p.a * 2, p.b > 0)


def _mixed(x):
    return x, x * 0.5, x > 3


def k_args(out, a, i):
    if i < out.size:
        v = a[i]
        p = _rotate(P3(v, 1.5, False))
        m = _mixed(v)
        r = _opt(v) + _opt(v, 3) + _star(v, 2, 3) + _star(v) + p.b + (1 if p.c else 0)
        out[i] = r + m[0] + int(m[1] * 4) + m[2] + (v is None) + (v is not None)


def test_none_defaults_star_args_namedtuple_arguments_mixed_tuples():
    names = ("_opt", "_star", "_rotate", "_mixed")
    got, want = run_both(
        k_args,
        {n: nv.jit(globals()[n]) for n in names},
        {n: numba.njit(globals()[n]) for n in names},
        np.arange(-5, 11, dtype=np.int64),
    )
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("op", [operator.add, operator.sub, operator.mul, operator.truediv,
                                operator.floordiv, operator.mod, operator.pow, operator.lt,
                                operator.and_, operator.lshift], ids=lambda f: f.__name__)
def test_operator_module_functions(op):
    """``operator.add(x, y)`` & co. called as functions: what ``x + y`` computes (njit's)."""
    def k(a, b, out):
        for i in range(out.size):
            out[i] = op(a[i], b[i])

    for dt in (np.int64, np.float64):
        if dt == np.float64 and op in (operator.and_, operator.lshift):
            continue
        a = np.array([-7, 7, 9], dt)
        b = np.array([3, -2, 2], dt) if op is not operator.lshift else np.array([3, 1, 2], dt)
        got, want = np.zeros(3), np.zeros(3)
        nv.jit(k)[1, 1](a, b, got)
        numba.njit(k)(a, b, want)
        np.testing.assert_array_equal(got, want)
