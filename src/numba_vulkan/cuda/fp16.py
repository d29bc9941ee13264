"""``cuda.fp16``: numba.cuda's half-precision functions, on the kernels' float16 arithmetic.

Each name is a function with an ``@overload`` for the Vulkan target, written with the
float16 operators of typing/float16.py: a float16 result is computed in float32 and
rounded once to the nearest float16 (frontend/float16.py). Arguments that are not
float16 are converted to it first (``np.float16(x)``, rounded once), as CUDA C converts
them. What each gives, against CUDA's definitions (docs/cuda-compat.md):

* ``hadd hsub hmul hdiv hneg habs hsqrt hrcp hceil hfloor htrunc hrint``: the correctly
  rounded float16 result (CUDA's ``hrcp`` is an approximation; this is ``1 / a``).
* ``hfma``: ``a * b + c`` rounded once (fused), as ``__hfma``.
* ``hexp hexp2 hexp10 hlog hlog2 hlog10 hsin hcos htanh hrsqrt``: the float32 math
  library's result rounded once to float16 (within 1 float16 ulp; CUDA's are
  approximations too).
* ``heq hne hge hgt hle hlt``: ordered comparisons, False where an operand is NaN
  (``hne`` too: CUDA's ``__hne``, not Python's ``!=``).
* ``hmax hmin``: the other operand where one is NaN, NaN where both are, and
  +0.0 > -0.0 (CUDA's ``__hmax``/``__hmin``, which is ``np.fmax``/``np.fmin`` but for
  the sign of zero).

numba.cuda's other fp16 names (the rounding-mode conversions ``__float2half_rz`` ...,
the saturating forms, ``atomicAdd``) raise an AttributeError that is also a
VulkanUnsupportedError naming them.
"""

import math

import numpy as np
from numba.core import types
from numba.core.errors import TypingError
from numba.extending import overload

from ..errors import VulkanUnsupportedError
from ..typing.float16 import fma as _fused_fma

_h = np.float16
_f = np.float32


def _kernel_only(name):
    raise NotImplementedError(f"cuda.fp16.{name} can only be used inside a kernel")


def _check(name, args):
    for a in args:
        if not isinstance(types.unliteral(a), (types.Float, types.Integer, types.Boolean)):
            raise TypingError(f"cuda.fp16.{name} takes float16 values (or numbers converted "
                              f"to float16), not {a}")


def _register(name, nargs, impl):
    """The stub `name` with an overload for the Vulkan target returning `impl`."""

    def stub(*args):
        _kernel_only(name)

    stub.__name__ = stub.__qualname__ = name
    stub.__module__ = __name__
    if nargs == 1:
        @overload(stub, target="vulkan")
        def _one(a):
            _check(name, (a,))
            return impl
    elif nargs == 2:
        @overload(stub, target="vulkan")
        def _two(a, b):
            _check(name, (a, b))
            return impl
    else:
        @overload(stub, target="vulkan")
        def _three(a, b, c):
            _check(name, (a, b, c))
            return impl
    globals()[name] = stub
    return stub


def _hmax(a, b):
    x, y = _h(a), _h(b)
    if x != x:
        return y
    if y != y or x > y:
        return x
    if x == y and np.signbit(y):  # zeros: +0.0 is the larger
        return x
    return y


def _hmin(a, b):
    x, y = _h(a), _h(b)
    if x != x:
        return y
    if y != y or x < y:
        return x
    if x == y and np.signbit(x):  # zeros: -0.0 is the smaller
        return x
    return y


_UNARY = {
    "hneg": lambda a: -_h(a),
    "habs": lambda a: abs(_h(a)),
    "hsqrt": lambda a: math.sqrt(_h(a)),
    "hrsqrt": lambda a: _h(_f(1) / math.sqrt(_f(_h(a)))),
    "hrcp": lambda a: _h(1) / _h(a),
    "hexp": lambda a: math.exp(_h(a)),
    "hexp2": lambda a: math.exp2(_h(a)),
    "hexp10": lambda a: _h(math.pow(_f(10), _f(_h(a)))),
    "hlog": lambda a: math.log(_h(a)),
    "hlog2": lambda a: math.log2(_h(a)),
    "hlog10": lambda a: math.log10(_h(a)),
    "hsin": lambda a: math.sin(_h(a)),
    "hcos": lambda a: math.cos(_h(a)),
    "htanh": lambda a: math.tanh(_h(a)),
    "hceil": lambda a: math.ceil(_h(a)),
    "hfloor": lambda a: math.floor(_h(a)),
    "htrunc": lambda a: math.trunc(_h(a)),
    "hrint": lambda a: _h(np.rint(_h(a))),
}
_BINARY = {
    "hadd": lambda a, b: _h(a) + _h(b),
    "hsub": lambda a, b: _h(a) - _h(b),
    "hmul": lambda a, b: _h(a) * _h(b),
    "hdiv": lambda a, b: _h(a) / _h(b),
    "heq": lambda a, b: _h(a) == _h(b),
    "hne": lambda a, b: _h(a) < _h(b) or _h(a) > _h(b),  # ordered: NaN gives False
    "hge": lambda a, b: _h(a) >= _h(b),
    "hgt": lambda a, b: _h(a) > _h(b),
    "hle": lambda a, b: _h(a) <= _h(b),
    "hlt": lambda a, b: _h(a) < _h(b),
    "hmax": _hmax,
    "hmin": _hmin,
}

for _name, _impl in _UNARY.items():
    _register(_name, 1, _impl)
for _name, _impl in _BINARY.items():
    _register(_name, 2, _impl)
_register("hfma", 3, lambda a, b, c: _fused_fma(_h(a), _h(b), _h(c)))

# numba.cuda's double-underscore spellings of the same functions (cuda_fp16.h's names)
for _name in ("habs", "hadd", "hdiv", "heq", "hfma", "hge", "hgt", "hle", "hlt", "hmax",
              "hmin", "hmul", "hne", "hneg", "hsub"):
    globals()[f"__{_name}"] = globals()[_name]

__all__ = sorted(list(_UNARY) + list(_BINARY) + ["hfma"])


class UnmappedFp16Name(VulkanUnsupportedError, AttributeError):
    """A numba.cuda fp16 name not provided here (also an AttributeError, for hasattr)."""


def __getattr__(name):
    if name.startswith("__") and name.endswith("__"):
        raise AttributeError(name)
    raise UnmappedFp16Name(
        f"cuda.fp16.{name} is not mapped to Vulkan yet (mapped: {', '.join(__all__)})")
