"""numba.cuda's kernel-side names, mapped onto numba_vulkan's intrinsics.

Two kinds of name exist in numba.cuda kernels:

* values read as attributes (``cuda.threadIdx.x``, ``cuda.laneid``,
  ``cuda.warpsize``): these objects are markers that the compiler's first
  pass (cuda/rewrite.py) replaces, in Numba's untyped IR, by calls of our
  stubs (``local_id(0)``, ``subgroup.lane()`` ...). They have no type of their own.
* functions (``cuda.grid(2)``, ``cuda.shfl_down_sync(...)``): plain Python
  functions with an ``@overload`` for the Vulkan target, written with our
  stubs; the front end inlines them like any device function.

Semantic differences from numba.cuda (documented in docs/cuda-compat.md):
``threadIdx.x`` and friends are intp (numba.cuda: int32; Numba promotes int32
arithmetic to int64 anyway, so results agree); ``warpsize`` is the device's
subgroup size (8 on lavapipe, 32 on NVIDIA, 32 or 64 on AMD), not 32; the
``mask`` arguments of the ``*_sync`` functions and of ``syncwarp`` are ignored (every
active lane takes part, as with the full mask 0xffffffff); ``syncwarp`` raises on devices
whose subgroups are narrower than a warp of 32.
"""

import numpy as np
from numba.core import types
from numba.core.errors import TypingError
from numba.extending import overload, register_jitable

from .. import stubs as _s
from ..errors import VulkanSupportError, VulkanUnsupportedError
from . import bits as _bits

_sg = _s.subgroup


def _kernel_only(name):
    raise NotImplementedError(
        f"numba_vulkan.cuda.{name} can only be used inside a kernel compiled with @cuda.jit")


class Dim3:
    """``threadIdx``/``blockIdx``/``blockDim``/``gridDim``: ``.x/.y/.z`` inside kernels."""

    def __init__(self, name, stub):
        self.__name__ = name
        self.stub = stub  # the axis intrinsic each component becomes (cuda/rewrite.py)

    def __getattr__(self, attr):
        if attr in ("x", "y", "z"):
            _kernel_only(f"{self.__name__}.{attr}")
        raise AttributeError(attr)

    def __repr__(self):
        return f"<numba_vulkan.cuda {self.__name__}>"


class SpecialValue:
    """``laneid`` / ``warpsize``: a value read inside kernels (cuda/rewrite.py)."""

    def __init__(self, name, stub):
        self.__name__ = name
        self.stub = stub

    def __repr__(self):
        return f"<numba_vulkan.cuda {self.__name__}>"


threadIdx = Dim3("threadIdx", _s.local_id)
blockIdx = Dim3("blockIdx", _s.group_id)
blockDim = Dim3("blockDim", _s.local_size)
gridDim = Dim3("gridDim", _s.num_groups)
laneid = SpecialValue("laneid", _sg.lane)
warpsize = SpecialValue("warpsize", _sg.size)

DIM3 = (threadIdx, blockIdx, blockDim, gridDim)
SPECIAL_VALUES = (laneid, warpsize)


# ---------------------------------------------------------------- grid / gridsize


def grid(ndim):
    """The absolute position of the thread in the grid: an int for ndim 1, else a tuple."""
    _kernel_only("grid")


def gridsize(ndim):
    """The number of threads in the grid along each axis: an int for ndim 1, else a tuple."""
    _kernel_only("gridsize")


def _literal_ndim(name, ndim):
    if not isinstance(ndim, types.IntegerLiteral) or ndim.literal_value not in (1, 2, 3):
        raise TypingError(f"cuda.{name}(ndim) takes a constant 1, 2 or 3, not {ndim}")
    return ndim.literal_value


@overload(grid, target="vulkan", prefer_literal=True)
def _grid(ndim):
    n = _literal_ndim("grid", ndim)
    if n == 1:
        return lambda ndim: _s.global_id(0)
    if n == 2:
        return lambda ndim: (_s.global_id(0), _s.global_id(1))
    return lambda ndim: (_s.global_id(0), _s.global_id(1), _s.global_id(2))


@overload(gridsize, target="vulkan", prefer_literal=True)
def _gridsize(ndim):
    n = _literal_ndim("gridsize", ndim)
    if n == 1:
        return lambda ndim: _s.num_groups(0) * _s.local_size(0)
    if n == 2:
        return lambda ndim: (_s.num_groups(0) * _s.local_size(0),
                             _s.num_groups(1) * _s.local_size(1))
    return lambda ndim: (_s.num_groups(0) * _s.local_size(0),
                         _s.num_groups(1) * _s.local_size(1),
                         _s.num_groups(2) * _s.local_size(2))


# ---------------------------------------------------------------- const.array_like


class _ConstNamespace:
    """``cuda.const.array_like(arr)``: a global NumPy array is already a kernel constant
    here (frozen at compile time, as Numba freezes globals), so this is the identity."""

    __name__ = "const"

    @staticmethod
    def array_like(ary):
        _kernel_only("const.array_like")


