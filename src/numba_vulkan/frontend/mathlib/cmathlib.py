"""cmath on complex64 / complex128: the formulas numba.njit uses (its cmathimpl: CPython's
and NumPy's algorithms, C99 Annex G special values where it gives them), on the library's
accurate real functions, branch-free (every case computed, the answer selected).

A complex value is a pair (re, im) of KIR floats (frontend/complexnum.py). Two departures,
both more accurate than numba.njit and agreeing with CPython's cmath:
- ln|z| (log, log10) is 0.5 log1p(x^2 + y^2 - 1), the argument a double word, where
  1/2 <= |z| <= 2: log(hypot(x, y)) loses all relative accuracy as |z| nears 1;
- sqrt's scaled path (components beyond max/(1 + sqrt 2)) rescales the imaginary part
  too (numba.njit leaves it at half its value).
Everything else follows numba.njit operation for operation, including where its formulas
overflow early (exp(710 + 1j) is inf + inf j; sinh(800 + 0j) has a NaN imaginary part).

z ** w (also `**=`, pow(z, w); power_) is numba.njit's complex_power_impl: the product z * z
for w = 2 + 0j, else CPython's _Py_c_pow in float64 (numba_cpow / numba_cpowf).
"""

import cmath
import math
import operator

from numba.core import types

from ... import _core
from ..arith import const
from . import bits, dd, explog, hyperbolic, inverse, power, roots, trig

K = _core.Kind
Op = _core.Op

_FLT_MAX = 3.4028234663852886e38  # numba.njit's thresholds use float32's limits at both widths
_FLT_MIN = 1.1754943508222875e-38
_LN_4 = math.log(4)


class _F:
    """Terse float ops of one kind on builder b."""

    def __init__(self, b, k):
        self.b, self.k = b, k

    def c(self, v):
        return const(self.b, self.k, v)

    def add(self, x, y):
        return self.b.binary(Op.add, x, y)

    def sub(self, x, y):
        return self.b.binary(Op.sub, x, y)

    def mul(self, x, y):
        return self.b.binary(Op.mul, x, y)

    def div(self, x, y):
        return self.b.binary(Op.div, x, y)

    def neg(self, x):
        return self.b.unary(Op.neg, x)

    def sel(self, cond, x, y):
        if isinstance(x, tuple):
            return tuple(self.b.select(cond, u, v) for u, v in zip(x, y))
        return self.b.select(cond, x, y)

    def cmp(self, op, x, y):
        return self.b.compare(op, x, y)

    def abs(self, x):
        return bits.fabs(self.b, x)

    def finite(self, x):
        return bits.is_finite(self.b, x)

    def inf(self, x):
        return bits.is_inf(self.b, x)

    def nan(self, x):
        return bits.is_nan(self.b, x)

    def cs(self, x, y):
        return bits.copysign(self.b, x, y)

    def either(self, *c):
        return bits.either(self.b, *c)

    def both(self, *c):
        return bits.both(self.b, *c)

    def not_(self, c):
        return self.b.unary(Op.not_, c)


# ---------------------------------------------------------------- building blocks


def _ln_abs(f, x, y):
    """ln|x + iy|: log(hypot) in general; 0.5 log1p(x^2 + y^2 - 1) for 1/2 <= |z| <= 2."""
    b = f.b
    h = roots.hypot(b, x, y)
    general = explog.log(b, h)
    x2, y2 = dd.two_prod(b, x, x), dd.two_prod(b, y, y)
    s = dd.dw_add(b, dd.dw_add(b, x2, y2), (f.c(-1.0), f.c(0.0)))
    near = f.mul(explog.log1p(b, s[0], s[1]), f.c(0.5))
    mid = f.both(f.cmp(Op.ge, h, f.c(0.5)), f.cmp(Op.le, h, f.c(2.0)))
    return f.sel(mid, near, general)


