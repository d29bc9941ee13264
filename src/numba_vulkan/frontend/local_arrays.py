"""Arrays a kernel creates: ``nv.shared.array``, ``nv.local.array`` and ``np.empty``-likes.

Each is one KIR ``array_var`` in the entry block: a workgroup array (shared)
or a function array (local, private per invocation) of a constant number of
elements, row-major (C order). Element access is ``index_ptr(array, linear)``
with constant strides; negative indices wrap as for arguments. The shape must
be a compile-time constant (numba.cuda's rule), which the front end evaluates
from literals, global constants and arithmetic on them (``(TILE, TILE + 1)``)
with Numba's constant inference.

Element kinds: the dtype's compute kind (float16 stays float16 in memory: what is
stored is a float16 value already, rounded by frontend/float16.py); a bfloat16 element is
its 16-bit word, as in device memory (frontend/bfloat16.py: loads widen it, stores keep
the upper half of a value rounded already), so cooperative-matrix tiles load bfloat16
from shared memory as from device arrays (frontend/matrix.py). A shared float
array that some atomic other than a native float add writes is held as integers of the
same width (``bits``): a compare-and-swap needs an integer element, and SPIR-V cannot
view a workgroup array as another type. Loads and stores bitcast, which costs nothing.
Dynamic shared arrays of other element types of the same width alias the first
the same way (``_alias``).

``shared.array(0, dtype)`` is the dynamic shared array, sized by the launch
(``kernel[groups, local_size, stream, shared_bytes]``): the dispatcher
compiles the kernel once per size, with shared_bytes // itemsize elements.
(The emitter can also size it at pipeline creation through a specialization
constant, spirv/memory.cc; the runtime does not use that yet.) numba.cuda's
dynamic arrays all alias one buffer: a second ``shared.array(0, dtype)`` is the
first array's variable seen as its own dtype, for dtypes of the same width
(typed SPIR-V arrays cannot alias others).
"""

import copy
import operator

import numpy as np
from numba.core import ir, types
from numba.core.typing.templates import fold_arguments

from .. import _core, errors, stubs
from ..typing.bfloat16 import is_bfloat16
from . import arith, bfloat16
from .arrays import ArrayArg
from .errors import unsupported
from .types import (
    compute_kind,
    exact_kind,
    host_dtype,
    index_kind,
    is_scalar_type,
    is_signed,
    storage_kind,
)

Op = _core.Op
K = _core.Kind

_BITS_KIND = {K.f32: K.u32, K.f64: K.u64}


#: Bytes of local (private) arrays one invocation may have, over all of a kernel's
#: ``nv.local.array`` and ``np.empty``-likes (docs/arrays-in-kernels.md). Vulkan reports no
#: private-memory limit; drivers keep such arrays in registers or scratch memory, and their
#: compilers take time with the size: lavapipe compiled a dynamically indexed array of 4096
#: float32 in 1.6-16 s, 8192 in 3.4-49 s, and 1 MiB not within minutes, and ran out of host
#: memory on larger ones. numba.cuda allows 512 KiB per thread; a kernel past this limit is
#: refused with an error naming it, before any driver sees it.
MAX_LOCAL_BYTES = 64 * 1024


def _count_local_bytes(lowerer, nbytes, ty, loc):
    root = lowerer.root
    total = getattr(root, "local_bytes", 0) + nbytes
    if total > MAX_LOCAL_BYTES:
        raise unsupported(
            f"local arrays of {total} bytes per invocation (this {ty.dtype} array: {nbytes} "
            f"bytes; the limit is {MAX_LOCAL_BYTES}, since drivers compile large private "
            "arrays slowly or not at all: use nv.shared.array for data a workgroup shares, "
            "or a device array argument)", loc)
    root.local_bytes = total


