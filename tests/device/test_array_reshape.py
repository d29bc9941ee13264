"""a.reshape(...) and a.view(dtype) inside kernels (frontend/array_methods.py) against
numba.njit, reshape's run-time ValueErrors, a.copy() of arrays of constant shape, the
refusals (copies of arguments, views of another itemsize...), and local/shared arrays' alignment= (frontend/local_arrays.py)."""

import numba
import numpy as np
import pytest

import numba_vulkan as nv
from numba_vulkan import cuda

pytestmark = [pytest.mark.device, pytest.mark.usefixtures("device")]


def _reshapes(a, o):
    b = a.reshape(3, -1)  # (3, 4)
    c = a.reshape((2, 3, 2))
    d = a[4:].reshape(-1, 2)  # a contiguous view: (4, 2)
    e = b.reshape(12)
    f = b[1].reshape(2, 2)  # a row of a 2-d array
    o[0] = b[2, 3] + 10 * c[1, 2, 0] + 100 * d[3, 1] + 1000 * e[7] + 10000 * f[1, 0]
    o[1] = b.shape[1] * 100 + d.shape[0] * 10 + c.ndim
    o[2] = c.strides[0] + d.strides[0]
    c[1, 0, 1] = -1.0  # writes through to a
    s = 0.0
    for x in d[1]:  # views of the reshaped array
        s += x
    o[3] = s + d.T[1, 2]


def test_reshape_matches_njit():
    a, o = np.arange(12.0), np.zeros(4)
    cuda.jit(_reshapes)[1, 1](a, o)  # one invocation: it writes a
    a_cpu, o_cpu = np.arange(12.0), np.zeros(4)
    numba.njit(_reshapes)(a_cpu, o_cpu)
    assert o.tolist() == o_cpu.tolist()
    assert a.tolist() == a_cpu.tolist()


def _infer(a, o, n):
    o[0] = a.reshape(n, -1).shape[1]


def _bad(a, o, n):
    o[0] = a.reshape(n, 4)[0, 0]


def _two_unknown(a, o, n):
    o[0] = a.reshape(-1, n, -1)[0, 0, 0]


@pytest.mark.parametrize("fn, n, error", [
    (_infer, 4, None), (_infer, 5, "total size of new array must be unchanged"),
    (_bad, 3, None), (_bad, 2, "total size of new array must be unchanged"),
    (_two_unknown, 1, "multiple negative shape values"),
])  # fmt: skip
def test_reshape_errors_as_njit(fn, n, error):
    for run in (lambda *a: cuda.jit(fn)[1, 1](*a), numba.njit(fn)):
        a, o = np.arange(12.0), np.zeros(1)
        if error is None:
            run(a, o, n)
            assert o[0] == (3.0 if fn is _infer else 0.0)
        else:
            with pytest.raises(ValueError, match=error):
                run(a, o, n)


def test_reshape_of_non_contiguous_is_refused():
    """Numba's typing refuses it (layout 'A'), as numba.njit does: a compile-time error."""

    def k(a, o):
        o[0] = a[::2].reshape(2, 3)[0, 0]

    with pytest.raises(nv.VulkanUnsupportedError):
        nv.jit(k).forall(1)(np.arange(12.0), np.zeros(1))
    with pytest.raises(numba.TypingError, match="contiguous"):
        numba.njit(k)(np.arange(12.0), np.zeros(1))


_VAL = np.array([1, 2, 3])[::-1]
_GRID = np.arange(6.0).reshape(2, 3)


def _copies(out):
    q = _VAL.copy()  # a global array (frozen into the kernel): a local copy
    g = _GRID.copy()
    g[0, 0] = -5.0  # the copy is writable, the global untouched
    loc = np.zeros((2, 2))
    for i in range(2):
        for j in range(2):
            loc[i, j] = i * 2 + j
    c = loc.copy()
    loc[0, 0] = 100.0  # not in the copy
    for i in range(len(q)):
        out[i] = q[i]
    out[3] = c[0, 0] + c[1, 1] * 10
    out[4] = g[0, 0] + _GRID[0, 0] + g[1, 2] * 100