def _sqrt(f, a, bb):
    b = f.b
    zero = f.c(0.0)
    thres = (_FLT_MAX if f.k == K.f32 else 1.7976931348623157e308) / (1 + math.sqrt(2))
    big = f.either(f.cmp(Op.ge, f.abs(a), f.c(thres)), f.cmp(Op.ge, f.abs(bb), f.c(thres)))
    sa = f.sel(big, f.mul(a, f.c(0.25)), a)
    sb = f.sel(big, f.mul(bb, f.c(0.25)), bb)
    sa_f = f.sel(f.finite(sa), sa, zero)  # keeps the unused lanes finite
    h = roots.hypot(b, sa_f, sb)
    t = roots.sqrt(b, f.mul(f.add(f.abs(sa_f), h), f.c(0.5)))
    t_safe = f.sel(f.cmp(Op.eq, t, zero), f.c(1.0), t)
    # b / (2t), t > 0 (-0 stays -0); float64's t may lie beyond float32's range
    q = f.cs(dd.div(b, sb, f.mul(t_safe, f.c(2.0)), moderate=False), sb)
    pos = (t, q)
    negv = (f.abs(q), f.cs(t, sb))
    re, im = f.sel(f.cmp(Op.ge, sa, zero), pos, negv)
    r = (f.sel(big, f.mul(re, f.c(2.0)), re), f.sel(big, f.mul(im, f.c(2.0)), im))
    # special values, the last one chosen winning
    bmb = f.sub(bb, bb)
    inf_a = f.sel(f.cmp(Op.lt, a, zero), (f.abs(bmb), f.cs(a, bb)), (a, f.cs(bmb, bb)))
    r = f.sel(f.inf(a), inf_a, r)
    r = f.sel(f.nan(a), (a, a), r)
    r = f.sel(f.inf(bb), (f.abs(bb), bb), r)
    both0 = f.both(f.cmp(Op.eq, a, zero), f.cmp(Op.eq, bb, zero))
    return f.sel(both0, (f.abs(bb), bb), r)


def _sinh(f, x, y):
    b = f.b
    zero = f.c(0.0)
    cy, sy = trig.cos(b, y), trig.sin(b, y)  # NaN for an infinite or NaN y
    fin = (f.mul(cy, hyperbolic.sinh(b, x)), f.mul(sy, hyperbolic.cosh(b, x)))
    inf_re = f.sel(f.cmp(Op.ne, cy, zero), f.mul(cy, x), cy)
    inf_im = f.sel(f.cmp(Op.ne, sy, zero), f.mul(sy, f.abs(x)), sy)
    inf = f.sel(f.nan(y), (x, y), (inf_re, inf_im))
    return f.sel(f.inf(x), inf, fin)


def _cosh(f, x, y):
    b = f.b
    zero = f.c(0.0)
    cy, sy = trig.cos(b, y), trig.sin(b, y)
    fin = (f.mul(cy, hyperbolic.cosh(b, x)), f.mul(sy, hyperbolic.sinh(b, x)))
    keep = f.either(f.nan(y), f.cmp(Op.eq, y, zero))
    # cos(inf) and sin(inf) are the x86 default NaN, whose sign bit is set: numba.njit's
    # copysign(inf, cos(inf)) is -inf
    cy_s = f.sel(f.inf(y), f.c(-1.0), cy)
    sy_s = f.sel(f.inf(y), f.c(-1.0), sy)
    re = f.sel(keep, f.abs(x), f.cs(x, cy_s))
    im = f.sel(keep, y, f.cs(x, sy_s))
    im = f.sel(f.cmp(Op.lt, x, zero), f.neg(im), im)
    return f.sel(f.inf(x), (re, im), fin)