class LocalArray(ArrayArg):
    """A shared or local array of constant shape (duck-types ArrayArg for indexing)."""

    def __init__(self, lowerer, ty, shape, shared, bits=False, loc=None):  # noqa: no super
        b, mode = lowerer.b, lowerer.mode
        self.name = "shared" if shared else "local"
        self.ty = ty
        self.ndim = ty.ndim
        self.shared = shared
        self.dims = tuple(shape)
        self.dynamic = False  # dynamic arrays are sized before this (see _make)
        # A complex element is two floats, its real part first (as in device arrays,
        # frontend/complexnum.py): the variable holds twice as many floats.
        self.complex = isinstance(ty.dtype, types.Complex)
        self.record = False
        part = ty.dtype.underlying_float if self.complex else ty.dtype
        self.compute = compute_kind(part, mode, loc)
        elem = self.compute
        if exact_kind(ty.dtype) == K.f16 or is_bfloat16(ty.dtype):
            elem = storage_kind(ty.dtype, mode, loc)  # float16, or bfloat16's 16-bit word
        self.value_kind = elem
        self.bits = bits and elem in _BITS_KIND
        self.storage = _BITS_KIND[elem] if self.bits else elem
        self.index_kind = index_kind(mode)
        self.written = False
        count = 1
        for d in self.dims:
            count *= d
        self.count = count
        if self.dynamic:
            count = 0
        elif count <= 0:
            raise unsupported(f"{'shared' if shared else 'local'} arrays of shape {self.dims}", loc)
        floats = count * 2 if self.complex else count
        if not shared:
            _count_local_bytes(lowerer, floats * _core.memory_bytes(self.storage), ty, loc)
        self.var = b.array_var(shared, self.storage, floats)
        self.strides_elems = []
        stride = 1
        for d in reversed(self.dims):
            self.strides_elems.insert(0, stride)
            stride *= d
        self.addr = None

    # Extents and strides are constants, made in the block that uses them.
    @property
    def extents(self):
        return [self._b_const(d) for d in self.dims]

    @property
    def strides(self):
        return [self._b_const(s) for s in self.strides_elems]

    def _b_const(self, value):
        return arith.const(self._b, self.index_kind, value)

    def element_ptr(self, b, indices, loc, kind=None):
        return b.index_ptr(self.var, self.linear_index(b, indices, loc))

    def _part_ptrs(self, b, indices, loc):
        return self.parts_at(b, self.linear_index(b, indices, loc))

    def parts_at(self, b, linear):
        """Pointers to the real and imaginary floats of complex element `linear`."""
        ik = self.index_kind
        two = b.binary(Op.add, linear, linear)
        return (b.index_ptr(self.var, two),
                b.index_ptr(self.var, b.binary(Op.add, two, arith.const(b, ik, 1))))  # fmt: skip

    def linear_index(self, b, indices, loc):
        if len(indices) != self.ndim:
            raise unsupported(
                f"indexing a {self.ndim}-d array with {len(indices)} indices (array views)", loc
            )
        if self.dynamic:
            # Its length is only known at launch: negative indices cannot wrap.
            (idx,) = indices
            return arith.convert(b, idx, self.index_kind)
        ik = self.index_kind
        linear = None
        for idx, extent, stride in zip(indices, self.dims, self.strides_elems):
            signed = is_signed(b.kind(idx))
            idx = arith.convert(b, idx, ik)
            if signed:
                negative = b.compare(Op.lt, idx, arith.const(b, ik, 0))
                idx = b.select(negative, b.binary(Op.add, idx, arith.const(b, ik, extent)), idx)
            term = idx if stride == 1 else b.binary(Op.mul, idx, arith.const(b, ik, stride))
            linear = term if linear is None else b.binary(Op.add, linear, term)
        return linear

    def load(self, b, indices, loc):
        if self.complex:
            return tuple(b.load(p) for p in self._part_ptrs(b, indices, loc))
        value = b.load(self.element_ptr(b, indices, loc))
        if is_bfloat16(self.ty.dtype):
            return bfloat16.widen(b, value)
        if self.bits:
            value = b.bitcast(self.value_kind, value)
        return arith.convert(b, value, self.compute)

    def store(self, b, indices, value, loc):
        if self.complex:
            for p, v in zip(self._part_ptrs(b, indices, loc), value):
                b.store(p, arith.convert(b, v, self.storage))
            self.written = True
            return
        ptr = self.element_ptr(b, indices, loc)
        if is_bfloat16(self.ty.dtype):  # the value is a bfloat16 already (lower.py's cast)
            value = bfloat16.to_bits(b, value)
        else:
            value = arith.convert(b, value, self.value_kind)
        if self.bits:
            value = b.bitcast(self.storage, value)
        b.store(ptr, value)
        self.written = True

    def shape(self, b, kind):
        return tuple(arith.const(b, kind, d) for d in self.dims)

    def size(self, b, kind):
        if self.dynamic:
            raise unsupported("the size of the dynamic shared array", None)
        return arith.const(b, kind, self.count)

    def strides_in_bytes(self, b, kind):
        itemsize = host_dtype(self.ty.dtype).itemsize
        return tuple(arith.const(b, kind, s * itemsize) for s in self.strides_elems)


def _bind_builder(arr, b):
    arr._b = b
    return arr


