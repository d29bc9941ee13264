"""``print(...)`` in kernels: one record per call in the status buffer's print area.

A print site (numba_vulkan/sites.py) knows its items: constant strings stay on
the host, values are written as 32-bit words (1 for bool, 8- to 32-bit ints and
float16/float32, 2 for 64-bit ints and float64) after a 3-word header (record
length, site key). The invocation claims its words with an atomic add on the
cursor; a record that does not fit is dropped and counted (the host reports the
count), never half written. Launches of printing kernels are ordered by barriers
(the hidden argument counts as written), so records come out in launch order.
"""

from numba.core import ir, types

from .. import _core, sites
from . import arith, status
from .errors import unsupported
from .types import is_float, is_scalar_type

K = _core.Kind
Op = _core.Op
A = _core.AtomicOp


def lower_print(lowerer, stmt):
    loc = stmt.loc
    if stmt.vararg is not None:
        raise unsupported("print(*args)", loc)
    words = []
    items = [_item(lowerer, var, lowerer.typemap[var.name], words, loc) for var in stmt.args]
    site = sites.PrintSite(items, getattr(loc, "filename", None) or "?", getattr(loc, "line", 0))
    status.add_site(lowerer, site)
    _write_record(lowerer, site, words)


def _item(lowerer, var, ty, words, loc):
    if isinstance(ty, (types.StringLiteral, types.UnicodeType)):
        return ("str", _constant_string(lowerer, var, ty, loc))
    if isinstance(ty, (types.NoneType, types.Omitted)):
        return ("str", "None")
    if isinstance(ty, types.BaseTuple):
        value = lowerer.load_var(var.name)
        return ("tuple", tuple(_value_item(lowerer, v, t, words, loc)
                               for v, t in zip(value, ty.types)))  # fmt: skip
    return _value_item(lowerer, lowerer.load_var(var.name), ty, words, loc)


def _constant_string(lowerer, var, ty, loc):
    if isinstance(ty, types.StringLiteral):
        return ty.literal_value
    try:
        defn = lowerer.func_ir.get_definition(var)
    except KeyError:
        defn = None
    if isinstance(defn, (ir.Const, ir.Global, ir.FreeVar)) and isinstance(defn.value, str):
        return defn.value
    raise unsupported("printing a string that is not a constant", loc)


def _value_item(lowerer, value, ty, words, loc):
    b = lowerer.b
    if isinstance(ty, types.BaseTuple):
        return ("tuple", tuple(_value_item(lowerer, v, t, words, loc)
                               for v, t in zip(value, ty.types)))  # fmt: skip
    if isinstance(ty, types.StringLiteral):
        return ("str", ty.literal_value)
    if isinstance(ty, types.NoneType):
        return ("str", "None")
    if not is_scalar_type(ty):
        raise unsupported(f"printing {ty} (strings, numbers, booleans and tuples of them print)",
                          loc)  # fmt: skip
    k = b.kind(value)
    if k == K.bool:
        words.append(arith.convert(b, value, K.u32))
        return ("bool", 1, 1, False)
    if is_float(k):
        if k == K.f64:
            low, high = status.split64(b, b.bitcast(K.u64, value))
            words.extend((low, high))
            return ("float", 2, 64, True)
        words.append(b.bitcast(K.u32, arith.convert(b, value, K.f32)))
        return ("float", 1, 32, True)
    signed = arith.is_signed(k)
    if arith.BITS[k] == 64:
        words.extend(status.split64(b, value))
        return ("int", 2, 64, signed)
    wide = arith.convert(b, value, K.i32 if signed else K.u32)  # sign- or zero-extended
    words.append(arith.convert(b, wide, K.u32))
    return ("int", 1, 32, signed)


def _write_record(lowerer, site, words):
    b = lowerer.b
    length = sites.record_words(len(words))
    slots = status.spill(lowerer, words)
    old = b.atomic(A.add, [status.word_ptr(lowerer, sites.PRINT_AREA),
                           arith.const(b, K.u32, length)])  # fmt: skip
    capacity = b.load(status.word_ptr(lowerer, sites.PRINT_AREA + 1))
    end = b.binary(Op.add, old, arith.const(b, K.u32, length))
    # The cursor only grows, so `end < old` means it wrapped past 2^32: lost as well.
    fits = arith.logical_and(b, b.compare(Op.le, end, capacity), b.compare(Op.ge, end, old))
    start = b.var(K.i32)
    b.store(start, arith.convert(b, old, K.i32))
    tag = f"print{b.current_block}"
    write, lost, done = (b.create_block(f"{tag}.{p}") for p in ("write", "lost", "done"))
    b.condbr(fits, write, lost)
    b.set_block(write)
    base = b.binary(Op.add, b.load(start),
                    arith.const(b, K.i32, sites.PRINT_AREA + sites.PRINT_HEADER))  # fmt: skip
    values = [arith.const(b, K.u32, length), arith.const(b, K.u32, site.key & 0xFFFFFFFF),
              arith.const(b, K.u32, site.key >> 32)] + [b.load(s) for s in slots]  # fmt: skip
    for i, v in enumerate(values):
        at = b.binary(Op.add, base, arith.const(b, K.i32, i)) if i else base
        b.store(status.word_ptr_at(lowerer, at), v)
    b.br(done)
    b.set_block(lost)
    b.atomic(A.add, [status.word_ptr(lowerer, sites.PRINT_AREA + 2), arith.const(b, K.u32, 1)])
    b.br(done)
    b.set_block(done)
    lowerer.root.prints = True
