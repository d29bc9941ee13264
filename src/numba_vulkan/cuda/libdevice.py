"""``cuda.libdevice``: numba.cuda's names for CUDA's libdevice math, on our math library.

numba.cuda exposes libdevice's functions by their C names: ``libdevice.sin`` (double)
and ``libdevice.sinf`` (float), ``sincos`` returning a pair, ``frexp`` a (fraction,
exponent) pair, ``sad`` the sum of an absolute difference. Here each name is a function
with an ``@overload`` for the Vulkan target calling our math (docs/math.md for the
accuracy: within a few ulp, as libdevice's own are); the ``f`` variants compute in
float32. A libdevice name not listed here raises an AttributeError naming it (through
the module's ``__getattr__``), never a wrong function.
"""

import builtins  # the module defines abs, min, max (libdevice names) of its own
import math

import numpy as np
from numba.extending import overload

from ..errors import VulkanUnsupportedError
from ..typing.fma import fma as _fma
from .bits import _bitreverse, _clz, _ffs, _popc
from .bits import as_bits as _as_bits
from .bits import from_bits as _from_bits

_f32 = np.float32
_f64 = np.float64


def _kernel_only(name):
    raise NotImplementedError(f"cuda.libdevice.{name} can only be used inside a kernel")


# name -> Python function of the double version (the float one casts to float32)
_UNARY = {
    "acos": math.acos, "acosh": math.acosh, "asin": math.asin, "asinh": math.asinh,
    "atan": math.atan, "atanh": math.atanh, "cbrt": np.cbrt, "ceil": np.ceil,
    "cos": math.cos, "cosh": math.cosh, "erf": math.erf, "erfc": math.erfc,
    "exp": math.exp, "exp2": np.exp2, "expm1": math.expm1, "fabs": abs,
    "floor": np.floor, "log": math.log, "log10": math.log10, "log1p": math.log1p,
    "log2": math.log2, "rint": np.rint, "sin": math.sin, "sinh": math.sinh,
    "sqrt": math.sqrt, "tan": math.tan, "tanh": math.tanh, "trunc": np.trunc,
    "nearbyint": np.rint, "lgamma": math.lgamma, "tgamma": math.gamma, "modf": math.modf,
}
_BINARY = {
    "atan2": math.atan2, "copysign": math.copysign, "fmax": np.fmax, "fmin": np.fmin,
    "hypot": math.hypot, "pow": math.pow, "fdim": None, "fmod": math.fmod,
    "remainder": math.remainder, "nextafter": np.nextafter,
}


def _register(name, nargs, body, ftype):
    """A stub `name` with an overload for the Vulkan target computing `body`."""
    def stub(*args):
        _kernel_only(name)

    stub.__name__ = stub.__qualname__ = name
    if nargs == 1:
        @overload(stub, target="vulkan")
        def _impl(x):
            return lambda x: body(ftype(x))
    elif nargs == 2:
        @overload(stub, target="vulkan")
        def _impl(x, y):
            return lambda x, y: body(ftype(x), ftype(y))
    else:
        @overload(stub, target="vulkan")
        def _impl(x, y, z):
            return lambda x, y, z: body(ftype(x), ftype(y), ftype(z))
    globals()[name] = stub


def _device(fn):
    """Our own helpers are device functions (plain Python functions cannot be called)."""
    from .. import dispatcher

    return dispatcher.jit(fn, device=True)


@_device
def _fdim(x, y):
    return x - y if x > y else x - x


@_device
def _rsqrt(x):
    return 1.0 / math.sqrt(x)


@_device
def _exp10(x):
    return math.pow(10.0, x)


@_device
def _sincos(x):
    return math.sin(x), math.cos(x)


for _name, _fn in _UNARY.items():
    _register(_name, 1, _fn, _f64)
    _register(_name + "f", 1, _fn, _f32)
for _name, _fn in _BINARY.items():
    _fn = _fn or _fdim
    _register(_name, 2, _fn, _f64)
    _register(_name + "f", 2, _fn, _f32)
# libdevice's fast float32 approximations (__nv_fast_sinf: CUDA's __sinf, within 2^-21.41
# absolute in [-pi, pi]): the accurate functions here, within their looser promise.
for _name in ("sin", "cos", "tan", "exp", "exp10", "log", "log2", "log10"):
    _register(f"fast_{_name}f", 1, _UNARY.get(_name) or _exp10, _f32)
