"""numba.cuda's bit intrinsics: ``popc``, ``clz``, ``ffs``, ``brev``.

Each works on the argument's own width (8 to 64 bits; signed values as two's
complement), as CUDA's ``__popc/__clz/__ffs/__brev`` and their 64-bit forms:

* ``popc(x)``: the number of set bits;
* ``clz(x)``: the number of leading zero bits (the width for 0);
* ``ffs(x)``: the 1-based position of the lowest set bit (0 for 0);
* ``brev(x)``: the bits in reverse order (unsigned 32- and 64-bit, as numba.cuda).

They are written as loops over the bits in uint64 (at most 64 iterations) with
every constant a uint64: Numba types mixed signed/unsigned 64-bit arithmetic as
float64, which would lose bits. The results are int32 (CUDA's int), brev's the
argument's type.
"""

import numpy as np
from numba.core import types
from numba.core.errors import TypingError
from numba.extending import overload

_ONE = np.uint64(1)


def _kernel_only(name):
    raise NotImplementedError(f"numba_vulkan.cuda.{name} can only be used inside a kernel")


def popc(x):
    _kernel_only("popc")


def clz(x):
    _kernel_only("clz")


def ffs(x):
    _kernel_only("ffs")


def brev(x):
    _kernel_only("brev")


def _width(name, x):
    if not isinstance(x, types.Integer):
        raise TypingError(f"cuda.{name} takes an integer, not {x}")
    return x.bitwidth, np.uint64((1 << x.bitwidth) - 1)


@overload(popc, target="vulkan")
def _popc(x):
    width, mask = _width("popc", x)

    def impl(x):
        u = np.uint64(x) & mask
        n = 0
        for i in range(width):
            if (u >> np.uint64(i)) & _ONE:
                n += 1
        return np.int32(n)

    return impl


@overload(clz, target="vulkan")
def _clz(x):
    width, mask = _width("clz", x)

    def impl(x):
        u = np.uint64(x) & mask
        n = 0
        for i in range(width):
            if (u >> np.uint64(width - 1 - i)) & _ONE:
                break
            n += 1
        return np.int32(n)

    return impl


@overload(ffs, target="vulkan")
def _ffs(x):
    width, mask = _width("ffs", x)

    def impl(x):
        u = np.uint64(x) & mask
        pos = 0
        for i in range(width):
            if (u >> np.uint64(i)) & _ONE:
                pos = i + 1
                break
        return np.int32(pos)

    return impl


@overload(brev, target="vulkan")
def _brev(x):
    if not isinstance(x, types.Integer) or x.signed or x.bitwidth not in (32, 64):
        raise TypingError(f"cuda.brev takes a uint32 or uint64, not {x}")
    width = x.bitwidth
    out_type = np.uint32 if width == 32 else np.uint64

    def impl(x):
        u = np.uint64(x)
        r = np.uint64(0)
        for i in range(width):
            r = (r << _ONE) | ((u >> np.uint64(i)) & _ONE)
        return out_type(r)

    return impl
