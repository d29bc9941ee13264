"""NumPy ufuncs on whole arrays inside kernels, into an output array
(frontend/array_ufuncs.py): results equal to numba.njit's."""

import numba
import numpy as np
import pytest

import numba_vulkan as nv

pytestmark = [pytest.mark.device, pytest.mark.usefixtures("device")]


def _both(fn, *arrays):
    kernel = nv.jit(fn)
    got = [a.copy() for a in arrays]
    kernel[1, 1](*got)
    want = [a.copy() for a in arrays]
    numba.njit(fn)(*want)
    return got, want


def test_unary_ufunc_into_output_as_in_the_numba_cuda_docs():
    def f(r, x):
        np.sin(x, r)

    x = np.arange(10, dtype=np.float32) - 5
    got, want = _both(f, np.zeros_like(x), x)
    np.testing.assert_allclose(got[0], np.sin(x), rtol=1e-6)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-6)


def test_binary_ufunc_broadcast_scalar_and_mixed_dtypes():
    def f(out, y, x, row):
        np.arctan2(y, x, out)
        np.hypot(out, 2.0, out)
        np.floor(row, out[0])

    rng = np.random.default_rng(0)
    y = rng.normal(size=(3, 5))
    x = rng.normal(size=(3, 5)).astype(np.float32)
    row = rng.normal(size=5) * 10
    got, want = _both(f, np.zeros((3, 5)), y, x, row)
    np.testing.assert_allclose(got[0], want[0], rtol=2e-16 * 4, atol=0)


def test_integer_output_and_2d_views():
    def f(out, a):
        np.abs(a[1:, ::2], out[:, :2])
        np.sign(a[0], out[0])

    a = np.arange(-12, 12, dtype=np.int64).reshape(4, 6)
    got, want = _both(f, np.zeros((3, 6), np.int64), a)
    np.testing.assert_array_equal(got[0], want[0])


def test_without_output_is_an_array_expression():
    """np.sin(x) allocates in numba.njit; in a kernel it is read element by element
    (frontend/array_exprs.py; tests/device/test_language_array_exprs.py)."""

    @nv.jit
    def f(r, x):
        r[0] = np.sin(x)[1] + np.arctan2(x, 2.0).sum()

    x = np.array([0.1, 0.7, -2.0])
    r = np.zeros(1)
    f[1, 1](r, x)
    np.testing.assert_allclose(r[0], np.sin(x[1]) + np.arctan2(x, 2.0).sum(), rtol=1e-14)


_OPERATOR_UFUNCS = [np.equal, np.not_equal, np.less, np.less_equal, np.greater,
                    np.greater_equal, np.bitwise_and, np.bitwise_or, np.bitwise_xor, np.invert,
                    np.logical_and, np.logical_or, np.logical_xor, np.logical_not]


@pytest.mark.parametrize("ufunc", _OPERATOR_UFUNCS, ids=lambda u: u.__name__)
def test_operator_ufuncs_on_arrays(ufunc):
    """The ufuncs of comparison, bitwise and logical operators (numba-cuda's test_ufuncs
    calls them this way): bit for bit numba.njit's and NumPy's, NaN and bools included."""
    rng = np.random.default_rng(7)
    names = "ab"[:ufunc.nin]
    ns = {"np": np}
    exec(f"def f({', '.join(names)}, out):\n    np.{ufunc.__name__}({', '.join(names)}, out)",
         ns)
    dtypes = [np.int8, np.uint64, np.bool_]
    if ufunc not in (np.bitwise_and, np.bitwise_or, np.bitwise_xor, np.invert):
        dtypes += [np.float32]
    for dt in dtypes:
        x, y = (rng.integers(-3, 4, 40).astype(dt) for _ in range(2))
        if np.dtype(dt).kind == "f":
            x[::7] = np.nan
        args = (x, y)[:ufunc.nin]
        expected = ufunc(*args)
        got, want = _both(ns["f"], *args, np.zeros_like(expected))
        np.testing.assert_array_equal(got[-1], expected)
        np.testing.assert_array_equal(want[-1], expected)


