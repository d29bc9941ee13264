"""What a kernel's arguments are: their Numba types, and whether an array
needs 64-bit indices. Used by the dispatcher's slow path and kernel.compile()."""

import numpy as np
from numba import typeof
from numba.core import sigutils, types
from numba.core.errors import NumbaError
from numba.np import numpy_support

from . import target


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
    such an array gets a specialisation with 64-bit indices instead.
    """
    limit = 2**31 - 1
    itemsize = array.dtype.itemsize or 1
    span = 0
    for extent, stride in zip(array.shape, array.strides):
        if extent > limit:
            return True
        if extent > 0:
            span += (extent - 1) * (abs(stride) // itemsize)
    return span > limit


def _device_array_class():
    from . import runtime

    return getattr(runtime, "DeviceArray", ())


_SCALAR_TYPES = (bool, int, float, complex, np.bool_, np.integer, np.floating, np.complexfloating)


def typeof_argument(value, position):
    """The Numba type a launch argument gets, or TypeError naming its position.

    NumPy arrays are typed as the C-contiguous device copy they become;
    device arrays as arrays of their host dtype; scalars as Numba does.
    """
    if isinstance(value, _device_array_class()):
        return target.device_array_type(value)
    if isinstance(value, np.ndarray):
        dtype = None
        if value.dtype.kind in "biufc":  # bool, integers, floats, complex
            try:  # big-endian data is copied to the device in native order
                dtype = numpy_support.from_dtype(value.dtype.newbyteorder("="))
            except NumbaError:
                pass
        if dtype is None or value.ndim == 0:
            raise TypeError(
                f"argument {position}: NumPy arrays of dtype {value.dtype} and ndim {value.ndim} "
                "cannot be passed to a kernel"
            )
        return types.Array(dtype, value.ndim, "C", readonly=not value.flags.writeable)
    if isinstance(value, _SCALAR_TYPES):
        return typeof(value)
    if isinstance(value, tuple):
        return types.BaseTuple.from_types([typeof_argument(v, position) for v in value])
    raise TypeError(
        f"argument {position} has type {type(value).__name__}, which kernels cannot take: "
        "pass NumPy arrays, device arrays (nv.to_device), scalars or tuples of these"
    )
