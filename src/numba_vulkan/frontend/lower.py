"""The front end's driver: Numba typed IR (no phis) -> KIR in CFG form.

Each Numba block becomes a KIR block, after a fresh entry block that holds
the parameters and local variables and branches to Numba's first block.
Values never cross blocks. A Numba variable of a value type is held as its
KIR value (`values`) while only the KIR block that defined it reads it (most
of Numba's temporaries); once another block reads it, or another block
defines it again, it lives in KIR local variables (`slots`: one per scalar; a
tuple, range, iterator or iternext pair is a tree of them), given its value
at the end of the block that defined it (`var_slots`), stored at each later
definition and loaded at each use. So the optimiser receives no store/load
pair for a temporary. Variables of compile-time types (arrays, functions,
modules, classes, None) are kept here in Python (`statics`) and produce no
KIR at all.

Casts follow Numba's lowering: a value is converted from its own type to the
type of the variable it is assigned to, and operands to the argument types of
the call's signature (calltypes).

Expressions are lowered through EXPRESSIONS, a table of handlers by ir.Expr op
that exprs.py fills when it is imported (the package imports it). exprs.py
sits above this module: a call may inline a device function, which a Lowerer
lowers (inline.py); the table is how the driver reaches back up.
"""

import enum

import numpy as np
from numba.core import ir, types

from .. import _core, bfloat16_host, narrowing
from ..typing.bfloat16 import is_bfloat16
from ..typing.matrix import Fragment
from . import arith, bfloat16, float16, grid
from .array_exprs import written_in_place
from .arrays import ArrayArg, index_values, static_index_values
from .errors import internal, unsupported
from .packed import declare_packed, packable
from .types import compute_kind, exact_kind, is_scalar_type
from .views import View, assign_into_view, assign_view, copy_view, index_items

Op = _core.Op

#: ir.Expr op -> handler(lowerer, expr, target variable name) returning (value, Numba
#: type of that value): exprs.py's handlers, registered there.
EXPRESSIONS = {}

#: ir.Expr ops no handler takes, with what the refusal names.
UNSUPPORTED_EXPRS = {
    "build_list": "building a list (use a tuple, or nv.local.array)",
    "build_set": "building a set",
    "build_map": "building a dict",
    "make_function": "defining an inner function (closure)",
    "list_comprehension": "a list comprehension",
    "phi": "phi nodes (the IR must not be in SSA form)",
}


def layout(ty, mode, loc=None):
    """The tree of KIR kinds holding a value of Numba type `ty`; None for compile-time types."""
    if is_scalar_type(ty):
        return compute_kind(ty, mode, loc)
    if isinstance(ty, types.Complex):  # (real, imag): complexnum.py
        from .complexnum import part_kind

        k = part_kind(ty, mode, loc)
        return (k, k)
    if isinstance(ty, types.BaseTuple):
        parts = tuple(layout(t, mode, loc) for t in ty.types)
        if parts and all(isinstance(t, types.Array) for t in ty.types):
            return None  # a tuple of arrays: a compile-time tuple of ArrayArgs (statics)
        if any(isinstance(t, Fragment) for t in ty.types):
            raise unsupported(f"tuples holding matrix fragments ({ty})", loc)
        if any(p is None for p in parts):
            raise unsupported(f"tuples holding {ty} (tuples mixing arrays and values)", loc)
        return parts
    if isinstance(ty, types.RangeType):
        k = compute_kind(ty.dtype, mode, loc)
        return (k, k, k)
    if isinstance(ty, types.RangeIteratorType):
        k = compute_kind(ty.yield_type, mode, loc)
        return (k, k, k)
    if isinstance(ty, types.Pair):
        first = layout(ty.first_type, mode, loc)
        if first is None:  # (view, valid) of an N-d array's iteration: compile-time
            return None
        return (first, layout(ty.second_type, mode, loc))
    if isinstance(ty, types.SliceType):  # (start, stop, step) as Numba builds it: views.py
        k = compute_kind(types.intp, mode, loc)
        return (k, k, k)
    return None


def _array_tuple(ty):
    """Whether `ty` is a (named) tuple of arrays, which kernels take as arguments."""
    return isinstance(ty, types.BaseTuple) and len(ty.types) > 0 and all(
        isinstance(t, types.Array) for t in ty.types
    )


