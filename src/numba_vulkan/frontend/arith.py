"""Scalar operators with Python (and NumPy error-model) semantics, built from KIR's C-like ops.

KIR's integer division and remainder truncate toward zero and are undefined
for a zero divisor; its float remainder is C's fmod. Python floors instead, and
NumPy's error model (our default) makes integer division by zero give 0. Each
function here takes operands already converted to one kind and returns a KIR
value; the divisor is always made safe with a select before the KIR op runs.

Float floor division and modulo follow CPython's algorithm (fmod, then a sign
fix, then floor with a rounding correction), so that signed zeros and the
results near exact multiples match CPython bit for bit.
"""

import operator

from .. import _core
from .types import BITS, is_float, is_signed

K = _core.Kind
Op = _core.Op
M = _core.MathFn


def const(b, kind, value):
    """A KIR constant of `kind` (ints wrap to the kind's width as the device would)."""
    if is_float(kind):
        return b.const_float(kind, float(value))
    if kind == K.bool:
        return b.const_int(kind, 1 if value else 0)
    bits = BITS[kind]
    value = int(value) & ((1 << bits) - 1)
    if is_signed(kind) and value >= 1 << (bits - 1):
        value -= 1 << bits
    return b.const_int(kind, value)


def convert(b, v, to):
    """`v` converted to kind `to`: ints wrap, floats truncate toward zero, x -> bool is x != 0."""
    frm = b.kind(v)
    if frm == to:
        return v
    if to == K.bool:
        return b.compare(Op.ne, v, const(b, frm, 0))
    if frm == K.bool:
        return b.select(v, const(b, to, 1), const(b, to, 0))
    return b.convert(to, v)


def truth(b, v):
    """Python truthiness of a scalar: nonzero (NaN is true)."""
    return convert(b, v, K.bool)


def logical_and(b, x, y):
    return b.binary(Op.and_, x, y)


def logical_or(b, x, y):
    return b.binary(Op.or_, x, y)


def logical_not(b, x):
    return b.unary(Op.not_, x)


def sign_bit(b, v):
    """True when the float `v` has its sign bit set (-0.0 and negative NaNs included)."""
    k = b.kind(v)
    ik = {K.f32: K.i32, K.f64: K.i64, K.f16: K.i16}[k]
    return b.compare(Op.lt, b.bitcast(ik, v), const(b, ik, 0))


def copysign_zero(b, like):
    """0.0 with the sign of `like` (CPython's copysign(0.0, like))."""
    k = b.kind(like)
    return b.select(sign_bit(b, like), const(b, k, -0.0), const(b, k, 0.0))


# ---------------------------------------------------------------- division and modulo


def _safe_divisor(b, y):
    k = b.kind(y)
    is_zero = b.compare(Op.eq, y, const(b, k, 0))
    return is_zero, b.select(is_zero, const(b, k, 1), y)


def int_floordiv(b, x, y):
    k = b.kind(x)
    is_zero, ys = _safe_divisor(b, y)
    q = b.binary(Op.div, x, ys)
    if is_signed(k):
        zero = const(b, k, 0)
        r = b.binary(Op.rem, x, ys)
        signs_differ = b.binary(Op.xor, b.compare(Op.lt, r, zero), b.compare(Op.lt, ys, zero))
        fix = b.binary(Op.and_, b.compare(Op.ne, r, zero), signs_differ)
        q = b.select(fix, b.binary(Op.sub, q, const(b, k, 1)), q)
    return b.select(is_zero, const(b, k, 0), q)


def int_mod(b, x, y):
    k = b.kind(x)
    is_zero, ys = _safe_divisor(b, y)
    r = b.binary(Op.rem, x, ys)
    if is_signed(k):
        zero = const(b, k, 0)
        signs_differ = b.binary(Op.xor, b.compare(Op.lt, r, zero), b.compare(Op.lt, ys, zero))
        fix = b.binary(Op.and_, b.compare(Op.ne, r, zero), signs_differ)
        r = b.select(fix, b.binary(Op.add, r, ys), r)
    return b.select(is_zero, const(b, k, 0), r)


