"""Array views inside kernels: slices, ``a[i]`` of an N-d array, ``a[i, :]``, ``a.T``.

A view is a compile-time object, like an array argument (ArrayArg, which it
duck-types), over the same buffer: its element offset, extents and strides
(in elements, in the index kind) are KIR values, held in KIR variables
because KIR values do not cross blocks. A Numba variable that is assigned
views more than once (``row = a[i]`` in a loop) owns one View whose variables
each assignment overwrites; a view stored into another variable is copied,
so a later assignment of the source does not change it.

Slices follow Python's (and Numba's, numba/cpython/slicing.py) semantics
exactly: a missing start/stop is a sentinel (0 or intp max for a positive
step; intp max or intp min for a negative one), bounds are wrapped once
(bound < 0 -> bound + extent), then clamped to [0, extent] for a positive
step and to [-1, extent - 1] for a negative one; the length is
ceil((stop - start) / step) when positive, else 0. A zero step raises
ValueError at run time as in Numba (frontend/calls.py) and is refused when it
is a compile-time constant.

Views are built of array arguments, of shared/local arrays of constant shape
(their elements through the array variable, local_arrays.py) and of global
arrays (read-only: those in constant buffers through their memory, inlined
ones through their elements' C-order positions, constants.py); slicing the
dynamic shared array or an array expression is refused.
"""

from numba.core import types

from .. import _core
from . import arith
from .array_exprs import ArrayExpr, check_fits
from .arrays import ArrayArg
from .errors import unsupported
from .loops import for_each
from .types import BITS, compute_kind, host_dtype, is_scalar_type, is_signed

Op = _core.Op
K = _core.Kind


def root_of(arr, loc):
    """The array a view is over: an argument, a shared/local array of constant shape
    (frontend/local_arrays.py) or a global array (frontend/constants.py, hidden.py);
    refuses the dynamic shared array and array expressions."""
    if isinstance(arr, View):
        return arr.root
    if _is_local(arr):
        return arr
    if isinstance(arr, ArrayExpr):
        raise unsupported("views (slices, a[i] of an N-d array, .T) of array expressions "
                          "(index the expression's elements, or the arrays it reads)", loc)  # fmt: skip
    from .constants import ConstArray
    from .hidden import HiddenArray

    if isinstance(arr, HiddenArray):
        return arr  # a global array in a constant buffer, or a global DeviceArray: memory
    if isinstance(arr, ConstArray):
        return arr  # an inlined global array: views read it through its linear positions
    from .records import FieldArray

    if isinstance(arr, FieldArray):
        return arr  # a record's sub-array field: memory at an address computed where used
    if type(arr) is not ArrayArg:
        kind = "global constant" if arr.name.startswith("<") else arr.name
        raise unsupported(f"views (slices, a[i] of an N-d array, .T) of {kind} arrays", loc)
    return arr


def _is_local(arr):
    """A shared or local array of constant shape (it has a KIR array variable)."""
    return getattr(arr, "var", None) is not None and getattr(arr, "dynamic", True) is False


def geometry(b, arr):
    """(offset, extents, strides) of an array argument or view, as KIR values now."""
    if isinstance(arr, View):
        return b.load(arr.offset_var), arr.extents, arr.strides
    return arith.const(b, arr.index_kind, 0), list(arr.extents), list(arr.strides)