# fma / fmaf: a * b + c rounded once, as cuda.fma (frontend/mathlib/fma.py).
_register("fma", 3, _fma, _f64)
_register("fmaf", 3, _fma, _f32)
for _name, _fn, _n in (("rsqrt", _rsqrt, 1), ("exp10", _exp10, 1), ("sincos", _sincos, 1)):
    _register(_name, _n, _fn, _f64)
    _register(_name + "f", _n, _fn, _f32)


def frexp(x):
    _kernel_only("frexp")


def frexpf(x):
    _kernel_only("frexpf")


@overload(frexp, target="vulkan")
def _frexp(x):
    return lambda x: math.frexp(_f64(x))


@overload(frexpf, target="vulkan")
def _frexpf(x):
    return lambda x: math.frexp(_f32(x))


# The names computed exactly (bit casts, integer functions, classification, exact float
# operations, conversions, the _rn forms), each an overload of its own body: numba-cuda's
# argument and result types (int32 / int64 for the integer names; u* names read their int32
# arguments' bits as unsigned and give the result's bits), NumPy's and CPython's results.
_bits_of = {
    "float_as_int": lambda x: _as_bits(_f32(x)),
    "int_as_float": lambda x: _from_bits(np.int32(x)),
    "double_as_longlong": lambda x: _as_bits(_f64(x)),
    "longlong_as_double": lambda x: _from_bits(np.int64(x)),
    "double2hiint": lambda x: np.int32(_as_bits(_f64(x)) >> 32),
    "double2loint": lambda x: np.int32(_as_bits(_f64(x)) & 0xFFFFFFFF),
    "hiloint2double": lambda x, y: _from_bits((np.int64(x) << 32) | (np.int64(y) & 0xFFFFFFFF)),
}


def _register_exact(name, body):
    """A stub `name` whose overload is `body` itself (its own conversions; its arguments are
    named x and y, as the overload's)."""
    def stub(*args):
        _kernel_only(name)

    stub.__name__ = stub.__qualname__ = name
    nargs = body.__code__.co_argcount
    if nargs == 1:
        overload(stub, target="vulkan")(lambda x: body)
    elif nargs == 2:
        overload(stub, target="vulkan")(lambda x, y: body)
    else:
        overload(stub, target="vulkan")(lambda x, y, z: body)
    globals()[name] = stub


_i32, _i64, _u32, _u64 = np.int32, np.int64, np.uint32, np.uint64


@_device
def _round_half_away(x):
    """C's round(): the nearest integer, halfway cases away from zero (x - trunc(x) is exact)."""
    t = np.trunc(x)
    return t + np.copysign(_f32(1), x) if builtins.abs(x - t) >= 0.5 else t  # x's type


@_device
def _mul64hi_unsigned(x, y):
    """The high 64 bits of the 128-bit product of uint64 x and y, from 32-bit halves."""
    lo_mask = _u64(0xFFFFFFFF)
    a_lo, a_hi = x & lo_mask, x >> _u64(32)
    b_lo, b_hi = y & lo_mask, y >> _u64(32)
    mid1, mid2 = a_hi * b_lo, a_lo * b_hi
    carry = ((a_lo * b_lo) >> _u64(32)) + (mid1 & lo_mask) + (mid2 & lo_mask)
    return a_hi * b_hi + (mid1 >> _u64(32)) + (mid2 >> _u64(32)) + (carry >> _u64(32))


@_device
def _byte_perm(x, y, s):
    """__byte_perm: result byte i is byte (s >> 4i) & 7 of the 8 bytes y:x (x the low four)."""
    pair = (_u64(_u32(y)) << _u64(32)) | _u64(_u32(x))
    out = _u64(0)
    for i in range(4):
        pick = (_u64(_u32(s)) >> _u64(4 * i)) & _u64(7)
        out |= ((pair >> (pick * _u64(8))) & _u64(0xFF)) << _u64(8 * i)
    return _i32(out)


@_device
def _ilogb(x):
    if x != x or x == 0:
        return _i32(-2147483648)  # CUDA's FP_ILOGB0 and FP_ILOGBNAN
    if math.isinf(x):
        return _i32(2147483647)
    return _i32(math.frexp(x)[1] - 1)


@_device
def _logb(x):
    """The float64 x's exponent as a float (logb, of float64 or float32 values)."""
    if x != x:
        return x
    if x == 0:
        return -math.inf
    if math.isinf(x):
        return math.inf
    return _f64(math.frexp(x)[1] - 1)


@_device
def _saturate(x):
    """x clamped to [0, 1], NaN to 0 (__saturatef)."""
    return builtins.min(builtins.max(x, _f32(0)), _f32(1)) if x == x else _f32(0)


