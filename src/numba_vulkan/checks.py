"""Checks of the arguments users pass to the public API.

Every public function that takes a count, a shape, a grid or a dtype checks
it here before it reaches NumPy or the C++ runtime, so that a bad value gives
TypeError, ValueError or OverflowError with a message that names the argument
(and never nanobind's "incompatible function arguments", a truncated 64-bit
value, or a float silently rounded to an int).

Integers are what ``operator.index`` accepts (Python ints and NumPy integer
scalars); bools are refused where a count is meant, because ``True`` as a
shape or a grid is always a mistake.
"""

import math
import operator

import numpy as np

from . import bfloat16_host

#: Largest workgroup count or workgroup size along one axis: Vulkan takes uint32.
MAX_U32 = 2**32 - 1
#: Largest number of bytes an allocation may have (VkDeviceSize is u64, NumPy's sizes i64).
MAX_BYTES = 2**63 - 1


def _describe(value):
    text = repr(value)
    if len(text) > 60:
        text = text[:57] + "..."
    return f"{text} ({type(value).__name__})"


def as_int(value, what, minimum=None, maximum=None):
    """``value`` as a Python int, or TypeError/ValueError/OverflowError naming ``what``.

    Parameters
    ----------
    value : object
    what : str
        The argument's name, as the caller's signature spells it.
    minimum, maximum : int, optional
        Inclusive bounds: below ``minimum`` is a ValueError, above ``maximum``
        an OverflowError.
    """
    if isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{what} must be an integer, not {_describe(value)}")
    try:
        number = operator.index(value)
    except TypeError:
        raise TypeError(f"{what} must be an integer, not {_describe(value)}") from None
    if minimum is not None and number < minimum:
        raise ValueError(f"{what} must be at least {minimum}, not {number}")
    if maximum is not None and number > maximum:
        raise OverflowError(f"{what} must be at most {maximum}, not {number}")
    return number


def as_int_tuple(value, what, min_len=1, max_len=3, minimum=0, maximum=None):
    """An int or a sequence (tuple, list, 1-d integer array) of ints, as a tuple of ints.

    Strings and bytes are refused although they are sequences: ``'88'`` is
    not the extent (8, 8).
    """
    if type(value) is tuple and min_len <= len(value) <= max_len and all(
            type(v) is int and (minimum is None or v >= minimum)
            and (maximum is None or v <= maximum) for v in value):  # fmt: skip
        return value  # the common case, already what the checks below would give
    if isinstance(value, (str, bytes, bytearray)) or value is None:
        raise TypeError(
            f"{what} must be an integer or a tuple of {min_len} to {max_len} integers, "
            f"not {_describe(value)}"
        )
    if isinstance(value, np.ndarray):
        if value.ndim != 1 or value.dtype.kind not in "iu":
            raise TypeError(f"{what} must be a 1-d array of integers, not {_describe(value)}")
        value = tuple(value.tolist())
    if isinstance(value, (tuple, list)):
        items = tuple(value)
        names = [f"{what}[{i}]" for i in range(len(items))]
    else:
        names = [what]
        try:
            items = (operator.index(value),) if not isinstance(value, (bool, np.bool_)) else None
        except TypeError:
            items = None
        if items is None:
            raise TypeError(
                f"{what} must be an integer or a tuple of {min_len} to {max_len} integers, "
                f"not {_describe(value)}"
            )
    if not min_len <= len(items) <= max_len:
        raise TypeError(
            f"{what} must have {min_len} to {max_len} entries, not {len(items)}: {value!r}"
        )
    return tuple(as_int(v, n, minimum=minimum, maximum=maximum) for v, n in zip(items, names))


def as_dim3(value, what, minimum=0):
    """A grid or workgroup size: 1 to 3 integers in [minimum, 2^32 - 1], padded with 1s."""
    dims = as_int_tuple(value, what, minimum=minimum, maximum=MAX_U32)
    return dims + (1,) * (3 - len(dims))


