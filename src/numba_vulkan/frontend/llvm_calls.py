"""Calls of ``llvm.*`` functions inside an @intrinsic: the ones with one exact answer.

Integer ones work on llvm_ops' canonical integers; float ones reuse the math
library's exact building blocks (bit-level fabs and copysign, the correctly
rounded sqrt, floor/ceil/trunc/rint). ``llvm.fma``/``llvm.fmuladd`` are the
device's Fma where it rounds once (NVIDIA, AMD, or NUMBA_VULKAN_FMA=fused:
launchers.fused_fma); elsewhere (Vulkan lets Fma round twice) float32 ones are
computed exactly (llvm_ops.fma_f32, which needs float64) and float64 ones are
emulated exactly (mathlib/fma.py, as cuda.fma). The overflow-checking ``*.with.overflow`` functions give (wrapped
result, i1), except the 64-bit multiplications. ``llvm.round`` (ties away from
zero), minnum/maxnum and memory functions are refused, by name.
"""

import re

from .. import _core
from . import arith, llvm_ops
from .arith import const
from .llvm_ops import unsigned

K = _core.Kind
Op = _core.Op

_TYPE_SUFFIX = re.compile(r"(i\d+|f\d+|v\d+\w*|p\d+\w*)")


def base_name(name):
    """'llvm.ctpop.i64' -> 'ctpop'."""
    parts = name.split(".")[1:]
    return ".".join(p for p in parts if not _TYPE_SUFFIX.fullmatch(p))


def _bits(fn):
    def lower(t, args, width):
        return fn(t.b, args[0], width)

    return lower


def _abs(t, args, width):
    b = t.b
    x = args[0]
    k = b.kind(x)
    neg = llvm_ops.canon(b, b.binary(Op.sub, const(b, k, 0), x), width)  # INT_MIN stays
    return b.select(b.compare(Op.lt, x, const(b, k, 0)), neg, x)


def _minmax(pick_greater, is_unsigned):
    def lower(t, args, width):
        b = t.b
        x, y = args
        cx, cy = (unsigned(b, x, width), unsigned(b, y, width)) if is_unsigned else (x, y)
        greater = b.compare(Op.gt, cx, cy)
        return b.select(greater, x, y) if pick_greater else b.select(greater, y, x)

    return lower


def _float(fn):
    def lower(t, args, width):
        return fn(t.b, *args)

    return lower


def _fma(t, args, width):
    b = t.b
    if getattr(t.lo, "fused_fma", False):  # the device's Fma rounds once (launchers.fused_fma)
        return b.math(_core.MathFn.fma, list(args))
    t.lo.exact_math = True  # TwoSum needs the float ops exactly rounded, as written
    if b.kind(args[0]) != K.f32:  # Boldo and Melquiond's emulation (frontend/mathlib/fma.py)
        from .mathlib import fma

        return fma.fma64(b, *args)
    if t.lo.mode.floats or not t.lo.mode.float64_storage:
        raise t.refuse("a float32 fused multiply-add on a device without float64 (computed "
                       "exactly in float64)")  # fmt: skip
    return llvm_ops.fma_f32(b, *args)


def _math(name):
    def lower(t, args, width):
        from .mathlib import bits, roots, rounding

        fn = {"fabs": bits.fabs, "copysign": bits.copysign, "sqrt": roots.sqrt,
              "floor": rounding.floor, "ceil": rounding.ceil, "trunc": rounding.trunc,
              "rint": bits.rint, "nearbyint": bits.rint}[name]  # fmt: skip
        return fn(t.lib, *args)  # flush-safe where the device flushes (Translator.lib)

    return lower


def _with_overflow(op):
    """llvm.{s,u}{add,sub,mul}.with.overflow: (the wrapped result, whether it wrapped)."""
    is_signed = op[0] == "s"
    kop = {"add": Op.add, "sub": Op.sub, "mul": Op.mul}[op[1:]]

    def lower(t, args, width):
        b = t.b
        x, y = args
        if op[1:] == "mul":
            if width == 64:
                raise t.refuse(f"'llvm.{op}.with.overflow' on 64 bits (no 128-bit product)")
            if not is_signed:
                ux, uy = unsigned(b, x, width), unsigned(b, y, width)
                r = llvm_ops.from_unsigned(b, b.binary(Op.mul, ux, uy), width)
                return r, llvm_ops.umul_overflows(b, ux, uy, width)
            # exact in twice the width: 8/16 bits in 32, 32 bits in 64
            wide = K.i32 if width < 32 else K.i64
            p = b.binary(Op.mul, arith.convert(b, x, wide), arith.convert(b, y, wide))
            r = llvm_ops.canon(b, arith.convert(b, p, llvm_ops.int_kind(width)), width)
            return r, b.compare(Op.ne, arith.convert(b, r, wide), p)
        if is_signed:
            r = llvm_ops.canon(b, b.binary(kop, x, y), width)
            k = b.kind(r)
            # overflow iff the operands' signs make the result's sign impossible
            sx = b.binary(Op.xor, x, r)
            sy = b.binary(Op.xor, y, r) if kop == Op.add else b.binary(Op.xor, x, y)
            return r, b.compare(Op.lt, b.binary(Op.and_, sx, sy), const(b, k, 0))
        ux, uy = unsigned(b, x, width), unsigned(b, y, width)
        u = b.binary(kop, ux, uy)
        if kop == Op.sub:
            wrapped = b.compare(Op.lt, ux, uy)
        elif width < 32:
            wrapped = b.compare(Op.gt, u, const(b, b.kind(u), (1 << width) - 1))
        else:
            wrapped = b.compare(Op.lt, u, ux)
        return llvm_ops.from_unsigned(b, u, width), wrapped

    return lower


_INTEGER = {
    **{f"{op}.with.overflow": _with_overflow(op)
       for op in ("sadd", "uadd", "ssub", "usub", "smul", "umul")},  # fmt: skip
    "ctpop": _bits(llvm_ops.ctpop),
    "ctlz": _bits(llvm_ops.ctlz),
    "cttz": _bits(llvm_ops.cttz),
    "bitreverse": _bits(llvm_ops.bitreverse),
    "bswap": _bits(llvm_ops.bswap),
    "abs": _abs,
    "smax": _minmax(True, False),
    "smin": _minmax(False, False),
    "umax": _minmax(True, True),
    "umin": _minmax(False, True),
}

_FLOATING = {
    "fma": _fma,
    "fmuladd": _fma,
    **{n: _math(n) for n in ("fabs", "copysign", "sqrt", "floor", "ceil", "trunc", "rint",
                             "nearbyint")},
}  # fmt: skip

# How many leading arguments are values; the rest are flags (is_zero_poison...).
_VALUE_ARGS = {"ctlz": 1, "cttz": 1, "abs": 1}


def lower_llvm_call(t, name, inst):
    """The KIR value of `call @llvm.NAME(...)` (None for llvm.assume)."""
    base = base_name(name)
    args = list(inst.args)
    if base == "assume":
        return None
    if base == "expect":
        return t.use(args[0])
    lower = _INTEGER.get(base) or _FLOATING.get(base)
    if lower is None:
        raise t.refuse(f"a call of '{name}'")
    args = args[: _VALUE_ARGS.get(base, len(args))]
    if base in _INTEGER and (not hasattr(args[0].type, "width") or args[0].type.width == 1):
        raise t.refuse(f"'{name}' on {args[0].type}")
    for a in args:
        t.kind(a.type)
    width = getattr(args[0].type, "width", None)
    return lower(t, [t.use(a) for a in args], width)

