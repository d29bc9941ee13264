"""What a kernel's arguments are: their Numba types, and whether an array
needs 64-bit indices. Used by the dispatcher's slow path and kernel.compile()."""

import enum

import numpy as np
from numba import typeof
from numba.core import sigutils, types
from numba.core.errors import NumbaError
from numba.np import numpy_support

from . import bfloat16_host
from .typing import bfloat16, target


def parse_argtypes(argtypes):
    """Argument types from a signature string, one Numba type or a sequence of them."""
    if isinstance(argtypes, str):
        args, _ = sigutils.normalize_signature(argtypes)
        return tuple(args)
    if isinstance(argtypes, types.Type):
        return (argtypes,)
    argtypes = tuple(argtypes)
    for position, t in enumerate(argtypes):
        if not isinstance(t, types.Type):
            raise TypeError(f"argument type {position} must be a Numba type, not {t!r}")
    return argtypes


def needs_64bit_indices(array):
    """Whether some element of ``array`` lies 2^31 or more elements past its first.

    Kernels index with 32-bit integers by default (ARCHITECTURE.md decision 4);
    such an array gets a specialisation with 64-bit indices instead. The launcher
    applies the same rule to device arrays (``_core.fits_int32_indices``).
    """
    return not _core().fits_int32_indices(array.shape, array.strides, array.dtype.itemsize)


def _device_array_class():
    from . import runtime

    return getattr(runtime, "DeviceArray", ())


_NDARRAY_TYPES = {}  # (dtype, ndim, writeable, layout) -> Numba type of a NumPy argument

_SCALAR_TYPES = (bool, int, float, complex, np.bool_, np.integer, np.floating, np.complexfloating)


def typeof_argument(value, position):
    """The Numba type a launch argument gets, or TypeError naming its position.

    NumPy arrays are typed as the contiguous device copy they become: layout 'F'
    for an F-contiguous (not C-contiguous) array, whose copy keeps that order, else
    'C'; device arrays as arrays of their host dtype and layout ('C', 'F' or 'A');
    scalars as Numba does.
    """
    if isinstance(value, _device_array_class()):
        return target.device_array_type(value)
    if isinstance(value, np.ma.MaskedArray):  # its mask would be ignored: numba.njit refuses
        raise TypeError(
            f"argument {position}: a masked array (numpy.ma) cannot be passed to a kernel: "
            "its mask would be ignored; pass its .data, or .filled(value)"
        )
    if isinstance(value, np.ndarray):
        flags = value.flags
        layout = "F" if flags.f_contiguous and not flags.c_contiguous else "C"  # host_order
        key = (value.dtype, value.ndim, flags.writeable, layout)
        cached = _NDARRAY_TYPES.get(key)
        if cached is not None:  # a launch with NumPy arguments types each, every launch
            return cached
        dtype = None
        if bfloat16_host.is_dtype(value.dtype):  # ml_dtypes' bfloat16 (typing/bfloat16.py)
            dtype = bfloat16.bfloat16
        elif value.dtype.kind in "biufc" or value.dtype.fields is not None:  # also records
            try:  # big-endian data is copied to the device in native order
                native = value.dtype if value.dtype.fields else value.dtype.newbyteorder("=")
                dtype = numpy_support.from_dtype(native)
            except NumbaError:
                pass
        if dtype is None:
            raise TypeError(
                f"argument {position}: NumPy arrays of dtype {value.dtype} and ndim {value.ndim} "
                "cannot be passed to a kernel"
            )
        typ = types.Array(dtype, value.ndim, layout, readonly=not flags.writeable)
        if len(_NDARRAY_TYPES) < 1024:
            _NDARRAY_TYPES[key] = typ
        return typ
    if isinstance(value, enum.Enum):  # IntEnum members are ints: refused before that test
        raise TypeError(
            f"argument {position}: enum members ({type(value).__name__}.{value.name}) cannot "
            "be passed to a kernel; pass their .value (kernels may use enum members as "
            "constants)")
    if isinstance(value, np.void):  # a record scalar (``a[0]`` of a record array)
        return record_type(value, position)
    if isinstance(value, _SCALAR_TYPES):
        return typeof(value)
    if bfloat16_host.is_scalar(value):
        return bfloat16.bfloat16
    if isinstance(value, tuple):
        items = [typeof_argument(v, position) for v in value]
        pyclass = type(value) if hasattr(value, "_fields") else None  # a namedtuple keeps its class
        return types.BaseTuple.from_types(items, pyclass)
    raise TypeError(
        f"argument {position} has type {type(value).__name__}, which kernels cannot take: "
        "pass NumPy arrays, device arrays (nv.to_device), scalars or tuples of these"
    )


