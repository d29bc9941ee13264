"""Array expressions inside kernels: ``a[i] * 2 + b``, ``np.sqrt(x)``, ``x > y``, ``a.sum(axis=0)``.

Where numba.njit would allocate an array for an operator or a ufunc of arrays,
the kernel builds an ArrayExpr instead: a compile-time object that duck-types
an array argument (ArrayArg, as views do) whose elements are computed when
they are read. Whatever reads arrays reads it: an element (``(a[i] * 2)[1]``),
the reductions and np.dot (``np.sqrt(a[i] * b).sum()``), ``shape``/``size``/
``ndim``/``len``, iteration, a slice assignment (``out[i, :4] = a[i] * b - 1``),
device functions that only read their array arguments. Nothing is stored: each
element read evaluates its part of the tree (the scalar ufuncs of the math
library, frontend/mathlib, in the loop types numba.njit picks).

Shapes broadcast as in Numba (npyimpl's ``_broadcast_onto``: operands in order,
an axis of extent 1 takes the other's), and an operand that does not fit
raises ``ValueError("unable to broadcast argument N to output array")`` as
numba.njit does. An expression has no memory: taking a view of it, storing into
it, or passing it where memory is needed is refused. Assigned to a view of an
array it also reads, it must read that array only at the elements it writes
(``a[:, 0] = a[:, 0] + 1``): numba.njit computes the right-hand side into a new
array first, a kernel element by element, so other overlaps raise ValueError
at run time (views.py, _check_same_elements).

Reductions along an axis (``a.sum(axis=k)``, ``np.argmin(a, axis=k)``...) are
expressions too (reductions.AxisReduction): an element is the reduction of the
line through it, a loop where it is read. Readers that use values across such
a read keep them in variables (loops.for_each's indices, ArrayExpr.load).

In-place operators on arrays (``a *= f``, ``out[i, :4] += b``) are loops over
the left operand in C order, as Numba's: each element is read, combined with
the right operand's (broadcast; a shape that does not fit raises ValueError)
and written back. The setitem that follows ``out[i, :4] += b`` in Numba's IR
stores the view into itself and is skipped (``written_in_place``).
"""

import numpy as np
from numba.core import ir, types
from numba.core.typing.npydecl import (
    NumpyRulesArrayOperator,
    NumpyRulesInplaceArrayOperator,
    NumpyRulesUnaryArrayOperator,
)
from numba.np.numpy_support import ufunc_find_matching_loop

from .. import _core
from . import arith, mathlib, status
from .arrays import ArrayArg
from .errors import unsupported
from .loops import for_each
from .types import compute_kind

Op = _core.Op
K = _core.Kind

_BINARY = {op: getattr(np, name) for op, name in NumpyRulesArrayOperator._op_map.items()}
_INPLACE = {op: getattr(np, name) for op, name in NumpyRulesInplaceArrayOperator._op_map.items()}
_UNARY = {op: getattr(np, name) for op, name in NumpyRulesUnaryArrayOperator._op_map.items()}


class ElementCall(mathlib.Call):
    """A math library call on one element's values (already loaded and cast)."""

    def __init__(self, lowerer, loc, sig, name, args):  # noqa: D107 -- no operands to load
        self.lo, self.b, self.sig, self.name = lowerer, lowerer.b, sig, name
        self.expr, self.loc, self.args = None, loc, args


def scalar_loop(ufunc, dtypes, name, loc):
    """The loop numba.njit picks for `ufunc` on element types `dtypes`: (signature of
    the element function, loop spec)."""
    if any(isinstance(t, types.Complex) for t in dtypes):
        raise unsupported(f"'{name}' on complex arrays", loc)
    if ufunc not in mathlib.TABLE:
        raise unsupported(f"'{name}' on arrays (not in the kernel math library)", loc)
    loop = ufunc_find_matching_loop(ufunc, tuple(dtypes))
    if loop is None or len(loop.outputs) != 1:
        raise unsupported(f"'{name}' of {', '.join(map(str, dtypes))}", loc)
    return loop.outputs[0](*loop.inputs), loop