const = _ConstNamespace()


def _type_as_module(obj):
    """Type `obj` in kernels as a module, so that ``cuda.const.array_like`` resolves."""
    from ..typing import vkdecl

    vkdecl.registry.register_global(obj, types.Module(obj))


_type_as_module(const)


@overload(const.array_like, target="vulkan")
def _const_array_like(ary):
    if isinstance(ary, types.Array):
        return lambda ary: ary
    raise TypingError(f"cuda.const.array_like takes a global NumPy array, not {ary}")


# ---------------------------------------------------------------- warp (subgroup) functions
# CUDA gives a lane outside the warp its own value for shfl_up/down; SPIR-V leaves it
# undefined, so the relative shuffles select the caller's value there.


def shfl_sync(mask, value, src_lane):
    """The value of `src_lane` (mask ignored: every active lane takes part)."""
    _kernel_only("shfl_sync")


def shfl_up_sync(mask, value, delta):
    """The value of lane - delta, or the caller's own value where that lane does not exist."""
    _kernel_only("shfl_up_sync")


def shfl_down_sync(mask, value, delta):
    """The value of lane + delta, or the caller's own value where that lane does not exist."""
    _kernel_only("shfl_down_sync")


def shfl_xor_sync(mask, value, lane_mask):
    """The value of lane ^ lane_mask (within the subgroup)."""
    _kernel_only("shfl_xor_sync")


def ballot_sync(mask, predicate):
    """A uint32 with bit k set where lane k's predicate is true (lanes 0-31)."""
    _kernel_only("ballot_sync")


def all_sync(mask, predicate):
    """Whether the predicate is true in every active lane."""
    _kernel_only("all_sync")


def any_sync(mask, predicate):
    """Whether the predicate is true in some active lane."""
    _kernel_only("any_sync")


def eq_sync(mask, value):
    """Whether every active lane has the same value."""
    _kernel_only("eq_sync")


def match_any_sync(mask, value):
    """An int32 with bit k set where lane k of `mask` holds the caller's value (bit for bit)."""
    _kernel_only("match_any_sync")


def match_all_sync(mask, value):
    """(mask, True) where every lane of `mask` holds the caller's value, else (0, False)."""
    _kernel_only("match_all_sync")


def activemask():
    """A uint32 with bit k set where lane k is active (lanes 0-31)."""
    _kernel_only("activemask")


def lanemask_lt():
    """A uint32 with the bits of the lanes below the caller set."""
    _kernel_only("lanemask_lt")


@overload(shfl_sync, target="vulkan")
def _shfl_sync(mask, value, src_lane):
    return lambda mask, value, src_lane: _sg.shuffle(value, src_lane % _sg.size())


@overload(shfl_up_sync, target="vulkan")
def _shfl_up_sync(mask, value, delta):
    def impl(mask, value, delta):
        got = _sg.shuffle_up(value, delta)
        return got if _sg.lane() >= delta else value
    return impl


@overload(shfl_down_sync, target="vulkan")
def _shfl_down_sync(mask, value, delta):
    def impl(mask, value, delta):
        got = _sg.shuffle_down(value, delta)
        return got if _sg.lane() + delta < _sg.size() else value
    return impl


@overload(shfl_xor_sync, target="vulkan")
def _shfl_xor_sync(mask, value, lane_mask):
    def impl(mask, value, lane_mask):
        got = _sg.shuffle_xor(value, lane_mask)
        return got if (_sg.lane() ^ lane_mask) < _sg.size() else value
    return impl


def syncwarp(mask=0xFFFFFFFF):
    """Wait for the warp's active lanes (mask ignored): ``nv.subgroup.barrier()``."""
    _kernel_only("syncwarp")


@overload(syncwarp, target="vulkan")
def _syncwarp(mask=0xFFFFFFFF):
    # numba.cuda programs share data among the 32 lanes of a warp around syncwarp (masks
    # such as 0xffff name lanes 0-15): a narrower subgroup would leave lanes of the warp
    # unsynchronised, and the results silently wrong. Wider ones (AMD's 64) are safe:
    # the active lanes all wait.
    def impl(mask=0xFFFFFFFF):
        if _sg.size() < 32:
            raise VulkanSupportError("cuda.syncwarp synchronises a warp of 32 lanes, and this "
                                     "device's subgroups are narrower: use "
                                     "nv.subgroup.barrier() with nv.subgroup.size() lanes, "
                                     "or cuda.syncthreads()")
        _sg.barrier()
    return impl


@overload(ballot_sync, target="vulkan")
def _ballot_sync(mask, predicate):
    return lambda mask, predicate: _sg.ballot(predicate)[0]


@overload(all_sync, target="vulkan")
def _all_sync(mask, predicate):
    return lambda mask, predicate: _sg.all(predicate)


@overload(any_sync, target="vulkan")
def _any_sync(mask, predicate):
    return lambda mask, predicate: _sg.any(predicate)


@overload(eq_sync, target="vulkan")
def _eq_sync(mask, value):
    return lambda mask, value: _sg.all(_sg.broadcast_first(value) == value)