class View(ArrayArg):
    """A view of an array argument: offset, extents and strides in KIR variables."""

    def __init__(self, lowerer, root, ty):  # noqa: D107 -- no ArrayArg.__init__: no params
        b = lowerer.b
        self.b = b
        self.root = root
        self.name = root.name
        self.ty = ty
        self.ndim = ty.ndim
        self.storage = root.storage
        self.compute = root.compute
        self.index_kind = ik = root.index_kind
        self.owner = None  # the Numba variable whose own View this is (lower.py)
        self.offset_var = b.var(ik)
        self.extent_vars = [b.var(ik) for _ in range(ty.ndim)]
        self.stride_vars = [b.var(ik) for _ in range(ty.ndim)]

    @classmethod
    def make(cls, lowerer, root, ty, offset, extents, strides):
        view = cls(lowerer, root, ty)
        view.set(lowerer.b, offset, extents, strides)
        return view

    def set(self, b, offset, extents, strides):
        if len(extents) != self.ndim or len(strides) != self.ndim:
            raise unsupported(f"assigning a {len(extents)}-d view to a {self.ndim}-d one", None)
        b.store(self.offset_var, offset)
        for var, value in zip(self.extent_vars + self.stride_vars, list(extents) + list(strides)):
            b.store(var, value)

    @property
    def written(self):
        return self.root.written

    @written.setter
    def written(self, value):
        if value:
            self.root.written = True

    @property
    def extents(self):
        return [self.b.load(v) for v in self.extent_vars]

    @property
    def strides(self):
        return [self.b.load(v) for v in self.stride_vars]

    @property
    def addr(self):
        return self.root.addr

    @property
    def complex(self):
        return getattr(self.root, "complex", False)

    @property
    def record(self):
        return getattr(self.root, "record", False)

    def linear_index(self, b, indices, loc):
        if len(indices) != self.ndim:
            raise unsupported(f"indexing a {self.ndim}-d view with {len(indices)} indices", loc)
        ik = self.index_kind
        linear = b.load(self.offset_var)
        for idx, extent, stride in zip(indices, self.extents, self.strides):
            signed = is_signed(b.kind(idx))
            idx = arith.convert(b, idx, ik)
            if signed:
                negative = b.compare(Op.lt, idx, arith.const(b, ik, 0))
                idx = b.select(negative, b.binary(Op.add, idx, extent), idx)
            linear = b.binary(Op.add, linear, b.binary(Op.mul, idx, stride))
        return linear

    def element_ptr(self, b, indices, loc):
        linear = self.linear_index(b, indices, loc)
        if _is_local(self.root):
            return b.index_ptr(self.root.var, linear)
        return b.elemptr(self.storage, self.addr, linear)

    def load(self, b, indices, loc):
        root = self.root
        if hasattr(root, "load_linear"):  # an inlined global array (constants.py)
            return root.load_linear(b, self.linear_index(b, indices, loc))
        if getattr(root, "reinterpret", None) is not None:  # a.view(dtype): the same bits
            value = b.bitcast(root.reinterpret, b.load(self.element_ptr(b, indices, loc)))
            return arith.convert(b, value, root.compute)
        if not _is_local(root):
            return super().load(b, indices, loc)
        if root.complex:
            return tuple(b.load(p) for p in root.parts_at(b, self.linear_index(b, indices, loc)))
        value = b.load(self.element_ptr(b, indices, loc))
        if root.bits:  # a shared float array held as integers (local_arrays.py)
            value = b.bitcast(root.value_kind, value)
        return arith.convert(b, value, root.compute)

    def store(self, b, indices, value, loc):
        root = self.root
        if getattr(root, "reinterpret", None) is not None:  # a.view(dtype)
            value = b.bitcast(root.storage, arith.convert(b, value, root.reinterpret))
            b.store(self.element_ptr(b, indices, loc), value)
            self.written = True
            return None
        if not _is_local(root):
            return super().store(b, indices, value, loc)
        if root.complex:
            for p, v in zip(root.parts_at(b, self.linear_index(b, indices, loc)), value):
                b.store(p, arith.convert(b, v, root.storage))
            self.written = True
            return None
        ptr = self.element_ptr(b, indices, loc)
        value = arith.convert(b, value, root.value_kind)
        if root.bits:
            value = b.bitcast(root.storage, value)
        b.store(ptr, value)
        self.written = True
        return None

    def strides_in_bytes(self, b, kind):
        itemsize = arith.const(b, kind, host_dtype(self.ty.dtype).itemsize)
        return tuple(b.binary(Op.mul, arith.convert(b, s, kind), itemsize) for s in self.strides)


def copy_view(lowerer, value, ty, loc):
    """A new View (own variables) equal to array argument or view `value`, typed `ty`."""
    b = lowerer.b
    offset, extents, strides = geometry(b, value)
    return View.make(lowerer, root_of(value, loc), ty, offset, extents, strides)


def assign_view(lowerer, old, value, loc):
    """Overwrite View `old` (a variable's own) with the geometry of `value`."""
    if root_of(value, loc) is not old.root:
        raise unsupported("assigning views of different arrays to one variable", loc)
    if value is old:
        return
    offset, extents, strides = geometry(lowerer.b, value)
    old.set(lowerer.b, offset, extents, strides)


def transpose(lowerer, arr, ty, loc):
    b = lowerer.b
    offset, extents, strides = geometry(b, arr)
    return View.make(lowerer, root_of(arr, loc), ty, offset, extents[::-1], strides[::-1])


# ------------------------------------------------------------------ slices


def slice_kind(lowerer, loc):
    return compute_kind(types.intp, lowerer.mode, loc)


def _int_max(kind):
    return (1 << (BITS[kind] - 1)) - 1


