"""Array views, iteration and reductions inside kernels, against CPU numba.njit.

Each kernel body is written once as ``body(*arrays, i)``; the device runs it
for every i as an @nv.jit device function, the CPU with numba.njit. Integer
results must agree bit for bit; float reductions too where Numba's order is a
plain loop over C-contiguous data (np.dot uses BLAS on the CPU: allclose).
"""

import numba
import numpy as np
import pytest

import numba_vulkan as nv

pytestmark = [
    pytest.mark.device,
    pytest.mark.usefixtures("device"),
    pytest.mark.filterwarnings("ignore::numba.NumbaPerformanceWarning"),
]


def run_both(body, n, *arrays, helpers=None):
    """Run body(*arrays, i) for i < n on the device and with numba.njit; returns the two
    lists of (possibly written) arrays."""
    dev = [a.copy() for a in arrays]
    cpu = [a.copy() for a in arrays]
    helpers = helpers or {}
    g_nv = dict(body.__globals__, **{k: v[0] for k, v in helpers.items()})
    g_cpu = dict(body.__globals__, **{k: v[1] for k, v in helpers.items()})
    fn = type(body)(body.__code__, g_nv, body.__name__)
    dev_body = nv.jit(device=True)(fn)
    nargs = len(arrays)
    src = (
        f"def kernel({', '.join(f'a{k}' for k in range(nargs))}):\n"
        f"    i = nv.global_id(0)\n"
        f"    if i < {n}:\n"
        f"        dev_body({', '.join(f'a{k}' for k in range(nargs))}, i)\n"
    )
    scope = {"nv": nv, "dev_body": dev_body}
    exec(src, scope)
    nv.jit(scope["kernel"]).forall(n)(*dev)
    cpu_body = numba.njit(type(body)(body.__code__, g_cpu, body.__name__))
    for i in range(n):
        cpu_body(*cpu, i)
    return dev, cpu


def assert_same(dev, cpu):
    for d, c in zip(dev, cpu):
        assert d.dtype == c.dtype
        np.testing.assert_array_equal(d, c)


RNG = np.random.default_rng(7)
INTS = RNG.integers(-50, 50, (6, 7)).astype(np.int32)


# -- slices and views


def _slices(out, a, i):
    row = a[i]
    out[i, 0] = row[1:].sum()
    out[i, 1] = row[::-1][0]
    out[i, 2] = row[-3:][0]
    out[i, 3] = len(row[5:1:-2])
    out[i, 4] = row[1:-1:3][-1]
    out[i, 5] = len(row[i:]) + len(row[:-i]) * 10
    out[i, 6] = len(row[100:]) + len(row[-100:2]) * 10 + len(row[::-100]) * 100
    s = a[i, ::-2]
    out[i, 7] = s[0] * 1000 + s[1] * 10 + s.shape[0]
    out[i, 8] = a[:, i % 7][::-1][1]
    out[i, 9] = a[i % 3:, ::3].shape[0] * 10 + a[i % 3:, ::3].shape[1]


def test_slices_with_steps_and_negative_bounds():
    out = np.zeros((6, 10), np.int64)
    assert_same(*run_both(_slices, 6, out, INTS))


def _views_2d(out, a, i):
    t = a.T
    out[i, 0] = t[3, i]
    out[i, 1] = t.shape[0] * 100 + t.shape[1]
    v = a[1:5, 2:]
    out[i, 2] = v[i % 4, -1]
    out[i, 3] = v.size + v.ndim * 1000
    out[i, 4] = v.strides[0] + v.strides[1] * 1000
    out[i, 5] = a[i].strides[0] + a[:, 1].strides[0] * 100
    out[i, 6] = v.T[1:, ::-1][0, 0]
    out[i, 7] = len(a) + len(a.T) * 10


def test_2d_views_transpose_shape_strides():
    out = np.zeros((6, 8), np.int64)
    assert_same(*run_both(_views_2d, 6, out, INTS))


def _reassigned(out, a, i):
    acc = 0
    v = a[i]
    for k in range(3):
        acc = acc * 100 + v[0]
        prev = v
        v = v[1:]
        acc += prev[0] - v[0]
    out[i] = acc


def test_view_variables_reassigned_in_a_loop():
    out = np.zeros(6, np.int64)
    assert_same(*run_both(_reassigned, 6, out, INTS))