def record_type(value, position):
    """The Numba record type of record scalar ``value`` (a ``numpy.void``), or TypeError."""
    dtype = value.dtype
    if dtype.fields is None:
        raise TypeError(
            f"argument {position}: a numpy.void of {dtype.itemsize} bytes without "
            "fields cannot be passed to a kernel; pass a record (structured dtype)"
        )
    try:
        return numpy_support.from_dtype(dtype)
    except NumbaError:
        raise TypeError(
            f"argument {position}: records of dtype {dtype} cannot be passed to a kernel"
        ) from None


def record_memory(value):
    """A 1-element array over the memory of record scalar ``value``: its parent array's
    element for ``a[i]`` of a record array, so that what a kernel writes into the record
    shows there, as in numba.cuda (which copies the record to the device and back).
    Read-only where the parent array is."""
    return np.asarray(_RecordMemory(value)).view(value.dtype)


class _RecordMemory:
    """The bytes of a record scalar, for NumPy (the view keeps it, and so the record, alive)."""

    def __init__(self, record):
        self.record = record
        self.__array_interface__ = {"version": 3, "shape": (1,),
                                    "typestr": f"|V{record.dtype.itemsize}",
                                    "data": record.__array_interface__["data"]}  # fmt: skip


def scalar_for_launch(value, argtype, decl, position, kernel):
    """A scalar argument as the launcher takes it for its specialisation (``argtype``, its
    declaration ``decl``, a ``_core.ArgDecl``).

    NumPy scalars become exactly the NumPy type of ``argtype`` (numpy.longlong is
    typed int64 but is not numpy.int64); an integer that its slot cannot hold (a
    narrowed one, ``narrow="ints"``) raises OverflowError naming the argument.
    """
    argtype = types.unliteral(argtype)
    if bfloat16.is_bfloat16(argtype):  # held as float32 (frontend/bfloat16.py): exact
        return np.float32(value)
    if isinstance(value, np.generic):
        value = numpy_support.as_dtype(argtype).type(value)
    bounds = None if isinstance(argtype, types.Boolean) else decl.slot_range
    if bounds is not None and not bounds[0] <= int(value) <= bounds[1]:
        raise OverflowError(
            f"argument {position} of kernel {kernel!r} is {int(value)}, which does not fit "
            f"the {_describe(decl.slot)} the kernel computes in (narrow='ints'); use "
            "narrow=None to compute in 64 bits"
        )
    return value


def check_narrowed_array(array, decl, position, kernel):
    """OverflowError if a NumPy integer array holds values that the kernel's compute kind
    (``decl.compute``, narrower than the dtype under ``narrow="ints"``) would change;
    device arrays are not checked."""
    if array.dtype.kind not in "iu" or not array.size:
        return
    if _core().memory_bytes(decl.compute) >= array.dtype.itemsize:
        return
    lo, hi = _core().kind_range(decl.compute)
    low, high = int(array.min()), int(array.max())
    if low < lo or high > hi:
        bad = low if low < lo else high
        raise OverflowError(
            f"argument {position} of kernel {kernel!r} holds {bad}, which does not fit the "
            f"{_describe(decl.compute)} the kernel computes in (narrow='ints'); use "
            "narrow=None to compute in 64 bits"
        )


def _describe(kind):
    """'32-bit integers' or 'unsigned 32-bit integers' for an integer kind."""
    lo, _ = _core().kind_range(kind)
    bits = 8 * _core().memory_bytes(kind)
    return f"{'' if lo < 0 else 'unsigned '}{bits}-bit integers"


def _core():
    from . import _core

    return _core