def make_slice(lowerer, values, arg_types, loc, step_literal=None):
    """slice(start, stop[, step]) as Numba builds it: (start, stop, step) with sentinels for
    the missing bounds. `values` are KIR values or None (a None argument)."""
    b = lowerer.b
    k = slice_kind(lowerer, loc)
    if len(values) == 1:
        values = [None, values[0], None]
    elif len(values) == 2:
        values = list(values) + [None]
    start, stop, step = (None if v is None else arith.convert(b, v, k) for v in values)
    if step_literal == 0:
        raise unsupported("a slice step of zero", loc)
    big, small = arith.const(b, k, _int_max(k)), arith.const(b, k, -_int_max(k) - 1)
    zero = arith.const(b, k, 0)
    if step is None:
        step = arith.const(b, k, 1)
        negative = arith.const(b, K.bool, False)
    else:
        negative = b.compare(Op.lt, step, zero)
    if start is None:
        start = b.select(negative, big, zero)
    if stop is None:
        stop = b.select(negative, small, big)
    return (start, stop, step)


def static_slice(lowerer, s, loc):
    """A Python slice object (a constant index) as (start, stop, step) KIR values."""
    b = lowerer.b
    k = slice_kind(lowerer, loc)
    parts = []
    for v in (s.start, s.stop, s.step):
        if v is not None and (not isinstance(v, int) or isinstance(v, bool)):
            raise unsupported(f"slices with a bound of {v!r}", loc)
        parts.append(None if v is None else arith.const(b, k, v))
    return make_slice(lowerer, parts, None, loc, step_literal=s.step)


def fix_slice(b, sl, extent):
    """(start, step, length) of slice `sl` over `extent`, all of the extent's kind."""
    ik = b.kind(extent)
    k = b.kind(sl[0])
    start, stop, step = sl
    size = arith.convert(b, extent, k)
    zero, one = arith.const(b, k, 0), arith.const(b, k, 1)
    negative = b.compare(Op.lt, step, zero)
    lower = b.select(negative, arith.const(b, k, -1), zero)
    upper = b.select(negative, b.binary(Op.sub, size, one), size)

    def fix(bound):
        wrapped = b.binary(Op.add, bound, size)
        bound = b.select(b.compare(Op.lt, bound, zero), wrapped, bound)
        bound = b.select(b.compare(Op.lt, bound, zero), lower, bound)
        return b.select(b.compare(Op.ge, bound, size), upper, bound)

    start, stop = fix(start), fix(stop)
    # length: ceil((stop - start) / step) where that is positive, else 0 (also for step 0).
    diff = b.binary(Op.sub, stop, start)
    safe_step = b.select(b.compare(Op.eq, step, zero), one, step)
    adjust = b.select(negative, b.binary(Op.add, safe_step, one), b.binary(Op.sub, safe_step, one))
    # For same-sign operands, truncating division of (diff + step -/+ 1) is the ceiling.
    length = b.binary(Op.div, b.binary(Op.add, diff, adjust), safe_step)
    same_sign = b.compare(Op.eq, b.compare(Op.lt, diff, zero), negative)
    nonempty = arith.logical_and(
        b, arith.logical_and(b, same_sign, b.compare(Op.ne, diff, zero)),
        b.compare(Op.ne, step, zero),
    )
    length = b.select(nonempty, length, zero)
    return arith.convert(b, start, ik), arith.convert(b, step, ik), arith.convert(b, length, ik)


def index_view(lowerer, arr, items, ty, loc):
    """The view `arr[items]`: each item an integer KIR value ("int", v) or a slice
    ("slice", (start, stop, step)); dimensions past the items are kept whole."""
    b = lowerer.b
    root = root_of(arr, loc)
    ik = root.index_kind
    offset, extents, strides = geometry(b, arr)
    if len(items) > len(extents):
        raise unsupported(f"{len(items)} indices into a {len(extents)}-d array", loc)
    new_extents, new_strides = [], []
    for dim, (what, value) in enumerate(items):
        extent, stride = extents[dim], strides[dim]
        if what == "int":
            signed = is_signed(b.kind(value))
            idx = arith.convert(b, value, ik)
            if signed:
                negative = b.compare(Op.lt, idx, arith.const(b, ik, 0))
                idx = b.select(negative, b.binary(Op.add, idx, extent), idx)
            offset = b.binary(Op.add, offset, b.binary(Op.mul, idx, stride))
        else:
            start, step, length = fix_slice(b, value, extent)
            offset = b.binary(Op.add, offset, b.binary(Op.mul, start, stride))
            new_extents.append(length)
            new_strides.append(b.binary(Op.mul, stride, step))
    new_extents += extents[len(items):]
    new_strides += strides[len(items):]
    if len(new_extents) != ty.ndim:
        raise unsupported(f"indexing {arr.ty} giving {ty}", loc)
    return View.make(lowerer, root, ty, offset, new_extents, new_strides)