def _match_word(value):
    """The integer whose equality is match_*_sync's (numba.cuda's types: int32, int64, float32,
    float64; floats compared as their words, so NaN matches itself and -0 does not match 0)."""
    if isinstance(value, types.Float):
        if value.bitwidth <= 32:
            return lambda v: _bits.as_bits(np.float32(v))
        return lambda v: _bits.as_bits(np.float64(v))
    if isinstance(value, (types.Integer, types.Boolean)):
        if getattr(value, "bitwidth", 1) <= 32:
            return lambda v: np.int32(v)
        return lambda v: np.int64(v)
    raise TypingError(f"cuda.match_any_sync / match_all_sync take an integer or float value, "
                      f"not {value}")


@register_jitable
def _matching_lanes(mask, word):
    """The lanes (0-31) of the subgroup holding `word`, within `mask` (``nv.subgroup.partition``
    gives active lanes only; one instruction where the device has it)."""
    return mask & _sg.partition(word)[0]


@overload(match_any_sync, target="vulkan")
def _match_any_sync(mask, value):
    word = register_jitable(_match_word(value))
    return lambda mask, value: np.int32(_matching_lanes(mask, word(value)))


@overload(match_all_sync, target="vulkan")
def _match_all_sync(mask, value):
    word = register_jitable(_match_word(value))

    def impl(mask, value):
        lanes = mask & _sg.ballot(True)[0]
        same = _matching_lanes(mask, word(value)) == lanes
        return (np.int32(lanes) if same else np.int32(0)), same
    return impl


@overload(activemask, target="vulkan")
def _activemask():
    return lambda: _sg.ballot(True)[0]


@overload(lanemask_lt, target="vulkan")
def _lanemask_lt():
    return lambda: (1 << _sg.lane()) - 1


# ---------------------------------------------------------------- refused names


def refused(name, why):
    """A kernel-side function Vulkan cannot provide: an error naming it, in Python and in
    kernels (the typing error carries the same message)."""

    def fn(*args, **kwargs):
        raise VulkanUnsupportedError(f"cuda.{name}: {why}")

    fn.__name__ = fn.__qualname__ = name
    fn.refused_because = why  # cuda/rewrite.py refuses a kernel that names it
    return fn


# ---------------------------------------------------------------- cache-hinted loads and stores


def _load_hint(name):
    """``cuda.ldcg(array, i)`` & co.: a load with a PTX cache hint. Vulkan has no such
    hints; the value is the same, so each is the plain load ``array[i]``."""
    def load(array, i):
        _kernel_only(name)

    load.__name__ = load.__qualname__ = name

    @overload(load, target="vulkan")
    def _load(array, i):
        if not isinstance(array, types.Array):
            raise TypingError(f"cuda.{name} takes an array and an index, not {array}")
        return lambda array, i: array[i]

    return load


def _store_hint(name):
    """``cuda.stcg(array, i, value)`` & co.: the plain store ``array[i] = value``."""
    def store(array, i, value):
        _kernel_only(name)

    store.__name__ = store.__qualname__ = name

    @overload(store, target="vulkan")
    def _store(array, i, value):
        if not isinstance(array, types.Array):
            raise TypingError(f"cuda.{name} takes an array, an index and a value, not {array}")

        def impl(array, i, value):
            array[i] = value

        return impl

    return store


ldca, ldcg, ldcs, ldlu, ldcv = (_load_hint(n) for n in ("ldca", "ldcg", "ldcs", "ldlu", "ldcv"))
stcg, stcs, stwb, stwt = (_store_hint(n) for n in ("stcg", "stcs", "stwb", "stwt"))


# ---------------------------------------------------------------- selection

#: The operand types numba.cuda's ``selp`` takes (PTX's selp instruction's).
_SELP_TYPES = (types.float64, types.float32, types.int16, types.uint16, types.int32,
               types.uint32, types.int64, types.uint64)


def selp(test, a, b):
    """numba.cuda's ``cuda.selp(test, a, b)``: `a` where `test` is true, else `b`, both
    already evaluated; `a` and `b` of one type."""
    _kernel_only("selp")


@overload(selp, target="vulkan")
def _selp(test, a, b):
    a, b = types.unliteral(a), types.unliteral(b)
    if a != b or a not in _SELP_TYPES:
        raise TypingError(f"cuda.selp(test, a, b) takes a and b of one type among "
                          f"{', '.join(map(str, _SELP_TYPES))}, not {a} and {b}")

    def impl(test, a, b):
        return a if test else b

    return impl


# ---------------------------------------------------------------- math intrinsics


def cbrt(x):
    """numba.cuda's ``cuda.cbrt``: the cube root, in the argument's float type."""
    _kernel_only("cbrt")


@overload(cbrt, target="vulkan")
def _cbrt(x):
    if not isinstance(x, types.Float):
        raise TypingError(f"cuda.cbrt of {x} (float32 or float64)")
    import numpy as np

    return lambda x: np.cbrt(x)
