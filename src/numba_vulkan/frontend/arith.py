"""Scalar operators with Python (and NumPy error-model) semantics, built from KIR's C-like ops.

KIR's integer division and remainder truncate toward zero and are undefined
for a zero divisor; its float remainder is C's fmod. Python floors instead, and
NumPy's error model (our default) makes integer division by zero give 0. Each
function here takes operands already converted to one kind and returns a KIR
value; the divisor is always made safe with a select before the KIR op runs.

Float floor division and modulo follow CPython's algorithm (fmod, then a sign
fix, then floor with a rounding correction), so that signed zeros and the
results near exact multiples match CPython bit for bit. The fmod is built
here as an exact shift-and-subtract loop (`fmod`), not KIR's float `rem`
(SPIR-V OpFRem, which Vulkan leaves imprecise).
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
    if is_float(frm) and to in (K.i32, K.i64):
        return _float_to_signed(b, v, to)
    return b.convert(to, v)


def _float_to_signed(b, v, to):
    """float -> int32/int64 truncating toward zero; NaN and values out of range give the
    smallest integer, as x86 (numba.njit, NumPy) does. SPIR-V leaves them undefined:
    NVIDIA saturates (math.floor(3.4e38) gave 2**63 - 1, not -2**63)."""
    frm = b.kind(v)
    smallest = -(1 << (BITS[to] - 1))
    in_range = b.binary(
        Op.and_,
        b.compare(Op.ge, v, const(b, frm, float(smallest))),
        b.compare(Op.lt, v, const(b, frm, -float(smallest))),
    )
    return b.select(in_range, b.convert(to, v), const(b, to, smallest))


_WIDE_OF_SMALL = {K.i8: K.i32, K.i16: K.i32, K.u8: K.u32, K.u16: K.u32}


def small_int_unary(b, op, x):
    """`op` (neg or not) on `x` with the wrap-around of x's own width.

    An 8- or 16-bit operand is computed in 32 bits and wrapped back explicitly, and the
    result is that exact 32-bit value: NVIDIA's driver negated an int8 without wrapping
    (-int8(-128) widened to 128). The signed wrap is ((r & m) ^ s) - s (m the width's
    mask, s its sign bit), in which nothing can overflow: a shift pair's left shift
    overflows exactly when r left the width, which NVIDIA's compiler takes as impossible
    (the H200 still gave 128 with it). Other kinds are computed as they are.
    """
    k = b.kind(x)
    wide = _WIDE_OF_SMALL.get(k)
    if wide is None:
        return b.unary(op, x)
    r = b.unary(op, convert(b, x, wide))
    low = b.binary(Op.and_, r, const(b, wide, (1 << BITS[k]) - 1))
    if is_signed(k):
        sign = const(b, wide, 1 << (BITS[k] - 1))
        return b.binary(Op.sub, b.binary(Op.xor, low, sign), sign)
    return low


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
    if is_signed(k):
        # MIN // -1 overflows (undefined in SPIR-V, a trap on x86): Numba gives 0, like
        # division by zero, so both take the divisor 1 and then the result 0.
        overflow = b.binary(
            Op.and_,
            b.compare(Op.eq, x, const(b, k, -(1 << (BITS[k] - 1)))),
            b.compare(Op.eq, y, const(b, k, -1)),
        )
        is_zero = b.binary(Op.or_, is_zero, overflow)
        ys = b.select(overflow, const(b, k, 1), ys)
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


# (int kind of the same width, mantissa bits, exponent bias = largest exponent, precision)
_FLOAT_LAYOUT = {K.f32: (K.i32, 23, 127, 24), K.f64: (K.i64, 52, 1023, 53)}


def _loop_blocks(b, what):
    """New header, body and exit blocks for a helper loop; block names must be unique, so they
    carry the id of the block the loop starts from (a second loop starts from another one)."""
    tag = f"{what}{b.current_block}"
    return tuple(b.create_block(f"{tag}.{part}") for part in ("header", "body", "done"))


def negate(b, v):
    """-v: for floats the sign bit flipped (IEEE 754's negate, exact for subnormals also where
    the driver's FNegate flushes them: NVIDIA's float32), for integers small_int_unary."""
    k = b.kind(v)
    if k not in _FLOAT_LAYOUT:
        return small_int_unary(b, Op.neg, v)
    ik = _FLOAT_LAYOUT[k][0]
    sign = const(b, ik, -(1 << (BITS[k] - 1)))
    return b.bitcast(k, b.binary(Op.xor, b.bitcast(ik, v), sign))


def fabs(b, v):
    """|v| by clearing the sign bit (exact for every value, NaN included)."""
    k = b.kind(v)
    ik = _FLOAT_LAYOUT[k][0]
    mask = const(b, ik, (1 << (BITS[k] - 1)) - 1)
    return b.bitcast(k, b.binary(Op.and_, b.bitcast(ik, v), mask))


def _pow2(b, k, j):
    """2.0 ** j for an integer value j (of k's int kind) with 0 <= j <= the largest exponent."""
    ik, mbits, bias, _ = _FLOAT_LAYOUT[k]
    return b.bitcast(
        k, b.binary(Op.shl, b.binary(Op.add, j, const(b, ik, bias)), const(b, ik, mbits))
    )


def _exponent(b, v):
    """floor(log2(v)) for a finite v > 0, subnormals included, as k's int kind."""
    k = b.kind(v)
    ik, mbits, bias, prec = _FLOAT_LAYOUT[k]
    is_sub = b.compare(Op.lt, v, const(b, k, 2.0 ** (1 - bias)))
    # A subnormal times 2**prec is normal, exactly; its exponent field is then exact.
    scaled = b.select(is_sub, b.binary(Op.mul, v, const(b, k, 2.0**prec)), v)
    e = b.binary(
        Op.sub, b.binary(Op.shr, b.bitcast(ik, scaled), const(b, ik, mbits)), const(b, ik, bias)
    )
    return b.select(is_sub, b.binary(Op.sub, e, const(b, ik, prec)), e)


def _min_int(b, x, y):
    return b.select(b.compare(Op.lt, x, y), x, y)


def fmod(b, x, y):
    """C's fmod(x, y), exactly, from exactly rounded ops only (KIR `rem` on floats is loose).

    Shift and subtract: r = |x|; while r >= |y|, subtract t = |y| * 2**d with
    t <= r < 2t, which is exact (Sterbenz) and lowers r's exponent by at least one.
    The result has x's sign; y == 0, x infinite or a NaN operand give NaN.
    Builds a loop: the returned value lives in a new block, and x and y (and any
    value defined before the call outside the entry block) must not be used after it.
    Each iteration lowers r's exponent, so at most emax - emin + precision + 1 run; the
    loop also stops there, because on a device that flushes float32 subnormals t can be
    flushed to 0 while r >= |y| still holds (NVIDIA hung on a subnormal divisor).
    """
    k = b.kind(x)
    ik, _, bias, _ = _FLOAT_LAYOUT[k]
    ax, ay = fabs(b, x), fabs(b, y)
    inf = const(b, k, float("inf"))
    # NaN result: y == 0, x inf or NaN (not ax < inf), y NaN.
    bad = b.binary(
        Op.or_,
        b.binary(
            Op.or_,
            b.compare(Op.eq, ay, const(b, k, 0.0)),
            b.unary(Op.not_, b.compare(Op.lt, ax, inf)),
        ),
        b.compare(Op.ne, ay, ay),
    )
    r_p, y_p, x_p, bad_p, n_p = b.var(k), b.var(k), b.var(k), b.var(K.bool), b.var(K.i32)
    # On a NaN result run no iteration (0 >= 1 is false).
    b.store(r_p, b.select(bad, const(b, k, 0.0), ax))
    b.store(y_p, b.select(bad, const(b, k, 1.0), ay))
    b.store(x_p, x)
    b.store(bad_p, bad)
    b.store(n_p, const(b, K.i32, 2 * bias + _FLOAT_LAYOUT[k][3] + 1))  # iterations left
    header, body, done = _loop_blocks(b, "fmod")
    b.br(header)
    b.set_block(header)
    n = b.load(n_p)
    more = b.binary(
        Op.and_,
        b.compare(Op.ge, b.load(r_p), b.load(y_p)),
        b.compare(Op.gt, n, const(b, K.i32, 0)),
    )
    b.condbr(more, body, done)
    b.set_block(body)
    b.store(n_p, b.binary(Op.sub, b.load(n_p), const(b, K.i32, 1)))
    r, ay = b.load(r_p), b.load(y_p)
    d = b.binary(Op.sub, _exponent(b, r), _exponent(b, ay))  # >= 0
    # ay * 2**d in up to three exact steps (2**d itself may not be representable);
    # the partial products only grow towards t < 2 * r, so none rounds or overflows.
    emax = const(b, ik, bias)
    d1 = _min_int(b, d, emax)
    rest = b.binary(Op.sub, d, d1)
    d2 = _min_int(b, rest, emax)
    d3 = b.binary(Op.sub, rest, d2)
    t = b.binary(Op.mul, ay, _pow2(b, k, d1))
    t = b.binary(Op.mul, t, _pow2(b, k, d2))
    t = b.binary(Op.mul, t, _pow2(b, k, d3))
    # ay <= r < 2**(e_r+1) and t in [2**e_r, 2**(e_r+1)): halve once if t > r (then d >= 1,
    # so t / 2 >= ay is exact).
    t = b.select(b.compare(Op.gt, t, r), b.binary(Op.mul, t, const(b, k, 0.5)), t)
    b.store(r_p, b.binary(Op.sub, r, t))
    b.br(header)
    b.set_block(done)
    r, x = b.load(r_p), b.load(x_p)
    sign = const(b, ik, -(1 << (BITS[k] - 1)))
    signed = b.bitcast(
        k, b.binary(Op.or_, b.bitcast(ik, r), b.binary(Op.and_, b.bitcast(ik, x), sign))
    )
    return b.select(b.load(bad_p), const(b, k, float("nan")), signed)


def float_divmod(b, x, y):
    """(x // y, x % y) on floats as NumPy computes them (CPython's algorithm; y == 0 gives x / y)."""
    k = b.kind(x)
    # fmod builds a loop: carry the operands across it.
    x_p, y_p = b.var(k), b.var(k)
    b.store(x_p, x)
    b.store(y_p, y)
    mod = fmod(b, x, y)
    x, y = b.load(x_p), b.load(y_p)
    zero = const(b, k, 0.0)
    one = const(b, k, 1.0)
    div = b.binary(Op.div, b.binary(Op.sub, x, mod), y)
    signs_differ = b.binary(Op.xor, b.compare(Op.lt, y, zero), b.compare(Op.lt, mod, zero))
    fix = b.binary(Op.and_, b.compare(Op.ne, mod, zero), signs_differ)
    div = b.select(fix, b.binary(Op.sub, div, one), div)
    mod = b.select(fix, b.binary(Op.add, mod, y), mod)
    # An exact multiple gives a zero with the divisor's sign.
    mod = b.select(b.compare(Op.eq, mod, zero), copysign_zero(b, y), mod)
    fl = b.math(M.floor, [div])
    round_up = b.compare(Op.gt, b.binary(Op.sub, div, fl), const(b, k, 0.5))
    fl = b.select(round_up, b.binary(Op.add, fl, one), fl)
    true_q = b.binary(Op.div, x, y)
    fl = b.select(b.compare(Op.eq, div, zero), copysign_zero(b, true_q), fl)
    # Division by zero: NumPy gives x / 0 (inf with the right sign, or nan) and fmod's nan.
    y_zero = b.compare(Op.eq, y, zero)
    return b.select(y_zero, true_q, fl), b.select(y_zero, const(b, k, float("nan")), mod)


def float_mod(b, x, y):
    return float_divmod(b, x, y)[1]


def float_floordiv(b, x, y):
    return float_divmod(b, x, y)[0]


def floordiv(b, x, y):
    return float_floordiv(b, x, y) if is_float(b.kind(x)) else int_floordiv(b, x, y)


def mod(b, x, y):
    return float_mod(b, x, y) if is_float(b.kind(x)) else int_mod(b, x, y)


def divmod_(b, x, y):
    """(x // y, x % y); on floats with a single fmod loop (whose operands do not outlive it)."""
    if is_float(b.kind(x)):
        return float_divmod(b, x, y)
    return int_floordiv(b, x, y), int_mod(b, x, y)


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
    header, body, done = _loop_blocks(b, "pow")
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
