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
Complex fields are their two floats. A sub-array field (``r.h``, NumPy's
``("h", np.float32, (3, 2))``) is a FieldArray: an array of constant shape in C
order at the record's address plus the field's offset, indexed, sliced and
iterated like any array (its elements must be naturally aligned in every record);
``r.h = a`` copies ``h.size`` elements of the C-contiguous array ``a`` of the
same dtype, as Numba's memcpy does. A record scalar argument (``a[0]`` of a
record array, passed to a kernel) is declared as a 1-element array argument of
its dtype (slow_launch.py copies the record there and, if the kernel writes it,
back, as numba.cuda does). Records of another dtype, a record assigned to a field,
sub-arrays of records or booleans, and character fields are refused. Booleans are
one byte (u8, read as != 0).
"""

from numba.core import types

from .. import _core
from . import arith
from .arrays import ArrayArg
from .errors import unsupported
from .record_layout import field_kind
from .record_layout import part as _part
from .types import compute_kind, index_kind, storage_kind

Op = _core.Op
K = _core.Kind
_UNSIGNED = {8: K.u8, 16: K.u16, 32: K.u32, 64: K.u64}  # the unsigned kind of a width


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

    def address(self, b, foff):
        """The field's byte address (u64): the element's, plus the field's offset."""
        return self._address(b, foff)

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
        if isinstance(fty, types.NestedArray):
            return FieldArray(lo, self, name, fty, foff, loc), fty
        b = lo.b
        k = field_kind(fty, loc)
        if isinstance(fty, types.Complex):  # (real, imag), each a float of the part kind
            ck = compute_kind(_part(fty), lo.mode, loc)
            half = arith.BITS[k] // 8
            return tuple(arith.convert(b, self._load(b, k, foff + j * half), ck)
                         for j in range(2)), fty  # fmt: skip
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
        if isinstance(fty, types.NestedArray):
            FieldArray(lo, self, name, fty, foff, loc).copy_from(lo, value, value_ty, loc)
            return
        b = lo.b
        value = lo.cast(value, value_ty, fty, loc)
        k = field_kind(fty, loc)
        if isinstance(fty, types.Complex):
            half = arith.BITS[k] // 8
            for j in range(2):
                self._store(b, k, foff + j * half, arith.convert(b, value[j], k))
            self.arr.written = True
            return
        if isinstance(fty, types.Boolean):
            value = b.select(value, arith.const(b, K.u8, 1), arith.const(b, K.u8, 0))
        self._store(b, k, foff, arith.convert(b, value, k))
        self.arr.written = True

    def copy_from(self, lo, source, loc):
        """Every field of `source` (a RecordRef of the same dtype) into this record:
        ``dst[j] = src[i]``. Padding bytes are not copied (NumPy's view of them is not
        defined either)."""
        b = lo.b
        leaves = list(_leaf_fields(self.ty, loc))
        if len(leaves) > MAX_COPIED_VALUES:
            raise unsupported(f"assigning whole records of {len(leaves)} values (more than "
                              f"{MAX_COPIED_VALUES}: sub-array fields)", loc)  # fmt: skip
        for k, foff in leaves:
            self._store(b, k, foff, source._load(b, k, foff))
        self.arr.written = True


#: Whole-record copies are unrolled, one load and store per value: at most this many.
MAX_COPIED_VALUES = 4096


def _leaf_fields(ty, loc, offset=0):
    """(kind, byte offset) of every value a record of type `ty` holds: nested records,
    complex parts and the elements of sub-array fields expanded."""
    for f in ty.fields.values():
        fty, foff = f.type, offset + f.offset
        if isinstance(fty, types.Record):
            yield from _leaf_fields(fty, loc, foff)
            continue
        count = 1
        if isinstance(fty, types.NestedArray):
            count, fty = fty.nitems, fty.dtype
        k = field_kind(fty, loc)
        step = arith.BITS[k] // 8
        for j in range(count * (2 if isinstance(fty, types.Complex) else 1)):
            yield k, foff + j * step


