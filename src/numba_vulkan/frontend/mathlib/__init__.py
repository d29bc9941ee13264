"""The math library: `math.*`, NumPy's scalar ufuncs and the numeric builtins in kernels.

Each function is a Python function that emits KIR through the builder, built
from ops whose precision Vulkan fixes (integer ops, comparisons, selects,
correctly rounded float add/sub/mul, exact Floor/Ceil/Trunc), so that results
do not depend on how loose a driver's GLSL.std.450 built-ins are. One module
per family (bits, rounding, roots, trig, erf, gamma, ...; cmath in cmathlib); this module
maps the Python callables to them and converts arguments and results to the kinds Numba's
typing chose. Under fastmath some calls become the driver's built-ins (fast.py); on a device
that may flush float32 subnormals the library builds through denormals.py's builder.

A callable that is not in the table is not handled here: calls.py then
refuses it with VulkanUnsupportedError naming it (see docs/math.md).
"""

import builtins
import math

import numpy as np
from numba.core import types

from ... import _core
from ...typing.bfloat16 import is_bfloat16
from .. import arith, float16
from ..errors import unsupported
from ..types import compute_kind, is_float, is_signed
from . import (
    bits, cmathlib, denormals, erf, explog, fast, gamma, hyperbolic, inverse, logic, math_extra,
    power, roots, rounding, trig,
)

K = _core.Kind
Op = _core.Op


class Call:
    """One call's operands (cast to the signature's types) and kinds.

    may_branch: the call's result is all its caller uses afterwards (a scalar call, whose
    result goes to a variable), so the function may branch (rare.py); not for the element
    calls of array ufuncs, whose loop uses its index after the call.
    """

    may_branch = False

    def __init__(self, lowerer, expr, sig, name):
        self.lo, self.expr, self.sig, self.name = lowerer, expr, sig, name
        # On a device that may flush float32 subnormals, the library's own builder (denormals.py);
        # with float32 + - * / exact for bfloat16's subnormals (frontend/bfloat16.py).
        bf16 = any(is_bfloat16(t) for t in (*sig.args, sig.return_type))
        self.b = denormals.for_lowerer(lowerer, ieee32=bf16)
        self.loc = expr.loc
        # Arguments left out take their defaults: Numba types them as Omitted, after the others.
        given = sig.args[: len(expr.args)]
        for t in given:
            if not isinstance(types.unliteral(t), (types.Boolean, types.Integer, types.Float)):
                raise unsupported(f"'{name}' of {t}", self.loc)
        self.args = [lowerer.load_cast(a, t) for a, t in zip(expr.args, given)]

    def kind(self, ty):
        return compute_kind(ty, self.lo.mode, self.loc)

    @property
    def ret_kind(self):
        return self.kind(self.sig.return_type)

    def float_kind(self):
        """The float kind the function computes in: the result's, else the first float operand's."""
        if isinstance(self.sig.return_type, types.Float):
            return self.ret_kind
        for t in self.sig.args:
            if isinstance(types.unliteral(t), types.Float):
                return self.kind(t)
        return self.kind(types.float64)

    def fargs(self):
        k = self.float_kind()
        return [arith.convert(self.b, a, k) for a in self.args]

    def ret(self, v):
        return arith.convert(self.b, v, self.ret_kind)

    def arg_is_float(self, i):
        return isinstance(types.unliteral(self.sig.args[i]), types.Float)


def _float_unary(impl):
    def lower(c):
        (x,) = c.fargs()
        return c.ret(impl(c.b, x))

    return lower


def _float_binary(impl):
    def lower(c):
        x, y = c.fargs()
        return c.ret(impl(c.b, x, y))

    return lower


def _to_int(impl):
    """math.floor/ceil/trunc: an int result (identity on ints), as int() converts the float."""

    def lower(c):
        if not c.arg_is_float(0):
            return c.ret(c.args[0])
        return c.ret(impl(c.b, c.args[0]))

    return lower


def _same_kind(impl):
    """np.floor and friends: identity on ints (Numba types np.floor(int) as int), else float."""

    def lower(c):
        if not is_float(c.ret_kind):
            return c.ret(c.args[0])
        return _float_unary(impl)(c)

    return lower


def _classify(impl, int_answer):
    def lower(c):
        if not c.arg_is_float(0):
            return arith.const(c.b, K.bool, int_answer)
        return impl(c.b, c.args[0])

    return lower