def constant_arguments(lowerer, expr, sig):
    """Per parameter of the function `expr` calls, the argument's compile-time value
    (as _evaluate finds it in the caller) or _NO; for inline.py's callees."""
    kws = dict(expr.kws)
    pysig = getattr(sig, "pysig", None)
    if pysig is None or expr.vararg is not None:
        return [_evaluate(lowerer, v, 0) for v in expr.args] if not kws else []
    try:
        return list(fold_arguments(pysig, list(expr.args), kws,
                                   lambda i, p, var: _evaluate(lowerer, var, 0),
                                   lambda i, p, value: value,
                                   lambda i, p, variables: _NO))
    except Exception:  # a call Numba typed but we cannot fold: no constants, not an error
        return []


def constant_shape(lowerer, var, what, loc):
    """The constant shape (tuple of ints) of Numba variable `var`, or VulkanUnsupportedError."""
    value = _evaluate(lowerer, var, 0)
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        value = (int(value),)
    if (
        not isinstance(value, tuple)
        or not value
        or not all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in value)
    ):
        raise unsupported(
            f"{what} with a shape that is not a compile-time constant (use literals or global "
            "constants, e.g. (TILE, TILE + 1))",
            loc,
        )
    if len(value) > 3:
        raise unsupported(f"{what} of {len(value)} dimensions (1 to 3)", loc)
    return tuple(int(v) for v in value)


_NO = object()
_BINOPS = {
    operator.add: operator.add, operator.sub: operator.sub, operator.mul: operator.mul,
    operator.floordiv: operator.floordiv, operator.mod: operator.mod,
    operator.lshift: operator.lshift, operator.rshift: operator.rshift,
}


def _evaluate(lowerer, var, depth):
    """The compile-time value of Numba variable `var`: literals, globals, closure values,
    tuples of them and + - * // % << >> on them, and a device function's arguments
    that are such values at its call; _NO where it is not a constant."""
    if depth > 32:
        return _NO
    ty = lowerer.typemap.get(var.name)
    if isinstance(ty, types.IntegerLiteral):
        return ty.literal_value
    try:
        defn = lowerer.func_ir.get_definition(var)
    except Exception:  # no single definition
        return _NO
    if isinstance(defn, (ir.Const, ir.Global, ir.FreeVar)):
        return defn.value
    if isinstance(defn, ir.Arg):
        # An argument of an inlined device function: its caller's constant, if any
        # (numba.cuda's helpers take the shape of their shared arrays as arguments).
        const_args = lowerer.__dict__.get("const_args") or ()
        return const_args[defn.index] if defn.index < len(const_args) else _NO
    if isinstance(defn, ir.Var):
        return _evaluate(lowerer, defn, depth + 1)
    if not isinstance(defn, ir.Expr):
        return _NO
    if defn.op == "build_tuple":
        items = tuple(_evaluate(lowerer, v, depth + 1) for v in defn.items)
        return _NO if any(i is _NO for i in items) else items
    if defn.op == "binop" and defn.fn in _BINOPS:
        a, c = _evaluate(lowerer, defn.lhs, depth + 1), _evaluate(lowerer, defn.rhs, depth + 1)
        if isinstance(a, int) and isinstance(c, int):
            try:
                return _BINOPS[defn.fn](a, c)
            except (ZeroDivisionError, ValueError):
                return _NO
        return _NO
    if defn.op == "unary" and defn.fn is operator.neg:
        a = _evaluate(lowerer, defn.value, depth + 1)
        return -a if isinstance(a, int) else _NO
    if defn.op == "getattr":
        base = _evaluate(lowerer, defn.value, depth + 1)
        return _NO if base is _NO else getattr(base, defn.attr, _NO)
    return _NO


def _arg(expr, sig_names, name, index):
    kws = dict(expr.kws)
    if name in kws:
        return kws[name]
    if index < len(expr.args):
        return expr.args[index]
    return None


