"""fastmath=True: the driver's GLSL.std.450 built-ins where they exist.

Under fastmath a call to one of these functions becomes the driver's
instruction (Exp, Log, Sin, Cos, Tan, Tanh on float32; Sqrt on float32 and
float64): fast, and as loose as the Vulkan specification lets the driver be
(Exp/Log 3 ulp or worse, Sin/Cos an absolute error of 2^-11 on [-pi, pi] and
nothing promised beyond; measured in docs/math.md). The call then does not
make the kernel "exact math", so the driver may also reassociate and contract
the kernel's float arithmetic. float64 sin and cos, which have no built-in,
take a shorter form of the library's (trig.fast, within numba.cuda's documented 2
ulp) where the device's Fma rounds once; it keeps the kernel exact math. float32
erf has a form of its own built on the driver's Exp (erf.py, `fast=True`), free of
the library's exact building blocks, and does not either. Functions without a
built-in or form (the other float64 transcendentals, erfc, gamma, pow, ...) stay
on the accurate library, whose kernels keep exact float ops (docs/math.md,
"fastmath").

pow is left out on purpose: GLSL's Pow is undefined for a negative base, where
x ** 2.0 must be positive, and a NaN there would be a wrong answer rather than
a loose one.
"""

import math

import numpy as np

from ... import _core
from . import erf, trig

K = _core.Kind
M = _core.MathFn

# callable -> (MathFn or a form built on built-ins, widths the driver has it for)
BUILTINS = {
    math.exp: (M.exp, (K.f32,)),
    np.exp: (M.exp, (K.f32,)),
    math.log: (M.log, (K.f32,)),
    np.log: (M.log, (K.f32,)),
    math.sin: (M.sin, (K.f32,)),
    np.sin: (M.sin, (K.f32,)),
    math.cos: (M.cos, (K.f32,)),
    np.cos: (M.cos, (K.f32,)),
    math.tan: (M.tan, (K.f32,)),
    np.tan: (M.tan, (K.f32,)),
    math.tanh: (M.tanh, (K.f32,)),
    np.tanh: (M.tanh, (K.f32,)),
    math.sqrt: (M.sqrt, (K.f32, K.f64)),
    np.sqrt: (M.sqrt, (K.f32, K.f64)),
    # a form of the library's built on the driver's Exp: (builder, x, may branch) -> value
    math.erf: (lambda b, x, branch: erf.erf(b, x, branch, fast=True), (K.f32,)),
}

# callable -> a float64 form of the library's, looser than the accurate one within numba.cuda's
# documented bounds: (builder, x, may branch) -> value, or None where the device or the call
# does not allow it (the accurate form is then used)
FORMS64 = {
    math.sin: lambda b, x, branch: trig.fast(b, x, False, branch),
    np.sin: lambda b, x, branch: trig.fast(b, x, False, branch),
    math.cos: lambda b, x, branch: trig.fast(b, x, True, branch),
    np.cos: lambda b, x, branch: trig.fast(b, x, True, branch),
}


def lower(c, fn):
    """The built-in's value for the call `c` of `fn`, or None where there is none."""
    try:
        spec, form64 = BUILTINS.get(fn), FORMS64.get(fn)
    except TypeError:  # unhashable callee
        return None
    if len(c.args) != 1:
        return None
    if form64 is not None and c.float_kind() == K.f64:
        v = form64(c.b, c.fargs()[0], c.may_branch)
        if v is None:
            return None
        c.lo.exact_math = True  # its rounding constant must not be reassociated away
        return c.ret(v)
    if spec is None:
        return None
    mfn, widths = spec
    if c.float_kind() not in widths:
        return None
    (x,) = c.fargs()
    if not isinstance(mfn, M):
        return c.ret(mfn(c.b, x, c.may_branch))
    return c.ret(c.b.math(mfn, [x]))