def _scale(constant):
    def lower(c):
        (x,) = c.fargs()
        if c.b.kind(x) == K.f32 and denormals.flushes(c.b):
            return c.ret(bits.mul_const_f32_flushing(c.b, x, float(np.float32(constant))))
        return c.ret(c.b.binary(Op.mul, x, arith.const(c.b, c.b.kind(x), constant)))

    return lower


def _tiny_is_x(impl):
    """f with f(x) = x (1 + O(x)) at 0: on a device that flushes float32 subnormals, a
    subnormal x is its own correctly rounded result (f's algorithm would see 0)."""

    def lower(c):
        (x,) = c.fargs()
        r = impl(c.b, x)
        if c.b.kind(x) == K.f32 and denormals.flushes(c.b):
            r = c.b.select(bits.is_subnormal(c.b, x), x, r)
        return c.ret(r)

    return lower


def _branching(impl):
    """sin, cos, tan, sqrt, exp and log: the operands their short path does not cover branch
    to the general form (trig._reduce_branching, roots.sqrt, explog.exp, explog.log) where the
    call may (Call.may_branch); erf and erfc branch to one case per interval (erf.py). (sin,
    cos and tan return a subnormal x itself, as _tiny_is_x would, from their own |x| < 2^-13
    test.)"""

    def lower(c):
        (x,) = c.fargs()
        return c.ret(impl(c.b, x, branch=c.may_branch))

    return lower


def _minmax(is_max, prefer_nan):
    """np.minimum/maximum (NaN wins) and np.fmin/fmax (the number wins), as Numba lowers them."""

    def lower(c):
        b = c.b
        k = c.ret_kind
        x, y = (arith.convert(b, a, k) for a in c.args)
        first = b.compare(Op.ge if is_max else Op.le, x, y)
        if k == K.bool:
            xi, yi = arith.convert(b, x, K.i32), arith.convert(b, y, K.i32)
            first = b.compare(Op.ge if is_max else Op.le, xi, yi)
        r = b.select(first, x, y)
        if not is_float(k):
            return r
        x_nan = bits.is_nan(b, x)
        any_nan = bits.either(b, x_nan, bits.is_nan(b, y))
        nan_r = b.select(x_nan, x, y) if prefer_nan else b.select(x_nan, y, x)
        return b.select(any_nan, nan_r, r)

    return lower


def _arith1(c, fn):
    k = c.ret_kind
    if k == K.bool:
        raise unsupported(f"'{c.name}' of a bool", c.loc)
    return fn(c.b, arith.convert(c.b, c.args[0], k))


def _ldexp(c):
    b = c.b
    k = c.ret_kind
    x = arith.convert(b, c.args[0], k)
    return bits.ldexp(b, x, c.args[1])


def _frexp(c):
    b = c.b
    mk, ek = (c.kind(t) for t in c.sig.return_type.types)
    x = arith.convert(b, c.args[0], mk)
    return bits.frexp(b, x, ek)


def _round(c):
    """round(x) -> int and round(x, 0) -> float, ties to even; round(x, ndigits) of a float
    for other ndigits is numba.cuda's _round_to."""
    b = c.b
    if len(c.args) == 2 and c.arg_is_float(0) and c.lo.static_int(c.expr.args[1]) != 0:
        return _round_to(c)
    if not c.arg_is_float(0):
        return c.ret(c.args[0])
    return c.ret(bits.rint(b, c.args[0]))


def _round_to(c):
    """round(x, ndigits), ndigits an integer known at run time: numba.njit's algorithm
    (CPython's fallback round_to, without dtoa; numba.cuda's too), computed in float64:
    y = x * 10^ndigits (10^(ndigits-22) * 1e22 past 22 digits, x / 10^-ndigits below 0),
    rounded to an integer ties to even, scaled back; x itself where it is infinite or NaN or
    where y overflows. For a float32 x, y is rounded to float32 before it is rounded to an
    integer, as numba.njit's rint of x's type does."""
    b = c.b
    k = c.kind(types.float64)
    x = arith.convert(b, c.args[0], k)
    nd = arith.convert(b, c.args[1], k)
    zero, one = arith.const(b, k, 0.0), arith.const(b, k, 1.0)
    nonneg = b.compare(Op.ge, nd, zero)
    big = bits.both(b, nonneg, b.compare(Op.gt, nd, arith.const(b, k, 22.0)))
    exponent = b.select(nonneg, b.select(big, b.binary(Op.sub, nd, arith.const(b, k, 22.0)), nd),
                        b.unary(Op.neg, nd))  # fmt: skip
    pow1 = power.pow_(b, arith.const(b, k, 10.0), exponent)  # 10^0 .. 10^22 are exact
    pow2 = b.select(big, arith.const(b, k, 1e22), one)
    y = b.select(nonneg, b.binary(Op.mul, b.binary(Op.mul, x, pow1), pow2),
                 b.binary(Op.div, x, pow1))  # fmt: skip
    if c.kind(c.sig.args[0]) == K.f32 and k == K.f64:
        z = b.convert(K.f64, bits.rint(b, b.convert(K.f32, y)))
    else:
        z = bits.rint(b, y)
    z = b.select(nonneg, b.binary(Op.div, b.binary(Op.div, z, pow2), pow1),
                 b.binary(Op.mul, z, pow1))  # fmt: skip
    keep = bits.either(b, bits.is_nan(b, x), bits.is_inf(b, x),
                       bits.both(b, nonneg, bits.is_inf(b, y)))  # fmt: skip
    return c.ret(b.select(keep, x, z))


