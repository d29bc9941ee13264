"""Device functions: a call to a jitted function is inlined into the caller's KIR.

The callee (an ``@nv.jit`` or ``numba.njit`` function, or the implementation
of an ``@overload``/``@register_jitable``/``@overload_method``) was typed by
Numba for the call's argument types (typing/devfn.py, typing/overloads.py);
its typed IR is lowered here into the *caller's* function, as if its blocks
were written at the call:

    caller block ... br %callee.L0
    %callee.L0 ... (the callee's blocks, its variables fresh KIR variables)
    return x   ->  store x into the call's result variable; br %callee.ret
    %callee.ret: the caller goes on here, loading the result

Arguments are passed by value (scalars, tuples: trees of values), arrays
and other compile-time objects as themselves, so a callee's stores into an
array argument are the caller's. Callees are inlined to any depth; recursion
was refused at typing. Why inlining rather than KIR functions:
docs/device-functions.md.
"""

from numba.core import ir, types
from numba.core.typing.templates import fold_arguments

from .errors import internal, unsupported
from .lower import Lowerer, layout


class BoundMethod:
    """`obj.method` of an @overload_method, until it is called: the receiver and its type."""

    def __init__(self, value, ty, name=None):
        self.receiver = (value, ty)
        self.name = name  # the method's name, for error messages


class _Omitted:
    """An argument left to its default value (the callee's argument type is Omitted)."""

    def __init__(self, value):
        self.value = value


def typed_callee(fn_ty, sig):
    """The TypedKernel a call of Numba type `fn_ty` with signature `sig` runs, or None."""
    from ..typing.pipeline import TypedKernel
    from ..typing.overloads import OverloadDispatcher

    if isinstance(fn_ty, types.Dispatcher):
        disp = fn_ty.dispatcher
        if isinstance(disp, OverloadDispatcher):
            return disp.overloads.get(tuple(sig.args)), disp
        return None, None
    if isinstance(fn_ty, types.BoundFunction):
        return _method_callee(fn_ty, sig), None
    if isinstance(fn_ty, types.Function):
        try:
            impl = fn_ty.get_impl_key(sig)
        except (KeyError, AttributeError, TypeError):
            return None, None
        if isinstance(impl, TypedKernel):
            return impl, None
    return None, None


def _method_callee(fn_ty, sig):
    """The TypedKernel of an @overload_method call, or None.

    Numba's method template types the call through a function type of its
    own (the implementation with the receiver as first argument), which it
    keeps in the closure of its ``generic``; its impl key is the typed IR.
    """
    from numba.core.typing.templates import _OverloadMethodTemplate

    from ..typing.pipeline import TypedKernel
    from ..typing.target import contexts

    generic = getattr(fn_ty.template, "generic", None)
    outer = None
    for cell in getattr(generic, "__closure__", None) or ():
        if isinstance(cell.cell_contents, _OverloadMethodTemplate):
            outer = cell.cell_contents
    if outer is None or sig.recvr is None:
        return None
    try:
        fnty = outer._get_function_type(contexts()[0], sig.recvr)
        impl = fnty.get_impl_key(sig.as_function())
    except (KeyError, AttributeError, TypeError):
        return None
    return impl if isinstance(impl, TypedKernel) else None


def lower_device_call(lowerer, expr, fn_ty, sig, typed, name, receiver=None):
    """Inline `typed` (the callee) at call `expr`; returns (value, Numba type)."""
    args = _fold_args(lowerer, expr, sig, name)
    if receiver is not None:  # a method (@overload_method): the receiver is the first argument
        value, value_ty = receiver
        args = [lowerer.cast(value, value_ty, sig.recvr, expr.loc)] + args
    if len(args) != len(typed.argtypes):
        raise internal(
            f"call to '{name}' has {len(args)} arguments, its typed IR {len(typed.argtypes)}",
            expr.loc,
        )
    # KIR values do not cross blocks: the callee's blocks read its arguments from variables.
    args = [_spill(lowerer, a, t, expr.loc) for a, t in zip(args, typed.argtypes)]
    root = lowerer.root
    if root.inline_depth > 64:
        raise unsupported(f"calls nested more than 64 deep (calling '{name}')", expr.loc)
    callee = InlineLowerer(lowerer, typed, args, name)
    if receiver is None:  # compile-time values of the arguments: shapes (local_arrays.py)
        from .local_arrays import constant_arguments

        callee.const_args = constant_arguments(lowerer, expr, sig)
    value = callee.run()
    lowerer.set_loc(expr.loc)
    return lowerer.cast(value, typed.return_type, sig.return_type, expr.loc), sig.return_type


class _Spilled:
    """An argument value stored in KIR variables in the caller's block (a tree of pointers)."""

    def __init__(self, slots):
        self.slots = slots


def _spill(lowerer, value, ty, loc):
    lay = layout(ty, lowerer.mode, loc)
    if lay is None or isinstance(value, _Omitted):
        return value
    slots = lowerer._alloc(lay)
    lowerer._store_tree(slots, value)
    return _Spilled(slots)