def index_items(lowerer, node, loc):
    """The items of the index of getitem/setitem `node`: ("int", value) or ("slice", triple)."""
    from numba.core import ir

    static = isinstance(node, ir.StaticSetItem) or (
        isinstance(node, ir.Expr) and node.op == "static_getitem"
    )
    var = node.index_var if static else node.index
    if var is None:
        index = node.index
        parts = index if isinstance(index, tuple) else (index,)
        items = []
        for part in parts:
            if isinstance(part, slice):
                items.append(("slice", static_slice(lowerer, part, loc)))
            elif isinstance(part, int) and not isinstance(part, bool):
                k = slice_kind(lowerer, loc)
                items.append(("int", arith.const(lowerer.b, k, part)))
            else:
                raise unsupported(f"indexing arrays with {part!r}", loc)
        return items
    ty = lowerer.typemap[var.name]
    value = lowerer.load_var(var.name)
    if isinstance(ty, types.BaseTuple):
        return [_item(t, v, loc) for t, v in zip(ty.types, value)]
    return [_item(ty, value, loc)]


def _item(ty, value, loc):
    if isinstance(ty, types.Integer):
        return ("int", value)
    if isinstance(ty, types.SliceType):
        return ("slice", value)
    if isinstance(ty, types.EllipsisType):
        raise unsupported("'...' in array indices", loc)
    if isinstance(ty, types.NoneType):
        raise unsupported("'None' (newaxis) in array indices", loc)
    if isinstance(ty, types.Array):
        raise unsupported("indexing arrays with arrays (fancy indexing)", loc)
    raise unsupported(f"indexing arrays with {ty}", loc)


def assign_into_view(lowerer, arr, items, value_var, loc):
    """``arr[items] = value``: a scalar is stored into every element of the view; an array or
    view of the same number of dimensions is copied element by element, over the view's
    extents, an axis of extent 1 broadcast along the view's (Numba's rule); other shapes
    raise ValueError with Numba's message (its shapes in full for 1-d views, else the
    first axis that differs). Copies between 1-d views of one array give numba.njit's
    answer (_overlap_order); between N-d views of one array they are refused: they may
    overlap, and Numba then copies through a temporary."""
    b = lowerer.b
    ty = lowerer.typemap[value_var.name]
    dest_ndim = sum(1 for what, _ in items if what == "slice") + arr.ndim - len(items)
    dest_ty = arr.ty.copy(ndim=dest_ndim, layout="A")
    dest = index_view(lowerer, arr, items, dest_ty, loc)
    if isinstance(ty, types.Array):
        src = lowerer.load_var(value_var.name)
        if not isinstance(src, ArrayArg) or src.ndim != dest_ndim:
            raise unsupported(f"assigning {ty} to a {dest_ndim}-d view (broadcasting)", loc)
        backwards = None  # a KIR bool variable: copy from the last element down
        if type(src) is ArrayArg or isinstance(src, View):
            if root_of(src, loc) is dest.root:
                if dest_ndim != 1:
                    raise unsupported("assigning a view of an array to a view of the same "
                                      "array with more than one dimension (they may "
                                      "overlap)", loc)  # fmt: skip
                backwards = _overlap_order(lowerer, dest, src, loc)
        elif isinstance(src, ArrayExpr):
            for leaf in src.leaves():
                if root_of(leaf, loc) is dest.root:
                    _check_same_elements(lowerer, dest, leaf, loc)
        dtype = arr.ty.dtype
        _check_shapes(lowerer, dest, src, loc)

        def copy(b, idx):
            if backwards is not None:
                (i,), (n,) = idx, dest.extents
                last = b.binary(Op.sub, b.binary(Op.sub, n, arith.const(b, b.kind(n), 1)), i)
                idx = [b.select(b.load(backwards), last, i)]
            # An axis of extent 1 in the source is read at index 0 (broadcast).
            one = [b.compare(Op.eq, n, arith.const(b, b.kind(n), 1)) for n in src.extents]
            at = [b.select(o, arith.const(b, b.kind(i), 0), i) for o, i in zip(one, idx)]
            v = lowerer.cast(src.load(b, at, loc), ty.dtype, dtype, loc)
            dest.store(b, idx, v, loc)

        for_each(lowerer, dest, copy)
        return
    if not is_scalar_type(ty):
        raise unsupported(f"assigning {ty} to an array view", loc)
    value = lowerer.cast(lowerer.load_var(value_var.name), ty, arr.ty.dtype, loc)
    held = b.var(b.kind(value))
    b.store(held, value)
    for_each(lowerer, dest, lambda b, idx: dest.store(b, idx, b.load(held), loc))