# -- iteration


def _iterate(out, a, b, i):
    acc = 0
    for v in a[i]:
        acc = acc * 3 + v
    for row in a:
        acc += row[i] * 7
    for j, v in enumerate(b[::-1]):
        acc += j * v
    for j, v in enumerate(a[i], 5):
        acc -= j * v
    for x, y in zip(a[i], b):
        acc += x * y
    for j, (x, y) in enumerate(zip(range(2, 20, 3), a[i, 1:])):
        acc += j + x * y
    for v in a[i, 7:]:  # empty: never loaded
        acc += 1000000
    out[i] = acc


def test_iteration_enumerate_zip():
    out = np.zeros(6, np.int64)
    b = np.arange(5, dtype=np.int16) * 3 - 2
    assert_same(*run_both(_iterate, 6, out, INTS, b))


# -- stores into views, views through device functions


def _scale(v, s):
    for j in range(v.shape[0]):
        v[j] *= s
    return v.sum()


def _stores(out, a, b, i):
    out[i, 1:6:2] = i + 1
    out[i, ::-4] = b[i, 1:4]
    out[i, 0] = scale(out[i, 6:], 3)
    a[i] = b[i, ::2]
    a[:, 0][i] = 100 + i
    out[i, 7] = scale(a[i, 1:], 2)
    out[i, 8] = np.float32(-1.5)


def test_stores_into_views_and_views_passed_to_device_functions():
    out = np.arange(4 * 9, dtype=np.int64).reshape(4, 9)
    a = np.zeros((4, 3), np.int32)
    b = RNG.integers(-9, 9, (4, 6)).astype(np.int16)
    helpers = {"scale": (nv.jit(device=True)(_scale), numba.njit(_scale))}
    assert_same(*run_both(_stores, 4, out, a, b, helpers=helpers))


# -- reductions


def _int_reductions(out, a, i):
    r = a[i]
    out[i, 0] = r.sum()
    out[i, 1] = r[::2].prod()
    out[i, 2] = r.min()
    out[i, 3] = np.max(r)
    out[i, 4] = r.argmin()
    out[i, 5] = np.argmax(r[1:])
    out[i, 6] = a.sum()
    out[i, 7] = np.sum(a[:, i])
    out[i, 8] = a.T[::2].max() + a[1:3].min() * 1000
    out[i, 9] = np.argmin(a) + a.T.argmax() * 100


def test_integer_reductions_bit_for_bit():
    out = np.zeros((6, 10), np.int64)
    ties = INTS.copy()
    ties[2, :] = 4  # argmin/argmax take the first occurrence
    assert_same(*run_both(_int_reductions, 6, out, ties))


def _float_reductions(fo, f, i):
    fr = f[i]
    fo[i, 0] = fr.sum()
    fo[i, 1] = fr.mean()
    fo[i, 2] = fr.min()
    fo[i, 3] = fr.max()
    fo[i, 4] = fr.argmin()
    fo[i, 5] = fr.argmax()
    fo[i, 6] = f[:, 1:].sum()
    fo[i, 7] = fr[::-1].prod()
    fo[i, 8] = np.mean(f[1:3])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_float_reductions_bit_for_bit_with_nans(dtype):
    f = RNG.standard_normal((5, 7)).astype(dtype)
    f[2, 3] = np.nan  # min/max give NaN, argmin/argmax its index
    f[3, 0] = np.nan
    fo = np.zeros((5, 9), dtype)
    dev, cpu = run_both(_float_reductions, 5, fo, f)
    np.testing.assert_array_equal(dev[0], cpu[0])  # NaN == NaN here


def _mean_int(fo, a, i):
    fo[i] = a[i].mean()


def test_mean_of_integers_is_float64():
    fo = np.zeros(6)
    assert_same(*run_both(_mean_int, 6, fo, INTS))


def _dot_fill(fo, f, i):
    fo[i, 0] = np.dot(f[i], f[(i + 1) % 5])
    fo[i, 1] = np.dot(f[i, ::2], f[:4, 0])
    fo[i, 2:].fill(i * 0.5)


def test_dot_and_fill():
    f = RNG.standard_normal((5, 7))
    fo = np.zeros((5, 6))
    dev, cpu = run_both(_dot_fill, 5, fo, f)
    np.testing.assert_allclose(dev[0], cpu[0], rtol=1e-13)  # CPU np.dot is BLAS


