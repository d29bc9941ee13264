"""Float arithmetic on zeros the compiler can see gives IEEE 754's answers, as numba.njit's.

lavapipe's code generator shortcuts `x + 0.0`, `0.0 - x`, `0.0 * x`, `0.0 / x` and
`x / 0.0` on a constant zero (inf, NaN and -0.0 came out as 0.0 or x); the compiler
hides such zeros from it (kir/float_zeros.h, docs/codegen.md). Every device must
give njit's bits, NaN matching any NaN.
"""

import inspect
import textwrap

import numba
import numpy as np
import pytest

import numba_vulkan as nv

pytestmark = [pytest.mark.device, pytest.mark.usefixtures("device")]

VALUES = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.5, -2.0, 1e-300]


def _zero_div_x(x, u, out):
    i = nv.global_id(0)
    if i < out.size:
        out[i] = 0.0 / x[i]


def _x_div_zero(x, u, out):
    i = nv.global_id(0)
    if i < out.size:
        out[i] = x[i] / 0.0


def _zero_mul_x(x, u, out):
    i = nv.global_id(0)
    if i < out.size:
        out[i] = 0.0 * x[i]


def _zero_minus_x(x, u, out):
    i = nv.global_id(0)
    if i < out.size:
        out[i] = 0.0 - x[i]


def _x_plus_zero(x, u, out):
    i = nv.global_id(0)
    if i < out.size:
        out[i] = x[i] + 0.0


def _x_mod_zero(x, u, out):
    i = nv.global_id(0)
    if i < out.size:
        out[i] = x[i] % 0.0


def _false_div_x(x, u, out):  # a decided comparison: 300 > a uint8 is always true
    i = nv.global_id(0)
    if i < out.size:
        out[i] = (u[i] > 300) / x[i]


def _x_div_min_false(x, u, out):  # min(uint8, False) is 0: the driver can prove it
    i = nv.global_id(0)
    if i < out.size:
        out[i] = x[i] / min(u[i], False)


KERNELS = [_zero_div_x, _x_div_zero, _zero_mul_x, _zero_minus_x, _x_plus_zero, _x_mod_zero,
           _false_div_x, _x_div_min_false]  # fmt: skip


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("kernel", KERNELS, ids=lambda k: k.__name__.strip("_"))
def test_float_arithmetic_on_visible_zeros(kernel, dtype):
    x = np.array(VALUES, dtype)
    u = np.arange(len(VALUES), dtype=np.uint8)
    out = np.zeros(len(VALUES), np.float64)
    nv.jit(kernel).forall(x.size)(x, u, out)
    cpu = numba.njit(error_model="numpy")(_on_cpu(kernel))
    expected = np.zeros_like(out)
    for i in range(x.size):
        cpu(i, x, u, expected)
    nan = np.isnan(expected)
    np.testing.assert_array_equal(np.isnan(out), nan)
    assert out[~nan].tobytes() == expected[~nan].tobytes(), (out, expected)


def _on_cpu(kernel):
    """The kernel's body as a CPU function of (i, x, u, out)."""
    src = textwrap.dedent(inspect.getsource(kernel)).replace("nv.global_id(0)", "__i")
    src = src.replace(f"def {kernel.__name__}(", f"def {kernel.__name__}(__i, ", 1)
    namespace = {"nv": nv, "np": np}
    exec(src, namespace)  # noqa: S102
    return namespace[kernel.__name__]