def _tanh(f, x, y):
    b = f.b
    one = f.c(1.0)
    sin2y = trig.sin(b, f.mul(f.c(2.0), y))
    inf = (f.cs(one, x), f.sel(f.inf(y), f.c(0.0), f.cs(f.c(0.0), sin2y)))
    tx, ty = hyperbolic.tanh(b, x), trig.tan(b, y)
    cx = f.div(one, hyperbolic.cosh(b, x))
    txty = f.mul(tx, ty)
    denom = f.add(one, f.mul(txty, txty))
    re = f.div(f.mul(tx, f.add(one, f.mul(ty, ty))), denom)
    im = f.mul(f.mul(f.div(ty, denom), cx), cx)
    return f.sel(f.inf(x), inf, (re, im))


def _large(f, x, y):
    t = f.c(_FLT_MAX / 4)
    return f.either(f.cmp(Op.gt, f.abs(x), t), f.cmp(Op.gt, f.abs(y), t))


def _log_half_hypot(f, x, y):
    """log(hypot(x/2, y/2)) + ln 4 (the large-argument real part of the inverse functions)."""
    h = roots.hypot(f.b, f.mul(x, f.c(0.5)), f.mul(y, f.c(0.5)))
    return f.add(explog.log(f.b, h), f.c(_LN_4))


def _asinh(f, x, y):
    b = f.b
    one = f.c(1.0)
    big = (f.cs(_log_half_hypot(f, x, y), x), inverse.atan2(b, y, f.abs(x)))
    s1 = _sqrt(f, f.add(one, y), f.neg(x))
    s2 = _sqrt(f, f.sub(one, y), x)
    re = hyperbolic.asinh(b, f.sub(f.mul(s1[0], s2[1]), f.mul(s2[0], s1[1])))
    im = inverse.atan2(b, y, f.sub(f.mul(s1[0], s2[0]), f.mul(s1[1], s2[1])))
    return f.sel(_large(f, x, y), big, (re, im))


def _acos(f, x, y):
    b = f.b
    one = f.c(1.0)
    big = (inverse.atan2(b, f.abs(y), x), f.cs(_log_half_hypot(f, x, y), f.neg(y)))
    s1 = _sqrt(f, f.sub(one, x), f.neg(y))
    s2 = _sqrt(f, f.add(one, x), y)
    re = f.mul(f.c(2.0), inverse.atan2(b, s1[0], s2[0]))
    im = hyperbolic.asinh(b, f.sub(f.mul(s2[0], s1[1]), f.mul(s2[1], s1[0])))
    return f.sel(_large(f, x, y), big, (re, im))


def _acosh(f, x, y):
    b = f.b
    one = f.c(1.0)
    big = (_log_half_hypot(f, x, y), inverse.atan2(b, y, x))
    s1 = _sqrt(f, f.sub(x, one), y)
    s2 = _sqrt(f, f.add(x, one), y)
    re = hyperbolic.asinh(b, f.add(f.mul(s1[0], s2[0]), f.mul(s1[1], s2[1])))
    im = f.mul(f.c(2.0), inverse.atan2(b, s1[1], s2[0]))
    return f.sel(_large(f, x, y), big, (re, im))