# -- layouts of arguments


def _rows(out, a, i):
    s = 0
    for j in range(a.shape[1]):
        s = s * 7 + a[i, j]
    out[i] = s
    a[i, 0] = -i


@pytest.mark.parametrize("make", ["F", "T", "strided", "reversed"])
def test_fortran_and_strided_numpy_arguments(make):
    x = np.arange(30, dtype=np.int64).reshape(5, 6)
    arg = {
        "F": lambda: np.asfortranarray(x),
        "T": lambda: x.T,
        "strided": lambda: x[::2, 1::2],
        "reversed": lambda: x[::-1, ::-2],
    }[make]()
    out = np.zeros(arg.shape[0], np.int64)
    dev, cpu = run_both(_rows, arg.shape[0], out, arg)
    assert_same(dev, cpu)


@pytest.mark.parametrize("view", ["T", "strided", "reversed", "offset"])
def test_device_array_views_are_passed_in_place(view):
    x = np.arange(30, dtype=np.int64).reshape(5, 6)
    d = nv.to_device(x)
    pick = {
        "T": lambda a: a.T,
        "strided": lambda a: a[::2, 1::2],
        "reversed": lambda a: a[::-1],
        "offset": lambda a: a[1:, 2:],
    }[view]
    dv, host = pick(d), pick(x.copy())
    out = nv.to_device(np.zeros(host.shape[0], np.int64))
    g = dict(_rows.__globals__)
    body = nv.jit(device=True)(type(_rows)(_rows.__code__, g, "_rows"))

    @nv.jit
    def kernel(out, a):
        i = nv.global_id(0)
        if i < out.size:
            body(out, a, i)

    kernel.forall(host.shape[0])(out, dv)
    expected = np.zeros(host.shape[0], np.int64)
    cpu = numba.njit(_rows)
    for i in range(host.shape[0]):
        cpu(expected, host, i)
    np.testing.assert_array_equal(out.copy_to_host(), expected)
    np.testing.assert_array_equal(d.copy_to_host(), x_after(x, pick, host))


def x_after(x, pick, host_after):
    """The base array after the kernel wrote through view `pick` (as `host_after` shows)."""
    y = x.copy()
    pick(y)[...] = host_after
    return y


# -- arrays the kernel creates (issue 8's local arrays) take the same reductions


def _local(out, i):
    t = np.zeros(5, np.int64)
    for j in range(5):
        t[j] = (i * 7 + j * 3) % 5 - 2
    out[i, 0] = t.sum()
    out[i, 1] = t.argmax()
    acc = 0
    for v in t:
        acc = acc * 10 + v
    out[i, 2] = acc
    t.fill(3)
    out[i, 3] = t.prod()


def test_reductions_and_iteration_of_local_arrays():
    out = np.zeros((4, 4), np.int64)
    assert_same(*run_both(_local, 4, out))


@nv.jit
def _local_views_kernel(out, a):
    i = nv.global_id(0)
    t = nv.local.array((3, 4), np.int64)
    for r in range(3):
        for c in range(4):
            t[r, c] = a[i, (r * 4 + c) % 5] * (r + 1)
    row = t[i % 3]
    out[i, 0] = row[::-1][0] + t[:, 1].sum() * 100
    t[1, ::2] = -7
    out[i, 1] = t.T[2, 1] + t[1].min() * 1000
    s = nv.shared.array((8, 4), np.float32)
    s[i, :] = 1.5
    out[i, 2] = s[i].sum()


def test_views_of_local_and_shared_arrays():
    a = np.arange(40).reshape(8, 5)
    out = np.zeros((8, 3), np.int64)
    _local_views_kernel[1, 8](out, a)
    expected = np.zeros((8, 3), np.int64)
    for i in range(8):
        t = np.array([[a[i, (r * 4 + c) % 5] * (r + 1) for c in range(4)] for r in range(3)])
        expected[i, 0] = t[i % 3][::-1][0] + t[:, 1].sum() * 100
        t[1, ::2] = -7
        expected[i, 1] = t.T[2, 1] + t[1].min() * 1000
        expected[i, 2] = 6
    np.testing.assert_array_equal(out, expected)


# -- where numba.njit raises ValueError, the kernel raises it too (its message, then ours)


