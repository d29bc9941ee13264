"""Exceptions in kernels: ``raise``, ``assert``, index checks and division by zero.

Each becomes a raise site (numba_vulkan/sites.py): the invocation records the
site's key, its global id and up to two run-time values in the status buffer
(frontend/status.py), the first to do so wins, and it returns from the kernel,
as a CUDA thread that raises exits. The host raises the exception at the next
synchronisation (runtime/reports.py).

- ``raise E``, ``raise E("constant", ...)`` and ``assert c, "constant"``:
  Numba's ir.StaticRaise (an assert is a branch to one). Arguments that are
  not constants (ir.DynamicRaise) are refused: the message is host data.
- ``boundscheck=True`` / ``NUMBA_BOUNDSCHECK=1``: before a statement that reads or
  writes one array element, each index is checked as Numba checks it (after
  negative wrap-around, 0 <= index < extent); IndexError names the array, the
  axis, the index as written and the extent, in NumPy's words.
- ``error_model="python"``: before ``/``, ``//``, ``%`` and ``divmod`` on integers
  and floats and ``/`` on complex numbers, a zero divisor raises ZeroDivisionError
  with numba.njit's messages.

Checks run before the statement is lowered, when only variables are live, so the
branch around the raise needs no spills (KIR values do not cross blocks).
"""

import builtins
import operator

from numba.core import ir, types

from .. import _core, sites
from . import arith, status
from .errors import unsupported
from .types import compute_kind, is_float, is_scalar_type

K = _core.Kind
Op = _core.Op

_DIVISIONS = {
    operator.truediv: "/", operator.itruediv: "/",
    operator.floordiv: "//", operator.ifloordiv: "//",
    operator.mod: "%", operator.imod: "%",
}  # fmt: skip


def site(lowerer, exc_class, args, loc, template=None, signed=(True, True)):
    return sites.RaiseSite(exc_class, args, lowerer.root.kernel_name,
                           getattr(loc, "filename", None) or "?", getattr(loc, "line", 0) or 0,
                           template, signed)  # fmt: skip


def lower_raise(lowerer, stmt):
    """ir.StaticRaise / ir.Raise / ir.DynamicRaise: record the exception and return."""
    loc = stmt.loc
    if getattr(stmt, "exc_class", None) is None and getattr(stmt, "exception", None) is None:
        raise unsupported("a bare 'raise' (re-raising)", loc)
    if not isinstance(stmt, ir.StaticRaise):
        raise unsupported(
            "raising an exception whose arguments are not constants (kernels can raise "
            "E, E('constant message', ...) and assert c, 'constant message')", loc
        )
    cls = stmt.exc_class
    if cls is None:
        raise unsupported("a bare 'raise' (re-raising)", loc)
    if not (isinstance(cls, type) and issubclass(cls, BaseException)):
        raise unsupported(f"raising {cls!r}, which is not an exception class", loc)
    status.emit_raise(lowerer, site(lowerer, cls, stmt.exc_args, loc))


# ------------------------------------------------------------------ checks before statements


def precheck(lowerer, stmt):
    """Emit the checks `stmt` needs (boundscheck, error_model='python') before it runs."""
    root = lowerer.root
    if getattr(root, "boundscheck", False):
        if isinstance(stmt, (ir.SetItem, ir.StaticSetItem)):
            _check_element(lowerer, stmt, stmt.target)
        elif isinstance(stmt, ir.Assign) and isinstance(stmt.value, ir.Expr) and \
                stmt.value.op in ("getitem", "static_getitem"):  # fmt: skip
            if not isinstance(lowerer.typemap[stmt.target.name], types.Array):  # not a view
                _check_element(lowerer, stmt.value, stmt.value.value)
    if getattr(root, "error_model", "numpy") == "python":
        if isinstance(stmt, ir.Assign) and isinstance(stmt.value, ir.Expr):
            if stmt.value.op in ("binop", "inplace_binop"):
                _check_division(lowerer, stmt.value)
            elif stmt.value.op == "call" and _callee(lowerer, stmt.value) is builtins.divmod:
                _check_divmod(lowerer, stmt.value)