def _atanh(f, x, y):
    b = f.b
    zero, one, two = f.c(0.0), f.c(1.0), f.c(2.0)
    negate = f.cmp(Op.lt, x, zero)
    x = f.sel(negate, f.neg(x), x)
    y = f.sel(negate, f.neg(y), y)
    ay = f.abs(y)
    large = f.c(math.sqrt(_FLT_MAX / 4))
    # large or NaN x
    h = roots.hypot(b, f.mul(x, f.c(0.5)), f.mul(y, f.c(0.5)))
    h_safe = f.sel(f.cmp(Op.eq, h, zero), one, h)
    far_re = f.div(f.div(f.div(x, f.c(4.0)), h_safe), h_safe)
    far_re = f.sel(f.inf(x), zero, far_re)
    far_re = f.sel(f.inf(y), f.cs(zero, x), far_re)
    far_im = f.neg(f.cs(f.c(math.pi / 2), f.neg(y)))
    far = f.either(f.nan(x), f.cmp(Op.gt, x, large), f.cmp(Op.gt, ay, large))
    # x == 1, tiny y
    ay_safe = f.sel(f.cmp(Op.eq, ay, zero), one, ay)
    one_re = f.neg(explog.log(b, f.div(roots.sqrt(b, ay_safe),
                                       roots.sqrt(b, roots.hypot(b, ay_safe, two)))))  # fmt: skip
    one_im = f.cs(f.div(inverse.atan2(b, two, f.neg(ay)), two), y)
    one_re = f.sel(f.cmp(Op.eq, ay, zero), f.c(float("inf")), one_re)
    one_im = f.sel(f.cmp(Op.eq, ay, zero), y, one_im)
    at_one = f.both(f.cmp(Op.eq, x, one), f.cmp(Op.lt, ay, f.c(math.sqrt(_FLT_MIN))))
    # general
    zr1 = f.sub(one, x)
    sqay = f.mul(ay, ay)
    den = f.add(f.mul(zr1, zr1), sqay)
    gen_re = f.mul(explog.log1p(b, f.div(f.mul(f.c(4.0), x), den)), f.c(0.25))
    gen_im = f.mul(f.neg(inverse.atan2(b, f.mul(f.c(-2.0), y),
                                       f.sub(f.mul(zr1, f.add(one, x)), sqay))), f.c(0.5))
    re = f.sel(far, far_re, f.sel(at_one, one_re, gen_re))
    im = f.sel(far, far_im, f.sel(at_one, one_im, gen_im))
    im = f.sel(f.nan(y), f.c(float("nan")), im)
    return f.sel(negate, (f.neg(re), f.neg(im)), (re, im))


# ---------------------------------------------------------------- the cmath functions


def _exp(f, x, y):
    b = f.b
    zero, nan = f.c(0.0), f.c(float("nan"))
    xf, yf = f.finite(x), f.finite(y)
    c, s = trig.cos(b, y), trig.sin(b, y)
    r = explog.exp(b, x)
    main = (f.mul(r, c), f.mul(r, s))
    pinf = f.sel(yf, (f.sel(f.cmp(Op.ne, c, zero), f.mul(c, x), c),
                      f.sel(f.cmp(Op.ne, s, zero), f.mul(s, x), s)), (x, nan))  # fmt: skip
    ninf = f.sel(yf, main, (zero, zero))
    nanx = (x, f.sel(f.cmp(Op.ne, y, zero), x, y))
    out = f.sel(f.cmp(Op.gt, x, zero), pinf, ninf)
    out = f.sel(f.nan(x), nanx, out)
    return f.sel(xf, f.sel(yf, main, (nan, nan)), out)


def _log(f, x, y):
    return (_ln_abs(f, x, y), inverse.atan2(f.b, y, x))


def _log10(f, x, y):
    re, im = _log(f, x, y)
    k = f.k
    from . import coeffs

    w = "F32" if k == K.f32 else "F64"
    hi, lo = f.c(getattr(coeffs, f"INV_LN10_{w}")), f.c(getattr(coeffs, f"INV_LN10_R_{w}"))
    # an infinite part (log of 0 or of an infinity) is v * hi alone: v*hi + v*lo is
    # inf - inf = NaN where the correction lo has the other sign (float32's does)
    return tuple(f.sel(f.finite(v), f.add(f.mul(v, hi), f.mul(v, lo)), f.mul(v, hi))
                 for v in (re, im))  # fmt: skip


def _rot(fn):
    """f(z) = -j g(j z) for g = sinh, tanh, asinh: (r.im, -r.re) of g(-y + x j)."""

    def impl(f, x, y):
        r = fn(f, f.neg(y), x)
        return (r[1], f.neg(r[0]))

    return impl


def _cos(f, x, y):
    return _cosh(f, f.neg(y), x)


def _atan(f, x, y):
    r = _atanh(f, f.neg(y), x)
    odd = f.both(f.inf(x), f.nan(y))  # numba.njit's special case (CPython's table)
    return f.sel(odd, (r[1], r[0]), (r[1], f.neg(r[0])))