def raises_both(body, n, *arrays):
    """body raises on the CPU with numba.njit and in the kernel: the same class, and the
    kernel's message begins with njit's."""
    cpu_body = numba.njit(body)
    with pytest.raises(Exception) as cpu:  # noqa: PT011 (njit's class is the reference)
        for i in range(n):
            cpu_body(*[a.copy() for a in arrays], i)
    with pytest.raises(cpu.type) as dev:
        run_both(body, n, *arrays)
    assert str(dev.value).startswith(str(cpu.value)), (str(dev.value), str(cpu.value))


def _empty_min(out, a, i):
    out[i] = a[i, 3:3].min()


def _empty_max(out, a, i):
    out[i] = a[i, 3:3].max()


def _empty_argmin(out, a, i):
    out[i] = a[i, 5:].argmin()


def _empty_argmax(out, a, i):
    out[i] = np.argmax(a[i, :0])


@pytest.mark.parametrize("body", [_empty_min, _empty_max, _empty_argmin, _empty_argmax],
                         ids=["min", "max", "argmin", "argmax"])
def test_reductions_of_empty_views_raise(body):
    raises_both(body, 2, np.zeros(2), np.ones((2, 5)))


def _assign_1d(out, a, i):
    out[i, 1:3] = a[i, 2:]


def _assign_2d(out, a, i):
    if i == 0:
        out[1:3, :] = a


def test_slice_assignment_of_another_shape_raises():
    raises_both(_assign_1d, 2, np.zeros((2, 8)), np.ones((2, 5)))  # Numba's message, in full
    with pytest.raises(ValueError, match="axis 0 of the slice has 2 elements, of the input 3"):
        run_both(_assign_2d, 1, np.zeros((4, 2)), np.ones((3, 2)))


@pytest.mark.parametrize("shape", [(2, 2), (1, 2), (2, 1), (1, 1)])
def test_slice_assignment_broadcasts_axes_of_one(shape):
    src = np.arange(1.0, 1.0 + np.prod(shape)).reshape(shape)
    assert_same(*run_both(_assign_2d, 1, np.zeros((4, 2)), src))


def _assign_row_of_one(out, a, i):
    out[i, 1:4] = a[i, 2:3]


def test_slice_assignment_broadcasts_one_element():
    assert_same(*run_both(_assign_row_of_one, 2, np.zeros((2, 6)), INTS[:2].astype(np.float64)))


def _step_from_data(out, a, steps, i):
    out[i] = a[i, :: steps[i]][0]


def test_zero_step_computed_at_run_time_raises():
    a = INTS[:2].astype(np.float64)
    assert_same(*run_both(_step_from_data, 2, np.zeros(2), a, np.array([2, -1])))
    raises_both(_step_from_data, 2, np.zeros(2), a, np.array([1, 0]))


def _dot_lengths(out, x, y, i):
    out[i] = np.dot(x[i], y[i, 1:])


def test_dot_of_different_lengths_raises():
    raises_both(_dot_lengths, 2, np.zeros(2), np.ones((2, 4)), np.ones((2, 4)))


def _any_all_builtin(out, a, i):
    row = a[i]
    out[i, 0] = row.any()
    out[i, 1] = row.all()
    out[i, 2] = np.any(row[1:])
    out[i, 3] = np.all(row[:0])
    out[i, 4] = max(row)
    out[i, 5] = min(row[::-1])


@pytest.mark.parametrize("dtype", [np.int32, np.float64, np.bool_])
def test_any_all_and_builtin_min_max_of_arrays(dtype):
    a = np.array([[1, 0, 3], [0, 0, 0], [-2, 5, 5], [np.nan, 1, 2], [3, np.nan, 9]])
    if dtype is not np.float64:
        a = np.nan_to_num(a)
    dev, cpu = run_both(_any_all_builtin, 5, np.zeros((5, 6)), a.astype(dtype))
    assert_same(dev, cpu)


def _builtin_max_of_empty(out, a, i):
    out[i] = max(a[i, :0])


def test_builtin_max_of_an_empty_array_raises_as_numba_does():
    with pytest.raises(StopIteration):
        run_both(_builtin_max_of_empty, 1, np.zeros(1), np.ones((1, 3)))