def apply(lo, ufunc, name, values, dtypes, loc):
    """`ufunc` of scalar KIR values of types `dtypes`: (value, its Numba type)."""
    sig, loop = scalar_loop(ufunc, dtypes, name, loc)
    args = [lo.cast(v, t, want, loc) for v, t, want in zip(values, dtypes, loop.inputs)]
    lo.exact_math = True  # see LoweredKernel.exact_math
    return mathlib.TABLE[ufunc](ElementCall(lo, loc, sig, name, args)), loop.outputs[0]


class ArrayExpr(ArrayArg):
    """`ufunc` of `operands` (arrays, views, expressions, or scalar values), evaluated
    element by element where it is read. `ty`: the Numba array type of the result."""

    def __init__(self, lo, ufunc, name, operands, operand_types, ty, loc):  # noqa: D107
        b = lo.b
        self.lo, self.ufunc, self.op_name, self.loc = lo, ufunc, name, loc
        self.name, self.ty, self.ndim = f"<{name} expression>", ty, ty.ndim
        self.complex = self.record = False
        self.written = False
        self.storage = self.compute = compute_kind(ty.dtype, lo.mode, loc)
        arrays = [op for op in operands if isinstance(op, ArrayArg)]
        self.index_kind = arrays[0].index_kind
        self.dtypes = [t.dtype if isinstance(t, types.Array) else types.unliteral(t)
                       for t in operand_types]  # fmt: skip
        scalar_loop(ufunc, self.dtypes, name, loc)  # refuse early what has no loop
        # Scalars are kept in variables: elements are read in other blocks (loops).
        self.operands = []
        for op in operands:
            if isinstance(op, ArrayArg):
                if op.complex or op.record:
                    raise unsupported(f"'{name}' on {op.ty}", loc)
                self.operands.append(op)
            else:
                slot = b.var(b.kind(op))
                b.store(slot, op)
                self.operands.append(slot)
        # The result's extents, broadcast as Numba does, operand by operand.
        ik = self.index_kind
        self.extent_vars = [b.var(ik) for _ in range(self.ndim)]
        for v in self.extent_vars:
            b.store(v, arith.const(b, ik, 1))
        for number, op in enumerate(self.operands):
            if isinstance(op, ArrayArg):
                _broadcast_onto(lo, self.extent_vars, op, number, loc)

    # -- what readers use
    @property
    def extents(self):
        return [self.lo.b.load(v) for v in self.extent_vars]

    def leaves(self):
        """The arrays (arguments and views) the expression reads."""
        for op in self.operands:
            if isinstance(op, ArrayExpr):  # an axis reduction too
                yield from op.leaves()
            elif isinstance(op, ArrayArg):
                yield op

    def load(self, b, indices, loc):
        # Each operand's value waits in a variable: reading the next one may take loops
        # (an axis reduction), after which values of this block could not be used.
        held = []
        indices = status.spill(self.lo, list(indices))
        for op in self.operands:
            if isinstance(op, ArrayArg):
                at = broadcast_indices(b, op, [b.load(v) for v in indices])
                held.append(status.spill(self.lo, [op.load(b, at, loc)])[0])
            else:
                held.append(op)
        values = [b.load(v) for v in held]
        value, ty = apply(self.lo, self.ufunc, self.op_name, values, self.dtypes, loc)
        return self.lo.cast(value, ty, self.ty.dtype, loc)

    # -- what an expression does not have
    def _no_memory(self, what):
        raise unsupported(f"{what} an array expression ({self.op_name} of arrays: it is "
                          "computed element by element where it is read, and has no memory)",
                          self.loc)  # fmt: skip

    def store(self, b, indices, value, loc):
        self._no_memory("storing into")

    def element_ptr(self, b, indices, loc):
        self._no_memory("the address of an element of")

    def linear_index(self, b, indices, loc):
        self._no_memory("the memory layout of")

    @property
    def strides(self):
        self._no_memory("the strides of")

    @property
    def addr(self):
        self._no_memory("the memory of")

    def strides_in_bytes(self, b, kind):
        self._no_memory("the strides of")