def _saturating(rounding, to, lo, hi):
    """A float -> integer conversion as PTX's cvt.rni/rzi/rmi/rpi: rounded, NaN to 0, values
    beyond the integer type's range to its ends (`to` a NumPy integer type, taken as the
    bits of the libdevice name's signed result)."""
    signed = _i64 if lo < 0 else _u64
    result = _i64 if to in (_i64, _u64) else _i32

    def conv(x):
        v = rounding(_f64(x))
        if v != v:
            return result(0)
        if v <= lo:
            return result(signed(lo))
        if v >= hi:
            return result(signed(hi))
        return result(to(v))
    return _device(conv)


_ROUNDING = {"rn": np.rint, "rz": np.trunc, "rd": np.floor, "ru": np.ceil}
_INT_RANGE = {"int": (_i32, -(2**31), 2**31 - 1), "uint": (_u32, 0, 2**32 - 1),
              "ll": (_i64, -(2**63), 2**63 - 1), "ull": (_u64, 0, 2**64 - 1)}
for _src, _conv in (("double", _f64), ("float", _f32)):
    for _dst, (_to, _lo, _hi) in _INT_RANGE.items():
        for _mode, _rounding in _ROUNDING.items():
            _f = _saturating(_rounding, _to, _lo, _hi)
            _bits_of[f"{_src}2{_dst}_{_mode}"] = (lambda f, c: lambda x: f(c(x)))(_f, _conv)

