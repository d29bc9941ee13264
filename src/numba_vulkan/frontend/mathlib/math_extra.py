"""``math.fmod``, ``math.remainder`` and ``math.modf``: math functions numba.cuda types
in kernels and numba.njit does not (typing/vkdecl.py types them as numba.cuda does:
float32 or float64 operands, integers converted to float64). The oracle is CPython's
``math`` module, whose results these give bit for bit, from exact operations only:

- fmod: C's fmod, exact: np.fmod's lowering (mathlib._fmod).
- remainder: IEEE 754's remainder, x - n*y with n the quotient rounded to even,
  computed as CPython computes it (m = fmod(|x|, |y|), compared with |y| - m, the tie
  settled by a second fmod), all exact. A zero y or an infinite x gives NaN (CPython
  raises ValueError; numba.cuda gives NaN), an infinite y gives x.
- modf: (fraction, integer part), both with x's sign; an infinite x gives (±0, x).
"""

from numba.core import types

from ... import _core
from .. import arith
from . import bits, denormals, rounding

K = _core.Kind
Op = _core.Op


def _keep(b, value):
    """A variable holding `value`: arith.fmod is a loop, and KIR values do not cross blocks."""
    slot = b.var(b.kind(value))
    b.store(slot, value)
    return slot


def remainder(c):
    b = c.b
    x, y = c.fargs()
    if b.kind(x) == K.f32 and denormals.flushes(b) and c.kind(types.float64) == K.f64:
        # as np.fmod (mathlib._fmod): a flushing device would zero the exact loop's
        # subnormal steps; in float64 they are normal, and the remainder is a float32
        x, y = b.convert(K.f64, x), b.convert(K.f64, y)
    k = b.kind(x)
    xv, yv = _keep(b, x), _keep(b, y)
    m = arith.fmod(b, bits.fabs(b, x), bits.fabs(b, y))
    mv = _keep(b, m)
    ax = bits.fabs(b, b.load(xv))
    half_rest = b.binary(Op.mul, arith.const(b, k, 0.5), b.binary(Op.sub, ax, m))
    t = arith.fmod(b, half_rest, bits.fabs(b, b.load(yv)))  # the quotient's parity, at a tie
    x, y, m = b.load(xv), b.load(yv), b.load(mv)
    ay = bits.fabs(b, y)
    rest = b.binary(Op.sub, ay, m)
    tie = b.binary(Op.sub, m, b.binary(Op.mul, arith.const(b, k, 2.0), t))
    r = b.select(b.compare(Op.lt, m, rest), m,
                 b.select(b.compare(Op.gt, m, rest), b.unary(Op.neg, rest), tie))
    r = b.binary(Op.mul, bits.copysign(b, arith.const(b, k, 1.0), x), r)  # CPython's sign
    nan = arith.const(b, k, float("nan"))
    bad = bits.either(b, bits.is_nan(b, x), bits.is_nan(b, y), bits.is_inf(b, x),
                      b.compare(Op.eq, y, arith.const(b, k, 0.0)))
    r = b.select(bits.is_inf(b, y), x, r)
    return c.ret(arith.convert(b, b.select(bad, nan, r), c.ret_kind))


def modf(c):
    b = c.b
    (x,) = c.fargs()
    k = b.kind(x)
    whole = rounding.trunc(b, x)
    frac = b.select(bits.is_inf(b, x), arith.const(b, k, 0.0), b.binary(Op.sub, x, whole))
    frac = bits.copysign(b, frac, x)  # -0.5 -> -0.5, -2.0 -> -0.0, as CPython
    return (frac, whole)
