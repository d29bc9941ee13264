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
from . import arith, llvm_ops
from .arith import const
from .errors import internal, unsupported
from .llvm_codegen import run_codegen
from .llvm_ops import canon, from_unsigned, int_kind, signed_const, unsigned
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


_FLOAT_CMP = {"oeq": Op.eq, "ogt": Op.gt, "oge": Op.ge, "olt": Op.lt, "ole": Op.le, "une": Op.ne}
_NOT_FLOAT_CMP = {"ueq": "one", "ugt": "ole", "uge": "olt", "ult": "oge", "ule": "ogt", "uno": "ord"}
_INT_CMP = {"eq": Op.eq, "ne": Op.ne, "sgt": Op.gt, "sge": Op.ge, "slt": Op.lt, "sle": Op.le,
            "ugt": Op.gt, "uge": Op.ge, "ult": Op.lt, "ule": Op.le}  # fmt: skip
_INT_BINARY = {"add": Op.add, "sub": Op.sub, "mul": Op.mul, "and": Op.and_, "or": Op.or_,
               "xor": Op.xor}  # fmt: skip
_FLOAT_BINARY = {"fadd": Op.add, "fsub": Op.sub, "fmul": Op.mul, "fdiv": Op.div}
_BOOL_BINARY = {"add": Op.xor, "sub": Op.xor, "xor": Op.xor, "mul": Op.and_, "and": Op.and_,
                "or": Op.or_}  # fmt: skip
_CASTS = ("trunc", "zext", "sext", "fptosi", "fptoui", "sitofp", "uitofp", "fpext", "fptrunc",
          "bitcast")  # fmt: skip