def _fold_args(lowerer, expr, sig, name):
    """The call's argument values in the callee's parameter order, cast to the signature's
    types; defaults as _Omitted; *args as one tuple (as Numba's lowering folds them)."""
    loc = expr.loc
    if expr.vararg is not None:
        raise unsupported(f"calling '{name}' with *args", loc)
    kws = dict(expr.kws)
    pysig = getattr(sig, "pysig", None)
    if pysig is None:
        if kws:
            raise unsupported(f"keyword arguments in calls to '{name}'", loc)
        return [lowerer.load_cast(v, t) for v, t in zip(expr.args, sig.args)]

    def normal(index, param, var):
        return lowerer.load_cast(var, sig.args[index])

    def default(index, param, value):
        return _Omitted(value)

    def stararg(index, param, variables):
        tuple_ty = sig.args[index]
        return tuple(lowerer.load_cast(v, t) for v, t in zip(variables, tuple_ty.types))

    return list(fold_arguments(pysig, list(expr.args), kws, normal, default, stararg))


#: The state a callee has of its own; every other attribute is the kernel's (the root
#: Lowerer's), read and written through to it: builder, module, parameters, flags...
PER_FUNCTION = frozenset({
    "root", "func_ir", "typemap", "calltypes", "argtypes", "typed", "args", "name",
    "slots", "values", "statics", "literal_step", "kir_blocks", "loc", "result", "static_result",
    "exit", "const_args",
})  # fmt: skip


# The root's attributes read for almost every statement (builder, mode, source files):
# also kept in the callee's own __dict__, which spares __getattr__ (~0.6 ms of a kernel
# inlining seven calls). The root sets them once, in Lowerer.__init__; __setattr__ keeps
# both copies in step should one be set again.
_ALIASED = ("b", "mode", "files")


class InlineLowerer(Lowerer):
    """Lowers one callee's typed IR into the caller's function (see the module docstring).

    Not Lowerer.__init__: only the names in PER_FUNCTION are the callee's own;
    any other attribute (the builder, the module, kernel-wide flags and tables,
    including ones added to Lowerer later) is read from and written to the root
    Lowerer, so state a callee sets for the whole kernel is not lost.
    """

    def __init__(self, parent, typed, args, name):
        local = {
            "root": parent.root,
            "func_ir": typed.func_ir,
            "typemap": typed.typemap,
            "calltypes": typed.calltypes,
            "argtypes": tuple(typed.argtypes),
            "typed": typed,
            "args": args,
            "name": name,
            "slots": {},
            "values": {},
            "statics": {},
            "literal_step": {},
            "kir_blocks": {},
            "loc": parent.loc,
            "result": None,
            "static_result": _NOTHING,
            "exit": None,
            "const_args": (),
        }
        local.update((attr, getattr(parent.root, attr)) for attr in _ALIASED)
        self.__dict__.update(local)

    def __getattr__(self, attr):  # only for names not set on the callee itself
        return getattr(self.__dict__["root"], attr)

    def __setattr__(self, attr, value):
        if attr in PER_FUNCTION:
            self.__dict__[attr] = value
        else:
            setattr(self.__dict__["root"], attr, value)
            if attr in _ALIASED:
                self.__dict__[attr] = value

    def run(self):
        b, root = self.b, self.root
        root.inline_count += 1
        prefix = f"{self.name}.{root.inline_count}"
        blocks = self.func_ir.blocks
        first = min(blocks)
        order = sorted(self.reachable(first))
        lay = layout(self.typed.return_type, self.mode, self.loc)
        if lay is not None:
            self.result = self._alloc(lay)
        self.kir_blocks = {label: b.create_block(f"{prefix}.L{label}") for label in order}
        exit_block = self.exit = b.create_block(f"{prefix}.ret")
        b.br(self.kir_blocks[first])
        root.inline_depth += 1
        try:
            for label in order:
                b.set_block(self.kir_blocks[label])
                for stmt in blocks[label].body:
                    self.set_loc(stmt.loc)
                    self.lower_stmt(stmt)
                if not b.is_terminated(self.kir_blocks[label]):
                    raise internal(f"block {label} of '{self.name}' has no terminator", self.loc)
        finally:
            root.inline_depth -= 1
        b.set_block(exit_block)
        if self.result is not None:
            return self._load_tree(self.result)
        return None if self.static_result is _NOTHING else self.static_result

    def lower_arg(self, arg, ty, loc):
        value = self.args[arg.index]
        arg_ty = self.argtypes[arg.index]
        if isinstance(value, _Omitted) or isinstance(arg_ty, types.Omitted):
            default = value.value if isinstance(value, _Omitted) else arg_ty.value
            return self.constant(default, ty, loc)
        if isinstance(value, _Spilled):
            value = self._load_tree(value.slots)
        return self.cast(value, arg_ty, ty, loc)

    def lower_stmt(self, stmt):
        if not isinstance(stmt, ir.Return):
            return super().lower_stmt(stmt)
        loc = stmt.loc
        ty = self.typemap[stmt.value.name]
        value = self.load_var(stmt.value.name)
        if self.result is not None:
            self._store_tree(self.result, self.cast(value, ty, self.typed.return_type, loc))
        elif not isinstance(ty, (types.NoneType, types.Omitted)):
            # A compile-time value (an array argument...): the same object on every path.
            if self.static_result is not _NOTHING and self.static_result is not value:
                raise unsupported(
                    f"device function '{self.name}' returning different {ty} values", loc
                )
            self.static_result = value
        self.b.br(self.exit)
        return None


_NOTHING = object()