def float_mod(b, x, y):
    k = b.kind(x)
    zero = const(b, k, 0.0)
    mod = b.binary(Op.rem, x, y)
    signs_differ = b.binary(Op.xor, b.compare(Op.lt, y, zero), b.compare(Op.lt, mod, zero))
    fix = b.binary(Op.and_, b.compare(Op.ne, mod, zero), signs_differ)
    mod = b.select(fix, b.binary(Op.add, mod, y), mod)
    # An exact multiple gives a zero with the divisor's sign.
    return b.select(b.compare(Op.eq, mod, zero), copysign_zero(b, y), mod)


def float_floordiv(b, x, y):
    k = b.kind(x)
    zero = const(b, k, 0.0)
    one = const(b, k, 1.0)
    mod = b.binary(Op.rem, x, y)
    div = b.binary(Op.div, b.binary(Op.sub, x, mod), y)
    signs_differ = b.binary(Op.xor, b.compare(Op.lt, y, zero), b.compare(Op.lt, mod, zero))
    fix = b.binary(Op.and_, b.compare(Op.ne, mod, zero), signs_differ)
    div = b.select(fix, b.binary(Op.sub, div, one), div)
    fl = b.math(M.floor, [div])
    round_up = b.compare(Op.gt, b.binary(Op.sub, div, fl), const(b, k, 0.5))
    fl = b.select(round_up, b.binary(Op.add, fl, one), fl)
    true_q = b.binary(Op.div, x, y)
    fl = b.select(b.compare(Op.eq, div, zero), copysign_zero(b, true_q), fl)
    # Division by zero: NumPy gives x / 0 (inf with the right sign, or nan).
    return b.select(b.compare(Op.eq, y, zero), true_q, fl)


def floordiv(b, x, y):
    return float_floordiv(b, x, y) if is_float(b.kind(x)) else int_floordiv(b, x, y)


def mod(b, x, y):
    return float_mod(b, x, y) if is_float(b.kind(x)) else int_mod(b, x, y)


# ---------------------------------------------------------------- shifts


def shift(b, op, x, n):
    """x << n or x >> n; a count of the width or more gives what an unbounded shift would."""
    k = b.kind(x)
    width = BITS[k]
    if b.kind(n) != k:
        n = convert(b, n, k)
    too_far = b.compare(Op.ge, n, const(b, k, width))
    if is_signed(k):
        too_far = b.binary(Op.or_, too_far, b.compare(Op.lt, n, const(b, k, 0)))
    safe_n = b.select(too_far, const(b, k, 0), n)
    r = b.binary(op, x, safe_n)
    if op == Op.shr and is_signed(k):
        saturated = b.select(b.compare(Op.lt, x, const(b, k, 0)), const(b, k, -1), const(b, k, 0))
    else:
        saturated = const(b, k, 0)
    return b.select(too_far, saturated, r)


# ---------------------------------------------------------------- power


def _static_power(b, x, e):
    """x ** e for a non-negative Python int e, by squaring at compile time."""
    result = None
    base = x
    while e:
        if e & 1:
            result = base if result is None else b.binary(Op.mul, result, base)
        e >>= 1
        if e:
            base = b.binary(Op.mul, base, base)
    return const(b, b.kind(x), 1) if result is None else result


def _loop_power(b, x, e):
    """x ** e for a run-time exponent e >= 0 (of an integer kind): a squaring loop in KIR."""
    k, ek = b.kind(x), b.kind(e)
    res_p, base_p, e_p = b.var(k), b.var(k), b.var(ek)
    b.store(res_p, const(b, k, 1))
    b.store(base_p, x)
    b.store(e_p, e)
    header, body, done = (
        b.create_block("pow.header"),
        b.create_block("pow.body"),
        b.create_block("pow.done"),
    )
    b.br(header)
    b.set_block(header)
    b.condbr(b.compare(Op.ne, b.load(e_p), const(b, ek, 0)), body, done)
    b.set_block(body)
    ev, r, base = b.load(e_p), b.load(res_p), b.load(base_p)
    odd = b.compare(Op.ne, b.binary(Op.and_, ev, const(b, ek, 1)), const(b, ek, 0))
    b.store(res_p, b.select(odd, b.binary(Op.mul, r, base), r))
    b.store(base_p, b.binary(Op.mul, base, base))
    b.store(e_p, b.binary(Op.shr, ev, const(b, ek, 1)))
    b.br(header)
    b.set_block(done)
    return b.load(res_p)


