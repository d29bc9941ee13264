"""The untyped-IR pass that turns numba.cuda's attribute values into our intrinsics.

``cuda.threadIdx.x`` is, in Numba's IR, ``getattr(getattr(global(cuda), 'threadIdx'),
'x')``: an attribute of a module-level object, which Numba cannot type as an int.
Before type inference this pass finds each ``getattr`` whose object resolves at
compile time to a ``kernel_api.Dim3`` (and reads .x/.y/.z) or a name that is a
``kernel_api.SpecialValue`` (``cuda.laneid``, ``cuda.warpsize``), and replaces it by
a call of the matching stub (``local_id(0)``, ``subgroup.lane()``). A reference to a
refused function (``cuda.cg``, dynamic parallelism ...) is reported here with why.
"""

from numba.core import ir
from numba.core.compiler_machinery import FunctionPass, register_pass
from numba.core.ir_utils import guard

from ..errors import VulkanUnsupportedError
from . import kernel_api

_AXES = {"x": 0, "y": 1, "z": 2}
_MISSING = object()


def _static_value(func_ir, var, depth=0):
    """The Python object `var` holds if it is a global or a chain of attributes of one."""
    if depth > 8:
        return _MISSING
    try:  # a variable assigned more than once (no SSA here) raises KeyError: not static
        defn = guard(func_ir.get_definition, var)
    except KeyError:
        return _MISSING
    if isinstance(defn, (ir.Global, ir.FreeVar)):
        return defn.value
    if isinstance(defn, ir.Expr) and defn.op == "getattr":
        base = _static_value(func_ir, defn.value, depth + 1)
        if base is _MISSING:
            return _MISSING
        return getattr(base, defn.attr, _MISSING) if not isinstance(
            base, kernel_api.Dim3) else _MISSING
    return _MISSING


def _replacement(func_ir, stmt):
    """The (stub, args) call that replaces the assignment `stmt`, or None."""
    value = stmt.value
    if isinstance(value, (ir.Global, ir.FreeVar)):
        obj = value.value
    elif isinstance(value, ir.Expr) and value.op == "getattr":
        base = _static_value(func_ir, value.value)
        if isinstance(base, kernel_api.Dim3) and value.attr in _AXES:
            return base.stub, (_AXES[value.attr],)
        if base is _MISSING or isinstance(base, kernel_api.Dim3):
            return None
        obj = getattr(base, value.attr, _MISSING)
    else:
        return None
    if isinstance(obj, kernel_api.SpecialValue):
        return obj.stub, ()
    why = getattr(obj, "refused_because", None) if callable(obj) else None
    if isinstance(why, str):
        raise VulkanUnsupportedError(f"cuda.{obj.__name__} ({stmt.loc.short()}): {why}")
    return None


def rewrite(func_ir):
    """Rewrite `func_ir` in place; returns whether anything changed."""
    changed = False
    for block in func_ir.blocks.values():
        body = []
        for stmt in block.body:
            found = _replacement(func_ir, stmt) if isinstance(stmt, ir.Assign) else None
            if found is None:
                body.append(stmt)
                continue
            stub, args = found
            scope, loc = block.scope, stmt.loc
            fn_var = scope.redefine("$cuda_stub", loc)
            body.append(ir.Assign(ir.Global(stub.__name__, stub, loc), fn_var, loc))
            arg_vars = []
            for a in args:
                v = scope.redefine("$cuda_axis", loc)
                body.append(ir.Assign(ir.Const(a, loc), v, loc))
                arg_vars.append(v)
            call = ir.Expr.call(fn_var, tuple(arg_vars), (), loc)
            body.append(ir.Assign(call, stmt.target, loc))
            changed = True
        block.body = body
    if _drop_dead_markers(func_ir):
        changed = True
    if changed:
        func_ir._definitions = _definitions(func_ir)
    return changed


def _drop_dead_markers(func_ir):
    """Remove the assignments of the Dim3 objects themselves (``$t = cuda.threadIdx``) once
    their ``.x`` reads are rewritten: Numba could not type them. One still used otherwise
    (threadIdx stored or passed on) is refused: only its components are values."""
    markers, dropped = {}, False
    for block in func_ir.blocks.values():
        for stmt in block.body:
            if isinstance(stmt, ir.Assign) and isinstance(
                    _assigned_object(func_ir, stmt), kernel_api.Dim3):
                markers[id(stmt)] = stmt
    while True:
        used = set()
        for block in func_ir.blocks.values():
            for stmt in block.body:
                names = {v.name for v in stmt.list_vars()}
                if isinstance(stmt, ir.Assign):
                    names.discard(stmt.target.name)
                used |= names
        dead = {k for k, stmt in markers.items() if stmt.target.name not in used}
        if not dead:
            break
        dropped = True
        for block in func_ir.blocks.values():
            block.body = [stmt for stmt in block.body if id(stmt) not in dead]
        for k in dead:
            del markers[k]
    for stmt in markers.values():
        obj = _assigned_object(func_ir, stmt)
        raise VulkanUnsupportedError(
            f"cuda.{obj.__name__} ({stmt.loc.short()}) used as a value: only its components "
            f"{obj.__name__}.x, .y and .z can be read in kernels")
    return dropped


def _assigned_object(func_ir, stmt):
    value = stmt.value
    if isinstance(value, ir.Var):
        return _static_value(func_ir, value)
    if isinstance(value, (ir.Global, ir.FreeVar)):
        return value.value
    if isinstance(value, ir.Expr) and value.op == "getattr":
        base = _static_value(func_ir, value.value)
        if base is not _MISSING and not isinstance(base, kernel_api.Dim3):
            return getattr(base, value.attr, _MISSING)
    return _MISSING


def _definitions(func_ir):
    from numba.core.ir_utils import build_definitions

    return build_definitions(func_ir.blocks)


@register_pass(mutates_CFG=False, analysis_only=False)
class CudaCompatRewrite(FunctionPass):
    """numba_vulkan.cuda: attribute values (threadIdx.x, laneid ...) to intrinsic calls."""

    _name = "numba_vulkan_cuda_rewrite"

    def __init__(self):
        FunctionPass.__init__(self)

    def run_pass(self, state):
        return rewrite(state.func_ir)