class FieldArray(ArrayArg):
    """``r.h``: a sub-array field of record reference `ref` (see the module doc): an array
    of constant shape in C order, whose address is computed where it is used."""

    def __init__(self, lo, ref, name, ty, foff, loc):  # no ArrayArg.__init__: no parameters
        self.b = lo.b
        self.ref, self.foff = ref, foff
        self.name = f"{ref.arr.name}.{name}"
        self.ty = ty
        self.ndim = ty.ndim
        self.complex = isinstance(ty.dtype, types.Complex)
        self.record = False
        part = _part(ty.dtype)
        self.storage = storage_kind(part, lo.mode, loc)
        self.compute = compute_kind(part, lo.mode, loc)
        self.index_kind = index_kind(lo.mode)
        self.arg_index = ref.arr.arg_index
        self.dims = tuple(int(n) for n in ty.shape)
        self.strides_elems = tuple(int(s) // (arith.BITS[self.storage] // 8)
                                   // (2 if self.complex else 1) for s in ty.strides)  # fmt: skip
        if not ref._aligned(self.storage, foff):
            raise unsupported(f"the sub-array field '{name}' of {ref.ty}: its elements are not "
                              "aligned to their size in every record", loc)  # fmt: skip

    @property
    def addr(self):
        return self.ref.address(self.b, self.foff)

    @property
    def extents(self):
        return [arith.const(self.b, self.index_kind, n) for n in self.dims]

    @property
    def strides(self):
        return [arith.const(self.b, self.index_kind, n) for n in self.strides_elems]

    @property
    def written(self):
        return self.ref.arr.written

    @written.setter
    def written(self, value):
        if value:
            self.ref.arr.written = True

    def copy_from(self, lo, source, source_ty, loc):
        """``r.h = a``: the first ``h.size`` elements of C-contiguous array `a`, in order, as
        Numba copies them (memcpy); `a` must have the field's dtype."""
        if (not isinstance(source, ArrayArg) or not isinstance(source_ty, types.Array)
                or source_ty.layout != "C" or source_ty.dtype != self.ty.dtype
                or getattr(source, "addr", None) is None):  # fmt: skip
            raise unsupported(f"assigning {source_ty} to the sub-array field {self.ty} (only "
                              "a C-contiguous array of the same dtype)", loc)  # fmt: skip
        b = lo.b
        parts = 2 if self.complex else 1
        for j in range(self.ty.nitems * parts):
            at = arith.const(b, self.index_kind, j)
            value = arith.convert(b, b.load(b.elemptr(source.storage, source.addr, at)),
                                  self.storage)  # fmt: skip
            b.store(b.elemptr(self.storage, self.addr, at), value)
        self.written = True


def record_argument(lo, arr):
    """The RecordRef of a record scalar argument: element 0 of its 1-element array `arr`."""
    return RecordRef(lo, arr, arith.const(lo.b, arr.index_kind, 0), arr.ty.dtype)


def element(lo, arr, indices, loc):
    """``arr[indices]`` of a record array: a RecordRef."""
    b = lo.b
    linear = arr.linear_index(b, indices, loc)
    return RecordRef(lo, arr, linear, arr.ty.dtype)


def static_field_name(lo, expr, record_ty=None):
    """The field name of ``r['x']`` (a constant string index), or of ``r[0]`` (a constant
    integer index: the field in that position, as Numba takes it), or None."""
    index = getattr(expr, "index", None)
    var = getattr(expr, "index_var", None)
    if not isinstance(index, (str, int)) and var is not None:
        ty = lo.typemap.get(var.name)
        if isinstance(ty, (types.StringLiteral, types.IntegerLiteral)):
            index = ty.literal_value
    if isinstance(index, str):
        return index
    if isinstance(index, int) and not isinstance(index, bool) and record_ty is not None:
        names = list(record_ty.fields)
        return names[index] if 0 <= index < len(names) else None
    return None


