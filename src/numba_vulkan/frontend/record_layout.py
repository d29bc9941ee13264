"""Which record dtypes kernels can hold, and the kind of each field in memory: what both the
array arguments (frontend/arrays.py) and the record accesses (frontend/records.py) ask
before any code is built."""

from numba.core import types

from .. import _core
from .errors import unsupported
from .types import exact_kind, storage_kind

K = _core.Kind


def check_record(dtype, mode, loc):
    """Refuse record types whose fields the device cannot hold (frontend/records.py: exact
    kinds, no 64-bit narrowing; sub-arrays of scalars only)."""
    for name, f in dtype.fields.items():
        fty = f.type
        where = f"record field '{name}' ({fty})"
        if isinstance(fty, types.Record):
            check_record(fty, mode, loc)
            continue
        if isinstance(fty, (types.NestedArray, types.Array)):
            if isinstance(fty.dtype, (types.Record, types.Boolean)):
                raise unsupported(f"{where}: sub-arrays of {fty.dtype}", loc)
            fty = fty.dtype
        k = field_kind(fty, loc)
        if not isinstance(fty, types.Boolean) and storage_kind(part(fty), mode, loc) != k:
            raise unsupported(f"{where}: this device stores {fty} narrowed", loc)


def part(fty):
    """A complex type's part type (float32, float64); `fty` itself for the others."""
    if isinstance(fty, types.Complex):
        return types.float32 if fty.bitwidth == 64 else types.float64
    return fty


def field_kind(fty, loc):
    """The kind of a scalar field in memory (of each part, for a complex field)."""
    if isinstance(fty, types.Boolean):
        return K.u8
    k = exact_kind(part(fty))
    if k is None:
        raise unsupported(f"record fields of type {fty}", loc)
    return k
