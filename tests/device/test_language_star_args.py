"""Tuples in calls and loops, against CPU numba.njit bit for bit: star arguments,
``f(a, *t)`` of a tuple t (frontend/calls.py, _fold_star_args) to device functions,
closures, functions taking ``*args`` and builtins; ``for v in t`` over a tuple of values
of one type, also in enumerate and zip (frontend/iterators.py, TupleIter)."""

import numba
import numpy as np
import pytest

import numba_vulkan as nv

pytestmark = [
    pytest.mark.device,
    pytest.mark.usefixtures("device"),
]


def _helper(a, b, c=3):
    return a * 100 + b * 10 + c


def _apply(func, *args):
    return func(*args)


def _add3(x, y, z):
    return x - 2 * y + 7 * z


def _sum_of(*args):
    s = 0
    for v in args:
        s += v
    return s


def _body(out, x, i):
    t = (x[i], 2)
    out[i, 0] = _helper(*t)
    out[i, 1] = _helper(1, *t)  # (1,) + tuple(t): Python's spelling of the call
    z = complex(*t)  # was complex() = 0j before star arguments were folded
    out[i, 2] = z.real + z.imag * 1000
    out[i, 3] = max(*t) + min(*(3, x[i]))
    out[i, 4] = _apply(_add3, x[i], 4, 5)  # func(*args) inside _apply
    out[i, 5] = _apply(_helper, 1, 2)
    out[i, 6] = _sum_of(*t, x[i], *(5, 6))
    y = 10

    def inner(p, q):  # a closure over y
        return p * y + q

    out[i, 7] = _apply(inner, x[i], 4)  # Numba refuses inner(*t) of a local closure
    out[i, 8] = _apply(inner, 3, x[i])
    u = t + (x[i] * 3,)
    out[i, 9] = _add3(*u)


def _with(func, names, wrap):
    g = dict(func.__globals__)
    g.update({n: wrap(g[n]) for n in names})
    return type(func)(func.__code__, g, func.__name__, func.__defaults__, func.__closure__)


_HELPERS = ("_helper", "_apply", "_add3", "_sum_of")


def _rows(cpu_body, device_body, x, want):
    """Row i of `want` from cpu_body(want, x, i) under numba.njit, and the same rows from
    device_body in a kernel of one invocation per row: the device's rows (they must be
    equal)."""
    for i in range(x.size):
        cpu_body(want, x, i)

    @nv.jit
    def kernel(out, x):
        i = nv.global_id(0)
        if i < x.size:
            device_body(out, x, i)

    got = np.zeros_like(want)
    kernel.forall(x.size)(got, x)
    np.testing.assert_array_equal(got, want)
    return got


def test_star_arguments_of_device_functions_closures_and_builtins():
    x = np.arange(-3, 5, dtype=np.int64)
    got = _rows(numba.njit(_with(_body, _HELPERS, numba.njit)),
                nv.jit(_with(_body, _HELPERS, nv.jit)), x, np.zeros((x.size, 10), np.int64))
    assert got[:, 2].any()  # complex(*t) is not 0j


def test_star_argument_holding_a_function_is_refused():
    """``f(g, *t)`` is ``f(*((g,) + t))``: a tuple holding a function, which kernels do not
    have (as values); refused by name, not an internal error."""

    def body(out, x):
        t = (x[0], 2)
        out[0] = _apply(_add3, x[0], *t)

    kernel = nv.jit(_with(body, _HELPERS, nv.jit))
    with pytest.raises(nv.VulkanUnsupportedError, match="tuples holding"):
        kernel[1, 1](np.zeros(1, np.int64), np.ones(1, np.int64))


def _arrays_body(out, a, b):
    arrays = (a, b)
    out[0] = _pair_sum(*arrays)
    out[1] = _pair_sum(b, *(a,))


def _pair_sum(p, q):
    return p.sum() * 10 + q[0]


def test_star_argument_of_a_tuple_of_arrays():
    a = np.array([1.5, 2.0, 3.25])
    b = np.array([4.0, 8.0])
    want = np.zeros(2)
    numba.njit(_with(_arrays_body, ("_pair_sum",), numba.njit))(want, a, b)
    got = np.zeros(2)
    nv.jit(_with(_arrays_body, ("_pair_sum",), nv.jit))[1, 1](got, a, b)
    np.testing.assert_array_equal(got, want)


def _loops(out, x, i):
    acc = 0.0
    for v in (x[i], x[i] * 2.5, -x[i]):
        acc = acc * 3 + v
    out[i, 0] = acc
    n = 0
    for k in (1, 2, 3):  # literals of one type
        n = n * 10 + k * i
    out[i, 1] = n
    for j, v in enumerate((x[i], 7.0)):
        out[i, 2] += (j + 1) * v
    for p, q in zip((1, 2, 3), (x[i], 0.5, 4.0)):
        out[i, 3] += p * q
    s = 0j
    for z in (1 + 2j, complex(x[i], 1.0)):
        s = s * 2 + z
    out[i, 4] = s.real * 100 + s.imag
    early = -1.0
    for v in (5.0, x[i], 9.0):
        if v == x[i]:
            early = v
            break
    out[i, 5] = early


def test_loops_over_tuples():
    x = np.array([0.0, 1.5, -2.25, 5.0, 9.0])
    _rows(numba.njit(_loops), nv.jit(_loops), x, np.zeros((x.size, 6)))


def test_loop_over_a_tuple_of_arrays_is_refused():
    @nv.jit
    def kernel(out, a, b):
        for arr in (a, b):
            out[0] += arr[0]

    with pytest.raises(nv.VulkanUnsupportedError, match="iterating over UniTuple.*literal_unroll"):
        kernel[1, 1](np.zeros(1), np.ones(2), np.ones(2))
