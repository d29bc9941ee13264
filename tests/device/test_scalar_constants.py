"""Scalar constructors of constants (``np.float32(0.5)``, ``numba.int32(3)``) folded before
typing (typing/scalar_constants.py): the kernel's results equal numba.njit's bit for bit,
folded or not, and only the exact conversions are folded."""

import numba
import numpy as np
import pytest
from numba.core import ir

import numba_vulkan as nv
from numba_vulkan.typing import scalar_constants

pytestmark = [pytest.mark.device, pytest.mark.usefixtures("device")]

N = 8


def body(out, x, i):
    """Each line computes one column of `out` from x[i] and constructed constants."""
    v = x[i]
    out[i, 0] = v * np.float32(0.1) + np.float32(2)  # rounds: 0.1 is not a float32
    out[i, 1] = v * numba.float32(1e-3) + numba.float32(True)
    out[i, 2] = np.float32(np.int32(7) * v) + np.float32(-(2**53))
    out[i, 3] = np.float32(np.int64(2**53 + 1))  # the outer call stays: a NumPy argument
    out[i, 4] = np.float32(np.uint64(2**64 - 1) % np.uint64(1000))
    out[i, 5] = np.float32(np.int8(-2.9)) + np.float32(np.uint8(255)) * v
    out[i, 6] = np.float32(3.4e38) * np.float32(10.0)  # inf from the product, not a fold
    out[i, 7] = np.float32(np.int16(300)) + np.float32(np.float64(1e-300)) * v


SIG = "void(float32[:, ::1], float32[::1], int64)"


def test_folded_constructors_give_numba_njit_bits():
    x = np.linspace(-3, 3, 16).astype(np.float32)
    body_nv = nv.jit(body)

    @nv.jit
    def kernel(out, x):
        i = nv.global_id(0)
        if i < x.size:
            body_nv(out, x, i)

    got = np.zeros((x.size, N), np.float32)
    kernel.forall(x.size)(got, x)
    want = np.zeros_like(got)
    cpu = numba.njit(body)
    for i in range(x.size):
        cpu(want, x, i)
    np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))


def test_int64_and_wrapping_constructors_match_numba():
    def kernel(out, x):
        i = nv.global_id(0)
        if i < x.size:
            out[i] = x[i] * np.int64(-(2**62)) + np.int32(-7) - np.int8(300 - 256)

    x = np.arange(-4, 4, dtype=np.int64)
    got = np.zeros_like(x)
    nv.jit(kernel).forall(x.size)(got, x)
    want = x * np.int64(-(2**62)) + np.int64(-7) - np.int64(44)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize(
    "target, arg, expected",
    [
        (np.float32, 0.1, np.float32(0.1)),
        (np.float32, 2**53, np.float32(2**53)),
        (np.float32, 2**53 + 1, None),  # through float64 it would round twice
        # ... and does: NumPy gives 2^60 here, the device's one rounding 2^60 + 2^37
        (np.float32, 2**60 + 2**36 + 1, None),
        (np.float32, 1e300, None),  # overflows
        (np.float32, float("nan"), None),
        (np.float64, -0.0, np.float64(-0.0)),
        (np.int8, 127, np.int8(127)),
        (np.int8, 128, None),  # NumPy refuses, Numba wraps
        (np.int32, -2.9, np.int32(-2)),  # toward zero
        (np.uint8, -1, None),
        (np.uint64, 2**64 - 1, np.uint64(2**64 - 1)),
        (np.int64, float("inf"), None),
        (np.float32, "1.5", None),
        (np.float32, np.float64(1.5), None),  # only Python bool, int and float
        (np.float32, True, np.float32(1.0)),
    ],
)
def test_only_exact_conversions_fold(target, arg, expected):
    if arg == 2**60 + 2**36 + 1:  # why the limit: NumPy's fold would differ from the device
        assert int(np.float32(arg)) != int(np.float32(np.int64(arg)))
    got = scalar_constants.fold(target, arg)
    if expected is None:
        assert got is None
    else:
        assert type(got) is target and got.tobytes() == expected.tobytes()


def test_folded_calls_leave_the_typed_ir():
    kernel = nv.jit(body)
    kernel.compile(SIG)
    (typed,) = [c.typed for c in kernel._compiled.values()]
    calls = [
        stmt.value
        for block in typed.func_ir.blocks.values()
        for stmt in block.body
        if isinstance(stmt, ir.Assign) and isinstance(stmt.value, ir.Expr)
        and stmt.value.op == "call"
    ]  # fmt: skip
    # Left: np.float32 of computed values (2) and of the NumPy scalars the inner calls
    # folded into (5: only Python numbers are folded).
    assert len(calls) == 7, [str(c) for c in calls]