def test_copy_of_constant_shape_matches_njit():
    dev, cpu = np.zeros(5), np.zeros(5)
    cuda.jit(_copies)[1, 1](dev)
    numba.njit(_copies)(cpu)
    assert dev.tolist() == cpu.tolist() == [3.0, 2.0, 1.0, 30.0, 495.0]


def test_copy_of_an_argument_is_refused_by_name():
    def k(a, o):
        o[0] = a.copy()[0]

    with pytest.raises(nv.VulkanUnsupportedError, match=r"'\.copy\(\)'.*run time"):
        nv.jit(k).forall(1)(np.arange(4.0), np.zeros(1))


def _aligned(alignment):
    @cuda.jit
    def k(o):
        loc = cuda.local.array((2, 3), np.float32, alignment=alignment)
        sh = cuda.shared.array(shape=4, dtype=np.int32, alignment=alignment)
        loc[1, 2] = 5.0
        sh[0] = 2
        cuda.syncthreads()
        o[0] = loc[1, 2] + sh[0]

    return k


@pytest.mark.parametrize("alignment", [None, 1, 16, 256])
def test_local_and_shared_alignment_accepted(alignment):
    o = np.zeros(1)
    _aligned(alignment)[1, 1](o)
    assert o[0] == 7.0


@pytest.mark.parametrize("alignment", [0, 3, 24])
def test_alignment_not_a_power_of_two_is_refused(alignment):
    """numba.cuda's ValueError (a wrong argument, not a missing feature)."""
    with pytest.raises(ValueError, match=f"Alignment must be a power of 2: .*={alignment} "):
        _aligned(alignment)[1, 1](np.zeros(1))


def test_alignment_of_another_type_is_refused():
    with pytest.raises(nv.VulkanUnsupportedError, match="alignment=float64"):
        _aligned(1.5)[1, 1](np.zeros(1))


def _views(a, b, o):
    v = a.view(np.int64)
    w = a[1:].view(np.uint64)
    o[0] = v[1]
    o[1] = w[0] >> 52
    v[2] = 4607182418800017408  # the bits of 1.0: a[2] = 1.0
    f = b.view(np.float32)
    o[2] = f[1] * 2
    f[0] = 1.5  # b[0] = the bits of 1.5
    o[3] = b.view(np.uint32).view(np.float32)[0] * 4  # a view of a view
    o[4] = v[::2][1]  # a slice of one
    o[5] = a.view(np.int64).sum()
    for x in a.view(np.uint64)[3:]:
        o[6] += x >> 60


def test_view_of_the_same_itemsize_matches_njit():
    def args():
        return (np.array([0.5, 2.0, 3.0, -1.0]), np.array([1065353216, 1073741824], np.int32),
                np.zeros(7, np.int64))  # fmt: skip

    dev, cpu = args(), args()
    cuda.jit(_views)[1, 1](*dev)
    numba.njit(_views)(*cpu)
    for d, c in zip(dev, cpu):
        assert d.tolist() == c.tolist()
    assert dev[0][2] == 1.0 and dev[1][0] == np.float32(1.5).view(np.int32)


@pytest.mark.parametrize("body, why", [
    ("a.view(np.int32)[0]", "another itemsize"),
    ("a.view(np.complex128)[0].real", "integer and float element types only"),
    ("cuda.atomic.add(a.view(np.int64), 0, 1)", "atomic.add on a.view"),
    ("cuda.local.array(4, np.float64).view(np.int64)[0]", "shared, local or global"),
])  # fmt: skip
def test_view_refusals_name_the_reason(body, why):
    scope = {"np": np, "cuda": cuda}
    exec(f"def k(a, o):\n    o[0] = {body}\n", scope)  # noqa: S102
    with pytest.raises(nv.VulkanUnsupportedError, match=why):
        cuda.jit(scope["k"])[1, 1](np.arange(4.0), np.zeros(1))