COMPLEX_UNARY = {
    cmath.exp: _exp, cmath.log: _log, cmath.log10: _log10, cmath.sqrt: _sqrt,
    cmath.sin: _rot(_sinh), cmath.cos: _cos, cmath.tan: _rot(_tanh),
    cmath.sinh: _sinh, cmath.cosh: _cosh, cmath.tanh: _tanh,
    cmath.asin: _rot(_asinh), cmath.acos: _acos, cmath.atan: _atan,
    cmath.asinh: _asinh, cmath.acosh: _acosh, cmath.atanh: _atanh,
}  # fmt: skip


def _rect(f, r, phi):
    b = f.b
    zero = f.c(0.0)
    c, s = trig.cos(b, phi), trig.sin(b, phi)
    rinf = f.inf(r)
    re = f.sel(f.both(f.cmp(Op.eq, c, zero), rinf), f.div(c, r), f.mul(c, r))
    im = f.sel(f.both(f.cmp(Op.eq, s, zero), rinf), f.div(s, r), f.mul(s, r))
    out = f.sel(rinf, (r, phi), (re, im))
    out = f.sel(f.cmp(Op.eq, r, zero), (f.abs(r), zero), out)
    return f.sel(f.not_(f.finite(phi)), out, (re, im))


# ---------------------------------------------------------------- z ** w


def _cpow(f, a, bb, c, d):
    """CPython's _Py_c_pow(a + bb j, c + d j), which numba.njit's numba_cpow calls: 1 for a
    zero exponent; for a zero base 0, or NaN + NaN j where CPython sets EDOM (an exponent with
    a nonzero imaginary part or a negative real one: numba_cpow returns NaN there, it does not
    raise); else the polar formula with libm's hypot, pow, atan2, exp, log, cos and sin, here
    the library's (each within 1 ulp), in the same order of operations."""
    b = f.b
    zero, one, nan = f.c(0.0), f.c(1.0), f.c(float("nan"))
    vabs = roots.hypot(b, a, bb)
    length = power.pow_(b, vabs, c)
    at = inverse.atan2(b, bb, a)
    phase = f.mul(at, c)
    has_im = f.cmp(Op.ne, d, zero)  # C's !=: true for a NaN d
    length = f.sel(has_im, f.div(length, explog.exp(b, f.mul(at, d))), length)
    phase = f.sel(has_im, f.add(phase, f.mul(d, explog.log(b, vabs))), phase)
    r = (f.mul(length, trig.cos(b, phase)), f.mul(length, trig.sin(b, phase)))
    edom = f.either(has_im, f.cmp(Op.lt, c, zero))
    r = f.sel(f.both(f.cmp(Op.eq, a, zero), f.cmp(Op.eq, bb, zero)),
              f.sel(edom, (nan, nan), (zero, zero)), r)  # fmt: skip
    return f.sel(f.both(f.cmp(Op.eq, c, zero), f.cmp(Op.eq, d, zero)), (one, zero), r)


def power_(lowerer, x, y, ty, loc):
    """x ** y (also `**=`, pow(x, y)) for x, y already cast to complex type `ty`, as Numba's
    complex_power_impl: an exponent of exactly 2 + 0j is the complex product x * x (in the
    parts' width); any other calls numba_cpow, which for complex64 widens both to complex128,
    runs _Py_c_pow in float64 and rounds each part to float32 once. There is no other
    integer-exponent path (x ** 3 is the polar formula, as on the CPU)."""
    from .. import arith, complexnum
    from ..types import compute_kind
    from . import denormals

    lowerer.exact_math = True  # see LoweredKernel.exact_math
    b = denormals.for_lowerer(lowerer)
    pk = complexnum.part_kind(ty, lowerer.mode, loc)
    wk = compute_kind(types.float64, lowerer.mode, loc)  # float32 without float64
    sig = types.none(ty, ty)
    square = complexnum.binop(lowerer, operator.mul, x, x, sig, loc, "*")
    f = _F(b, wk)
    a, bb, c, d = (arith.convert(b, v, wk) for v in (*x, *y))
    re, im = (arith.convert(b, v, pk) for v in _cpow(f, a, bb, c, d))
    fp = _F(b, pk)
    if ty.bitwidth == 64:
        # numba_cpowf builds its complex64 result as C's `re + _Complex_I * im` in float: the
        # real part is re + 0 * im, NaN where im is inf or NaN, +0 for re = -0 and im >= +0.
        zero = fp.c(0.0)
        re = fp.sel(fp.both(fp.cmp(Op.eq, re, zero), fp.not_(bits.sign_bit(b, im))), zero, re)
        re = fp.sel(fp.finite(im), re, fp.c(float("nan")))
    r = (re, im)
    two = fp.both(fp.cmp(Op.eq, y[0], fp.c(2.0)), fp.cmp(Op.eq, y[1], fp.c(0.0)))
    return fp.sel(two, square, r)


