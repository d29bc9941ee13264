"""Records (NumPy structured dtypes) in kernels: record arrays, ``r.x``, ``a[i].x``,
``a[i]['x']``, nested records, reads and writes.

``a[i]`` of a record array is, as in Numba, a reference into the array: a
compile-time RecordRef holding the element's linear index (in a KIR
variable: values do not cross blocks) and a byte offset (a nested record's
offset in its parent). A field is read or written through a pointer at
``address + index * itemsize + offset``, computed in u64 byte arithmetic on
the buffer's device address.

Device memory holds the record's bytes exactly as NumPy lays them out
(aligned or packed: NumPy's default, ``np.dtype([("a", "i1"), ("b", "f8")])``,
puts ``b`` at byte 1). A naturally aligned field (its offset and the itemsize
multiples of its size) is one load or store of its kind; any other is read
and written one byte at a time, little-endian as NumPy stores it (loads
through a buffer device address must be aligned; byte stores never touch a
neighbouring record's bytes, which a read-modify-write of a word would race
with). Fields must have their exact kind on the device (no 64-bit narrowing
inside records). ``dst[j] = src[i]`` (same dtype) copies every field.
Sub-array fields, records of another dtype, a record assigned to a field and
records as scalar arguments are refused. Booleans are one byte (u8, read as
!= 0).
"""

from numba.core import types

from .. import _core
from . import arith
from .errors import unsupported
from .types import compute_kind, exact_kind, storage_kind

Op = _core.Op
K = _core.Kind
_UNSIGNED = {8: K.u8, 16: K.u16, 32: K.u32, 64: K.u64}  # the unsigned kind of a width


def check_record(dtype, mode, loc):
    """Refuse record types whose fields the device cannot hold (see above)."""
    for name, f in dtype.fields.items():
        fty = f.type
        where = f"record field '{name}' ({fty})"
        if isinstance(fty, types.Record):
            check_record(fty, mode, loc)
            continue
        if isinstance(fty, (types.NestedArray, types.Array)):
            raise unsupported(f"{where}: sub-array fields", loc)
        k = field_kind(fty, loc)
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

    def _address(self, b, foff):
        """The field's byte address (u64): the element's, plus the field's offset."""
        itemsize = self.arr.ty.dtype.size
        index = arith.convert(b, b.load(self.index_var), K.u64)
        nbytes = b.binary(Op.add, b.binary(Op.mul, index, arith.const(b, K.u64, itemsize)),
                          arith.const(b, K.u64, self.offset + foff))  # fmt: skip
        return b.binary(Op.add, self.arr.addr, nbytes)

    def _aligned(self, k, foff):
        """Whether every element's field of kind `k` at `foff` is naturally aligned."""
        size = max(1, arith.BITS[k] // 8)
        return (self.offset + foff) % size == 0 and self.arr.ty.dtype.size % size == 0

    def _pointer(self, b, k, addr, j=0):
        """A pointer to the `j`th value of kind `k` from `addr`."""
        return b.elemptr(k, addr, arith.const(b, self.arr.index_kind, j))

    def _load(self, b, k, foff):
        """The field's value of kind `k`: one load, or its bytes put together."""
        addr = self._address(b, foff)
        if self._aligned(k, foff):
            return b.load(self._pointer(b, k, addr))
        bits = arith.BITS[k]
        uk = _UNSIGNED[bits]
        word = None
        for j in range(bits // 8):
            byte = arith.convert(b, b.load(self._pointer(b, K.u8, addr, j)), uk)
            if j:
                byte = b.binary(Op.shl, byte, arith.const(b, uk, 8 * j))
            word = byte if word is None else b.binary(Op.or_, word, byte)
        return word if k == uk else b.bitcast(k, word)

    def _store(self, b, k, foff, value):
        """Store `value` (of kind `k`) into the field: one store, or byte by byte."""
        addr = self._address(b, foff)
        if self._aligned(k, foff):
            b.store(self._pointer(b, k, addr), value)
            return
        bits = arith.BITS[k]
        uk = _UNSIGNED[bits]
        word = value if k == uk else b.bitcast(uk, value)
        for j in range(bits // 8):
            part = b.binary(Op.shr, word, arith.const(b, uk, 8 * j)) if j else word
            b.store(self._pointer(b, K.u8, addr, j), b.convert(K.u8, part))

    def field(self, lo, name, loc):
        if name not in self.ty.fields:
            raise unsupported(f"the field '{name}' of {self.ty}", loc)
        fty, foff = self.ty.fields[name].type, self.ty.fields[name].offset
        if isinstance(fty, types.Record):
            return self.nested(lo, fty, foff), fty
        b = lo.b
        k = field_kind(fty, loc)
        value = self._load(b, k, foff)
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
        k = field_kind(fty, loc)
        if isinstance(fty, types.Boolean):
            value = b.select(value, arith.const(b, K.u8, 1), arith.const(b, K.u8, 0))
        self._store(b, k, foff, arith.convert(b, value, k))
        self.arr.written = True

    def copy_from(self, lo, source, loc):
        """Every field of `source` (a RecordRef of the same dtype) into this record:
        ``dst[j] = src[i]``. Padding bytes are not copied (NumPy's view of them is not
        defined either)."""
        b = lo.b
        for fty, foff in _leaf_fields(self.ty):
            k = field_kind(fty, loc)
            self._store(b, k, foff, source._load(b, k, foff))
        self.arr.written = True


def _leaf_fields(ty, offset=0):
    """(type, byte offset) of every scalar field of record type `ty`, nested ones expanded."""
    for f in ty.fields.values():
        if isinstance(f.type, types.Record):
            yield from _leaf_fields(f.type, offset + f.offset)
        else:
            yield f.type, offset + f.offset


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


