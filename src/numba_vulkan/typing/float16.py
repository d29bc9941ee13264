"""Typing of float16 arithmetic in kernels, as numba-cuda types it.

Numba's generic templates know no float16 loops: they convert float16 operands to
float32 and give float32 results (``a * b`` of two float16 values is a float32), and
some of them fail outright on float16 (``min``, ``max``, ``int``). The templates here
give float16 results, as numba-cuda's (cuda_fp16.py, cudamath.py) and NumPy do:

* ``+ - * / // % **`` (and their in-place forms) of two float16 values, or of a
  float16 and a value that converts to float16 exactly, by promotion or safely in
  Numba's conversion rules (bool and int8): a float16; comparisons a bool.
  numba-cuda's rule, extended from ``+ - * /`` to ``// % **``. Any other operand
  (float32, float64, int16 and wider, uint8, Python ints and floats, which Numba types
  int64 and float64) keeps Numba's own rules: float16 with float32, int16 or uint8
  gives float32, with int32, int64 or float64 a float64.
* unary ``-``, ``+``, ``abs``: float16.
* ``min``/``max`` of scalars: float16 where every operand joins float16 as above,
  else the type Numba unifies them to (float16 counted as float32).
* numba-cuda's float16 math: ``math.sin, cos, exp, exp2, log, log2, log10, sqrt,
  fabs, ceil, floor, trunc, tanh`` of a float16 give a float16 (``floor``, ``ceil``
  and ``trunc`` too, as in numba-cuda, where numba.njit gives an int for float32 and
  float64). The other math functions, and NumPy's ufuncs on float16 scalars, compute
  in float32 with a float32 result, as in numba-cuda (Numba has no float16 loops for
  NumPy's ufuncs).
* ``int(h)``: an int64; ``float(h)``: a float64 (Python's rule, which numba.njit
  follows for float32; numba-cuda gives a float16).

The templates are registered for the vulkan target, which Numba tries before the
generic templates of the same function (numba.core.utils.order_by_target_specificity),
so they win wherever they give a signature. frontend/float16.py lowers the results:
float32 arithmetic rounded once to float16.
"""

import builtins
import math
import operator

from numba.core import types
from numba.core.typeconv import Conversion
from numba.core.typing.templates import AbstractTemplate, Registry, signature

registry = Registry()

half = types.float16

_VULKAN = {"target": "vulkan"}


def fma(a, b, c):
    """a * b + c rounded once to float16 (CUDA's __hfma; cuda.fp16.hfma): kernels only."""
    raise NotImplementedError("the float16 fma can only be called inside a kernel")


def _joins_half(context, ty):
    """Whether `ty` converts to float16 exactly, by promotion or safely (numba-cuda's rule)."""
    conv = context.can_convert(ty, half)
    return conv is not None and conv <= Conversion.safe


def _half_operands(context, args):
    """(float16, float16) for two operands, one a float16 and the other joining it; else None."""
    if len(args) != 2:
        return None
    x, y = args
    if x != half and y != half:
        return None
    other = y if x == half else x
    return (half, half) if _joins_half(context, other) else None


class _HalfTemplate(AbstractTemplate):
    metadata = _VULKAN  # tried before Numba's generic templates


class HalfArithmetic(_HalfTemplate):
    def generic(self, args, kws):
        operands = None if kws else _half_operands(self.context, args)
        return signature(half, *operands) if operands else None


class HalfComparison(_HalfTemplate):
    def generic(self, args, kws):
        operands = None if kws else _half_operands(self.context, args)
        return signature(types.boolean, *operands) if operands else None


class HalfUnary(_HalfTemplate):
    def generic(self, args, kws):
        if not kws and len(args) == 1 and args[0] == half:
            return signature(half, half)
        return None


class HalfMinMax(_HalfTemplate):
    """min/max of scalars with a float16 among them (Numba's own templates fail there)."""

    def generic(self, args, kws):
        if kws or not args:
            return None
        items = args
        if len(args) == 1 and isinstance(args[0], types.BaseTuple):
            items = args[0].types
        items = [types.unliteral(t) for t in items]
        if half not in items or not all(isinstance(t, (types.Number, types.Boolean))
                                        for t in items):  # fmt: skip
            return None
        if all(t == half or _joins_half(self.context, t) for t in items):
            ret = half
        else:
            ret = self.context.unify_types(*[types.float32 if t == half else t for t in items])
            if ret is None:
                return None
        return signature(ret, *args)


class HalfToInt(_HalfTemplate):
    def generic(self, args, kws):
        if not kws and len(args) == 1 and args[0] == half:
            return signature(types.intp, half)
        return None


class HalfToFloat(_HalfTemplate):
    def generic(self, args, kws):
        if not kws and len(args) == 1 and args[0] == half:
            return signature(types.float64, half)
        return None


class HalfFma(_HalfTemplate):
    def generic(self, args, kws):
        if not kws and len(args) == 3 and all(a == half for a in args):
            return signature(half, half, half, half)
        return None


#: Operators typed float16 on float16 operands.
ARITHMETIC = (
    operator.add, operator.iadd, operator.sub, operator.isub, operator.mul, operator.imul,
    operator.truediv, operator.itruediv, operator.floordiv, operator.ifloordiv,
    operator.mod, operator.imod, operator.pow, operator.ipow,
)  # fmt: skip
COMPARISONS = (operator.eq, operator.ne, operator.lt, operator.le, operator.gt, operator.ge)
UNARY = (operator.neg, operator.pos, builtins.abs, operator.abs)
#: numba-cuda's math functions with a float16 case (cudamath.py, fp16.py's tanh).
MATH = (
    math.sin, math.cos, math.exp, math.exp2, math.log, math.log2, math.log10, math.sqrt,
    math.fabs, math.ceil, math.floor, math.trunc, math.tanh,
)  # fmt: skip


def _register(fn, template):
    name = getattr(fn, "__name__", "fn")
    registry.register_global(
        fn, types.Function(type(f"Float16_{name}", (template,), {"key": fn}))
    )


for _fn in ARITHMETIC:
    _register(_fn, HalfArithmetic)
for _fn in COMPARISONS:
    _register(_fn, HalfComparison)
for _fn in UNARY + MATH:
    _register(_fn, HalfUnary)
for _fn in (builtins.min, builtins.max):
    _register(_fn, HalfMinMax)
_register(builtins.int, HalfToInt)
_register(builtins.float, HalfToFloat)
_register(fma, HalfFma)
