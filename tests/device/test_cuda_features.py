"""numba.cuda features numba-cuda's own kernel tests use, through ``from numba_vulkan import
cuda``: numba.cuda.extending's overloads for target "cuda", CUSource objects, atomics with
index tuples of mixed types, Enum and IntEnum members in kernels."""

import enum

import numpy as np
import pytest
from numba import uint64

from numba_vulkan import cuda
from numba_vulkan.cuda.extending import overload
from numba_vulkan.errors import VulkanUnsupportedError

pytestmark = [pytest.mark.device, pytest.mark.usefixtures("device")]


# ---------------------------------------------------------------- extending.overload


def _scaled():
    pass


def _scaled_both():
    pass


@overload(_scaled, target="cuda")
def _ol_scaled(x):
    def impl(x):
        x[0] *= 3

    return impl


@overload(_scaled_both, target="generic")
def _ol_scaled_both_generic(x):
    def impl(x):
        x[0] *= 5

    return impl


@overload(_scaled_both, target="cuda")
def _ol_scaled_both_cuda(x):
    def impl(x):
        x[0] *= 7

    return impl


def test_overload_for_target_cuda_is_ours():
    @cuda.jit
    def k(x):
        _scaled(x)
        _scaled_both(x)  # the "cuda" overload is chosen over the generic one

    x = np.ones(1, np.int64)
    k[1, 1](x)
    assert x[0] == 21


def test_cusource_is_made_but_not_linked():
    src = cuda.CUSource('extern "C" __device__ int f(int *r, int a) { *r = a; return 0; }')
    assert "extern" in src.data
    with pytest.raises(VulkanUnsupportedError, match="link"):
        cuda.jit(link=[src])


# ---------------------------------------------------------------- atomics


@cuda.jit(device=True)
def _to_u64(n):
    return uint64(n)


@cuda.jit(device=True)
def _atomic_2d(ary, op2, cast, neg_idx):
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    idx = (tx, cast(ty))
    if neg_idx:  # int64 % ... and uint64 % int64: the tuple unifies to (int64, float64)
        idx = (idx[0] % ary.shape[0], idx[1] % ary.shape[1])
    cuda.atomic.add(ary, idx, op2)


@pytest.mark.parametrize("neg_idx", [False, True])
@pytest.mark.parametrize("dtype", [np.uint32, np.float64])
def test_atomic_index_tuple_of_int_and_float(dtype, neg_idx):
    @cuda.jit
    def k(ary, neg):
        _atomic_2d(ary, 1, _to_u64, neg)

    ary = np.arange(32).astype(dtype).reshape(4, 8)
    k[1, (4, 8)](ary, neg_idx)
    np.testing.assert_array_equal(ary, np.arange(32).astype(dtype).reshape(4, 8) + 1)


def test_atomic_index_tuple_float_truncates():
    @cuda.jit
    def k(ary, f):
        cuda.atomic.add(ary, (0, f), 1)  # 2.75 -> 2, as numba.cuda's cast to intp

    ary = np.zeros((1, 4), np.int32)
    k[1, 4](ary, 2.75)
    np.testing.assert_array_equal(ary, [[0, 0, 4, 0]])


# ---------------------------------------------------------------- enums


class _Color(enum.Enum):
    red = 1
    blue = 3


class _Shape(enum.IntEnum):
    circle = 2


class _Signed(enum.IntEnum):
    two = 2
    minus = -1


def _enum_uses(x, out):
    out[0] = _Color.blue == _Color.blue
    out[1] = _Color.blue is _Color.red
    out[2] = _Shape.circle == _Signed.two  # IntEnums compare as ints
    out[3] = _Shape.circle is _Signed.two  # but are not the same member
    out[4] = _Color["red"] != _Color.blue
    out[5] = _Signed.minus < x
    out[6] = _Color.blue.value == x
    out[7] = x - _Signed.minus > _Shape.circle


@pytest.mark.parametrize("x", [-3, 3])
def test_enum_members_in_kernels_as_python(x):
    got = np.zeros(8, np.bool_)
    expected = got.copy()
    _enum_uses(x, expected)
    cuda.jit(_enum_uses)[1, 1](x, got)
    np.testing.assert_array_equal(got, expected)


def test_enum_member_argument_refused():
    @cuda.jit
    def k(c, out):
        out[0] = c == _Color.red

    with pytest.raises(TypeError, match="enum members"):
        k[1, 1](_Color.red, np.zeros(1, np.bool_))


# ---------------------------------------------------------------- debug=True


def test_debug_raises_at_the_launch():
    @cuda.jit(debug=True, opt=False)
    def k(do_raise):
        if do_raise:
            raise ValueError("asked to")

    k[1, 1](False)
    with pytest.raises(ValueError, match="asked to"):
        k[1, 1](True)  # numba.cuda's debug launches wait and raise at once
    k[1, 1](False)  # nothing left over for the next launch


def test_debug_checks_integer_division():
    @cuda.jit(debug=True)
    def k(out, d):
        out[0] = 7 // d

    out = np.zeros(1, np.int64)
    k[1, 1](out, 2)
    assert out[0] == 3
    with pytest.raises(ZeroDivisionError):
        k[1, 1](out, 0)