def test_inputs_of_extent_one_broadcast_and_shorter_ones_raise():
    """np.add(a, b, out): an axis of extent 1 is broadcast as numba.njit does (it was read
    past its end); a shorter one raises (numba.njit reads garbage there)."""

    @nv.jit
    def add(a, b, out):
        if nv.global_id(0) == 0:
            np.add(a, b, out)

    out = np.zeros((2, 3))
    add[1, 1](np.ones((1, 3)), np.arange(3.0), out)
    np.testing.assert_array_equal(out, [[1, 2, 3], [1, 2, 3]])
    out = np.zeros(3)
    add[1, 1](np.ones(1), np.full(3, 2.0), out)
    np.testing.assert_array_equal(out, [3, 3, 3])
    with pytest.raises(ValueError, match="input 0 has 2 elements along axis 0, fewer"):
        add[1, 1](np.ones(2), np.ones(3), np.zeros(3))


_Z = np.array([-0.5 - 0.5j, 0, 0.5 + 0.5j, 1 + 2j, -3 + 0.25j, 2 - 1e-3j, complex(np.nan, 1),
               complex(1, np.nan), 1 + 0j, 1 - 1j], dtype=np.complex128)  # fmt: skip
_W = np.array([0.5 - 0.5j, 0, 0.5 + 0.25j, 1 + 2j, -3 - 0.25j, 2 + 1e-3j, 0j, 1 + 0j,
               complex(np.nan, 0), 1 + 1j], dtype=np.complex128)  # fmt: skip


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
@pytest.mark.parametrize("ufunc", [
    np.sin, np.cos, np.tan, np.arcsin, np.arccos, np.arctan, np.sinh, np.cosh, np.tanh,
    np.arcsinh, np.arccosh, np.arctanh, np.exp, np.log, np.log2, np.log10, np.sqrt])  # fmt: skip
def test_complex_transcendental_ufuncs_into_output(ufunc, dtype):
    """NumPy's complex loops (mathlib/complex_ufuncs.py): numba.njit's formulas, within a
    few ulps of its results; log of 0 is -inf (float32's log10 once gave NaN)."""

    def f(out, z):
        ufunc(z, out)

    z = _Z[:6].astype(dtype)
    got, want = _both(f, np.zeros_like(z), z)
    tol = 8 * np.finfo(dtype).eps
    np.testing.assert_allclose(got[0], want[0], rtol=tol, atol=tol)
    if ufunc in (np.log, np.log2, np.log10):
        assert got[0][1].real == -np.inf and got[0][1].imag == 0


@pytest.mark.parametrize("ufunc", [
    np.equal, np.not_equal, np.less, np.less_equal, np.greater, np.greater_equal,
    np.logical_and, np.logical_or, np.logical_xor])  # fmt: skip
def test_complex_comparison_and_logical_ufuncs_order_lexicographically(ufunc):
    def f(out, z, w):
        ufunc(z, w, out)

    got, want = _both(f, np.zeros(_Z.size, np.bool_), _Z, _W)
    np.testing.assert_array_equal(got[0], ufunc(_Z, _W))
    np.testing.assert_array_equal(got[0], want[0])


@pytest.mark.parametrize("ufunc", [np.maximum, np.minimum, np.fmax, np.fmin])
def test_complex_min_max_ufuncs_and_nans_as_numpy(ufunc):
    """maximum/minimum propagate a NaN operand, fmax/fmin return the other one: every bit
    as NumPy's, a complex scalar operand broadcast."""

    def f(out, z, w, s):
        ufunc(z, w, out[0])
        ufunc(z, s, out[1])

    s = np.complex128(0.5 + 0.25j)
    got, _ = _both(f, np.zeros((2, _Z.size), np.complex128), _Z, _W, s)
    want = np.stack([ufunc(_Z, _W), ufunc(_Z, s)])
    np.testing.assert_array_equal(got[0].view(np.uint64), want.view(np.uint64))


def test_complex_logical_not_and_a_refused_complex_ufunc():
    def f(out, z):
        np.logical_not(z, out)

    got, _ = _both(f, np.zeros(_Z.size, np.bool_), _Z)
    np.testing.assert_array_equal(got[0], np.logical_not(_Z))

    @nv.jit
    def g(out, z):
        np.floor_divide(z, z, out)

    with pytest.raises(nv.VulkanUnsupportedError, match="complex"):
        g[1, 1](np.zeros(2, np.complex128), np.ones(2, np.complex128))
