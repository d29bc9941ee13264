"""Scalar LLVM instructions of an @intrinsic in KIR: integer and float arithmetic,
comparisons and casts, on llvm_ops' canonical integers (see there).

Each function takes the Translator (llvm_intrinsics.py: operands through
``t.use``, types through ``t.kind``, refusals through ``t.refuse``) and one
llvmlite instruction, and returns the KIR value. Where LLVM's result is
undefined the answers are those listed in llvm_intrinsics.py's docstring.
"""

from llvmlite import ir as llvm

from .. import _core
from . import arith
from .arith import const
from .llvm_ops import canon, from_unsigned, unsigned

K = _core.Kind
Op = _core.Op

_FLOAT_CMP = {"oeq": Op.eq, "ogt": Op.gt, "oge": Op.ge, "olt": Op.lt, "ole": Op.le, "une": Op.ne}
# unordered predicates: the negation of an ordered one
_NOT_FLOAT_CMP = {"ueq": "one", "ugt": "ole", "uge": "olt", "ult": "oge", "ule": "ogt",
                  "uno": "ord"}  # fmt: skip
_INT_CMP = {"eq": Op.eq, "ne": Op.ne, "sgt": Op.gt, "sge": Op.ge, "slt": Op.lt, "sle": Op.le,
            "ugt": Op.gt, "uge": Op.ge, "ult": Op.lt, "ule": Op.le}  # fmt: skip
INT_BINARY = {"add": Op.add, "sub": Op.sub, "mul": Op.mul, "and": Op.and_, "or": Op.or_,
              "xor": Op.xor}  # fmt: skip
FLOAT_BINARY = {"fadd": Op.add, "fsub": Op.sub, "fmul": Op.mul, "fdiv": Op.div}
_BOOL_BINARY = {"add": Op.xor, "sub": Op.xor, "xor": Op.xor, "mul": Op.and_, "and": Op.and_,
                "or": Op.or_}  # fmt: skip
CASTS = ("trunc", "zext", "sext", "fptosi", "fptoui", "sitofp", "uitofp", "fpext", "fptrunc",
         "bitcast")  # fmt: skip


def fneg(b, x):
    """-x by flipping the sign bit: exact for zeros and NaNs on every device."""
    ik = K.i32 if b.kind(x) == K.f32 else K.i64
    sign = const(b, ik, -(1 << (32 if ik == K.i32 else 64) - 1))
    return b.bitcast(b.kind(x), b.binary(Op.xor, b.bitcast(ik, x), sign))


def compare(t, inst):
    """icmp (unsigned predicates on the zero-extended bits) and fcmp (all 16 predicates)."""
    b = t.b
    x, y = map(t.use, inst.operands)
    pred = inst.op
    if isinstance(inst, llvm.FCMPInstr):
        t.kind(inst.operands[0].type)
        if pred in ("false", "true"):
            return const(b, K.bool, pred == "true")
        if pred in _NOT_FLOAT_CMP:
            return b.unary(Op.not_, _fcmp(t, _NOT_FLOAT_CMP[pred], x, y))
        return _fcmp(t, pred, x, y)
    width = inst.operands[0].type.width
    if pred not in _INT_CMP:
        raise t.refuse(f"the comparison '{pred}'")
    if width == 1 and pred not in ("eq", "ne"):
        k = K.i32
        on = -1 if pred[0] == "s" else 1
        x, y = (b.select(v, const(b, k, on), const(b, k, 0)) for v in (x, y))
    elif pred[0] == "u":
        x, y = unsigned(b, x, width), unsigned(b, y, width)
    return b.compare(_INT_CMP[pred], x, y)


def _fcmp(t, pred, x, y):
    b = t.b
    if pred in _FLOAT_CMP:
        return b.compare(_FLOAT_CMP[pred], x, y)
    if pred == "one":
        return b.binary(Op.or_, b.compare(Op.lt, x, y), b.compare(Op.gt, x, y))
    if pred == "ord":
        return b.binary(Op.and_, b.compare(Op.eq, x, x), b.compare(Op.eq, y, y))
    raise t.refuse(f"the comparison '{pred}'")


def int_binary(t, inst):
    """Integer arithmetic, bitwise ops, shifts and division; i1 as bool logic."""
    b = t.b
    op = inst.opname
    if not isinstance(inst.type, llvm.IntType):
        raise t.refuse(f"'{op}' on {inst.type}")
    width = inst.type.width
    k = t.kind(inst.type)
    x, y = map(t.use, inst.operands)
    if width == 1:
        if op not in _BOOL_BINARY:
            raise t.refuse(f"'{op}' on i1")
        return b.binary(_BOOL_BINARY[op], x, y)
    if op in INT_BINARY:
        return canon(b, b.binary(INT_BINARY[op], x, y), width)
    if op in ("shl", "lshr", "ashr"):
        return _shift(t, op, x, y, width, k)
    return _divide(t, op, x, y, width, k)


def _shift(t, op, x, n, width, k):
    b = t.b
    count = t.inst.operands[1]
    if type(count) is llvm.Constant and not 0 <= (int(count.constant or 0) % (1 << width)) < width:
        raise t.refuse(f"a constant shift by {count.constant} of a {width}-bit value "
                       "(poison in LLVM)")  # fmt: skip
    n = b.binary(Op.and_, n, const(b, k, 63 if width == 64 else 31))  # x86's count
    if op == "shl":
        return canon(b, b.binary(Op.shl, x, n), width)
    if op == "ashr":
        return b.binary(Op.shr, x, n)  # canonical values are sign-extended already
    u = unsigned(b, x, width)
    return from_unsigned(b, b.binary(Op.shr, u, arith.convert(b, n, b.kind(u))), width)


def _divide(t, op, x, y, width, k):
    """sdiv/udiv/srem/urem: by zero gives 0; INT_MIN / -1 wraps to INT_MIN, rem 0."""
    b = t.b
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


def cast(t, inst):
    """trunc/zext/sext, float <-> int conversions, fpext/fptrunc, same-width bitcasts."""
    b = t.b
    op = inst.opname
    src = inst.operands[0].type
    dst = inst.type
    x = t.use(inst.operands[0])
    if op == "bitcast":
        if src == dst:
            return x
        pair = {(32, "float"), (64, "double")}
        sw = getattr(src, "width", None) if isinstance(src, llvm.IntType) else None
        dw = getattr(dst, "width", None) if isinstance(dst, llvm.IntType) else None
        if (sw, str(dst)) in pair or (dw, str(src)) in pair:
            return b.bitcast(t.kind(dst), x)
        raise t.refuse(f"a bitcast from {src} to {dst}")
    dk = t.kind(dst)
    t.kind(src)
    if op in ("fpext", "fptrunc"):
        return arith.convert(b, x, dk)
    if op in ("sitofp", "uitofp"):
        if src.width == 1:
            on = -1.0 if op == "sitofp" else 1.0
            return b.select(x, const(b, dk, on), const(b, dk, 0.0))
        return arith.convert(b, x if op == "sitofp" else unsigned(b, x, src.width), dk)
    if op in ("fptosi", "fptoui"):
        if dst.width == 1:
            raise t.refuse(f"'{op}' to i1")
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