_bits_of.update({
    # integers (numba-cuda's types: int32 / int64 arguments and results; the u* forms read
    # and give the bits of unsigned values)
    "abs": lambda x: _i32(builtins.abs(_i64(_i32(x)))),
    "llabs": lambda x: _i64(builtins.abs(_i64(x))),
    "min": lambda x, y: builtins.min(_i32(x), _i32(y)),
    "max": lambda x, y: builtins.max(_i32(x), _i32(y)),
    "umin": lambda x, y: _i32(builtins.min(_u32(x), _u32(y))),
    "umax": lambda x, y: _i32(builtins.max(_u32(x), _u32(y))),
    "llmin": lambda x, y: builtins.min(_i64(x), _i64(y)),
    "llmax": lambda x, y: builtins.max(_i64(x), _i64(y)),
    "ullmin": lambda x, y: _i64(builtins.min(_u64(x), _u64(y))),
    "ullmax": lambda x, y: _i64(builtins.max(_u64(x), _u64(y))),
    "hadd": lambda x, y: _i32((_i64(_i32(x)) + _i64(_i32(y))) >> 1),
    "rhadd": lambda x, y: _i32((_i64(_i32(x)) + _i64(_i32(y)) + 1) >> 1),
    "uhadd": lambda x, y: _i32((_u64(_u32(x)) + _u64(_u32(y))) >> _u64(1)),
    "urhadd": lambda x, y: _i32((_u64(_u32(x)) + _u64(_u32(y)) + _u64(1)) >> _u64(1)),
    "mulhi": lambda x, y: _i32((_i64(_i32(x)) * _i64(_i32(y))) >> 32),
    "umulhi": lambda x, y: _i32((_u64(_u32(x)) * _u64(_u32(y))) >> _u64(32)),
    "umul64hi": lambda x, y: _i64(_mul64hi_unsigned(_u64(x), _u64(y))),
    # signed: the unsigned high word less y where x < 0 and x where y < 0 (mod 2^64)
    "mul64hi": lambda x, y: _i64(_mul64hi_unsigned(_u64(x), _u64(y))
                                 - (_u64(y) if _i64(x) < 0 else _u64(0))
                                 - (_u64(x) if _i64(y) < 0 else _u64(0))),
    "popc": lambda x: _popc(_u32(x)),
    "popcll": lambda x: _popc(_u64(x)),
    "clz": lambda x: _clz(_u32(x)),
    "clzll": lambda x: _clz(_u64(x)),
    "ffs": lambda x: _ffs(_u32(x)),
    "ffsll": lambda x: _ffs(_u64(x)),
    "brev": lambda x: _i32(_bitreverse(_u32(x))),
    "brevll": lambda x: _i64(_bitreverse(_u64(x))),
    "byte_perm": lambda x, y, z: _byte_perm(x, y, z),
    # classification (int32 0 or 1)
    "isnanf": lambda x: _i32(math.isnan(_f32(x))),
    "isnand": lambda x: _i32(math.isnan(_f64(x))),
    "isinff": lambda x: _i32(math.isinf(_f32(x))),
    "isinfd": lambda x: _i32(math.isinf(_f64(x))),
    "finitef": lambda x: _i32(math.isfinite(_f32(x))),
    "isfinited": lambda x: _i32(math.isfinite(_f64(x))),
    "signbitf": lambda x: _i32(np.signbit(_f32(x))),
    "signbitd": lambda x: _i32(np.signbit(_f64(x))),
    # exact operations
    "ldexp": lambda x, y: math.ldexp(_f64(x), _i32(y)),
    "ldexpf": lambda x, y: math.ldexp(_f32(x), _i32(y)),
    "scalbn": lambda x, y: math.ldexp(_f64(x), _i32(y)),
    "scalbnf": lambda x, y: math.ldexp(_f32(x), _i32(y)),
    "ilogb": lambda x: _ilogb(_f64(x)),
    "ilogbf": lambda x: _ilogb(_f64(_f32(x))),
    "logb": lambda x: _logb(_f64(x)),
    "logbf": lambda x: _f32(_logb(_f64(_f32(x)))),
    "llrint": lambda x: _i64(np.rint(_f64(x))),
    "llrintf": lambda x: _i64(np.rint(_f32(x))),
    "llround": lambda x: _i64(_round_half_away(_f64(x))),
    "llroundf": lambda x: _i64(_round_half_away(_f32(x))),
    "saturatef": lambda x: _saturate(_f32(x)),
    # correctly rounded arithmetic and conversions (the _rn forms; each operation rounded once)
    "dadd_rn": lambda x, y: _f64(x) + _f64(y),
    "dmul_rn": lambda x, y: _f64(x) * _f64(y),
    "ddiv_rn": lambda x, y: _f64(x) / _f64(y),
    "drcp_rn": lambda x: 1.0 / _f64(x),
    "dsqrt_rn": lambda x: math.sqrt(_f64(x)),
    "fadd_rn": lambda x, y: _f32(x) + _f32(y),
    "fsub_rn": lambda x, y: _f32(x) - _f32(y),
    "fmul_rn": lambda x, y: _f32(x) * _f32(y),
    "fdiv_rn": lambda x, y: _f32(x) / _f32(y),
    "frcp_rn": lambda x: _f32(1) / _f32(x),
    "fsqrt_rn": lambda x: math.sqrt(_f32(x)),
    "fma_rn": lambda x, y, z: _fma(_f64(x), _f64(y), _f64(z)),
    "fmaf_rn": lambda x, y, z: _fma(_f32(x), _f32(y), _f32(z)),
    "double2float_rn": lambda x: _f32(_f64(x)),
    "int2double_rn": lambda x: _f64(_i32(x)),
    "int2float_rn": lambda x: _f32(_i32(x)),
    "uint2double_rn": lambda x: _f64(_u32(x)),
    "uint2float_rn": lambda x: _f32(_u32(x)),
    "ll2double_rn": lambda x: _f64(_i64(x)),
    "ll2float_rn": lambda x: _f32(_i64(x)),
    "ull2double_rn": lambda x: _f64(_u64(x)),
    "ull2float_rn": lambda x: _f32(_u64(x)),
    # the fast float32 forms: the accurate ones (within CUDA's looser bounds)
    "fast_fdividef": lambda x, y: _f32(x) / _f32(y),
    "fdividef": lambda x, y: _f32(x) / _f32(y),
    "fast_powf": lambda x, y: math.pow(_f32(x), _f32(y)),
    "fast_sincosf": lambda x: (math.sin(_f32(x)), math.cos(_f32(x))),
})

for _name, _fn in _bits_of.items():
    _register_exact(_name, _fn)
_register("round", 1, _round_half_away, _f64)
_register("roundf", 1, _round_half_away, _f32)


def sad(x, y, z):
    _kernel_only("sad")


@overload(sad, target="vulkan")
def _sad(x, y, z):
    """|x - y| + z on integers (libdevice's __nv_sad)."""
    return lambda x, y, z: (x - y if x > y else y - x) + z


def usad(x, y, z):
    _kernel_only("usad")


@overload(usad, target="vulkan")
def _usad(x, y, z):
    return lambda x, y, z: (x - y if x > y else y - x) + z


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    raise type("UnmappedLibdeviceName", (VulkanUnsupportedError, AttributeError), {})(
        f"cuda.libdevice.{name} is not mapped to Vulkan yet; the math module's function "
        "of the same name usually is (docs/math.md)")
