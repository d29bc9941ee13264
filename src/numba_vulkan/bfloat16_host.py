"""bfloat16 on the host: ml_dtypes' scalar type and dtype, imported on first use.

NumPy has no bfloat16 of its own; ``ml_dtypes.bfloat16`` (a NumPy scalar type
with its dtype, casts and ufunc loops) is the host type of bfloat16 arrays and
values here. Importing ml_dtypes costs about half a second (it registers
every one of its dtypes with NumPy), so nothing imports it until a program
asks for bfloat16: ``nv.bfloat16``, or the arrays and values of a program that
imported ml_dtypes itself. The checks below answer False without importing it:
no bfloat16 value can exist before ml_dtypes is imported.
"""

import sys
import zlib

#: What the launcher compares for bfloat16 arrays besides the dtype's kind and item
#: size ('V', 2: those of a raw two-byte void too), as records carry a digest of their
#: layout (runtime/array.py's record_key).
DTYPE_KEY = zlib.crc32(b"ml_dtypes.bfloat16")


def scalar_type():
    """``ml_dtypes.bfloat16``, imported now if it was not."""
    import ml_dtypes

    return ml_dtypes.bfloat16


def _loaded():
    module = sys.modules.get("ml_dtypes")
    return None if module is None else module.bfloat16


def is_dtype(dtype):
    """Whether the NumPy dtype `dtype` is ml_dtypes' bfloat16."""
    cls = _loaded()
    return cls is not None and getattr(dtype, "type", None) is cls


def is_scalar(value):
    """Whether `value` is an ``ml_dtypes.bfloat16`` scalar."""
    cls = _loaded()
    return cls is not None and type(value) is cls


def is_class(value):
    """Whether `value` is the class ``ml_dtypes.bfloat16`` itself."""
    cls = _loaded()
    return cls is not None and value is cls
