"""``numba.extending.intrinsic`` calls: the LLVM IR their code generator writes, in KIR.

The code generator runs into a scratch llvmlite function (llvm_codegen.py);
its instructions are translated here, one by one, into the caller's KIR:
integer and float arithmetic, comparisons, select, casts, bitcasts, tuples
(insertvalue/extractvalue), calls of the ``llvm.*`` functions in llvm_ops.py,
and branches and phis. Anything else (memory: alloca, load, store, GEP;
inline assembly; calls of other functions; vectors; atomics; switch) is
refused with VulkanUnsupportedError naming the intrinsic, the LLVM
instruction and the kernel's line: never a guess.

Where LLVM leaves a result undefined (poison or UB), the translation picks one
answer, documented in docs/device-functions.md: integer division or remainder
by zero gives 0 (numba.njit's process would die of SIGFPE), INT_MIN / -1
wraps (remainder 0); a shift by the width or more takes the count modulo 32
(8 to 32 bits) or 64, as x86 and so numba.njit do, and a *constant* count that
large is refused (LLVM folds it to poison). nsw/nuw/exact and fast-math flags
only license undefined behaviour, so results are computed exactly.

KIR values do not cross blocks; where the code generator made several blocks
(or a helper here makes some, as ``frem`` does), every value is kept in a KIR
variable too and loaded where another block uses it; phis become variables
stored on each incoming edge.
"""

from llvmlite import ir as llvm
from numba.core import types

from .. import _core
from . import arith, llvm_scalar
from .arith import const
from .errors import internal, unsupported
from .llvm_codegen import run_codegen
from .llvm_ops import canon, int_kind, signed_const
from .mathlib import denormals
from .types import compute_kind

K = _core.Kind
Op = _core.Op


def lower_intrinsic(lowerer, expr, fn, fn_ty, sig):
    """Lower a call of the @intrinsic `fn`; returns (value tree, Numba return type)."""
    name = getattr(fn, "_name", None) or getattr(fn, "__name__", "?")
    loc = expr.loc
    if expr.kws or expr.vararg or len(expr.args) != len(sig.args):
        raise unsupported(
            f"keyword, star or default arguments in calls to the @intrinsic '{name}'", loc
        )
    try:
        codegen = fn_ty.get_impl_key(sig)
    except (KeyError, AttributeError):
        raise internal(f"no code generator recorded for the @intrinsic '{name}'", loc)
    llfn, last, result = run_codegen(codegen, sig, name, loc)
    t = Translator(lowerer, name, loc, llfn)
    args = []
    for var, ty, llarg in zip(expr.args, sig.args, llfn.args):
        ty = types.unliteral(ty)
        args.append(t.to_llvm(lowerer.load_cast(var, ty), ty, llarg.type))
    value = t.run(args, last, result)
    if result is None:
        return None, sig.return_type
    return t.from_llvm(value, types.unliteral(sig.return_type)), sig.return_type


def _leaves(llty):
    if isinstance(llty, llvm.ArrayType):
        return [llty.element] * llty.count
    if isinstance(llty, llvm.LiteralStructType):
        return list(llty.elements)
    return None


_INT_OTHER = ("shl", "lshr", "ashr", "sdiv", "udiv", "srem", "urem")