def as_shape(shape, what="shape", max_dims=32):
    """An array shape: an int or a sequence of non-negative ints (at most ``max_dims``)."""
    return as_int_tuple(shape, what, min_len=0, max_len=max_dims)


def as_dtype(dtype, what="dtype"):
    """``numpy.dtype(dtype)`` in native byte order, or TypeError naming ``what``.

    Device memory holds native-order values; a big-endian dtype means the same
    numbers, so it is converted rather than refused.
    """
    try:
        dt = np.dtype(dtype)
    except (TypeError, ValueError) as e:
        raise TypeError(f"{what} {dtype!r} is not a NumPy dtype: {e}") from None
    if dt.byteorder not in ("=", "|"):
        dt = dt.newbyteorder("=")
    return dt


_DTYPE_NAMES: dict = {}


def dtype_name(dtype: np.dtype) -> str:
    """``dtype.name``, remembered per dtype: NumPy builds the string on every access (about
    4 µs, several times per matrix product's launch)."""
    name = _DTYPE_NAMES.get(dtype)
    if name is None:
        name = _DTYPE_NAMES[dtype] = dtype.name
    return name


def nbytes_of(shape, itemsize, what="shape"):
    """Bytes of an array of ``shape``, computed exactly (no int64 wrap-around).

    Raises
    ------
    MemoryError
        If the array needs more than 2^63 - 1 bytes, which no device has.
    """
    count = math.prod(shape)
    nbytes = count * itemsize
    if nbytes > MAX_BYTES:
        raise MemoryError(
            f"an array of {what} {tuple(shape)} needs {nbytes} bytes, more than any device can hold"
        )
    return nbytes


#: Numba's fastmath flags (numba.core.cpu_options.FastMathOptions, LLVM's fast-math flags);
#: 'afn' (or 'fast') lets a kernel use the driver's approximate built-ins
#: (frontend/mathlib/fast.py), any flag relaxes the arithmetic (docs/math.md).
FASTMATH_FLAGS = frozenset({"contract", "afn", "reassoc", "nnan", "ninf", "nsz", "arcp", "fast"})


def fastmath_option(value, what="fastmath"):
    """A fastmath option checked: True/False, or a frozenset of Numba's flag names."""
    flags = getattr(value, "flags", value)  # numba's FastMathOptions
    if isinstance(flags, (bool, np.bool_)):
        return bool(flags)
    if isinstance(flags, (set, frozenset, list, tuple)):
        names = frozenset(flags)
        unknown = sorted(repr(n) for n in names if not isinstance(n, str) or n not in FASTMATH_FLAGS)
        if unknown:
            raise ValueError(f"{what} flags {', '.join(unknown)} are not Numba's fastmath flags "
                             f"({', '.join(sorted(FASTMATH_FLAGS))})")  # fmt: skip
        return names
    raise TypeError(f"{what} must be True, False or a set of fastmath flags, not {_describe(value)}")


# ---------------------------------------------------------------- host data


def assigned(value, dtype, what="value"):
    """`value` as a NumPy array of `dtype`, converted as NumPy's ``a[...] = value`` converts
    it: a number (Python's or NumPy's) out of the dtype's range is NumPy's OverflowError, NaN
    or inf to an integer its ValueError (never a silent wrap); arrays cast as NumPy casts
    them."""
    if isinstance(value, (int, float, complex, np.generic)):
        host = value  # NumPy checks single numbers against the dtype
    else:
        host = host_array(value, what)
    out = np.empty(np.shape(host), dtype)
    out[...] = host
    return out


def host_array(array, what):
    """`array` as a NumPy array of numbers, or TypeError naming `what`."""
    try:
        host = np.asarray(array)
    except (TypeError, ValueError) as e:  # ragged lists and the like
        raise TypeError(f"{what} cannot be converted to a NumPy array: {e}") from None
    if host.dtype.kind not in "biufc" and host.dtype.fields is None and not (
        bfloat16_host.is_dtype(host.dtype)
    ):
        raise TypeError(
            f"{what} must hold booleans, integers, floats (bfloat16 too) or complex, not "
            f"{host.dtype} (from {type(array).__name__})"
        )
    return host