def _overlap_order(lowerer, dest, src, loc):
    """``a[p] = a[q]`` with 1-d views of one array: numba.njit copies the source into a new
    array first where the two may overlap, so every element gets the source's old value.
    With the same step, copying in the order that reads each source element before it is
    overwritten gives that: forwards where the destination starts behind the source
    (along the step), else backwards (``a[1:] = a[:-1]``). A source of one element is
    broadcast, safe in either order. Views with other steps whose spans meet raise
    ValueError where the kernel runs. Returns a bool variable: copy backwards."""
    from . import status
    from .exceptions import site

    b = lowerer.b
    (o1, (e1,), (s1,)), (o2, (e2,), (s2,)) = geometry(b, dest), geometry(b, src)
    k = b.kind(o1)
    zero, one = arith.const(b, k, 0), arith.const(b, k, 1)
    ahead = b.select(b.compare(Op.gt, s1, zero), b.compare(Op.gt, o1, o2),
                     b.compare(Op.lt, o1, o2))  # fmt: skip
    same_step = b.compare(Op.eq, s1, s2)
    spread = b.compare(Op.ne, e2, one)  # not a broadcast single element
    backwards = b.var(K.bool)
    b.store(backwards, arith.logical_and(b, arith.logical_and(b, same_step, ahead), spread))

    def span(o, e, s):
        last = b.binary(Op.add, o, b.binary(Op.mul, b.binary(Op.sub, e, one), s))
        return (b.select(b.compare(Op.lt, o, last), o, last),
                b.select(b.compare(Op.lt, o, last), last, o))  # fmt: skip

    (lo1, hi1), (lo2, hi2) = span(o1, e1, s1), span(o2, e2, s2)
    meet = arith.logical_and(b, b.compare(Op.le, lo1, hi2), b.compare(Op.le, lo2, hi1))
    filled = arith.logical_and(b, b.compare(Op.gt, e1, zero), b.compare(Op.gt, e2, zero))
    bad = arith.logical_and(b, arith.logical_and(b, arith.logical_not(b, same_step), spread),
                            arith.logical_and(b, meet, filled))  # fmt: skip
    message = ("assigning a view of an array to an overlapping view of it with another step "
               "(numba.njit copies through a new array; a kernel cannot): copy it to "
               "another array first")  # fmt: skip
    status.check(lowerer, bad, site(lowerer, ValueError, (message,), loc))
    return backwards


def _check_shapes(lowerer, dest, src, loc):
    """ValueError unless each axis of `src` has `dest`'s extent or 1 (numba.njit's check and
    message; a view's geometry lives in variables, so the blocks this ends do no harm)."""

    def template(axis):
        if dest.ndim == 1:
            return "cannot assign slice of shape ({0},) from input of shape ({1},)"
        return (f"cannot assign slice from input of different shape: axis {axis} of the "
                f"slice has {{0}} elements, of the input {{1}}")  # fmt: skip

    check_fits(lowerer, dest, src, loc, template)


def _check_same_elements(lowerer, dest, leaf, loc):
    """An array expression assigned to `dest` reads `leaf`, a view of the same array: each
    element is read before it is written only where `leaf` is `dest` (``a[:, 0] = a[:, 0]
    + 1``). Elsewhere numba.njit computes the expression into a new array first, which a
    kernel cannot: ValueError at run time where the two views differ."""
    from . import status
    from .exceptions import site

    if leaf.ndim != dest.ndim:
        raise unsupported("assigning an array expression to a view of an array it reads "
                          "with another number of dimensions", loc)  # fmt: skip
    b = lowerer.b
    (o1, e1, s1), (o2, e2, s2) = geometry(b, dest), geometry(b, leaf)
    differ = b.compare(Op.ne, o1, o2)
    for x, y in zip(e1 + s1, e2 + s2):
        differ = arith.logical_or(b, differ, b.compare(Op.ne, x, y))
    message = ("an array expression assigned to a view of an array it reads at other "
               "elements (numba.njit computes it into a new array first; a kernel evaluates "
               "it element by element): assign it to another array")  # fmt: skip
    status.check(lowerer, differ, site(lowerer, ValueError, (message,), loc))
