"""literal_unroll over tuples of arrays (typing/literal_unroll.py) and the whole-array
reductions np.nansum, np.nanprod, np.nanmin, np.nanmax, np.nanmean, np.var, np.std and
np.count_nonzero (frontend/reductions.py), against CPU numba.njit: integers bit for bit,
floats bit for bit where the operations and their order are Numba's (all of these)."""

import importlib.util
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numba
import numpy as np
import pytest
from numba import literal_unroll

import numba_vulkan as nv

pytestmark = [
    pytest.mark.device,
    pytest.mark.usefixtures("device"),
]

NAN, INF = float("nan"), float("inf")

# Several arrays of each type (1-d C, 2-d C, 1-d A), chosen by the loop's index.
FLOATS = (
    np.float64([1.0, -0.0, 0.0, NAN, 2.5, -7.25]),
    np.float64([[1.0, 1.5], [INF, NAN]]),
    np.float64([0.1, 0.2, 0.3, 1e16, -1e16]),
    np.float64([NAN, NAN]),
    np.float64([[0.0, -0.0], [3.0, -3.0]]),
    np.float64([0.0, -0.0]),
    np.float64([-0.0, 0.0, 4.0])[::-1],
    np.float64([1.0, 2.0, 4.0, 8.0, 16.0])[::2],
)


