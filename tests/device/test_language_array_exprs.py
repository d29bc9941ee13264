"""Array expressions inside kernels (frontend/array_exprs.py), against CPU numba.njit:
operators and ufuncs of arrays read element by element, reductions and elements of them,
slice assignments and in-place operators, broadcasting and its errors."""

import numpy as np
import pytest
from test_language_views import assert_same, run_both

import numba_vulkan as nv

pytestmark = [
    pytest.mark.device,
    pytest.mark.usefixtures("device"),
]

A = ((np.arange(12, dtype=np.float32).reshape(3, 4) * 7) % 5 + 1)
B = np.linspace(1, 2, 4, dtype=np.float32)
INTS = np.random.default_rng(3).integers(-20, 20, (3, 4)).astype(np.int32)


def _elements(out, a, b, i):
    out[i, 0] = (a[i] * 2 + b)[1]
    out[i, 1] = (a[i] - b)[-1]
    out[i, 2] = (a * b)[i, 2]
    out[i, 3] = (a + a[:, 0:1])[i, 3]  # a column of extent 1 broadcast along the rows
    out[i, 4] = (-a[i])[0] + (+a[i])[1]


def _reductions(out, a, b, i):
    out[i, 0] = np.sqrt(a[i] * b).sum()
    out[i, 1] = (np.abs(a[i] - 3) * (b + 1)).max()
    out[i, 2] = (a[i] > b * 2).sum()
    out[i, 3] = np.dot(a[i] - 1, b * 2)
    out[i, 4] = (a + b).shape[1] + (a[i] + b).size + (a + b).ndim + len(a[i] * 2)
    out[i, 5] = np.minimum(a[i], b * 3).argmin()
    s = 0.0
    for v in a[i] * b:
        s += v
    out[i, 6] = s


@pytest.mark.parametrize("body", [_elements, _reductions], ids=["elements", "reductions"])
def test_float_expressions(body):
    dev, cpu = run_both(body, 3, np.zeros((3, 8), np.float32), A, B)
    np.testing.assert_allclose(dev[0], cpu[0], rtol=1e-6)  # np.dot: BLAS on the CPU
    if body is _elements:
        assert_same(dev, cpu)


