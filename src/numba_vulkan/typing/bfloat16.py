"""bfloat16 in kernels: its Numba type, how it converts and promotes, and its operators.

Numba has no bfloat16, and its numeric code takes a ``types.Float`` of 16 bits
for float16; ``BFloat16`` is therefore a number type of its own (host type
``ml_dtypes.bfloat16``, numba_vulkan/bfloat16_host.py). The front end holds a
bfloat16 value as the float32 that equals it (frontend/bfloat16.py) and stores
it as a 16-bit word.

Types of mixed operations are NumPy's (with ml_dtypes) for the same dtypes,
``promote`` below: bfloat16 with bool, int8 or uint8 gives bfloat16; with
int16, uint16, float16 or float32, float32; with 32- and 64-bit integers and
float64, float64; with complex, that complex type. Python int and float
literals are int64 and float64 in Numba, so ``x * 2`` and ``x + 1.0`` are
float64, as ``float32 * 2`` is in Numba; but ``x ** n`` with an integer n keeps
the bfloat16, as Numba's float ** int keeps the float (computed by multiplication
in float32, rounded once). The operator templates here carry the Vulkan target,
which Numba asks before its generic templates: without them Numba's float32 cases
would take a bfloat16 through its conversion to float32.
"""

import operator

import numpy as np
from numba.core import types
from numba.core.typeconv import Conversion
from numba.core.typing.templates import AbstractTemplate, Registry, signature
from numba.np import numpy_support

from .. import bfloat16_host


class BFloat16(types.Number):
    """The Numba type of bfloat16 values (8 exponent bits as float32, 8 significant bits)."""

    bitwidth = 16  # its size; kernels never take it for float16 (not a types.Float)

    def __init__(self):
        super().__init__(name="bfloat16")

    def cast_python_value(self, value):
        return bfloat16_host.scalar_type()(value)

    def unify(self, typingctx, other):
        return promote(other)

    def can_convert_to(self, typingctx, other):
        if isinstance(other, types.Float):  # exact into float32 and float64
            return Conversion.promote if other.bitwidth >= 32 else Conversion.unsafe
        if isinstance(other, types.Complex):
            return Conversion.safe
        if isinstance(other, (types.Integer, types.Boolean)):
            return Conversion.unsafe
        return None

    def can_convert_from(self, typingctx, other):
        if isinstance(other, types.Boolean) or (
            isinstance(other, types.Integer) and other.bitwidth == 8
        ):
            return Conversion.safe  # every bool, int8 and uint8 is a bfloat16
        if isinstance(other, (types.Integer, types.Float)):
            return Conversion.unsafe  # rounded
        return None


bfloat16 = BFloat16()


def is_bfloat16(ty):
    """Whether the Numba type `ty` is bfloat16 (a literal never is)."""
    return ty is bfloat16 or isinstance(ty, BFloat16)


def promote(other):
    """The type of bfloat16 combined with Numba number type `other` (NumPy's promotion with
    ml_dtypes: ``np.promote_types(bfloat16, other)``); None for other types."""
    other = types.unliteral(other)
    if is_bfloat16(other) or isinstance(other, types.Boolean):
        return bfloat16
    if isinstance(other, types.Integer):
        return {8: bfloat16, 16: types.float32}.get(other.bitwidth, types.float64)
    if isinstance(other, types.Float):
        return types.float32 if other.bitwidth <= 32 else types.float64
    if isinstance(other, types.Complex):
        return other
    return None


def from_dtype(dtype):
    """Numba's type of NumPy dtype `dtype`, bfloat16 included (numpy_support.from_dtype)."""
    if bfloat16_host.is_dtype(dtype):
        return bfloat16
    return numpy_support.from_dtype(dtype)


def as_dtype(ty):
    """The NumPy dtype of Numba type `ty`, bfloat16 included (numpy_support.as_dtype)."""
    if is_bfloat16(types.unliteral(ty)):
        return np.dtype(bfloat16_host.scalar_type())
    return numpy_support.as_dtype(ty)


def value_type(value):
    """The Numba type of a global value in a kernel that names bfloat16: the class
    ``ml_dtypes.bfloat16`` (``nv.bfloat16``), a constructor like ``np.float32``; a
    bfloat16 scalar, a constant. None for anything else."""
    if bfloat16_host.is_class(value):
        return types.NumberClass(bfloat16)
    if bfloat16_host.is_scalar(value):
        return bfloat16
    return None


# ---------------------------------------------------------------- operators

registry = Registry()


def _bfloat16_array(ty):
    return isinstance(ty, types.Array) and is_bfloat16(ty.dtype)