def _assert_same(got, want):
    """Equal bit for bit, NaN payloads aside."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype
    same = (got == want) & (np.signbit(got) == np.signbit(want))
    if got.dtype.kind == "f":
        same |= np.isnan(got) & np.isnan(want)
    assert same.all(), (got, want)


def _run(body, out):
    """`body(out)` on the device (one invocation) and under numba.njit."""
    want = np.zeros_like(out)
    numba.njit(body)(want)
    nv.jit(body)[1, 1](out)
    return out, want


def _floats_reduced(out):
    i = 0
    for a in literal_unroll(FLOATS):
        out[i, 0] = np.nansum(a)
        out[i, 1] = np.nanprod(a)
        out[i, 2] = np.nanmin(a)
        out[i, 3] = np.nanmax(a)
        out[i, 4] = np.nanmean(a)
        out[i, 5] = np.var(a)
        out[i, 6] = a.std()
        out[i, 7] = np.count_nonzero(a)
        out[i, 8] = a.sum() + a.max()
        i += 1  # noqa: SIM113 -- literal_unroll takes no enumerate


def test_literal_unroll_over_arrays_chosen_by_the_index():
    got, want = _run(_floats_reduced, np.zeros((len(FLOATS), 9)))
    _assert_same(got, want)


INTS = (
    np.int32([3, -1, 0, 7, 7, -9]),
    np.int32([[0, 0], [5, -5]]),
    np.int32([1 << 20, 1 << 20, 3]),
)
BOOLS = (np.array([True, False, True]), np.array([False, False]), np.array([True]))
SMALL = (np.uint8([250, 3, 0, 255]), np.uint8([7, 9]))


def _ints_reduced(out):
    i = 0
    for a in literal_unroll(INTS):
        out[i, 0] = np.nansum(a)
        out[i, 1] = np.nanprod(a)
        out[i, 2] = np.nanmin(a)
        out[i, 3] = np.nanmax(a)
        out[i, 4] = np.count_nonzero(a)
        i += 1
    for t in literal_unroll(BOOLS):
        out[i, 0] = np.nansum(t)
        out[i, 1] = np.nanprod(t)
        out[i, 2] = np.nanmin(t)
        out[i, 3] = np.nanmax(t)
        out[i, 4] = np.count_nonzero(t)
        i += 1
    for u in literal_unroll(SMALL):
        out[i, 0] = np.nansum(u)  # uint8 accumulates in uint64, as NumPy
        out[i, 1] = np.nanprod(u)
        out[i, 2] = np.nanmin(u)
        out[i, 3] = np.nanmax(u)
        out[i, 4] = np.count_nonzero(u)
        i += 1


def test_integer_and_bool_reductions_bit_for_bit():
    got, want = _run(_ints_reduced, np.zeros((8, 5), np.int64))
    _assert_same(got, want)


def _moments(out, x, y, b):
    out[0] = np.var(x)
    out[1] = np.std(x)
    out[2] = np.nanmean(x)
    out[3] = np.var(y)  # int32: the mean and the squares in float64
    out[4] = y.std()
    out[5] = np.nanmean(y)
    out[6] = np.var(b)
    out[7] = np.nanmean(b)
    out[8] = np.nansum(x)  # float32: accumulated in float32
    out[9] = np.nanprod(x[:4])


def test_moments_of_float32_int_and_bool_arguments():
    rng = np.random.default_rng(7)
    x = (rng.standard_normal(300) * 10).astype(np.float32)
    x[[5, 77]] = np.nan
    y = rng.integers(-1000, 1000, 257).astype(np.int32)
    b = rng.random(31) < 0.3
    want = np.zeros(10)
    numba.njit(_moments)(want, x, y, b)
    got = np.zeros(10)

    @nv.jit
    def kernel(out, x, y, b):
        if nv.global_id(0) == 0:
            _moments_nv(out, x, y, b)

    _moments_nv = nv.jit(_moments)
    kernel.forall(1)(got, x, y, b)
    _assert_same(got, want)


def test_nanmin_of_an_empty_array_raises():
    @nv.jit
    def kernel(x, out):
        if nv.global_id(0) == 0:
            out[0] = np.nanmin(x)

    with pytest.raises(ValueError, match="zero-size array to reduction operation not possible"):
        kernel.forall(1)(np.zeros(0), np.zeros(1))


def test_var_of_an_empty_array():
    """NaN (NumPy's error model, the kernels' default); ZeroDivisionError under
    error_model='python', as numba.njit raises it."""

    def body(x, out):
        out[0] = np.var(x)
        out[1] = np.nanmean(x)  # np.divide: NaN under either model

    out = np.zeros(2)
    nv.jit(body)[1, 1](np.zeros(0), out)
    assert np.isnan(out).all()
    with pytest.raises(ZeroDivisionError, match="division by zero"):
        numba.njit(body)(np.zeros(0), out)
    with pytest.raises(ZeroDivisionError, match="division by zero"):
        nv.jit(body, error_model="python")[1, 1](np.zeros(0), out)


def test_reductions_with_arguments_are_refused():
    @nv.jit
    def kernel(x, out):
        out[0] = np.var(x, ddof=1)

    with pytest.raises(nv.VulkanUnsupportedError, match="var"):
        kernel[1, 1](np.ones(3), np.zeros(1))

    @nv.jit
    def counted(x, out):
        out[0] = np.count_nonzero(x, axis=0)[0]

    with pytest.raises(nv.VulkanUnsupportedError, match="count_nonzero"):
        counted[1, 1](np.ones((2, 2)), np.zeros(1, np.int64))


@pytest.mark.parametrize("lines, want", [
    (("np.var(x)", "np.nanmin(x)", "np.count_nonzero(x)", "x[:2].std()"),
     lambda x: [np.var(x), np.nanmin(x), np.count_nonzero(x), x[:2].std()]),
    (("np.round(x[0] * 2.6)", "np.round(x[1] * 0.5)"),
     lambda x: [np.round(x[0] * 2.6), np.round(x[1] * 0.5)]),
], ids=["reductions", "round"])
def test_numpy_functions_in_a_process_first_kernel(lines, want):
    """np.var, np.nanmin, np.count_nonzero and a.std(), and np.round, in the first kernel a
    process compiles: their typing comes with numba.np.arraymath, which the kernel's typing
    loads (typing/target.py: for ARRAY_FUNCTIONS, and for any NumPy function it finds no
    type for; with only np.sum and the like listed, these were refused as not supported
    unless numba.njit had compiled something first)."""
    src = str(Path(importlib.util.find_spec("numba_vulkan").origin).resolve().parents[1])
    body = "".join(f"\n    out[{i}] = {line}" for i, line in enumerate(lines))
    code = textwrap.dedent(f"""
        import numpy as np
        import numba_vulkan as nv

        def k(x, out):{{body}}

        out = np.zeros({len(lines)})
        nv.jit(k)[1, 1](np.array([1.0, 3.0, np.nan, 0.0]), out)
        print(out.tobytes().hex())
    """).replace("{body}", body)
    done = subprocess.run([sys.executable, "-c", code], env=dict(os.environ, PYTHONPATH=src),
                          capture_output=True, text=True, timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    got = np.frombuffer(bytes.fromhex(done.stdout.split()[-1]), np.float64)
    np.testing.assert_array_equal(got, want(np.array([1.0, 3.0, np.nan, 0.0])))