def lower(lowerer, fn, expr, sig):
    """The value of a cmath call, or None when `fn` is not one handled here."""
    from ..types import compute_kind
    from . import denormals

    try:
        known = fn in COMPLEX_UNARY or fn in _OTHERS
    except TypeError:
        return None
    if not known or len(expr.args) != len(sig.args):
        return None
    if fn is not cmath.rect and len(expr.args) != 1 and fn is not cmath.log:
        return None
    b = denormals.for_lowerer(lowerer)
    args = [lowerer.load_cast(a, t) for a, t in zip(expr.args, sig.args)]
    ty = sig.args[0]
    if fn is cmath.rect:
        k = compute_kind(sig.return_type.underlying_float, lowerer.mode, expr.loc)
        f = _F(b, k)
        from .. import arith

        r, phi = (arith.convert(b, a, k) for a in args)
        return _rect(f, r, phi)
    if not isinstance(ty, types.Complex):
        return None
    from .. import arith
    from ..complexnum import part_type

    # computed in the width of the result, which Numba's typing may make wider than the
    # operand (cmath.tanh(complex64) is complex128 on the CPU too)
    rt = sig.return_type
    wide = part_type(rt) if isinstance(rt, types.Complex) else part_type(ty)
    if isinstance(rt, types.Float) or isinstance(rt, types.BaseTuple):
        wide = rt if isinstance(rt, types.Float) else rt.types[0]
    k = compute_kind(wide, lowerer.mode, expr.loc)
    f = _F(b, k)
    x, y = (arith.convert(b, v, k) for v in args[0])
    if fn is cmath.log and len(args) == 2:  # log(z, base): log(z) / log(base), as numba.njit
        from ..complexnum import quotient

        base = [arith.convert(b, v, k) for v in args[1]]
        return quotient(b, _log(f, x, y), _log(f, *base))
    if fn in COMPLEX_UNARY:
        return COMPLEX_UNARY[fn](f, x, y)
    if fn is cmath.isnan:
        return f.either(f.nan(x), f.nan(y))
    if fn is cmath.isinf:
        return f.either(f.inf(x), f.inf(y))
    if fn is cmath.isfinite:
        return f.both(f.finite(x), f.finite(y))
    if fn is cmath.phase:
        return _convert_ret(lowerer, b, inverse.atan2(b, y, x), sig, expr)
    if fn is cmath.polar:
        vals = (roots.hypot(b, x, y), inverse.atan2(b, y, x))
        return tuple(_convert_ret(lowerer, b, v, sig, expr, t)
                     for v, t in zip(vals, sig.return_type.types))  # fmt: skip
    return None


def _convert_ret(lowerer, b, v, sig, expr, ty=None):
    from .. import arith
    from ..types import compute_kind

    return arith.convert(b, v, compute_kind(ty or sig.return_type, lowerer.mode, expr.loc))


_OTHERS = {cmath.isnan, cmath.isinf, cmath.isfinite, cmath.phase, cmath.polar, cmath.rect}
