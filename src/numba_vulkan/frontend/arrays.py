"""Array arguments: their slots in the parameter block, and element access.

An array argument (0 to 3 dimensions) is flattened into parameters, in this
order: its buffer device address (u64, the address of element 0 of the view),
its extents and its strides in elements, in the specialisation's index kind
(i32, or i64 for arrays past 2^31 elements; see numba_vulkan.narrowing). Element access is
pointer arithmetic in the index kind: each index is converted to it (exact
for every in-bounds index; an out-of-bounds access is undefined, as in Numba
without boundscheck), negative indices wrap around (idx < 0 -> idx + extent),
linear = sum(idx_k * stride_k), then elemptr + load/store in the storage kind,
converting to and from the compute kind. What the kernel's code sees of an
array (.shape, .size, .strides, len) has Numba's type, intp: the index-kind
parameters are widened to it.
"""

from numba.core import types

from .. import _core
from ..runtime.array import record_key
from ..typing.bfloat16 import is_bfloat16
from . import arith, bfloat16
from .errors import unsupported
from .types import compute_kind, host_dtype, index_kind, is_signed, storage_kind

Op = _core.Op


class ArrayArg:
    """One array argument of the kernel: its parameters as KIR values (entry block)."""

    def __init__(self, lowerer, name, ty, loc):
        b, module, mode = lowerer.b, lowerer.module, lowerer.mode
        if not isinstance(ty, types.Array):
            raise unsupported(f"arguments of type {ty}", loc)
        if ty.ndim > 3:
            raise unsupported(f"{ty.ndim}-d array arguments (0 to 3 dimensions)", loc)
        self.name = name
        self.ty = ty
        self.ndim = ty.ndim
        self.complex = isinstance(ty.dtype, types.Complex)
        self.record = isinstance(ty.dtype, types.Record)
        if self.record:  # fields addressed in bytes (frontend/records.py)
            from .record_layout import check_record

            check_record(ty.dtype, mode, loc)
            self.storage = self.compute = _core.Kind.u8
        elif self.complex:  # two floats per element (frontend/complexnum.py)
            part = types.float32 if ty.dtype.bitwidth == 64 else types.float64
            self.storage = storage_kind(part, mode, loc)
            self.compute = compute_kind(part, mode, loc)
        else:
            self.storage = storage_kind(ty.dtype, mode, loc)
            self.compute = compute_kind(ty.dtype, mode, loc)
        self.index_kind = index_kind(mode)
        # Whether the kernel may write the array. Correctness depends on it twice:
        # NumPy arguments are copied back only if written, and the device records
        # barriers between launches only for written arrays (vk/batch.cc). Every
        # way of writing array memory (stores, atomics) must set it.
        self.written = False
        first = self._declare(module, name, ty)
        # Address, extents, strides: consecutive parameters from `first` (kir/abi.h).
        nd = ty.ndim
        self.param_ids = (first, [first + 1 + k for k in range(nd)],
                          [first + 1 + nd + k for k in range(nd)])  # fmt: skip
        self.addr = b.param(first)
        self.extents = [b.param(p) for p in self.param_ids[1]]
        self.strides = [b.param(p) for p in self.param_ids[2]]
        self.module = module

    def _declare(self, module, name, ty):
        """Declare the argument (kir/abi.h): its address, extents and strides, in this order;
        returns the address's parameter index. ``arg_index`` is the declaration that
        ``KirModule.mark_written`` marks when the kernel writes the array."""
        host = host_dtype(ty.dtype)
        self.arg_index = module.num_args
        return module.add_array_arg(
            name, host.kind, host.itemsize, self.compute, self.storage, ty.ndim, self.index_kind,
            record_key(host),
        )

    def element_ptr(self, b, indices, loc):
        """Pointer to the element at `indices` (KIR integer values, one per dimension)."""
        return b.elemptr(self.storage, self.addr, self.linear_index(b, indices, loc))

    def unit_stride_dim(self):
        """With 64-bit indices, the dimension whose stride is one element wherever its extent
        passes 1 (where it is 1, its one index is 0), or None: the innermost of a contiguous
        array ('C': the last, 'F': the first). Indexing it needs no 64-bit multiply by the
        stride parameter (a grid-stride pass over 2^33 float32 on an H100: 30.8 -> 26.9 ms).
        With 32-bit indices the multiply stays: without it, two corpus kernels measured
        10-13 % slower on the H100 (doc_random_3d, whose code differed in nothing else;
        docs/corpus.md)."""
        if self.index_kind != _core.Kind.i64:
            return None
        return {"C": self.ndim - 1, "F": 0}.get(self.ty.layout)

    def linear_index(self, b, indices, loc):
        """The element's index from the buffer address, in elements of the dtype."""
        if len(indices) != self.ndim:
            raise unsupported(
                f"indexing a {self.ndim}-d array with {len(indices)} indices (array views)", loc
            )
        ik = self.index_kind
        linear = None
        unit = self.unit_stride_dim()
        for k, (idx, extent, stride) in enumerate(zip(indices, self.extents, self.strides)):
            signed = is_signed(b.kind(idx))
            idx = arith.convert(b, idx, ik)
            if signed:
                negative = b.compare(Op.lt, idx, arith.const(b, ik, 0))
                idx = b.select(negative, b.binary(Op.add, idx, extent), idx)
            term = idx if k == unit else b.binary(Op.mul, idx, stride)
            linear = term if linear is None else b.binary(Op.add, linear, term)
        return arith.const(b, ik, 0) if linear is None else linear  # a[()] of a 0-d array

    def _part_ptrs(self, b, indices, loc):
        """Pointers to the real and imaginary floats of a complex element."""
        linear = self.linear_index(b, indices, loc)
        two = b.binary(Op.add, linear, linear)
        one = arith.const(b, b.kind(linear), 1)
        return (b.elemptr(self.storage, self.addr, two),
                b.elemptr(self.storage, self.addr, b.binary(Op.add, two, one)))  # fmt: skip

    def load(self, b, indices, loc):
        if getattr(self, "record", False):
            raise unsupported("a record element used as a value (read its fields)", loc)
        if getattr(self, "complex", False):
            return tuple(arith.convert(b, b.load(p), self.compute)
                         for p in self._part_ptrs(b, indices, loc))  # fmt: skip
        value = b.load(self.element_ptr(b, indices, loc))
        if is_bfloat16(self.ty.dtype):  # a 16-bit word (frontend/bfloat16.py)
            return bfloat16.widen(b, value)
        return arith.convert(b, value, self.compute)

    def store(self, b, indices, value, loc):
        if getattr(self, "record", False):
            raise unsupported("assigning a whole record (assign its fields)", loc)
        if getattr(self, "complex", False):
            for p, v in zip(self._part_ptrs(b, indices, loc), value):
                b.store(p, arith.convert(b, v, self.storage))
            self.written = True
            return
        ptr = self.element_ptr(b, indices, loc)
        if is_bfloat16(self.ty.dtype):  # the value is a bfloat16 already (lower.py's cast)
            b.store(ptr, bfloat16.to_bits(b, value))
        else:
            b.store(ptr, arith.convert(b, value, self.storage))
        self.written = True

    def shape(self, b, kind):
        """The extents as values of `kind` (the compute kind of intp)."""
        return tuple(arith.convert(b, e, kind) for e in self.extents)

    def size(self, b, kind):
        """The number of elements, computed in `kind` (a product of extents may pass 2^31
        even where every extent and every element's offset fits: broadcast views)."""
        extents = self.shape(b, kind)
        if not extents:  # a 0-d array: one element
            return arith.const(b, kind, 1)
        total = extents[0]
        for e in extents[1:]:
            total = b.binary(Op.mul, total, e)
        return total

    def strides_in_bytes(self, b, kind):
        itemsize = arith.const(b, kind, host_dtype(self.ty.dtype).itemsize)
        return tuple(b.binary(Op.mul, arith.convert(b, s, kind), itemsize) for s in self.strides)


