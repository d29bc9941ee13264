"""Scalar constructors of constants, folded before type inference.

Kernels written for float32 are full of ``np.float32(0.5)``, ``float32(2)`` (Numba's
type objects, as numba.cuda's examples write them) and ``np.int32(1)``. Each such call
costs type inference a call resolution through Numba's templates, and the front end a
conversion: 0.1-0.2 ms of a first call per call
(benchmarks/results/python-native_2026-12-02_scalar_constants.txt). Where the
argument is a constant whose conversion is exact, or rounds as the device's would, the
call is replaced by the NumPy scalar it makes (``ir.Const(np.float32(0.5))``), typed
as the same NumPy type: the kernel computes the same bits.

Folded: a NumPy integer or float type (``np.float32``, ``np.int64``, ``np.float16``) or
a Numba one (``numba.float32``), called with one positional argument defined once as
a Python bool, int or float constant, where

- an integer target holds the value exactly (a float argument truncated toward zero,
  as Numba's conversion does); NumPy refuses, and Numba wraps, the others;
- a float target gets a finite result, from an integer argument no larger than 2^53
  in magnitude (NumPy converts a Python int through float64: beyond, that rounds twice
  where the device rounds once) or from a finite float.

Everything else (a variable argument, NaN, overflow, complex) stays a call.
"""

from types import ModuleType

import numpy as np
from numba.core import ir, types
from numba.core.compiler_machinery import FunctionPass, register_pass
from numba.np import numpy_support

_EXACT_INT = 2**53


def _target(value):
    """The NumPy scalar type a constructor `value` makes (float32, int64...), or None."""
    if isinstance(value, (types.Integer, types.Float)) and not isinstance(value, types.Literal):
        value = numpy_support.as_dtype(value).type
    if isinstance(value, type) and issubclass(value, (np.integer, np.floating)):
        if np.dtype(value).kind in "iuf":
            return value
    return None


def fold(target, arg):
    """`target(arg)` as a NumPy scalar when folding it is exact (module docstring), else None."""
    if type(arg) not in (bool, int, float):
        return None
    if np.dtype(target).kind in "iu":
        if isinstance(arg, float):
            if not np.isfinite(arg):
                return None
            arg = int(arg)  # toward zero
        info = np.iinfo(target)
        return target(arg) if info.min <= arg <= info.max else None
    if isinstance(arg, float) and not np.isfinite(arg):
        return None
    if not isinstance(arg, float) and abs(arg) > _EXACT_INT:
        return None
    with np.errstate(over="ignore"):
        result = target(arg)
    return result if np.isfinite(result) else None


def _single_definition(func_ir, var):
    defs = func_ir._definitions.get(var.name, ())
    return defs[0] if len(defs) == 1 else None


def _constructor(func_ir, func_var):
    defn = _single_definition(func_ir, func_var)
    if isinstance(defn, (ir.Global, ir.FreeVar)):
        return _target(defn.value)
    if isinstance(defn, ir.Expr) and defn.op == "getattr":  # np.float32, numba.int32
        base = _single_definition(func_ir, defn.value)
        if isinstance(base, (ir.Global, ir.FreeVar)) and isinstance(base.value, ModuleType):
            return _target(getattr(base.value, defn.attr, None))
    return None


def fold_scalar_constants(func_ir):
    """Replace the foldable constructor calls of `func_ir` by constants, and drop the
    statements that only these calls read (the constructor, its module, the argument);
    returns how many calls were folded."""
    freed = []
    for block in func_ir.blocks.values():
        for stmt in block.body:
            if not isinstance(stmt, ir.Assign):
                continue
            expr = stmt.value
            if not (isinstance(expr, ir.Expr) and expr.op == "call" and len(expr.args) == 1):
                continue
            if expr.kws or expr.vararg is not None or getattr(expr, "varkwarg", None):
                continue
            target = _constructor(func_ir, expr.func)
            if target is None:
                continue
            arg = _single_definition(func_ir, expr.args[0])
            if not isinstance(arg, ir.Const):
                continue
            value = fold(target, arg.value)
            if value is None:
                continue
            const = ir.Const(value, expr.loc)
            stmt.value = const
            defs = func_ir._definitions[stmt.target.name]
            defs[next(k for k, d in enumerate(defs) if d is expr)] = const
            freed += [expr.func.name, expr.args[0].name]
    if freed:
        _drop_unread(func_ir, freed)
    return len(freed) // 2


def _drop_unread(func_ir, names):
    """Remove the assignments to `names` (and, in turn, to what they read) that nothing
    reads any more, where they assign a global, a constant or an attribute."""
    reads = {}
    for block in func_ir.blocks.values():
        for stmt in block.body:
            for var in stmt.list_vars():
                reads[var.name] = reads.get(var.name, 0) + 1
            if isinstance(stmt, ir.Assign):  # its target is written, not read
                reads[stmt.target.name] -= 1
    dead = {n for n in names if reads.get(n, 0) == 0 and len(func_ir._definitions[n]) == 1}
    while dead:
        newly = set()
        for block in func_ir.blocks.values():
            keep = []
            for stmt in block.body:
                if (
                    isinstance(stmt, ir.Assign)
                    and stmt.target.name in dead
                    and isinstance(stmt.value, (ir.Global, ir.FreeVar, ir.Const, ir.Expr))
                    and (not isinstance(stmt.value, ir.Expr) or stmt.value.op == "getattr")
                ):
                    func_ir._definitions[stmt.target.name].remove(stmt.value)
                    if isinstance(stmt.value, ir.Expr):
                        base = stmt.value.value.name
                        reads[base] -= 1
                        if reads[base] == 0 and len(func_ir._definitions[base]) == 1:
                            newly.add(base)
                    continue
                keep.append(stmt)
            block.body = keep
        dead = newly


@register_pass(mutates_CFG=False, analysis_only=False)
class FoldScalarConstants(FunctionPass):
    """``np.float32(0.5)`` and the like as constants (module docstring)."""

    _name = "numba_vulkan_fold_scalar_constants"

    def __init__(self):
        FunctionPass.__init__(self)

    def run_pass(self, state):
        return fold_scalar_constants(state.func_ir) > 0
