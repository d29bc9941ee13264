"""Numba variables that cross blocks, on the device against numba.njit, bit for bit.

The front end holds a variable as its KIR value while only its defining block reads it,
and gives it KIR variables once another block reads or defines it (frontend/lower.py).
Each function below crosses blocks in one of the ways that needs them, with int64 and
float64 values (full-range products that wrap, as njit's do); each runs as a device
function called per element (an inlined callee, with its own variables) and as the body of
a kernel, and every element must equal numba.njit's.
"""

import numba
import numpy as np
import pytest

import numba_vulkan as nv

pytestmark = [pytest.mark.device, pytest.mark.usefixtures("device")]


def read_in_other_blocks(x, n):
    t = x * 3 + 1  # defined before the branch, read in both arms and after them
    if n > 2:
        r = t * 7
    else:
        r = t - n
    return r ^ t


def redefined_in_its_block(x, n):
    y = x
    y = y * y  # a second definition in the same block, read in another block
    if n > 0:
        y = y + n
    return y


def redefined_in_another_block(x, n):
    y = x >> 3
    if n & 1:
        y = x * n
    return y + 1


def read_before_defined(x, n):
    acc = 0
    prev = 0
    for k in range(n):
        if k > 0:
            acc = acc * 31 + prev  # the previous iteration's value
        prev = x ^ (k * 2654435761)
    return acc


def conditional_expression(x, n):
    s = 0
    for k in range(n):
        s += x if (x + k) & 2 else -k  # one variable, defined in two blocks
    return s


def tuple_across_blocks(x, n):
    pair = (x * 5, x - n)
    if n > 1:
        return pair[1] * pair[0]
    return pair[0]


def floats_across_blocks(x, n):
    f = x * 0.75 + 0.1
    g = f * f
    if n > 3:
        g = g - f / 3.0
    h = f
    for k in range(n):
        h = h * 0.5 + g
    return h + f


INT_FUNCTIONS = [read_in_other_blocks, redefined_in_its_block, redefined_in_another_block,
                 read_before_defined, conditional_expression, tuple_across_blocks]  # fmt: skip
# with float64 values too, those without bitwise operators
CASES = [(f, np.int64) for f in INT_FUNCTIONS] + [
    (f, np.float64) for f in (redefined_in_its_block, tuple_across_blocks, floats_across_blocks)
]


@nv.jit
def kernel_body(xs, ns, out):  # read_in_other_blocks written in the kernel itself
    i = nv.global_id(0)
    if i < out.size:
        x = xs[i]
        n = ns[i]
        t = x * 3 + 1
        if n > 2:
            r = t * 7
        else:
            r = t - n
        out[i] = r ^ t


def _inputs(dtype):
    rng = np.random.default_rng(18)
    if dtype == np.float64:
        xs = rng.uniform(-1e3, 1e3, 256)
    else:
        xs = rng.integers(-(2**62), 2**62, 256, dtype=np.int64)
        xs[:8] = [0, 1, -1, 2**62, -(2**62), 3, 2**31, -(2**31)]
    return xs, rng.integers(0, 9, 256).astype(np.int64)


def _expected(fn, xs, ns):
    ref = numba.njit(fn)
    return np.array([ref(x, n) for x, n in zip(xs, ns)])


@pytest.mark.parametrize("fn,dtype", CASES, ids=lambda v: getattr(v, "__name__", str(v)))
def test_device_function_equals_njit(fn, dtype):
    xs, ns = _inputs(dtype)
    expected = _expected(fn, xs, ns)
    dev = nv.jit(device=True)(fn)

    @nv.jit
    def through_call(xs, ns, out):
        i = nv.global_id(0)
        if i < out.size:
            out[i] = dev(xs[i], ns[i])

    out = np.zeros(xs.size, expected.dtype)
    through_call.forall(xs.size)(xs, ns, out)
    assert out.dtype == expected.dtype
    np.testing.assert_array_equal(out.view(np.int64), expected.view(np.int64))


def test_kernel_body_equals_njit():
    xs, ns = _inputs(np.int64)
    expected = _expected(read_in_other_blocks, xs, ns)
    out = np.zeros(xs.size, np.int64)
    kernel_body.forall(xs.size)(xs, ns, out)
    np.testing.assert_array_equal(out, expected)