def _np_round(c):
    if len(c.args) == 2:
        nd = c.lo.static_int(c.expr.args[1])
        if nd != 0:
            raise unsupported(f"'{c.name}' with decimals other than a literal 0", c.loc)
    if not c.arg_is_float(0):
        return c.ret(c.args[0])
    return c.ret(bits.rint(c.b, c.args[0]))


def _sign(c):
    """np.sign as Numba computes it: 1, -1, and x itself for zeros (-0.0 stays) and NaN."""
    b = c.b
    k = c.ret_kind
    x = arith.convert(b, c.args[0], k)
    zero = arith.const(b, k, 0)
    r = x
    if is_signed(k) or is_float(k):
        r = b.select(b.compare(Op.lt, x, zero), arith.const(b, k, -1), r)
    return b.select(b.compare(Op.gt, x, zero), arith.const(b, k, 1), r)


def _signbit(c):
    b = c.b
    if c.arg_is_float(0):
        return bits.sign_bit(b, c.args[0])
    x = c.args[0]
    k = b.kind(x)
    if is_signed(k):
        return b.compare(Op.lt, x, arith.const(b, k, 0))
    return arith.const(b, K.bool, False)


def _abs(c):
    b = c.b
    k = c.ret_kind
    x = arith.convert(b, c.args[0], k)
    if is_float(k):
        return bits.fabs(b, x)
    if is_signed(k):
        return b.select(b.compare(Op.lt, x, arith.const(b, k, 0)), b.unary(Op.neg, x), x)
    return x


def _fmod(c):
    b = c.b
    k = c.ret_kind
    x, y = (arith.convert(b, a, k) for a in c.args)
    if is_float(k):
        return denormals.fmod(b, x, y, c.kind(types.float64) == K.f64)
    # NumPy's integer fmod: C's remainder, 0 for a zero divisor. (Numba's CPU lowering uses an
    # unsigned remainder on signed ints, np.fmod(-1, 2) == 1; this follows NumPy: -1.)
    zero = arith.const(b, k, 0)
    is_zero = b.compare(Op.eq, y, zero)
    return b.select(is_zero, zero, b.binary(Op.rem, x, b.select(is_zero, arith.const(b, k, 1), y)))


def _remainder(c):
    """np.remainder; float32 on a flushing device in float64 like np.fmod (_fmod): both
    conversions are exact and the float64 result rounds to the float32 one."""
    b = c.b
    k = c.ret_kind
    if k == K.f32 and denormals.flushes(b) and c.kind(types.float64) == K.f64:
        x, y = (b.convert(K.f64, arith.convert(b, a, k)) for a in c.args)
        return b.convert(K.f32, arith.mod(b, x, y))
    return _binary_arith(arith.mod)(c)


def _arith2(op):
    """np.add / subtract / multiply / divide of scalars (ints wrap as Numba's do). Of bools
    NumPy's add and multiply mean `or` and `and`: refused rather than computed as ints."""

    def lower(c):
        k = c.ret_kind
        if k == K.bool:
            raise unsupported(f"'{c.name}' of bools (write | or & instead)", c.loc)
        x, y = (arith.convert(c.b, a, k) for a in c.args)
        return c.b.binary(op, x, y)

    return lower


def _binary_arith(fn):
    def lower(c):
        k = c.ret_kind
        x, y = (arith.convert(c.b, a, k) for a in c.args)
        return fn(c.b, x, y)

    return lower