def _is_unroll_unreachable(stmt):
    """Whether `stmt` is the ``raise RuntimeError("Unreachable")`` that Numba's literal_unroll
    pass writes (from generated source, "<string>") after the switch over a tuple's items."""
    return (
        isinstance(stmt, ir.StaticRaise)
        and stmt.exc_class is RuntimeError
        and stmt.exc_args == ("Unreachable",)
        and getattr(stmt.loc, "filename", None) == "<string>"
    )


def _is_view_index(lowerer, stmt, arr_ty):
    """Whether setitem `stmt` stores into a view (a slice, or fewer indices than dimensions)."""
    if isinstance(stmt, ir.StaticSetItem) and stmt.index_var is None:
        items = stmt.index if isinstance(stmt.index, tuple) else (stmt.index,)
        return any(isinstance(x, slice) for x in items) or len(items) < arr_ty.ndim
    var = stmt.index_var if isinstance(stmt, ir.StaticSetItem) else stmt.index
    ty = lowerer.typemap[var.name]
    items = ty.types if isinstance(ty, types.BaseTuple) else (ty,)
    return any(isinstance(t, types.SliceType) for t in items) or len(items) < arr_ty.ndim


class Lowerer:
    def __init__(self, func_ir, typemap, calltypes, argtypes, mode, name):
        self.func_ir = func_ir
        self.typemap = typemap
        self.calltypes = calltypes
        self.argtypes = tuple(argtypes)
        self.mode = mode
        self.module = _core.KirModule(name)
        self.b = _core.KirBuilder(self.module)
        self.slots = {}  # Numba variable -> tree of KIR variable pointers
        self.values = {}  # Numba variable -> (tree of KIR values, the block defining them)
        self.statics = {}  # Numba variable -> compile-time object (ArrayArg, function, module...)
        self.literal_step = {}  # range / iterator variable -> its step if a literal, else None
        # The kernel's own range loops (frontend/loops.py): range / iterator variable ->
        # its compile-time trip count or None; header label -> the same.
        self.range_trips = {}
        self.loop_trips = {}
        self.label = None  # the label of the block being lowered
        self.params = []  # per argument: ArrayArg, or (param value, Numba type)
        self.grid_params = {}  # hidden grid parameters (frontend/grid.py): name -> 3 indices
        self.files = {}
        self.loc = None
        # Device functions (frontend/inline.py): inlined callees share this root's state.
        self.root = self
        self.inline_count = 0
        self.inline_depth = 0
        self.device_calls = []  # (user's jitted function, call location), for option checks
        self.callees = []  # TypedKernel of each inlined callee
        # Exceptions and print (frontend/exceptions.py, printing.py, status.py).
        self.kernel_name = name
        self.boundscheck = False
        self.error_model = "numpy"
        self.sites = []  # RaiseSite and PrintSite of the kernel (numba_vulkan/sites.py)
        self.status_param = None  # the hidden status.addr parameter, once declared
        self.prints = False
        # The group loop (frontend/grid.py): its counter (a KIR variable) and latch block
        self.group_loop = False
        self.group_count = None
        self.group_latch = None
        self.shared_memory = False  # a shared array was made (grid.needs_whole_groups)

    # ------------------------------------------------------------ driver

    def run(self):
        b = self.b
        b.create_block("entry")
        self.declare_arguments()
        blocks = self.func_ir.blocks
        first = min(blocks)
        order = sorted(self.reachable(first))
        kir_blocks = {label: b.create_block(f"L{label}") for label in order}
        self.kir_blocks = kir_blocks
        if self.group_loop:
            grid.begin_group_loop(self, kir_blocks[first])
        else:
            b.br(kir_blocks[first])
        for label in order:
            b.set_block(kir_blocks[label])
            self.label = label
            for stmt in blocks[label].body:
                self.set_loc(stmt.loc)
                self.lower_stmt(stmt)
            if not b.is_terminated(kir_blocks[label]):
                raise internal(f"block {label} has no terminator", self.loc)

    def end_invocation(self):
        """The kernel's invocation ends here: it returns, or in a group loop goes on to its
        next workgroup (grid.py)."""
        root = self.root
        if root.group_latch is None:
            self.b.ret()
        else:
            self.b.br(root.group_latch)

    def reachable(self, first):
        seen, stack = set(), [first]
        while stack:
            label = stack.pop()
            if label in seen:
                continue
            seen.add(label)
            term = self.func_ir.blocks[label].terminator
            if isinstance(term, ir.Jump):
                stack.append(term.target)
            elif isinstance(term, ir.Branch):
                stack.extend((term.truebr, term.falsebr))
        return seen

    def set_loc(self, loc):
        self.loc = loc
        if loc is None or loc.filename is None:
            return
        index = self.files.get(loc.filename)
        if index is None:
            index = self.files[loc.filename] = self.module.add_file(loc.filename)
        self.b.set_loc(index, loc.line or 0)

    def declare_arguments(self):
        loc = self.func_ir.loc
        names = list(self.func_ir.arg_names)
        for i, ty in enumerate(self.argtypes):
            name = names[i] if i < len(names) else f"arg{i}"
            if isinstance(ty, types.Array):
                self.params.append(ArrayArg(self, name, ty, loc))
            elif isinstance(ty, types.Record):  # a record scalar: a 1-element array (records.py)
                self.params.append(ArrayArg(self, name, types.Array(ty, 1, "C"), loc))
            elif is_scalar_type(ty):
                # Its slot (kind, offset) follows from these kinds: kir/abi.h. An int64 travels
                # in 32 bits in the 32-bit-index specialisation (the dispatcher takes the
                # 64-bit one for values beyond int32): the narrowing pass then knows its
                # range, so a loop `while n < limit` can count in 32 bits (docs/narrowing.md).
                compute = compute_kind(ty, self.mode, loc)
                slot32 = narrowing.int64_in_32_bit_slot(ty, self.mode)
                index = self.module.add_scalar_arg(name, exact_kind(ty), compute, slot32)
                value = self.b.param(index)
                if slot32:
                    value = arith.convert(self.b, value, compute)
                self.params.append((value, ty))
            elif _array_tuple(ty):  # a tuple of arrays: each item an array argument
                arrays = tuple(ArrayArg(self, f"{name}[{k}]", t, loc)
                               for k, t in enumerate(ty.types))  # fmt: skip
                self.params.append((arrays, ty))
            elif packable(ty):  # tuples, namedtuples, complex: flattened scalars (packed.py)
                self.params.append((declare_packed(self, name, ty, loc), ty))
            else:
                raise unsupported(f"kernel arguments of type {ty} (argument '{name}')", loc)

    # ------------------------------------------------------------ variables

    def load_var(self, name):
        if name in self.statics:
            return self.statics[name]
        held = self.values.get(name)
        if held is not None and held[1] == self.b.current_block:
            return held[0]
        return self._load_tree(self.var_slots(name))

    def var_slots(self, name):
        """The KIR variables of Numba variable `name`, created where it has none yet: given
        its value at the end of the block that defined it, if it was held as a value (read
        before any definition, as in a loop's next iteration, they are left undefined)."""
        slot = self.slots.get(name)
        if slot is None:
            slot = self.slots[name] = self._alloc(self._layout_of(name))
            held = self.values.pop(name, None)
            if held is not None:
                self._store_tree(slot, held[0], at_end_of=held[1])
        return slot

    def store_var(self, name, value):
        ty = self.typemap[name]
        lay = layout(ty, self.mode, self.loc)
        if lay is None:
            if isinstance(ty, types.Array) and isinstance(value, ArrayArg):
                value = self._array_value(name, ty, value)
            old = self.statics.get(name, value)
            if isinstance(old, ArrayArg) and old is not value:
                raise unsupported(
                    f"assigning different arrays to one variable ('{name}')", self.loc
                )
            if isinstance(ty, Fragment) and old is not value:
                raise unsupported(
                    f"assigning different matrix fragments to one variable ('{name}')", self.loc
                )
            self.statics[name] = value
            return
        if name not in self.slots:
            held = self.values.get(name)
            block = self.b.current_block
            if held is None or held[1] == block:  # the first definition, or one more in its block
                self.values[name] = (value, block)
                return
        self._store_tree(self.var_slots(name), value)

    def _array_value(self, name, ty, value):
        """What variable `name` of array type `ty` holds after being assigned `value`: the
        array itself where `name` has one definition and `value` is not a view; else a View
        of the variable's own (views.py), overwritten by each later assignment."""
        old = self.statics.get(name)
        if isinstance(old, View) and old.owner == name:
            assign_view(self, old, value, self.loc)
            return old
        several = len(self.func_ir._definitions.get(name, ())) > 1
        if isinstance(value, View) or (several and type(value) is ArrayArg):
            view = copy_view(self, value, ty, self.loc)
            view.owner = name
            return view
        return value

    def load_cast(self, var, to_ty):
        """Load Numba variable `var` and cast it to `to_ty`."""
        return self.cast(self.load_var(var.name), self.typemap[var.name], to_ty, self.loc)

    def _layout_of(self, name):
        lay = layout(self.typemap[name], self.mode, self.loc)
        if lay is None:
            raise internal(f"variable '{name}' used before its definition", self.loc)
        return lay

    def _alloc(self, lay):
        if isinstance(lay, tuple):
            return tuple(self._alloc(x) for x in lay)
        return self.b.var(lay)

    def _load_tree(self, slot):
        if isinstance(slot, tuple):
            return tuple(self._load_tree(s) for s in slot)
        return self.b.load(slot)

    def _store_tree(self, slot, value, at_end_of=None):
        """Store the tree `value` into the tree of variables `slot`: here, or at the end of
        block `at_end_of` (before its terminator)."""
        if isinstance(slot, tuple):
            if not isinstance(value, tuple) or len(value) != len(slot):
                raise internal("a value does not match its variable's layout", self.loc)
            for s, v in zip(slot, value):
                self._store_tree(s, v, at_end_of)
        elif at_end_of is None:
            self.b.store(slot, value)
        else:
            self.b.store_at_end(at_end_of, slot, value)

    def cast(self, value, from_ty, to_ty, loc):
        """Convert `value` of Numba type `from_ty` to Numba type `to_ty`."""
        if from_ty == to_ty:
            return value
        if isinstance(to_ty, types.Complex) and (
            is_scalar_type(from_ty) or isinstance(from_ty, types.Complex)
        ):
            from . import complexnum

            return complexnum.cast(self, value, from_ty, to_ty, loc)
        if is_scalar_type(to_ty):
            if not is_scalar_type(from_ty):
                raise unsupported(f"converting {from_ty} to {to_ty}", loc)
            half = float16.cast(self.b, value, from_ty, to_ty)  # rounded in software
            if half is not None:
                return half
            brain = bfloat16.cast(self.b, value, from_ty, to_ty)  # rounded in software
            if brain is not None:
                return brain
            b = bfloat16.builder(self, from_ty)  # its subnormals
            return arith.convert(b, value, compute_kind(to_ty, self.mode, loc))
        if isinstance(to_ty, types.BaseTuple) and isinstance(from_ty, types.BaseTuple):
            if len(to_ty.types) != len(from_ty.types):
                raise unsupported(f"converting {from_ty} to {to_ty}", loc)
            return tuple(
                self.cast(v, f, t, loc) for v, f, t in zip(value, from_ty.types, to_ty.types)
            )
        if layout(to_ty, self.mode, loc) is None or type(from_ty) is type(to_ty):
            return value
        raise unsupported(f"converting {from_ty} to {to_ty}", loc)

    def static_int(self, var):
        """The compile-time int value of variable `var` (a literal or a constant), or None."""
        ty = self.typemap.get(var.name)
        if isinstance(ty, types.IntegerLiteral):
            return ty.literal_value
        try:
            defn = self.func_ir.get_definition(var)
        except KeyError:  # no single definition
            return None
        if isinstance(defn, (ir.Const, ir.Global, ir.FreeVar)):
            v = defn.value
            if isinstance(v, int) and not isinstance(v, bool):
                return v
        return None

    def constant(self, value, ty, loc):
        """A KIR value (tree) for the Python constant `value` of Numba type `ty`."""
        if is_scalar_type(ty):
            if isinstance(value, enum.Enum):  # Color.red: held as its value
                value = value.value
            if float16.is_half(ty):  # a float16's value: rounded by NumPy, ties to even
                with np.errstate(over="ignore"):
                    value = float(np.float16(value))
            elif is_bfloat16(ty):  # the same for a bfloat16's (ml_dtypes rounds it)
                value = float(bfloat16_host.scalar_type()(value))
            return arith.const(self.b, compute_kind(ty, self.mode, loc), value)
        if isinstance(ty, types.Complex):
            from .complexnum import constant, part_kind

            return constant(self.b, value, part_kind(ty, self.mode, loc))
        if isinstance(ty, types.BaseTuple):
            return tuple(self.constant(v, t, loc) for v, t in zip(value, ty.types))
        if isinstance(ty, types.Array):
            from .constants import constant_array  # frozen now, as Numba does

            return constant_array(self, value, ty, loc)
        if layout(ty, self.mode, loc) is None:
            return value
        raise unsupported(f"constants of type {ty}", loc)

    # ------------------------------------------------------------ statements

    def lower_stmt(self, stmt):
        b = self.b
        loc = stmt.loc
        if self.root.boundscheck or self.root.error_model == "python":
            from .exceptions import precheck

            precheck(self, stmt)
        if isinstance(stmt, ir.Assign):
            self.lower_assign(stmt)
        elif isinstance(stmt, (ir.SetItem, ir.StaticSetItem)):
            self.lower_setitem(stmt)
        elif isinstance(stmt, ir.Branch):
            cond_ty = self.typemap[stmt.cond.name]
            cond = self.load_var(stmt.cond.name)
            if not isinstance(cond_ty, types.Boolean):
                if not is_scalar_type(cond_ty):
                    raise unsupported(f"the truth value of {cond_ty}", loc)
                cond = arith.truth(b, cond)
            b.condbr(cond, self.kir_blocks[stmt.truebr], self.kir_blocks[stmt.falsebr])
        elif isinstance(stmt, ir.Jump):
            b.br(self.kir_blocks[stmt.target])
        elif isinstance(stmt, ir.Return):
            ty = self.typemap.get(stmt.value.name)
            if not isinstance(ty, (types.NoneType, types.Omitted)) and ty is not None:
                raise unsupported("returning a value from a kernel", loc)
            self.end_invocation()
        elif isinstance(stmt, ir.Del):
            pass
        elif _is_unroll_unreachable(stmt):
            b.unreachable()  # literal_unroll's switch default: no index reaches it
        elif isinstance(stmt, (ir.Raise, ir.StaticRaise, ir.DynamicRaise)):
            from .exceptions import lower_raise

            lower_raise(self, stmt)  # records the exception and returns
        elif isinstance(stmt, (ir.TryRaise, ir.StaticTryRaise, ir.DynamicTryRaise)):
            raise unsupported("try/except", loc)
        elif isinstance(stmt, ir.Print):
            from .printing import lower_print

            lower_print(self, stmt)
        elif isinstance(stmt, (ir.EnterWith, ir.PopBlock)):
            raise unsupported("with statements", loc)
        elif isinstance(stmt, ir.SetAttr):
            self._set_record_field(stmt.target, stmt.attr, stmt.value, loc)
        elif isinstance(stmt, ir.DelItem):
            raise unsupported("del statements", loc)
        else:
            raise unsupported(f"the statement '{type(stmt).__name__}'", loc)

    def lower_assign(self, stmt):
        target, value, loc = stmt.target.name, stmt.value, stmt.loc
        ty = self.typemap[target]
        if isinstance(value, (ir.Const, ir.Global, ir.FreeVar)):
            val = self.constant(value.value, ty, loc)
        elif isinstance(value, ir.Arg):
            val = self.lower_arg(value, ty, loc)
        elif isinstance(value, ir.Var):
            val = self.cast(self.load_var(value.name), self.typemap[value.name], ty, loc)
        elif isinstance(value, ir.Expr):
            val, val_ty = self.lower_expr(value, target)
            val = self.cast(val, val_ty, ty, loc)
        else:
            raise unsupported(f"assigning {type(value).__name__}", loc)
        self.store_var(target, val)

    def lower_arg(self, arg, ty, loc):
        param = self.params[arg.index]
        if isinstance(param, ArrayArg):
            if isinstance(self.argtypes[arg.index], types.Record):
                from .records import record_argument

                return record_argument(self, param)
            return param
        value, arg_ty = param
        if not isinstance(value, tuple):  # packed arguments are in compute kinds already
            value = arith.convert(self.b, value, compute_kind(arg_ty, self.mode, loc))
        return self.cast(value, arg_ty, ty, loc)

    def lower_setitem(self, stmt):
        loc = stmt.loc
        arr_ty = self.typemap[stmt.target.name]
        if isinstance(arr_ty, types.Record) and isinstance(stmt, ir.StaticSetItem):
            from .records import static_field_name

            name = static_field_name(self, stmt, arr_ty)
            if name is not None:  # r['x'] = v (or r[0] = v: the first field)
                self._set_record_field(stmt.target, name, stmt.value, loc)
                return
        if isinstance(arr_ty, Fragment):  # frag[t] = v (frontend/matrix.py)
            from . import matrix

            index = (self.load_var(stmt.index.name) if isinstance(stmt, ir.SetItem)
                     else arith.const(self.b, _core.Kind.i64, stmt.index))
            matrix.setitem(self, self.statics[stmt.target.name], index,
                           self.load_var(stmt.value.name), self.typemap[stmt.value.name], loc)
            return
        if not isinstance(arr_ty, types.Array):
            raise unsupported(f"item assignment on {arr_ty}", loc)
        arr = self.statics[stmt.target.name]
        sig = self.calltypes.get(stmt)
        value_ty = self.typemap[stmt.value.name]
        if _is_view_index(self, stmt, arr_ty):  # a[1:3] = x, a[i] = row of a 2-d a: views.py
            if written_in_place(self, stmt):  # out[idx] op= y: the operator wrote it
                return

            items = index_items(self, stmt, loc)
            assign_into_view(self, arr, items, stmt.value, loc)
            return
        storable = is_scalar_type(value_ty) or isinstance(value_ty, types.Complex)
        if isinstance(value_ty, types.Record):  # dst[j] = src[i]: field by field
            from .records import RecordRef, element

            source = self.statics.get(stmt.value.name)
            if not isinstance(source, RecordRef) or value_ty != arr_ty.dtype:
                raise unsupported(f"assigning a {value_ty} to an element of {arr_ty} "
                                  "(only a record of the same dtype)", loc)  # fmt: skip
            element(self, arr, self._indices(stmt, arr, loc), loc).copy_from(self, source, loc)
            return
        if not storable:
            raise unsupported(f"storing {value_ty} into an array element (slices, arrays)", loc)
        value = self.load_var(stmt.value.name)
        if sig is not None and (
            is_scalar_type(sig.args[2]) or isinstance(sig.args[2], types.Complex)
        ):
            value = self.cast(value, value_ty, sig.args[2], loc)
            value_ty = sig.args[2]
        value = self.cast(value, value_ty, arr_ty.dtype, loc)
        indices = self._indices(stmt, arr, loc)
        arr.store(self.b, indices, value, loc)

    def _set_record_field(self, target, name, value_var, loc):
        """r.x = v / r['x'] = v on a record reference (frontend/records.py)."""
        from .records import RecordRef

        ref = self.statics.get(target.name)
        if not isinstance(ref, RecordRef):
            raise unsupported(f"setting attribute '{name}' of {self.typemap[target.name]}", loc)
        value_ty = self.typemap[value_var.name]
        if isinstance(value_ty, types.Array):  # into a sub-array field: records.FieldArray
            ref.set_field(self, name, self.statics.get(value_var.name), value_ty, loc)
            return
        if not is_scalar_type(value_ty) and not isinstance(value_ty, types.Complex):
            raise unsupported(f"storing {value_ty} into a record field", loc)
        ref.set_field(self, name, self.load_var(value_var.name), value_ty, loc)

    def _indices(self, node, arr, loc):
        """Index values of a getitem/setitem node (static or not) on ArrayArg `arr`."""
        if isinstance(node, ir.StaticSetItem) or (
            isinstance(node, ir.Expr) and node.op == "static_getitem"
        ):
            if node.index_var is not None:
                return index_values(
                    self, arr, node.index_var, self.typemap[node.index_var.name], loc
                )
            return static_index_values(self, node.index, loc)
        return index_values(self, arr, node.index, self.typemap[node.index.name], loc)

    # ------------------------------------------------------------ expressions

    def lower_expr(self, expr, target):
        """Lower an ir.Expr; returns (value, Numba type of the value)."""
        handler = EXPRESSIONS.get(expr.op)
        if handler is None:
            what = UNSUPPORTED_EXPRS.get(expr.op, f"the expression '{expr.op}'")
            raise unsupported(what, expr.loc)
        return handler(self, expr, target)
