"""Numba types -> KIR scalar kinds, under a narrowing mode (numba_vulkan.narrowing).

Three kinds matter for a scalar: the *exact* kind (the Numba type's own
width), the *compute* kind (what KIR arithmetic runs on: the exact kind,
except int64 -> i32 under ``mode.ints`` and float64 -> f32 under
``mode.floats``), and the *storage* kind of an array element. How values lie
in memory and in the parameter block (storage kinds, sizes, slots, offsets)
is decided in one place, the C++ argument contract (kir/abi.h), which this
module and the runtime ask through ``_core``.
"""

import numpy as np
from numba.core import types
from numba.np import numpy_support

from .. import _core, bfloat16_host
from ..typing.bfloat16 import BFloat16
from .errors import unsupported

K = _core.Kind

_INT_KINDS = {
    (8, True): K.i8, (16, True): K.i16, (32, True): K.i32, (64, True): K.i64,
    (8, False): K.u8, (16, False): K.u16, (32, False): K.u32, (64, False): K.u64,
}  # fmt: skip

_NARROW_INT = {K.i64: K.i32, K.u64: K.u32}

FLOAT_KINDS = (K.f16, K.f32, K.f64)
SIGNED_KINDS = (K.i8, K.i16, K.i32, K.i64)
UNSIGNED_KINDS = (K.u8, K.u16, K.u32, K.u64)
BITS = {
    K.bool: 1, K.i8: 8, K.u8: 8, K.i16: 16, K.u16: 16, K.f16: 16,
    K.i32: 32, K.u32: 32, K.f32: 32, K.i64: 64, K.u64: 64, K.f64: 64,
}  # fmt: skip


def is_float(kind):
    return kind in FLOAT_KINDS


def is_signed(kind):
    return kind in SIGNED_KINDS


def is_int(kind):
    return kind in SIGNED_KINDS or kind in UNSIGNED_KINDS


_SCALAR_CLASSES = (types.Boolean, types.Integer, types.Float, BFloat16)
# Numba's type classes are ABCs: an isinstance test against them costs a few times a test of
# the exact class. The lowering asks for the kind of a type at every variable and operation,
# so the classes of the plain scalar types (not their literals) are tested first.
_PLAIN_SCALAR_CLASSES = frozenset(_SCALAR_CLASSES)
_FLOAT_BITS_KINDS = {16: K.f16, 32: K.f32, 64: K.f64}


def is_scalar_type(ty):
    """True for the Numba types that are KIR scalars (bool, ints, floats and their literals;
    members of an Enum or IntEnum whose values are ints or floats, held as their values)."""
    return (type(ty) in _PLAIN_SCALAR_CLASSES or isinstance(ty, _SCALAR_CLASSES)
            or (isinstance(ty, types.EnumMember) and isinstance(ty.dtype, _SCALAR_CLASSES)))


def unliteral(ty):
    return types.unliteral(ty)


def exact_kind(ty):
    """The KIR kind of a Numba scalar type without narrowing (the width the source names)."""
    cls = type(ty)
    if cls not in _PLAIN_SCALAR_CLASSES:  # a literal, a subclass, or not a scalar
        ty = unliteral(ty)
        if isinstance(ty, types.EnumMember):  # an enum member: its value
            ty = ty.dtype
        cls = next((c for c in _SCALAR_CLASSES if isinstance(ty, c)), None)
    if cls is types.Float:
        return _FLOAT_BITS_KINDS[ty.bitwidth]
    if cls is types.Integer:
        return _INT_KINDS[(ty.bitwidth, ty.signed)]
    if cls is types.Boolean:
        return K.bool
    if cls is BFloat16:  # held as the float32 equal to it (frontend/bfloat16.py)
        return K.f32
    return None


def compute_kind(ty, mode, loc=None):
    """The kind KIR computes a Numba scalar type in."""
    k = exact_kind(ty)
    if k is None:
        raise unsupported(f"values of type {ty}", loc)
    if mode.ints and k in _NARROW_INT:
        return _NARROW_INT[k]
    if k == K.f16 or (mode.floats and k == K.f64):
        return K.f32
    return k


def index_kind(mode):
    """Kind of extents, strides and linear indices: i64 in a 64-bit-index specialisation."""
    return K.i64 if mode.index64 else K.i32


def storage_kind(dtype, mode, loc=None):
    """The kind an array element of Numba dtype `dtype` has in device memory (kir/abi.h)."""
    k = exact_kind(dtype) if is_scalar_type(dtype) else None
    if k is None:
        raise unsupported(f"array arguments with dtype {dtype}", loc)
    if isinstance(dtype, BFloat16):  # its 16-bit word (frontend/bfloat16.py)
        return K.u16
    return _core.storage_kind(k, int64=mode.int64_storage, float64=mode.float64_storage)


def host_dtype(dtype):
    """The NumPy dtype of a Numba dtype (an array argument's declaration names its host dtype)."""
    if isinstance(dtype, BFloat16):
        return np.dtype(bfloat16_host.scalar_type())
    return numpy_support.as_dtype(dtype)