def _pow(c):
    """builtins.pow(x, y): `x ** y` (an integer y by squaring, a float y by power.pow_)."""
    b = c.b
    if len(c.args) != 2:
        raise unsupported(f"'{c.name}' with a modulus", c.loc)
    yk = b.kind(c.args[1])
    if is_float(yk):
        return _float_binary(power.pow_)(c)
    y = arith.convert(b, c.args[1], K.i32) if yk == K.bool else c.args[1]
    return arith.power(
        b, arith.convert(b, c.args[0], c.ret_kind), y, c.lo.static_int(c.expr.args[1])
    )


def _isclose(c):
    """np.isclose(a, b[, rtol[, atol]]): |a - b| <= atol + rtol * |b|; infinities equal only to
    themselves; NaN never close (equal_nan=False)."""
    b = c.b
    if len(c.args) > 4:
        raise unsupported(f"'{c.name}' with equal_nan", c.loc)
    ak = [b.kind(a) for a in c.args[:2]]
    dk = ak[0] if ak[0] == ak[1] and is_float(ak[0]) else c.kind(types.float64)
    x, y = (arith.convert(b, a, dk) for a in c.args[:2])
    tk = c.kind(types.float64)
    rtol = arith.convert(b, c.args[2], tk) if len(c.args) > 2 else arith.const(b, tk, 1e-5)
    atol = arith.convert(b, c.args[3], tk) if len(c.args) > 3 else arith.const(b, tk, 1e-8)
    diff = arith.convert(b, bits.fabs(b, b.binary(Op.sub, x, y)), tk)
    bound = b.binary(Op.add, atol, b.binary(Op.mul, rtol, arith.convert(b, bits.fabs(b, y), tk)))
    close = b.compare(Op.le, diff, bound)
    finite = bits.both(b, bits.is_finite(b, x), bits.is_finite(b, y))
    return b.select(finite, close, b.compare(Op.eq, x, y))


