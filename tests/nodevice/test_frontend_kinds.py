"""frontend/types.py: the kinds of Numba types, by the exact-class fast path and by the
isinstance tests it stands in for (Numba's ABCs), agree for plain scalars, their literals
and types that are no scalars."""

import pytest
from numba.core import types

from numba_vulkan.frontend import types as kinds

K = kinds.K

SCALARS = [types.boolean, types.float16, types.float32, types.float64, types.intp, types.uintp] + [
    types.Integer.from_bitwidth(bits, signed) for bits in (8, 16, 32, 64) for signed in (True, False)
]
LITERALS = [types.literal(3), types.literal(True), types.literal(-(2**40))]
OTHERS = [types.none, types.float32[::1], types.UniTuple(types.float32, 2), types.complex64,
          types.NPDatetime("s"), types.unicode_type]  # fmt: skip


def _by_isinstance(ty):
    """frontend/types.py's definition before the fast path."""
    ty = types.unliteral(ty)
    if isinstance(ty, types.Boolean):
        return K.bool
    if isinstance(ty, types.Integer):
        return kinds._INT_KINDS[(ty.bitwidth, ty.signed)]
    if isinstance(ty, types.Float):
        return {16: K.f16, 32: K.f32, 64: K.f64}[ty.bitwidth]
    return None


@pytest.mark.parametrize("ty", SCALARS + LITERALS + OTHERS, ids=str)
def test_kinds_as_by_isinstance(ty):
    assert kinds.exact_kind(ty) == _by_isinstance(ty)
    assert kinds.is_scalar_type(ty) == isinstance(ty, (types.Boolean, types.Integer, types.Float))


def test_plain_scalars_take_the_fast_path():
    assert all(type(ty) in kinds._PLAIN_SCALAR_CLASSES for ty in SCALARS)
    assert not any(type(ty) in kinds._PLAIN_SCALAR_CLASSES for ty in LITERALS + OTHERS)
