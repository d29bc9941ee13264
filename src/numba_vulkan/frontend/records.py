"""Records (NumPy structured dtypes) in kernels: record arrays, ``r.x``, ``a[i].x``,
``a[i]['x']``, nested records, reads and writes.

``a[i]`` of a record array is, as in Numba, a reference into the array: a
compile-time RecordRef holding the element's linear index (in a KIR
variable: values do not cross blocks) and a byte offset (a nested record's
offset in its parent). A field is read or written through a pointer at
``address + index * itemsize + offset``, computed in u64 byte arithmetic on
the buffer's device address.

Device memory holds the record's bytes exactly as NumPy lays them out
(aligned or packed), so every field must be naturally aligned (its offset,
and the itemsize, multiples of the field's size: a load through a buffer
device address is aligned), and must have its exact kind on the device
(no 64-bit narrowing inside records). Other layouts are refused, as are
sub-array fields, whole-record assignment and records as scalar arguments.
Booleans are one byte (u8, read as != 0).
"""

from numba.core import types

from .. import _core
from . import arith
from .errors import unsupported
from .types import compute_kind, exact_kind, storage_kind

Op = _core.Op
K = _core.Kind


def check_record(dtype, mode, loc, offset=0, itemsize=None):
    """Refuse record types whose fields the device cannot address or hold (see above)."""
    itemsize = dtype.size if itemsize is None else itemsize
    for name, f in dtype.fields.items():
        fty, foff = f.type, f.offset
        where = f"record field '{name}' ({fty})"
        if isinstance(fty, types.Record):
            check_record(fty, mode, loc, offset + foff, itemsize)
            continue
        if isinstance(fty, (types.NestedArray, types.Array)):
            raise unsupported(f"{where}: sub-array fields", loc)
        k = field_kind(fty, loc)
        size = max(1, arith.BITS[k] // 8)
        if (offset + foff) % size or itemsize % size:
            raise unsupported(f"{where} at byte offset {offset + foff} of a {itemsize}-byte "
                              "record: fields must be naturally aligned", loc)  # fmt: skip
        if not isinstance(fty, types.Boolean) and storage_kind(fty, mode, loc) != k:
            raise unsupported(f"{where}: this device stores {fty} narrowed", loc)


def field_kind(fty, loc):
    if isinstance(fty, types.Boolean):
        return K.u8
    k = exact_kind(fty)
    if k is None:
        raise unsupported(f"record fields of type {fty}", loc)
    return k


class RecordRef:
    """``a[i]`` of a record array (or a nested record of one): a reference."""

    def __init__(self, lo, arr, index, ty, offset=0):
        b = lo.b
        self.arr, self.ty, self.offset = arr, ty, offset
        self.index_var = b.var(b.kind(index))
        b.store(self.index_var, index)

    def nested(self, lo, ty, offset):
        ref = RecordRef.__new__(RecordRef)
        ref.arr, ref.ty, ref.index_var = self.arr, ty, self.index_var
        ref.offset = self.offset + offset
        return ref

    def _ptr(self, b, fty, foff, loc):
        k = field_kind(fty, loc)
        itemsize = self.arr.ty.dtype.size
        index = arith.convert(b, b.load(self.index_var), K.u64)
        nbytes = b.binary(Op.add, b.binary(Op.mul, index, arith.const(b, K.u64, itemsize)),
                          arith.const(b, K.u64, self.offset + foff))  # fmt: skip
        addr = b.binary(Op.add, self.arr.addr, nbytes)
        return k, b.elemptr(k, addr, arith.const(b, self.arr.index_kind, 0))

    def field(self, lo, name, loc):
        if name not in self.ty.fields:
            raise unsupported(f"the field '{name}' of {self.ty}", loc)
        fty, foff = self.ty.fields[name].type, self.ty.fields[name].offset
        if isinstance(fty, types.Record):
            return self.nested(lo, fty, foff), fty
        b = lo.b
        k, ptr = self._ptr(b, fty, foff, loc)
        value = b.load(ptr)
        if isinstance(fty, types.Boolean):
            return b.compare(Op.ne, value, arith.const(b, K.u8, 0)), fty
        return arith.convert(b, value, compute_kind(fty, lo.mode, loc)), fty

    def set_field(self, lo, name, value, value_ty, loc):
        if name not in self.ty.fields:
            raise unsupported(f"the field '{name}' of {self.ty}", loc)
        fty, foff = self.ty.fields[name].type, self.ty.fields[name].offset
        if isinstance(fty, types.Record):
            raise unsupported(f"assigning a whole record to field '{name}'", loc)
        b = lo.b
        value = lo.cast(value, value_ty, fty, loc)
        k, ptr = self._ptr(b, fty, foff, loc)
        if isinstance(fty, types.Boolean):
            value = b.select(value, arith.const(b, K.u8, 1), arith.const(b, K.u8, 0))
        b.store(ptr, arith.convert(b, value, k))
        self.arr.written = True


def element(lo, arr, indices, loc):
    """``arr[indices]`` of a record array: a RecordRef."""
    b = lo.b
    linear = arr.linear_index(b, indices, loc)
    return RecordRef(lo, arr, linear, arr.ty.dtype)


def static_field_name(lo, expr):
    """The field name of ``r['x']`` (a constant string index), or None."""
    index = getattr(expr, "index", None)
    if isinstance(index, str):
        return index
    var = getattr(expr, "index_var", None)
    if var is not None:
        ty = lo.typemap.get(var.name)
        if isinstance(ty, types.StringLiteral):
            return ty.literal_value
    return None