def test_numpy_constructors_keep_their_types_when_the_array_library_loads(tmp_path):
    """np.zeros(..., dtype=) typed, then a reduction loads Numba's array library in the middle
    of the typing (its own np.zeros/np.empty overloads with it), then np.empty: the types of
    the constructors must not change under the first (a fresh process: the library is
    loaded once per process)."""
    import subprocess
    import sys

    code = """
import numpy as np, numba_vulkan as nv
@nv.jit
def k(a, out):
    i = nv.global_id(0)
    if i < a.shape[0]:
        tmp = np.zeros(4, dtype=np.float32)
        for j in range(4):
            tmp[j] = a[i, j]
        out[i, 0] = tmp.sum()
        out[i, 1] = np.empty(3, np.float32).size
out = np.zeros((3, 2), np.float32)
k.forall(3)(np.ones((3, 4), np.float32), out)
assert (out == [4, 3]).all(), out
"""
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert r.returncode == 0, r.stderr[-2000:]


SMALL_TABLE = np.arange(12, dtype=np.int32).reshape(3, 4)  # inlined (constants.py)
BIG_TABLE = (np.arange(60, dtype=np.float64) * 0.5).reshape(6, 10)  # a constant buffer


def _global_views(out, i):
    out[i, 0] = SMALL_TABLE[i % 3, 1:].sum()
    out[i, 1] = SMALL_TABLE[:, ::-1][i % 3, 0]
    out[i, 2] = BIG_TABLE[i, 2:7:2].sum()
    out[i, 3] = BIG_TABLE.T[3, i]
    out[i, 4] = len(SMALL_TABLE[1:]) + SMALL_TABLE[1:].shape[1]
    s = 0.0
    for v in BIG_TABLE[i, ::3]:
        s += v
    out[i, 5] = s


def test_views_of_global_arrays():
    assert_same(*run_both(_global_views, 6, np.zeros((6, 6))))


def _overlapping_copies(a, out, i):
    if i == 0:
        a[0, 1:] = a[0, :-1]  # forwards would smear a[0, 0]: copied backwards
        a[1, :-1] = a[1, 1:]  # forwards
        a[3, ::2] = a[3, 1::2]  # no element shared
        a[4, 1:] = a[4, 2:3]  # one element, broadcast
        r = a[5, 2:]
        r[:-2] = a[5, :-4]  # two names of one array, the destination ahead
        out[0] = a[6, ::-1].sum()


def test_copies_between_overlapping_1d_views_match_njit():
    a = np.arange(7 * 8, dtype=np.float64).reshape(7, 8)
    assert_same(*run_both(_overlapping_copies, 1, a, np.zeros(1)))


def _negative_steps(a, b, i):
    if i == 0:
        a[4::-2] = a[6:0:-2]  # the destination ahead along the step: backwards
        b[7:1:-2] = b[5::-2]  # behind: forwards


def test_overlapping_copies_with_negative_steps_match_njit_and_numpy():
    # 1-d, as here, numba.njit copies through a new array as NumPy does. Written as rows of
    # a 2-d array (a[2, 4::-2] = a[2, 6:0:-2]), numba 0.68 misses the overlap and gives
    # 22, 22, 22 for NumPy's 18, 20, 22; a kernel gives NumPy's answer in both forms.
    a, b = np.arange(16, 24.0), np.arange(16, 24.0)
    dev, cpu = run_both(_negative_steps, 1, a, b)
    assert_same(dev, cpu)
    np.testing.assert_array_equal(dev[0][[0, 2, 4]], [18, 20, 22])


def test_overlapping_copies_with_other_steps_raise():
    @nv.jit
    def kernel(a):
        if nv.global_id(0) == 0:
            a[::-1] = a  # numba.njit: through a new array

    with pytest.raises(ValueError, match="overlapping view of it with another step"):
        kernel.forall(1)(np.arange(8.0))

    @nv.jit
    def apart(a):
        if nv.global_id(0) == 0:
            a[:5:-1] = a[:2]  # other steps, no overlap: copied

    x = np.arange(8.0)
    apart.forall(1)(x)
    assert list(x) == [0, 1, 2, 3, 4, 5, 1, 0]

    @nv.jit
    def two_d(a):
        if nv.global_id(0) == 0:
            a[1:, :] = a[:-1, :]

    with pytest.raises(nv.VulkanUnsupportedError, match="more than one dimension"):
        two_d.forall(1)(np.zeros((3, 3)))