def power(b, x, e, static_exponent=None):
    """x ** e with x's kind as the result kind and an integer exponent e.

    Integer results follow Numba: a negative exponent gives 1 / x**|e| truncated
    (so 0 unless x is 1 or -1). Float results with a negative exponent are 1 / x**|e|.
    """
    k = b.kind(x)
    if static_exponent is not None:
        p = _static_power(b, x, abs(static_exponent))
        if static_exponent >= 0:
            return p
        if is_float(k):
            return b.binary(Op.div, const(b, k, 1.0), p)
        return _int_reciprocal(b, p)
    ek = b.kind(e)
    if is_signed(ek):
        negative = b.compare(Op.lt, e, const(b, ek, 0))
        magnitude = b.select(negative, b.unary(Op.neg, e), e)
    else:
        negative, magnitude = None, e
    if negative is None:
        return _loop_power(b, x, magnitude)
    # The loop ends in a new block: carry the sign across it in a variable.
    negative_p = b.var(K.bool)
    b.store(negative_p, negative)
    p = _loop_power(b, x, magnitude)
    negative = b.load(negative_p)
    inv = b.binary(Op.div, const(b, k, 1.0), p) if is_float(k) else _int_reciprocal(b, p)
    return b.select(negative, inv, p)


def _int_reciprocal(b, p):
    """1 // p truncated, as Numba computes x ** -n on integers: p if |p| == 1, else 0."""
    k = b.kind(p)
    unit = b.compare(Op.eq, p, const(b, k, 1))
    if is_signed(k):
        unit = b.binary(Op.or_, unit, b.compare(Op.eq, p, const(b, k, -1)))
    return b.select(unit, p, const(b, k, 0))


# ---------------------------------------------------------------- tables used by the lowerer

SIMPLE_BINARY = {
    operator.add: Op.add,
    operator.iadd: Op.add,
    operator.sub: Op.sub,
    operator.isub: Op.sub,
    operator.mul: Op.mul,
    operator.imul: Op.mul,
}

BITWISE = {
    operator.and_: Op.and_,
    operator.iand: Op.and_,
    operator.or_: Op.or_,
    operator.ior: Op.or_,
    operator.xor: Op.xor,
    operator.ixor: Op.xor,
}

SHIFTS = {
    operator.lshift: Op.shl,
    operator.ilshift: Op.shl,
    operator.rshift: Op.shr,
    operator.irshift: Op.shr,
}

COMPARE = {
    operator.eq: Op.eq,
    operator.ne: Op.ne,
    operator.lt: Op.lt,
    operator.le: Op.le,
    operator.gt: Op.gt,
    operator.ge: Op.ge,
}

TRUEDIV = (operator.truediv, operator.itruediv)
FLOORDIV = (operator.floordiv, operator.ifloordiv)
MOD = (operator.mod, operator.imod)
POW = (operator.pow, operator.ipow)

OPERATOR_NAMES = {
    operator.add: "+", operator.sub: "-", operator.mul: "*", operator.truediv: "/",
    operator.floordiv: "//", operator.mod: "%", operator.pow: "**", operator.matmul: "@",
    operator.and_: "&", operator.or_: "|", operator.xor: "^", operator.lshift: "<<",
    operator.rshift: ">>", operator.eq: "==", operator.ne: "!=", operator.lt: "<",
    operator.le: "<=", operator.gt: ">", operator.ge: ">=", operator.is_: "is",
    operator.is_not: "is not", operator.contains: "in", operator.neg: "unary -",
    operator.pos: "unary +", operator.not_: "not", operator.invert: "~",
}  # fmt: skip
