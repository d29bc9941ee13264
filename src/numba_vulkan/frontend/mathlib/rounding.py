"""Rounding to integers towards -inf, +inf and zero: floor, ceil, trunc (the exact
GLSL.std.450 ops).

Vulkan requires Floor, Ceil and Trunc to be exact; on a device that flushes
float32 subnormals, floor and ceil of a subnormal are mended from its bits.
Rounding to the nearest integer, ties to even, is bits.rint.
"""

from ... import _core
from ..arith import const
from . import bits, denormals

K = _core.Kind
Op = _core.Op
M = _core.MathFn


def floor(b, x):
    return _unit_for_subnormal(b, x, b.math(M.floor, [x]), True)


def ceil(b, x):
    return _unit_for_subnormal(b, x, b.math(M.ceil, [x]), False)


def _unit_for_subnormal(b, x, r, negative):
    """On a device that flushes subnormals Floor(-1e-45) gives -0.0: -1 (floor of a negative
    subnormal) or 1 (ceil of a positive one), from the bits."""
    if b.kind(x) != K.f32 or not denormals.flushes(b):
        return r
    pick = bits.both(b, bits.is_subnormal(b, x), bits.sign_bit(b, x) if negative else
                     b.unary(Op.not_, bits.sign_bit(b, x)))  # fmt: skip
    return b.select(pick, const(b, K.f32, -1.0 if negative else 1.0), r)


def trunc(b, x):
    return b.math(M.trunc, [x])