def _make(lowerer, expr, sig, target, shared):
    loc = expr.loc
    what = "nv.shared.array" if shared else "nv.local.array"
    shape_var = _arg(expr, None, "shape", 0)
    shape = constant_shape(lowerer, shape_var, what, loc)
    _check_alignment(lowerer, _arg(expr, None, "alignment", 2), what, loc)
    ty = sig.return_type
    if any(d < 0 for d in shape):
        raise unsupported(f"{what} of negative shape {shape}", loc)
    if 0 in shape and not (shared and shape == (0,)):
        raise unsupported(f"{what} of shape {shape} (0 only as shared.array(0, dtype), the "
                          "dynamic shared array)", loc)
    shape_was_dynamic = shape == (0,) and shared
    if shape_was_dynamic and (is_bfloat16(ty.dtype) or isinstance(ty.dtype, types.Complex)):
        raise unsupported(f"the dynamic shared array (shared.array(0, dtype)) of {ty.dtype} "
                          "(give the shared array a constant shape)", loc)
    if shape_was_dynamic and getattr(lowerer, "dynamic_shared", None) is not None:
        return _alias(lowerer, lowerer.dynamic_shared, ty, loc)
    if shape == (0,) and shared:
        nbytes = getattr(lowerer, "dynamic_shared_bytes", 0)
        k = exact_kind(ty.dtype) if is_scalar_type(ty.dtype) else None  # bools take 4 bytes
        itemsize = _core.memory_bytes(k) if k is not None else np.dtype(str(ty.dtype)).itemsize
        if nbytes < itemsize:
            raise unsupported(
                "the dynamic shared array (shared.array(0, dtype)) without shared memory bytes "
                "at launch (launch it as kernel[groups, local_size, stream, shared_bytes])", loc
            )
        shape = (nbytes // itemsize,)
    if shared:
        lowerer.root.shared_memory = True
    bits = shared and id(expr) in atomic_bits_arrays(lowerer)
    arr = LocalArray(lowerer, ty, shape, shared, bits=bits, loc=loc)
    if shape_was_dynamic:
        lowerer.dynamic_shared = arr
    return arr


def _check_alignment(lowerer, var, what, loc):
    """numba.cuda's ``alignment=`` of a shared or local array: None or a compile-time power
    of two (else numba.cuda's ValueError). Nothing else is needed to honour it: these arrays
    are SPIR-V variables whose address no kernel can observe (no pointers, no
    ``.ctypes.data``), so no alignment can be seen to be missed; the driver places them,
    aligned at least to their elements."""
    if var is None:
        return
    value = _evaluate(lowerer, var, 0)
    if value is None:
        return
    if not isinstance(value, (int, np.integer)) or isinstance(value, bool):
        raise unsupported(f"{what} with an alignment that is not a compile-time constant "
                          "int", loc)  # fmt: skip
    if value <= 0 or value & (value - 1):  # numba.cuda's error: a wrong argument
        raise ValueError(f"Alignment must be a power of 2: {what} with alignment={int(value)} "
                         f"({loc.filename}:{loc.line})")


def _alias(lowerer, first, ty, loc):
    """A further ``shared.array(0, dtype)``: the same memory as the first, as numba.cuda's
    dynamic shared arrays all are. The KIR variable is the first one's; an element type
    of the same width reads and writes its bits (bitcast, as a ``bits`` array does), so
    a float32 written through one array reads as its int32 bits through the other, as
    in CUDA. Different widths would need byte addressing of the workgroup array, which
    typed SPIR-V arrays do not have: refused."""
    own = exact_kind(ty.dtype) if is_scalar_type(ty.dtype) else None
    if own is None or own == K.bool or first.value_kind == K.bool or (
            _core.memory_bytes(own) != _core.memory_bytes(first.storage)):
        raise unsupported(
            f"dynamic shared arrays (shared.array(0, dtype)) of {first.ty.dtype} and "
            f"{ty.dtype} in one kernel: they alias one buffer, which is supported for element "
            "types of the same width (e.g. float32 and int32) but not for these", loc)
    arr = copy.copy(first)
    arr.ty = ty
    arr.compute = compute_kind(ty.dtype, lowerer.mode, loc)
    arr.value_kind = exact_kind(ty.dtype) if exact_kind(ty.dtype) == K.f16 else arr.compute
    arr.bits = arr.value_kind != arr.storage
    # atomics refuse a different-typed alias (atomics.py): their pointer has the first's type
    arr.aliased = arr.value_kind != first.value_kind
    arr.written = False
    return arr


def lower_shared_array(lowerer, expr, sig, target):
    return _bind_builder(_make(lowerer, expr, sig, target, True), lowerer.b), sig.return_type


def lower_local_array(lowerer, expr, sig, target):
    return _bind_builder(_make(lowerer, expr, sig, target, False), lowerer.b), sig.return_type


def lower_numpy_constructor(lowerer, fn, expr, sig, target):
    """np.empty/zeros/ones/full(shape, ...) with a constant shape: a local array, filled."""
    b, loc = lowerer.b, expr.loc
    name = fn.__name__
    ty = sig.return_type
    if not isinstance(ty, types.Array):
        raise unsupported(f"np.{name} giving {ty}", loc)
    shape_var = _arg(expr, None, "shape", 0)
    shape = constant_shape(lowerer, shape_var, f"np.{name}", loc)
    if 0 in shape or any(d < 0 for d in shape):
        raise unsupported(f"np.{name} of shape {shape} in a kernel", loc)
    arr = _bind_builder(LocalArray(lowerer, ty, shape, False, loc=loc), b)
    if name == "empty":
        return arr, ty
    # Fill with a loop over the linear index (the body loads the fill value itself:
    # KIR values do not cross blocks).
    fill_var = _arg(expr, None, "fill_value", 1) if name == "full" else None
    ik = arr.index_kind
    i_ptr = b.var(ik)
    b.store(i_ptr, arith.const(b, ik, 0))
    tag = f"fill{b.current_block}"
    header, body, done = (b.create_block(f"{tag}.{p}") for p in ("header", "body", "done"))
    b.br(header)
    b.set_block(header)
    b.condbr(b.compare(Op.lt, b.load(i_ptr), arith.const(b, ik, arr.count)), body, done)
    b.set_block(body)
    if fill_var is not None:
        value = lowerer.cast(lowerer.load_var(fill_var.name), lowerer.typemap[fill_var.name],
                             ty.dtype, loc)
    else:
        value = arith.const(b, arr.compute, 1 if name == "ones" else 0)
        if arr.complex:
            value = (value, arith.const(b, arr.compute, 0))
    i = b.load(i_ptr)
    if arr.complex:
        for p, v in zip(arr.parts_at(b, i), value):
            b.store(p, arith.convert(b, v, arr.storage))
    else:
        b.store(b.index_ptr(arr.var, i), arith.convert(b, value, arr.value_kind))
    b.store(i_ptr, b.binary(Op.add, i, arith.const(b, ik, 1)))
    b.br(header)
    b.set_block(done)
    return arr, ty


NUMPY_CONSTRUCTORS = (np.empty, np.zeros, np.ones, np.full)


def atomic_bits_arrays(lowerer):
    """ids of the shared.array call expressions whose arrays a float atomic other than a native
    add writes (they are held as integer bits; see the module's docstring). Cached per
    function lowered (kept in the lowerer's own __dict__: an inlined callee's Lowerer
    would otherwise read and write the kernel's, inline.py)."""
    cached = lowerer.__dict__.get("_atomic_bits")
    if cached is not None:
        return cached
    from . import atomics

    out = set()
    func_ir = lowerer.func_ir
    for block in func_ir.blocks.values():
        for stmt in block.body:
            if not (isinstance(stmt, ir.Assign) and isinstance(stmt.value, ir.Expr)
                    and stmt.value.op == "call"):
                continue
            fn = _static_callee(lowerer, stmt.value.func)
            if fn is None:  # e.g. a helper's argument: `op(sm, i, v)` called with atomic.max
                fn = _evaluate(lowerer, stmt.value.func, 0)
            name = atomics.stub_name(fn)
            if name is None or not stmt.value.args:
                continue
            ary_ty = lowerer.typemap.get(stmt.value.args[0].name)
            if not isinstance(ary_ty, types.Array) or not isinstance(ary_ty.dtype, types.Float):
                continue
            if name == "add" and atomics.native_float_add(lowerer, ary_ty.dtype):
                continue
            defn = _array_definition(func_ir, stmt.value.args[0])
            if defn is not None:
                out.add(id(defn))
    lowerer.__dict__["_atomic_bits"] = out
    return out


def _static_callee(lowerer, var):
    try:
        defn = lowerer.func_ir.get_definition(var)
    except Exception:
        return None
    if isinstance(defn, (ir.Global, ir.FreeVar)):
        return defn.value
    if isinstance(defn, ir.Expr) and defn.op == "getattr":
        base = _static_callee(lowerer, defn.value)
        return getattr(base, defn.attr, None) if base is not None else None
    return None


def _array_definition(func_ir, var):
    """The call expression that created array variable `var`, following plain copies."""
    for _ in range(16):
        try:
            defn = func_ir.get_definition(var)
        except Exception:
            return None
        if isinstance(defn, ir.Var):
            var = defn
            continue
        if isinstance(defn, ir.Expr) and defn.op == "call":
            return defn
        return None
    return None


CALLS = {stubs.shared.array: lower_shared_array, stubs.local.array: lower_local_array}

__all__ = ["CALLS", "LocalArray", "NUMPY_CONSTRUCTORS", "lower_numpy_constructor", "errors"]