def _check_element(lowerer, node, array_var):
    """IndexError unless every index of an element access lies inside its axis."""
    ty = lowerer.typemap[array_var.name]
    if not isinstance(ty, types.Array):
        return
    arr = lowerer.statics.get(array_var.name)
    if arr is None or not hasattr(arr, "extents"):
        return
    if isinstance(node, ir.StaticSetItem) or (isinstance(node, ir.Expr) and
                                              node.op == "static_getitem"):  # fmt: skip
        index = node.index
        items = index if isinstance(index, tuple) else (index,)
        if node.index_var is None and any(not isinstance(i, int) for i in items):
            return  # slices: a view, not an element
    else:
        index_ty = lowerer.typemap[node.index.name]  # ir.SetItem and getitem alike
        items_ty = index_ty.types if isinstance(index_ty, types.BaseTuple) else (index_ty,)
        if not all(isinstance(t, types.Integer) for t in items_ty):
            return
    if len(lowerer._indices(node, arr, node.loc)) != ty.ndim:
        return  # a view: fewer indices than axes
    name = array_var.name  # the user's name for the array (a view's, not its base's)
    if name.startswith("$"):  # a temporary: name the array it refers to
        name = getattr(getattr(arr, "root", arr), "name", None) or name
    b = lowerer.b
    for axis in range(ty.ndim):
        # Each check ends its block: indices and extents are loaded anew in the next one.
        idx = lowerer._indices(node, arr, node.loc)[axis]
        extent = list(arr.extents)[axis]
        bad, idx_wide, ext_wide = _out_of_bounds(b, idx, extent)
        template = (f"index {{0}} is out of bounds for axis {axis} with size {{1}} "
                    f"(array '{name}')")  # fmt: skip
        raise_site = site(lowerer, IndexError, (), node.loc, template,
                           (arith.is_signed(b.kind(idx)), True))
        status.check(lowerer, bad, raise_site, [idx_wide, ext_wide])


def _out_of_bounds(b, idx, extent):
    """(bad, idx, extent): whether `idx` misses [0, extent) after wrap-around (Numba's check)."""
    ik, ek = b.kind(idx), b.kind(extent)
    if ik == K.bool:
        idx, ik = arith.convert(b, idx, K.i32), K.i32
    wide = 64 in (arith.BITS[ik], arith.BITS[ek])
    if arith.is_signed(ik):
        k = K.i64 if wide else K.i32
        i, n = arith.convert(b, idx, k), arith.convert(b, extent, k)
        zero = arith.const(b, k, 0)
        wrapped = b.select(b.compare(Op.lt, i, zero), b.binary(Op.add, i, n), i)
        bad = arith.logical_or(b, b.compare(Op.lt, wrapped, zero), b.compare(Op.ge, wrapped, n))
        return bad, i, n
    k = K.u64 if wide else K.u32
    i, n = arith.convert(b, idx, k), arith.convert(b, extent, k)
    return b.compare(Op.ge, i, n), i, n


def _check_division(lowerer, expr):
    """ZeroDivisionError for a zero divisor of / // % on integers and floats."""
    fn = expr.immutable_fn if expr.op == "inplace_binop" else expr.fn
    sym = _DIVISIONS.get(fn)
    sig = lowerer.calltypes.get(expr)
    if sym is None or sig is None:
        return
    b, loc = lowerer.b, expr.loc
    if sym == "/" and isinstance(sig.args[1], types.Complex):  # both parts zero
        re, im = lowerer.load_cast(expr.rhs, sig.args[1])
        bad = arith.logical_and(b, b.compare(Op.eq, re, arith.const(b, b.kind(re), 0)),
                                b.compare(Op.eq, im, arith.const(b, b.kind(im), 0)))  # fmt: skip
        raise_site = site(lowerer, ZeroDivisionError, ("complex division by zero",), loc)
        status.check(lowerer, bad, raise_site)
        return
    if not all(is_scalar_type(t) for t in sig.args) or not is_scalar_type(sig.return_type):
        return
    y = lowerer.load_cast(expr.rhs, sig.args[1])
    yk = b.kind(y)
    if yk == K.bool:
        y, yk = arith.convert(b, y, K.i32), K.i32
    floats = is_float(compute_kind(sig.return_type, lowerer.mode, loc))
    if sym == "/":
        message = "division by zero"
    elif sym == "//":
        message = "division by zero" if floats else "integer division by zero"
    else:
        message = "modulo by zero" if floats else "integer modulo by zero"
    bad = b.compare(Op.eq, y, arith.const(b, yk, 0))
    status.check(lowerer, bad, site(lowerer, ZeroDivisionError, (message,), loc))


def _callee(lowerer, expr):
    """The Python function a call expression calls, where it is a global or closure value."""
    try:
        defn = lowerer.func_ir.get_definition(expr.func)
    except KeyError:
        return None
    return getattr(defn, "value", None) if isinstance(defn, (ir.Global, ir.FreeVar)) else None


def _check_divmod(lowerer, expr):
    """divmod(x, 0): ZeroDivisionError with numba.njit's messages."""
    sig = lowerer.calltypes.get(expr)
    if sig is None or len(expr.args) != 2 or not all(is_scalar_type(t) for t in sig.args):
        return
    b, loc = lowerer.b, expr.loc
    y = lowerer.load_cast(expr.args[1], sig.args[1])
    yk = b.kind(y)
    if yk == K.bool:
        y, yk = arith.convert(b, y, K.i32), K.i32
    message = "modulo by zero" if is_float(yk) else "integer divmod by zero"
    bad = b.compare(Op.eq, y, arith.const(b, yk, 0))
    status.check(lowerer, bad, site(lowerer, ZeroDivisionError, (message,), loc))
