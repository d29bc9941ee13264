"""``cuda.libdevice``: numba.cuda's names for CUDA's libdevice math, on our math library.

numba.cuda exposes libdevice's functions by their C names: ``libdevice.sin`` (double)
and ``libdevice.sinf`` (float), ``sincos`` returning a pair, ``frexp`` a (fraction,
exponent) pair, ``sad`` the sum of an absolute difference. Here each name is a function
with an ``@overload`` for the Vulkan target calling our math (docs/math.md for the
accuracy: within a few ulp, as libdevice's own are); the ``f`` variants compute in
float32. A libdevice name not listed here raises an AttributeError naming it (through
the module's ``__getattr__``), never a wrong function.
"""

import math

import numpy as np
from numba.extending import overload

from ..errors import VulkanUnsupportedError
from ..typing.fma import fma as _fma
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
}
_BINARY = {
    "atan2": math.atan2, "copysign": math.copysign, "fmax": np.fmax, "fmin": np.fmin,
    "hypot": math.hypot, "pow": math.pow, "fdim": None,
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


# Bit casts (__nv_float_as_int & co.): a float's word as an integer of its width and back.
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
    if body.__code__.co_argcount == 1:
        overload(stub, target="vulkan")(lambda x: body)
    else:
        overload(stub, target="vulkan")(lambda x, y: body)
    globals()[name] = stub


for _name, _fn in _bits_of.items():
    _register_exact(_name, _fn)


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
