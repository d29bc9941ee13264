"""Numba types -> KIR scalar kinds, under a narrowing mode (numba_vulkan.narrowing).

Three kinds matter for a scalar: the *compute* kind (what KIR arithmetic
runs on: the Numba type's own width, except int64 -> i32 under ``mode.ints``
and float64 -> f32 under ``mode.floats``), the *storage* kind of an array
element (what lies in device memory: the dtype itself, bool as i32, and the
32-bit counterpart only where the device cannot hold 64-bit data), and the
*parameter* kind of a scalar argument's slot (4 or 8 bytes: bool, 8- and
16-bit values travel widened to 32 bits).
"""

from numba.core import types
from numba.np import numpy_support

from .. import _core
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


def is_scalar_type(ty):
    """True for the Numba types that are KIR scalars (bool, ints, floats and their literals)."""
    return isinstance(ty, (types.Boolean, types.Integer, types.Float))


def unliteral(ty):
    return types.unliteral(ty)


def exact_kind(ty):
    """The KIR kind of a Numba scalar type without narrowing (the width the source names)."""
    ty = unliteral(ty)
    if isinstance(ty, types.Boolean):
        return K.bool
    if isinstance(ty, types.Integer):
        return _INT_KINDS[(ty.bitwidth, ty.signed)]
    if isinstance(ty, types.Float):
        return {16: K.f16, 32: K.f32, 64: K.f64}[ty.bitwidth]
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
    """The kind an array element of Numba dtype `dtype` has in device memory."""
    k = exact_kind(dtype) if is_scalar_type(dtype) else None
    if k is None:
        raise unsupported(f"array arguments with dtype {dtype}", loc)
    if k == K.bool:
        return K.i32
    if k == K.f64 and not mode.float64_storage:
        return K.f32
    if k in _NARROW_INT and not mode.int64_storage:
        return _NARROW_INT[k]
    return k


def host_dtype(dtype):
    """The NumPy dtype of a Numba dtype (the launcher's argspec names the host dtype)."""
    return numpy_support.as_dtype(dtype)


_PARAM_WIDENED = {K.bool: K.u32, K.i8: K.i32, K.i16: K.i32, K.u8: K.u32, K.u16: K.u32}


def param_kind(ty, mode, loc=None):
    """The kind of a scalar argument's slot in the parameter block: the compute kind, with
    bool, 8- and 16-bit integers widened to 32 bits (float16 computes as f32 already)."""
    k = compute_kind(ty, mode, loc)
    return _PARAM_WIDENED.get(k, k)


def scalar_code(kind):
    """The launcher's code of a scalar parameter kind: 'i', 'u', 'f' or 'b'."""
    if is_float(kind):
        return "f"
    if is_signed(kind):
        return "i"
    return "u"


def nbytes(kind):
    return max(1, BITS[kind] // 8) if kind != K.bool else 4