class _Operator(AbstractTemplate):
    """An operator with a bfloat16 operand: both operands taken to the promoted type.
    bfloat16 op bfloat16 gives bfloat16 (computed in float32 and rounded once: the
    front end, frontend/bfloat16.py); comparisons give bool."""

    metadata = {"target": "vulkan"}  # asked before Numba's generic templates
    compare = False

    def generic(self, args, kws):
        if kws or len(args) != 2:
            return None
        x, y = (types.unliteral(a) for a in args)
        if _bfloat16_array(x) or _bfloat16_array(y):
            from ..errors import VulkanUnsupportedError

            raise VulkanUnsupportedError(
                f"'{_SYMBOLS.get(self.key, self.key)}' of {x} and {y}, an array expression on "
                "bfloat16 arrays, is not supported in Vulkan kernels (write the loop over the "
                "elements)"
            )
        if not (is_bfloat16(x) or is_bfloat16(y)):
            return None
        if self.key in (operator.pow, operator.ipow) and is_bfloat16(x) and \
                isinstance(y, types.Integer):  # fmt: skip
            return signature(bfloat16, bfloat16, y)  # Numba's float ** int keeps the float
        common = promote(y if is_bfloat16(x) else x)
        if common is None:
            return None
        return signature(types.boolean if self.compare else common, common, common)


class _Unary(AbstractTemplate):
    """-x, +x and abs(x) of a bfloat16: a bfloat16 (exact: the sign bit changes)."""

    metadata = {"target": "vulkan"}

    def generic(self, args, kws):
        if kws or len(args) != 1 or not is_bfloat16(types.unliteral(args[0])):
            return None
        return signature(bfloat16, bfloat16)


class _Convert(AbstractTemplate):
    """int(x) and float(x) of a bfloat16: Python's int64 and float64, as for float32."""

    metadata = {"target": "vulkan"}
    result = None

    def generic(self, args, kws):
        if kws or len(args) != 1 or not is_bfloat16(types.unliteral(args[0])):
            return None
        return signature(self.result, bfloat16)


_ARITHMETIC = (operator.add, operator.sub, operator.mul, operator.truediv, operator.floordiv,
               operator.mod, operator.pow, operator.iadd, operator.isub, operator.imul,
               operator.itruediv, operator.ifloordiv, operator.imod, operator.ipow)  # fmt: skip
_COMPARISONS = (operator.eq, operator.ne, operator.lt, operator.le, operator.gt, operator.ge)
_SYMBOLS = {operator.add: "+", operator.sub: "-", operator.mul: "*", operator.truediv: "/",
            operator.floordiv: "//", operator.mod: "%", operator.pow: "**"}  # fmt: skip


def _register(op, base, **attrs):
    name = f"BFloat16Template_{getattr(op, '__name__', op)}"
    template = type(name, (base,), {"key": op, **attrs})
    registry.register_global(op, types.Function(template))


for _op in _ARITHMETIC:
    _register(_op, _Operator)
for _op in _COMPARISONS:
    _register(_op, _Operator, compare=True)
for _op in (operator.neg, operator.pos, abs):
    _register(_op, _Unary)
_register(int, _Convert, result=types.int64)
_register(float, _Convert, result=types.float64)


# ---------------------------------------------------------------- intrinsics (cuda.bf16)


def fma(a, b, c):
    """a * b + c of bfloat16 values, rounded once (CUDA's __hfma): kernels only."""
    raise NotImplementedError("the bfloat16 fma can only be called inside a kernel")


def as_bits(x):
    """The 16-bit word of bfloat16 `x`, a uint16 (``__bfloat16_as_ushort``): kernels only."""
    raise NotImplementedError("bfloat16 bit casts can only be used inside a kernel")


def from_bits(word):
    """The bfloat16 whose 16-bit word is the low 16 bits of integer `word`: kernels only."""
    raise NotImplementedError("bfloat16 bit casts can only be used inside a kernel")


class _Intrinsic(AbstractTemplate):
    def generic(self, args, kws):
        if kws:
            return None
        args = tuple(types.unliteral(a) for a in args)
        key = type(self).key  # a function: self.key would be a bound method
        if key is fma and len(args) == 3 and all(is_bfloat16(a) for a in args):
            return signature(bfloat16, *args)
        if key is as_bits and len(args) == 1 and is_bfloat16(args[0]):
            return signature(types.uint16, *args)
        if key is from_bits and len(args) == 1 and isinstance(args[0], types.Integer):
            return signature(bfloat16, *args)
        return None


for _fn in (fma, as_bits, from_bits):
    registry.register_global(
        _fn, types.Function(type(f"BFloat16Template_{_fn.__name__}", (_Intrinsic,), {"key": _fn}))
    )