def broadcast_indices(b, op, indices):
    """The indices into `op` of the element at `indices` of a broadcast result: the
    trailing axes, 0 along an axis of extent 1."""
    own = indices[len(indices) - op.ndim:]
    out = []
    for i, n in zip(own, op.extents):
        one = b.compare(Op.eq, n, arith.const(b, b.kind(n), 1))
        out.append(b.select(one, arith.const(b, b.kind(i), 0), arith.convert(b, i, b.kind(i))))
    return out


def _broadcast_onto(lo, extent_vars, op, number, loc):
    """Numba's _broadcast_onto for one operand: each of its axes (aligned to the last)
    must be 1 or the result's so far; a result axis still 1 takes the operand's."""
    b = lo.b
    shift = len(extent_vars) - op.ndim
    message = f"unable to broadcast argument {number} to output array"
    for axis in range(op.ndim):
        var = extent_vars[axis + shift]
        k = b.kind(b.load(var))
        n = arith.convert(b, list(op.extents)[axis], k)
        cur = b.load(var)
        one = arith.const(b, k, 1)
        bad = arith.logical_and(b, arith.logical_and(b, b.compare(Op.ne, cur, one),
                                                     b.compare(Op.ne, n, one)),
                                b.compare(Op.ne, n, cur))  # fmt: skip
        from .exceptions import site

        status.check(lo, bad, site(lo, ValueError, (message,), loc))
        n = arith.convert(b, list(op.extents)[axis], k)
        cur = b.load(var)
        b.store(var, b.select(b.compare(Op.eq, cur, arith.const(b, k, 1)), n, cur))


def _operand(lo, var, loc):
    """An operand of an expression: the array (argument, view, expression) or the value."""
    ty = lo.typemap[var.name]
    value = lo.load_var(var.name)
    if isinstance(ty, types.Array):
        if not isinstance(value, ArrayArg):
            raise unsupported(f"array expressions on {ty}", loc)
        return value
    return value


def binop(lo, expr, sig):
    """``x op y`` with an array operand: an ArrayExpr; in place (``a op= y``): the loop."""
    loc = expr.loc
    if expr.op == "inplace_binop":
        ufunc = _INPLACE.get(expr.fn)
        if ufunc is None:
            raise unsupported(f"the in-place operator {expr.fn.__name__} on arrays", loc)
        return inplace(lo, expr.lhs, expr.rhs, ufunc, loc)
    ufunc = _BINARY.get(expr.fn)
    if ufunc is None:
        raise unsupported(f"the operator {expr.fn.__name__} on arrays", loc)
    operands = [_operand(lo, v, loc) for v in (expr.lhs, expr.rhs)]
    operand_types = [lo.typemap[v.name] for v in (expr.lhs, expr.rhs)]
    return ArrayExpr(lo, ufunc, ufunc.__name__, operands, operand_types, sig.return_type, loc)


def unary(lo, expr, sig):
    """``-x``, ``+x``, ``~x`` of an array: an ArrayExpr."""
    ufunc = _UNARY.get(expr.fn)
    if ufunc is None:
        raise unsupported(f"the operator {expr.fn.__name__} on arrays", expr.loc)
    return ArrayExpr(lo, ufunc, ufunc.__name__, [_operand(lo, expr.value, expr.loc)],
                     [lo.typemap[expr.value.name]], sig.return_type, expr.loc)  # fmt: skip


def ufunc_call(lo, fn, name, args, sig, loc):
    """``np.sqrt(x)``, ``np.minimum(x, 3)``... of arrays without an output: an ArrayExpr."""
    operands = [_operand(lo, v, loc) for v in args]
    return ArrayExpr(lo, fn, name, operands, [lo.typemap[v.name] for v in args],
                     sig.return_type, loc)  # fmt: skip