class Translator:
    """Translates one scratch function into the lowerer's current KIR block (and new ones)."""

    def __init__(self, lowerer, name, loc, fn):
        self.lo = lowerer
        self.b = lowerer.b
        # The math library's builder for frem and llvm.sqrt/floor/...: flush-safe where the
        # device flushes float32 subnormals (mathlib/denormals.py), as in kernel code; the
        # plain float ops (fadd, fcmp...) are the device's own, as `x + y` is.
        self.lib = denormals.for_lowerer(lowerer)
        self.name = name
        self.loc = loc
        self.fn = fn
        self.inst = None  # the LLVM instruction being translated, for refusals
        self.defs = {}  # id(LLVM value) -> (tree, KIR block, variables or None)
        insts = [i for block in fn.blocks for i in block.instructions]
        self.spill = len(fn.blocks) > 1 or any(i.opname == "frem" for i in insts)

    # ------------------------------------------------------------ errors and types

    def refuse(self, what):
        where = f" (LLVM: `{str(self.inst).strip()}`)" if self.inst is not None else ""
        return unsupported(f"{what} in the @intrinsic '{self.name}'{where}", self.loc)

    def kind(self, llty):
        """The KIR kind of a scalar LLVM type (llvm_ops: canonical integers)."""
        mode = self.lo.mode
        if isinstance(llty, llvm.IntType):
            k = int_kind(llty.width)
            if k is None:
                raise self.refuse(f"the LLVM type {llty}")
            if k == K.i64 and mode.ints:
                raise self.refuse("64-bit integers in a kernel compiled with narrow='ints'")
            return k
        if isinstance(llty, llvm.FloatType):
            return K.f32
        if isinstance(llty, llvm.DoubleType):
            if mode.floats:
                raise self.refuse("float64 in a kernel that computes float64 as float32")
            return K.f64
        raise self.refuse(f"the LLVM type {llty}")

    # ------------------------------------------------------------ values

    def const(self, llty, value):
        leaves = _leaves(llty)
        if leaves is not None:
            items = value if isinstance(value, (list, tuple)) else [None] * len(leaves)
            return tuple(self.const(t, getattr(v, "constant", v)) for t, v in zip(leaves, items))
        k = self.kind(llty)
        if value is None or value is llvm.Undefined:  # zeroinitializer; undef: any value will do
            value = 0
        if isinstance(value, llvm.Value):
            raise self.refuse(f"the constant expression `{value}`")
        if isinstance(llty, llvm.IntType):
            if llty.width == 1:
                return const(self.b, k, int(value) & 1)
            return const(self.b, k, signed_const(llty.width, value))
        return const(self.b, k, float(value))

    def use(self, v):
        if type(v) is llvm.Constant:
            return self.const(v.type, v.constant)
        d = self.defs.get(id(v))
        if d is None:
            raise self.refuse(f"the operand `{v}`")
        tree, block, slots = d
        if block == self.b.current_block:
            return tree
        if slots is None:
            raise internal(f"@intrinsic '{self.name}': a value crosses KIR blocks", self.loc)
        return self.lo._load_tree(slots)

    def define(self, value, tree):
        slots = None
        if self.spill:
            slots = self._slots(tree)
            self.lo._store_tree(slots, tree)
        self.defs[id(value)] = (tree, self.b.current_block, slots)

    def _slots(self, tree):
        if isinstance(tree, tuple):
            return tuple(self._slots(t) for t in tree)
        return self.b.var(self.b.kind(tree))

    # ------------------------------------------------------------ arguments and results

    def to_llvm(self, value, ty, llty):
        """A front-end value of Numba type `ty` as the canonical KIR tree of LLVM type `llty`."""
        leaves = _leaves(llty)
        if leaves is not None:
            parts = value if isinstance(value, tuple) else (value,)
            tys = ty.types if isinstance(ty, types.BaseTuple) else [ty.underlying_float] * 2
            return tuple(self.to_llvm(v, t, lt) for v, t, lt in zip(parts, tys, leaves))
        k = self.kind(llty)
        v = arith.convert(self.b, value, k)
        return canon(self.b, v, llty.width) if isinstance(llty, llvm.IntType) else v

    def from_llvm(self, tree, ty):
        if isinstance(tree, tuple):
            tys = ty.types if isinstance(ty, types.BaseTuple) else [ty.underlying_float] * 2
            return tuple(self.from_llvm(v, t) for v, t in zip(tree, tys))
        return arith.convert(self.b, tree, compute_kind(ty, self.lo.mode, self.loc))

    # ------------------------------------------------------------ blocks

    def run(self, args, last, result):
        b = self.b
        for arg, tree in zip(self.fn.args, args):
            self.define(arg, tree)
        blocks = list(self.fn.blocks)
        root = self.lo.root
        n = getattr(root, "intrinsic_count", 0)
        root.intrinsic_count = n + 1
        self.kir = {id(blocks[0]): b.current_block}
        for i, block in enumerate(blocks[1:], 1):
            self.kir[id(block)] = b.create_block(f"intrinsic.{self.name}.{n}.B{i}")
        self.phi_slots = {}
        for block in blocks:
            for inst in block.instructions:
                if isinstance(inst, llvm.PhiInstr):
                    self.inst = inst
                    self.phi_slots[id(inst)] = self._slots(self._zero(inst.type))
        self.ends = {}
        order = {id(bl): i for i, bl in enumerate(blocks)}
        for block in blocks:
            b.set_block(self.kir[id(block)])
            for inst in block.instructions:
                self.inst = inst
                if isinstance(inst, llvm.PhiInstr):
                    self.define(inst, self.lo._load_tree(self.phi_slots[id(inst)]))
                elif isinstance(inst, (llvm.Branch, llvm.ConditionalBranch)):
                    self._branch(block, inst, order)
                else:
                    self._instruction(inst)
            terminated = block.is_terminated
            if terminated == (block is last):
                self.inst = None
                what = "ends its code in a terminated block" if terminated else \
                    "leaves a block without a terminator"  # fmt: skip
                raise self.refuse(f"a code generator that {what}")
            self.ends[id(block)] = b.current_block
        b.set_block(self.ends[id(last)])
        self.inst = None
        return None if result is None else self.use(result)

    def _zero(self, llty):
        leaves = _leaves(llty)
        if leaves is not None:
            return tuple(self._zero(t) for t in leaves)
        return const(self.b, self.kind(llty), 0)

    def _branch(self, block, inst, order):
        b = self.b
        targets = inst.operands[1:] if isinstance(inst, llvm.ConditionalBranch) else inst.operands
        cond = self.use(inst.operands[0]) if isinstance(inst, llvm.ConditionalBranch) else None
        if len(targets) == 2 and targets[0] is targets[1]:
            targets = targets[:1]
            cond = None
        for target in targets:
            phis = [i for i in target.instructions if isinstance(i, llvm.PhiInstr)]
            incoming = []
            for phi in phis:
                values = [v for v, pred in phi.incomings if pred is block]
                if not values:
                    raise internal(f"@intrinsic '{self.name}': a phi without this edge", self.loc)
                incoming.append(self.use(values[0]))
            for phi, value in zip(phis, incoming):  # loads first: phis are parallel copies
                self.lo._store_tree(self.phi_slots[id(phi)], value)
        if cond is None:
            b.br(self.kir[id(targets[0])])
        else:
            b.condbr(cond, self.kir[id(targets[0])], self.kir[id(targets[1])])

    # ------------------------------------------------------------ instructions

    def _instruction(self, inst):
        op = inst.opname
        if isinstance(inst, (llvm.ICMPInstr, llvm.FCMPInstr)):
            value = llvm_scalar.compare(self, inst)
        elif op in llvm_scalar.INT_BINARY or op in _INT_OTHER:
            value = llvm_scalar.int_binary(self, inst)
        elif op in llvm_scalar.FLOAT_BINARY:
            self.kind(inst.type)
            value = self.b.binary(llvm_scalar.FLOAT_BINARY[op], *map(self.use, inst.operands))
        elif op == "frem":
            self.kind(inst.type)
            value = denormals.fmod(self.lib, *map(self.use, inst.operands),
                                   float64=not self.lo.mode.floats)
        elif op == "fneg":
            value = llvm_scalar.fneg(self.b, self.use(inst.operands[0]))
        elif op == "select":
            c, x, y = map(self.use, inst.operands)
            value = self._select(c, x, y)
        elif op in llvm_scalar.CASTS:
            value = llvm_scalar.cast(self, inst)
        elif op == "insertvalue":
            agg, item = self.use(inst.operands[0]), self.use(inst.operands[1])
            value = self._insert(agg, inst.indices, item)
        elif op == "extractvalue":
            value = self.use(inst.operands[0])
            for i in inst.indices:
                value = value[i]
        elif op == "freeze":
            value = self.use(inst.operands[0])
        elif isinstance(inst, llvm.CallInstr):
            value = self._call(inst)
        else:
            raise self.refuse(f"the LLVM instruction '{op}'")
        if value is not None:
            self.define(inst, value)

    def _select(self, c, x, y):
        if isinstance(x, tuple):
            return tuple(self._select(c, a, d) for a, d in zip(x, y))
        return self.b.select(c, x, y)

    def _insert(self, agg, path, value):
        items = list(agg)
        items[path[0]] = value if len(path) == 1 else self._insert(items[path[0]], path[1:], value)
        return tuple(items)

    def _call(self, inst):
        from .llvm_calls import lower_llvm_call

        callee = inst.callee
        if isinstance(callee, llvm.InlineAsm):
            raise self.refuse("inline assembly")
        name = getattr(callee, "name", None)
        if not isinstance(callee, llvm.Function) or not str(name).startswith("llvm."):
            raise self.refuse(f"a call of the function '{name}'")
        return lower_llvm_call(self, name, inst)