def _ints(out, a, i):
    out[i, 0] = ((a[i] // 3) % 5 + (a[i] << 2))[2]
    out[i, 1] = (a[i] & 7 | (a[i] ^ -1)).sum()
    out[i, 2] = (~a[i] * a[i]).max()
    out[i, 3] = (a[i] >= 0).sum() + np.logical_and(a[i] > -5, a[i] < 5).sum()


def test_integer_expressions_bit_for_bit():
    assert_same(*run_both(_ints, 3, np.zeros((3, 4), np.int64), INTS))


def _assign(out, a, b, i):
    out[i, :4] = a[i] * b - 1
    out[i, 4:] = np.minimum(a[i], 3)
    out[i, :4] += b
    out[i, 4:] *= 2


def test_assigning_and_updating_views():
    assert_same(*run_both(_assign, 3, np.zeros((3, 8), np.float32), A, B))


def _whole(a, f, i):
    if i == 0:
        a *= f
        a[:, 0] = a[:, 0] + 1


def test_in_place_on_a_whole_array():
    assert_same(*run_both(_whole, 1, A.copy(), B))


def _mismatch(out, a, b, i):
    out[i, 0] = (a[i] + b[:3]).sum()


def test_shapes_that_do_not_broadcast_raise_as_in_numba():
    with pytest.raises(ValueError, match="^unable to broadcast argument 1 to output array"):
        run_both(_mismatch, 3, np.zeros((3, 1), np.float32), A, B)


def _in_place_mismatch(out, a, b, i):
    x = out[i, :3]
    x += b


def test_in_place_with_an_operand_that_does_not_fit_raises():
    with pytest.raises(ValueError, match="non-broadcastable operand"):
        run_both(_in_place_mismatch, 3, np.zeros((3, 4), np.float32), A, B)


def test_refused_forms():
    """At compile time, or at run time where only then the views are known to overlap."""
    @nv.jit
    def reads_its_target(a, out):
        i = nv.global_id(0)
        if i < out.shape[0]:
            out[i] = a[i]
            out[i, 1:] = out[i, :-1] * 2

    with pytest.raises(ValueError, match="an array it reads at other elements"):
        reads_its_target.forall(3)(A, np.zeros((3, 4), np.float32))

    @nv.jit
    def view_of_expression(a, out):
        i = nv.global_id(0)
        if i < out.shape[0]:
            out[i] = (a[i] * 2)[1:][0]

    with pytest.raises(nv.VulkanUnsupportedError, match="views .* of array expressions"):
        view_of_expression.forall(3)(A, np.zeros(3, np.float32))

    @nv.jit
    def store_into_expression(a, out):
        i = nv.global_id(0)
        if i < out.shape[0]:
            e = a[i] * 2
            e[0] = 1
            out[i] = e[0]

    with pytest.raises(nv.VulkanUnsupportedError, match="storing into an array expression"):
        store_into_expression.forall(3)(A, np.zeros(3, np.float32))


def _axis_sums(out, x, i):
    if i == 0:
        out[0, :4] = x.sum(axis=0)
        out[1, :3] = np.sum(x, axis=-1)
        out[2, :4] = np.argmax(x, axis=0)
        out[3, :3] = x.argmin(axis=1)
        out[4, :4] = (x * 2).sum(axis=0) + 1
        out[5, 0] = x.sum(axis=0)[2] + x.sum(axis=1).sum() + x[:, ::-1].sum(axis=1)[0]


def test_reductions_along_an_axis():
    """a.sum(axis=k), np.argmin/argmax(a, axis=k): numba.njit's types and order (its sum
    starts at 0 and adds in index order: -0.0 becomes 0.0; a NaN's index wins)."""
    x = np.arange(12.0).reshape(3, 4)
    x[1, 2], x[0, 3] = np.nan, -0.0
    assert_same(*run_both(_axis_sums, 1, np.zeros((6, 4)), x))


def _int_axis_sums(out, x, i):
    if i == 0:
        out[:, :] = x.sum(axis=1)
        out[0, 0] += x.argmax(axis=2)[1, 1]


def test_integer_reductions_along_an_axis_bit_for_bit():
    x = np.random.default_rng(0).integers(-2**31, 2**31 - 1, (3, 4, 2)).astype(np.int32)
    assert_same(*run_both(_int_axis_sums, 1, np.zeros((3, 2), np.int64), x))


@nv.jit
def _other_axis_reductions(x, xi, out, outi, flags):
    if nv.global_id(0) == 0:
        out[0, :] = x.prod(axis=1)
        out[1, :] = x.mean(axis=1)
        out[2, :] = np.min(x, axis=1)
        out[3, :] = x.max(1)
        out[4, :] = np.amax(x[:, ::-1], axis=-1) - np.amin(x, 1)
        outi[0, :] = xi.prod(axis=0)
        outi[1, :] = xi.min(axis=0)
        outi[2, :] = xi.max(axis=0)
        flags[0, :] = np.any(x > 2, axis=1)
        flags[1, :] = (x > -5).all(axis=1)


def test_prod_mean_min_max_any_all_along_an_axis():
    """Beyond numba.njit (which has no axis for these): NumPy's values and dtypes, NaN
    propagated by min and max, integer products wrapping in int64."""
    rng = np.random.default_rng(3)
    x = rng.integers(-6, 7, (5, 4)).astype(np.float32)
    x[2, 1] = np.nan
    xi = rng.integers(-2**31, 2**31 - 1, (4, 3)).astype(np.int32)
    out, outi, flags = np.zeros((5, 5), np.float32), np.zeros((3, 3), np.int64), \
        np.zeros((2, 5), np.bool_)  # fmt: skip
    _other_axis_reductions.forall(1)(x, xi, out, outi, flags)
    with np.errstate(over="ignore"):
        want_prod = xi.astype(np.int64).prod(axis=0)
    expected = [x.prod(1), x.mean(1), x.min(1), x.max(1), x[:, ::-1].max(-1) - x.min(1)]
    np.testing.assert_array_equal(out, np.array(expected, np.float32))
    np.testing.assert_array_equal(outi, [want_prod, xi.min(0), xi.max(0)])
    np.testing.assert_array_equal(flags, [(x > 2).any(1), (x > -5).all(1)])


@nv.jit
def _axis_of_1d(x, axis, out):
    if nv.global_id(0) == 0:
        out[0] = x.sum(axis=axis)
        out[1] = x.max(axis=0)


def test_axis_of_a_1d_array_is_checked_where_it_runs():
    x = np.arange(6, dtype=np.float32)
    out = np.zeros(2, np.float32)
    _axis_of_1d.forall(1)(x, -1, out)
    assert list(out) == [15, 5]
    with pytest.raises(ValueError, match="axis is out of bounds"):
        _axis_of_1d.forall(1)(x, 1, out)


def test_min_along_an_empty_axis_raises():
    @nv.jit
    def kernel(x, out):
        if nv.global_id(0) == 0:
            out[:] = x.min(axis=0)

    with pytest.raises(ValueError, match="zero-size array"):
        kernel.forall(1)(np.zeros((0, 3), np.float32), np.zeros(3, np.float32))


def _bool_extremes(out, x, i):
    row = x[i]
    out[i, 0] = row.min()
    out[i, 1] = row.max()
    out[i, 2] = row.argmin()
    out[i, 3] = np.argmax(row)


def test_min_max_argmin_argmax_of_bool_arrays():
    # Bools order False < True (KIR compares them as integers; they failed to compile).
    x = np.array([[True, False, True], [True, True, True], [False, False, False],
                  [False, True, False]])  # fmt: skip
    assert_same(*run_both(_bool_extremes, 4, np.zeros((4, 4), np.int64), x))


def _axis_at_run_time(out, x, k, i):
    if i == 0:
        axis = np.int64(k[0])
        s = x.sum(axis=axis)
        out[0, 0] = s.sum()
        out[0, 1] = s[1, 0]
        out[0, 2] = s.shape[0] * 10 + s.shape[1]
        a = np.argmax(x, axis=axis)
        out[0, 3] = a[0, 1] + a.sum()


@pytest.mark.parametrize("k", [0, 1, 2, -1, -3])
def test_reductions_along_an_axis_known_at_run_time(k):
    """numba.njit takes an axis computed at run time too (the result's shape follows it)."""
    x = np.random.default_rng(4).standard_normal((3, 4, 5))
    assert_same(*run_both(_axis_at_run_time, 1, np.zeros((1, 4)), x,
                          np.array([k], np.int64)))  # fmt: skip


def test_a_run_time_axis_out_of_range_raises():
    @nv.jit
    def kernel(x, k, out):
        if nv.global_id(0) == 0:
            out[:] = x.min(axis=k[0])

    with pytest.raises(ValueError, match="axis is out of bounds for array of dimension 2"):
        kernel.forall(1)(np.ones((3, 3)), np.array([2]), np.zeros(3))