def index_values(lowerer, arr, index_var, index_ty, loc):
    """The KIR index values of `arr[index]` for a Numba index variable of type `index_ty`."""
    if isinstance(index_ty, types.Integer):
        return [lowerer.load_var(index_var.name)]
    if isinstance(index_ty, types.BaseTuple):
        for t in index_ty.types:
            _check_index_type(t, loc)
        return list(lowerer.load_var(index_var.name))
    _check_index_type(index_ty, loc)
    raise unsupported(f"indexing arrays with {index_ty}", loc)


def static_index_values(lowerer, index, loc):
    """KIR index values for a constant index (int or tuple of ints)."""
    b = lowerer.b
    ik = index_kind(lowerer.mode)
    items = index if isinstance(index, tuple) else (index,)
    out = []
    for item in items:
        if isinstance(item, slice):
            raise unsupported("slicing arrays", loc)
        if not isinstance(item, int) or isinstance(item, bool):
            raise unsupported(f"indexing arrays with {item!r}", loc)
        out.append(arith.const(b, ik, item))
    return out


def _check_index_type(t, loc):
    if isinstance(t, types.SliceType):
        raise unsupported("slicing arrays", loc)
    if isinstance(t, types.EllipsisType):
        raise unsupported("'...' in array indices", loc)
    if isinstance(t, types.NoneType):
        raise unsupported("'None' (newaxis) in array indices", loc)
    if isinstance(t, types.Array):
        raise unsupported("indexing arrays with arrays (fancy indexing)", loc)
    if not isinstance(t, types.Integer):
        raise unsupported(f"indexing arrays with {t}", loc)