class Translator:
    """Translates one scratch function into the lowerer's current KIR block (and new ones)."""

    def __init__(self, lowerer, name, loc, fn):
        self.lo = lowerer
        self.b = lowerer.b
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
            if order[id(target)] <= order[id(block)]:
                self.lo.root.inlined_loops = True  # a loop: lavapipe's loop-cap warning
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
            value = self._compare(inst)
        elif op in _INT_BINARY or op in ("shl", "lshr", "ashr", "sdiv", "udiv", "srem", "urem"):
            value = self._int_binary(inst)
        elif op in _FLOAT_BINARY:
            self.kind(inst.type)
            value = self.b.binary(_FLOAT_BINARY[op], *map(self.use, inst.operands))
        elif op == "frem":
            self.kind(inst.type)
            value = arith.fmod(self.b, *map(self.use, inst.operands))
        elif op == "fneg":
            value = self._fneg(self.use(inst.operands[0]))
        elif op == "select":
            c, x, y = map(self.use, inst.operands)
            value = self._select(c, x, y)
        elif op in _CASTS:
            value = self._cast(inst)
        elif op == "insertvalue":
            value = self._insert(self.use(inst.operands[0]), inst.indices, self.use(inst.operands[1]))
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

    def _fneg(self, x):
        """-x by flipping the sign bit: exact for zeros and NaNs on every device."""
        b = self.b
        ik = K.i32 if b.kind(x) == K.f32 else K.i64
        sign = const(b, ik, -(1 << (32 if ik == K.i32 else 64) - 1))
        return b.bitcast(b.kind(x), b.binary(Op.xor, b.bitcast(ik, x), sign))

    def _compare(self, inst):
        b = self.b
        x, y = map(self.use, inst.operands)
        pred = inst.op
        if isinstance(inst, llvm.FCMPInstr):
            self.kind(inst.operands[0].type)
            if pred in ("false", "true"):
                return const(b, K.bool, pred == "true")
            if pred in _NOT_FLOAT_CMP:
                return b.unary(Op.not_, self._fcmp(_NOT_FLOAT_CMP[pred], x, y))
            return self._fcmp(pred, x, y)
        width = inst.operands[0].type.width
        if pred not in _INT_CMP:
            raise self.refuse(f"the comparison '{pred}'")
        if width == 1 and pred not in ("eq", "ne"):
            k = K.i32
            on = -1 if pred[0] == "s" else 1
            x, y = (b.select(v, const(b, k, on), const(b, k, 0)) for v in (x, y))
        elif pred[0] == "u":
            x, y = unsigned(b, x, width), unsigned(b, y, width)
        return b.compare(_INT_CMP[pred], x, y)

    def _fcmp(self, pred, x, y):
        b = self.b
        if pred in _FLOAT_CMP:
            return b.compare(_FLOAT_CMP[pred], x, y)
        if pred == "one":
            return b.binary(Op.or_, b.compare(Op.lt, x, y), b.compare(Op.gt, x, y))
        if pred == "ord":
            return b.binary(Op.and_, b.compare(Op.eq, x, x), b.compare(Op.eq, y, y))
        raise self.refuse(f"the comparison '{pred}'")

    def _int_binary(self, inst):
        b = self.b
        op = inst.opname
        width = inst.type.width if isinstance(inst.type, llvm.IntType) else None
        k = self.kind(inst.type) if width is not None else None
        if width is None:
            raise self.refuse(f"'{op}' on {inst.type}")
        x, y = map(self.use, inst.operands)
        if width == 1:
            if op not in _BOOL_BINARY:
                raise self.refuse(f"'{op}' on i1")
            return b.binary(_BOOL_BINARY[op], x, y)
        if op in _INT_BINARY:
            return canon(b, b.binary(_INT_BINARY[op], x, y), width)
        if op in ("shl", "lshr", "ashr"):
            return self._shift(op, x, y, width, k)
        return self._divide(op, x, y, width, k)

    def _shift(self, op, x, n, width, k):
        b = self.b
        count = self.inst.operands[1]
        if type(count) is llvm.Constant and not 0 <= (int(count.constant or 0) % (1 << width)) < width:
            raise self.refuse(f"a constant shift by {count.constant} of a {width}-bit value "
                              "(poison in LLVM)")  # fmt: skip
        n = b.binary(Op.and_, n, const(b, k, 63 if width == 64 else 31))  # x86's count
        if op == "shl":
            return canon(b, b.binary(Op.shl, x, n), width)
        if op == "ashr":
            return b.binary(Op.shr, x, n)  # canonical values are sign-extended already
        u = unsigned(b, x, width)
        return from_unsigned(b, b.binary(Op.shr, u, arith.convert(b, n, b.kind(u))), width)

    def _divide(self, op, x, y, width, k):
        """sdiv/udiv/srem/urem: by zero gives 0; INT_MIN / -1 wraps to INT_MIN, rem 0."""
        b = self.b
        signed = op[0] == "s"
        if not signed:
            x, y = unsigned(b, x, width), unsigned(b, y, width)
        dk = b.kind(x)
        zero = b.compare(Op.eq, y, const(b, dk, 0))
        bad = zero
        if signed and width >= 32:
            low = -(1 << (width - 1))
            overflow = b.binary(Op.and_, b.compare(Op.eq, x, const(b, dk, low)),
                                b.compare(Op.eq, y, const(b, dk, -1)))  # fmt: skip
            bad = b.binary(Op.or_, zero, overflow)
        safe = b.select(bad, const(b, dk, 1), y)
        r = b.binary(Op.div if op[1:] == "div" else Op.rem, x, safe)
        r = b.select(zero, const(b, dk, 0), r)
        return canon(b, r, width) if signed else from_unsigned(b, r, width)

    def _cast(self, inst):
        b = self.b
        op = inst.opname
        src = inst.operands[0].type
        dst = inst.type
        x = self.use(inst.operands[0])
        if op == "bitcast":
            if src == dst:
                return x
            pair = {(32, "float"), (64, "double")}
            sw = getattr(src, "width", None) if isinstance(src, llvm.IntType) else None
            dw = getattr(dst, "width", None) if isinstance(dst, llvm.IntType) else None
            if (sw, str(dst)) in pair or (dw, str(src)) in pair:
                return b.bitcast(self.kind(dst), x)
            raise self.refuse(f"a bitcast from {src} to {dst}")
        dk = self.kind(dst)
        self.kind(src)
        if op in ("fpext", "fptrunc"):
            return arith.convert(b, x, dk)
        if op in ("sitofp", "uitofp"):
            if src.width == 1:
                on = -1.0 if op == "sitofp" else 1.0
                return b.select(x, const(b, dk, on), const(b, dk, 0.0))
            return arith.convert(b, x if op == "sitofp" else unsigned(b, x, src.width), dk)
        if op in ("fptosi", "fptoui"):
            if dst.width == 1:
                raise self.refuse(f"'{op}' to i1")
            if op == "fptosi":
                return canon(b, arith.convert(b, x, K.i64 if dst.width == 64 else K.i32),
                             dst.width)  # fmt: skip
            u = arith.convert(b, x, K.u64 if dst.width == 64 else K.u32)
            return from_unsigned(b, u, dst.width)
        if src.width == 1:  # zext/sext of a bool
            on = -1 if op == "sext" else 1
            return b.select(x, const(b, dk, on), const(b, dk, 0))
        if op == "trunc":
            if dst.width == 1:
                bit = b.binary(Op.and_, x, const(b, b.kind(x), 1))
                return b.compare(Op.ne, bit, const(b, b.kind(x), 0))
            return canon(b, arith.convert(b, x, dk), dst.width)
        if op == "zext":
            return arith.convert(b, unsigned(b, x, src.width), dk)
        return arith.convert(b, x, dk)  # sext: canonical values are sign-extended

    def _call(self, inst):
        from .llvm_calls import lower_llvm_call

        callee = inst.callee
        if isinstance(callee, llvm.InlineAsm):
            raise self.refuse("inline assembly")
        name = getattr(callee, "name", None)
        if not isinstance(callee, llvm.Function) or not str(name).startswith("llvm."):
            raise self.refuse(f"a call of the function '{name}'")
        return lower_llvm_call(self, name, inst)