def inplace(lo, lhs_var, rhs_var, ufunc, loc):
    """``lhs op= rhs`` on an array: element by element in C order, written back."""
    b = lo.b
    target = lo.load_var(lhs_var.name)
    if not isinstance(target, ArrayArg) or isinstance(target, ArrayExpr):
        raise unsupported(f"an in-place operator on {lo.typemap[lhs_var.name]}", loc)
    rhs = _operand(lo, rhs_var, loc)
    dtypes = [target.ty.dtype, lo.typemap[rhs_var.name]]
    if isinstance(dtypes[1], types.Array):
        dtypes[1] = dtypes[1].dtype
        if rhs.ndim > target.ndim:
            raise unsupported(f"'{ufunc.__name__}' in place of {target.ty} with "
                              f"{lo.typemap[rhs_var.name]}", loc)  # fmt: skip
        check_fits(lo, target, rhs, loc, lambda axis: (
            f"non-broadcastable operand: axis {axis} has {{1}} elements, the array updated "
            f"in place {{0}}"))  # fmt: skip
    else:
        slot = b.var(b.kind(rhs))
        b.store(slot, rhs)
        rhs = slot
    dtypes[1] = types.unliteral(dtypes[1])

    def body(b, idx):
        x = target.load(b, idx, loc)
        y = rhs.load(b, broadcast_indices(b, rhs, idx), loc) if isinstance(rhs, ArrayArg) \
            else b.load(rhs)  # fmt: skip
        value, ty = apply(lo, ufunc, ufunc.__name__, [x, y], dtypes, loc)
        target.store(b, idx, lo.cast(value, ty, target.ty.dtype, loc), loc)

    for_each(lo, target, body)
    return target


def check_fits(lo, target, op, loc, template, shorter_only=False):
    """ValueError where an axis of `op` (aligned to the target's last) is neither 1 nor the
    target's extent (`shorter_only`: only where it is also shorter). `template(axis)` is the
    message, with {0} the target's extent and {1} the operand's. The check ends blocks:
    call it where only variables are live."""
    from .exceptions import site

    b = lo.b
    shift = target.ndim - op.ndim
    for axis in range(op.ndim):
        n, m = list(target.extents)[axis + shift], list(op.extents)[axis]
        k = K.i64 if K.i64 in (b.kind(n), b.kind(m)) else b.kind(n)
        n, m = arith.convert(b, n, k), arith.convert(b, m, k)
        differs = b.compare(Op.lt if shorter_only else Op.ne, m, n)
        bad = arith.logical_and(b, differs, b.compare(Op.ne, m, arith.const(b, k, 1)))
        raise_site = site(lo, ValueError, (), loc, template(axis), (True, True))
        status.check(lo, bad, raise_site, [n, m])


def written_in_place(lo, stmt):
    """Whether setitem `stmt` stores ``x op= y``'s result into the very view the in-place
    operator wrote (Numba's IR for ``out[idx] op= y``: getitem, inplace_binop, setitem with
    the same index): nothing is left to store."""
    try:
        value = lo.func_ir.get_definition(stmt.value)
        if not (isinstance(value, ir.Expr) and value.op == "inplace_binop"):
            return False
        view = lo.func_ir.get_definition(value.lhs)
    except KeyError:
        return False
    if not (isinstance(view, ir.Expr) and view.op in ("getitem", "static_getitem")):
        return False
    if view.value.name != stmt.target.name:
        return False
    index = stmt.index_var if isinstance(stmt, ir.StaticSetItem) else stmt.index
    view_index = view.index_var if view.op == "static_getitem" else view.index
    if index is not None and view_index is not None:
        return index.name == view_index.name
    return isinstance(stmt, ir.StaticSetItem) and view.op == "static_getitem" and \
        stmt.index == view.index  # fmt: skip