TABLE = {
    # classification and sign
    math.fabs: _float_unary(bits.fabs),
    np.fabs: _float_unary(bits.fabs),
    np.absolute: _abs,
    math.isnan: _classify(bits.is_nan, False),
    np.isnan: _classify(bits.is_nan, False),
    math.isinf: _classify(bits.is_inf, False),
    np.isinf: _classify(bits.is_inf, False),
    math.isfinite: _classify(bits.is_finite, True),
    np.isfinite: _classify(bits.is_finite, True),
    math.copysign: _float_binary(bits.copysign),
    np.copysign: _float_binary(bits.copysign),
    np.signbit: _signbit,
    np.sign: _sign,
    math.nextafter: _float_binary(bits.nextafter),
    np.nextafter: _float_binary(bits.nextafter),
    # rounding
    math.floor: _to_int(rounding.floor),
    math.ceil: _to_int(rounding.ceil),
    math.trunc: _to_int(rounding.trunc),
    np.floor: _same_kind(rounding.floor),
    np.ceil: _same_kind(rounding.ceil),
    np.trunc: _same_kind(rounding.trunc),
    np.rint: _same_kind(bits.rint),
    builtins.round: _round,
    np.round: _np_round,
    np.around: _np_round,
    # exponent and scaling
    math.ldexp: _ldexp,
    np.ldexp: _ldexp,
    math.frexp: _frexp,
    math.degrees: _scale(180 / math.pi),
    math.radians: _scale(math.pi / 180),
    np.degrees: _scale(180 / math.pi),
    np.rad2deg: _scale(180 / math.pi),
    np.radians: _scale(math.pi / 180),
    np.deg2rad: _scale(math.pi / 180),
    # min / max
    np.fmin: _minmax(False, False),
    np.fmax: _minmax(True, False),
    np.minimum: _minmax(False, True),
    np.maximum: _minmax(True, True),
    np.isclose: _isclose,
    # simple arithmetic ufuncs (ints wrap as Numba's do)
    np.square: lambda c: _arith1(c, lambda b, x: b.binary(Op.mul, x, x)),
    np.negative: lambda c: _arith1(c, arith.negate),
    np.positive: lambda c: _arith1(c, lambda b, x: x),
    np.add: _arith2(Op.add),
    np.subtract: _arith2(Op.sub),
    np.multiply: _arith2(Op.mul),
    np.divide: _arith2(Op.div),  # Numba types it float
    np.true_divide: _arith2(Op.div),
    # remainders and powers
    np.fmod: _fmod,
    np.remainder: _remainder,
    np.floor_divide: _binary_arith(arith.floordiv),
    builtins.pow: _pow,
    math.pow: _float_binary(power.pow_),
    np.float_power: _float_binary(power.pow_),
    np.power: _pow,
    # exponentials and logarithms (math.log with a base is refused: see _log)
    math.exp: _branching(explog.exp),
    np.exp: _branching(explog.exp),
    np.exp2: _float_unary(explog.exp2),
    math.exp2: _float_unary(explog.exp2),
    math.expm1: _tiny_is_x(explog.expm1),
    np.expm1: _tiny_is_x(explog.expm1),
    math.log1p: _tiny_is_x(explog.log1p),
    np.log1p: _tiny_is_x(explog.log1p),
    math.log: None,
    np.log: _branching(explog.log),
    math.log2: _float_unary(explog.log2),
    np.log2: _float_unary(explog.log2),
    math.log10: _float_unary(explog.log10),
    np.log10: _float_unary(explog.log10),
    # trigonometric (full-range reduction: trig.py)
    math.sin: _branching(trig.sin),
    np.sin: _branching(trig.sin),
    math.cos: _branching(trig.cos),
    np.cos: _branching(trig.cos),
    math.tan: _branching(trig.tan),
    np.tan: _branching(trig.tan),
    # error function (erf.py)
    math.erf: _branching(erf.erf),
    math.erfc: _branching(erf.erfc),
    # gamma function (gamma.py)
    math.gamma: _float_unary(gamma.gamma),
    math.lgamma: _float_unary(gamma.lgamma),
    # inverse trigonometric
    math.atan: _tiny_is_x(inverse.atan),
    np.arctan: _tiny_is_x(inverse.atan),
    math.atan2: _float_binary(inverse.atan2),
    math.asin: _tiny_is_x(inverse.asin),
    np.arcsin: _tiny_is_x(inverse.asin),
    math.acos: _float_unary(inverse.acos),
    np.arccos: _float_unary(inverse.acos),
    np.arctan2: _float_binary(inverse.atan2),
    # hyperbolic
    math.tanh: _tiny_is_x(hyperbolic.tanh),
    np.tanh: _tiny_is_x(hyperbolic.tanh),
    math.sinh: _tiny_is_x(hyperbolic.sinh),
    np.sinh: _tiny_is_x(hyperbolic.sinh),
    math.cosh: _float_unary(hyperbolic.cosh),
    np.cosh: _float_unary(hyperbolic.cosh),
    math.asinh: _tiny_is_x(hyperbolic.asinh),
    np.arcsinh: _tiny_is_x(hyperbolic.asinh),
    math.acosh: _float_unary(hyperbolic.acosh),
    np.arccosh: _float_unary(hyperbolic.acosh),
    math.atanh: _tiny_is_x(hyperbolic.atanh),
    np.arctanh: _tiny_is_x(hyperbolic.atanh),
    # roots
    math.sqrt: _branching(roots.sqrt),
    np.sqrt: _branching(roots.sqrt),
    math.hypot: _float_binary(roots.hypot),
    np.cbrt: _float_unary(roots.cbrt),
    np.hypot: _float_binary(roots.hypot),
}


def _log(c):
    if len(c.args) != 1:
        raise unsupported(f"'{c.name}' with a base (write log(x) / log(base))", c.loc)
    return _branching(explog.log)(c)


TABLE[math.log] = _log
TABLE.update(logic.TABLE)  # comparison, logical and bitwise ufuncs, shifts, reciprocal
# numba.cuda's, not numba.njit's (math_extra.py)
TABLE[math.fmod] = _fmod
TABLE[math.remainder] = math_extra.remainder
TABLE[math.modf] = math_extra.modf


def _key(fn):
    try:
        return fn in TABLE
    except TypeError:  # unhashable callee
        return False


def lower(lowerer, fn, expr, sig, name):
    """The KIR value of a call to a math function, or None when `fn` is not one."""
    if not _key(fn):
        v = cmathlib.lower(lowerer, fn, expr, sig)  # cmath (complex operands)
        if v is not None:
            lowerer.exact_math = True
        return v
    call = Call(lowerer, expr, sig, name)
    call.may_branch = True  # a scalar call: its result goes to a variable
    v = None
    if getattr(lowerer, "fastmath", False):
        v = fast.lower(call, fn)  # the driver's built-in (fast.py), where there is one
    if v is None:
        lowerer.exact_math = True  # see LoweredKernel.exact_math
        v = TABLE[fn](call)
    # a float16 result (typing/float16.py), computed in float32: rounded once
    return float16.rounded(lowerer.b, v, sig.return_type)
