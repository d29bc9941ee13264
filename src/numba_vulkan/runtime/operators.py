"""DeviceArray as an array to NumPy and to Python's operators (a mixin of DeviceArray).

- ``__array_ufunc__``: NumPy's ufuncs on device arrays run on the device
  (numba_vulkan/ufunc/numpy_ufuncs.py, which registers itself in
  runtime/compiler_hook.py: the runtime does not import the compiler);
- the operators ``+ - * / // % ** & | ^ << >>``, their reflected and in-place
  forms, unary ``- + ~ abs`` and the comparisons call those ufuncs, as
  NumPy's ndarray does, so ``d + 1`` is ``np.add(d, 1)`` with NumPy's types;
- ``@``, ``@=`` and ``np.matmul`` are the matrix product of numba_vulkan/linalg
  (registered in runtime/compiler_hook.py as the ufuncs are);
- comparisons are element-wise, so device arrays are not hashable, and
  ``bool(d)`` is refused for more than one element (as NumPy refuses it).
"""

from __future__ import annotations

from typing import Any, TypeVar

import numpy as np
from numpy.typing import DTypeLike

from . import compiler_hook
from .device_info import Axis

#: The array a method is called on (DeviceArray, which this module cannot import).
_Array = TypeVar("_Array", bound="ArrayOperators")


def _array_like(value):
    return isinstance(value, (ArrayOperators, np.ndarray, np.generic, bool, int, float, complex,
                              list, tuple))


def _binary(ufunc):
    def op(self, other):
        return ufunc(self, other)

    def rop(self, other):
        return ufunc(other, self)

    def iop(self, other):
        ufunc(self, other, out=(self,))
        return self

    return op, rop, iop


class ArrayOperators:
    """The operator and NumPy-protocol methods of DeviceArray."""

    __slots__ = ()
    __array_priority__ = 100  # ndarray <op> device array defers to us

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if ufunc is np.matmul:
            return compiler_hook.matmul(method, inputs, kwargs)
        return compiler_hook.array_ufunc(ufunc, method, inputs, kwargs)

    def __matmul__(self, other):
        return np.matmul(self, other)

    def __rmatmul__(self, other):
        return np.matmul(other, self)

    def __imatmul__(self, other):
        np.matmul(self, other, out=(self,))
        return self

    __hash__ = None  # == is element-wise

    def __bool__(self):
        if self.size != 1:
            raise ValueError(
                "The truth value of a device array with more than one element is ambiguous. "
                "Use a.any() or a.all()"
            )
        return bool(self.copy_to_host().reshape(-1)[0])

    def __neg__(self):
        return np.negative(self)

    def __pos__(self):
        return np.positive(self)

    def __abs__(self):
        return np.absolute(self)

    def __invert__(self):
        return np.invert(self)

    def __lt__(self, other):
        return np.less(self, other)

    def __le__(self, other):
        return np.less_equal(self, other)

    def __gt__(self, other):
        return np.greater(self, other)

    def __ge__(self, other):
        return np.greater_equal(self, other)

    def __eq__(self, other):
        if not _array_like(other):
            return NotImplemented  # d == None, d == "x": Python's identity fallback
        return np.equal(self, other)

    def __ne__(self, other):
        if not _array_like(other):
            return NotImplemented
        return np.not_equal(self, other)

    def astype(self: _Array, dtype: DTypeLike, copy: bool = True) -> _Array:
        """A new device array with the elements converted to `dtype` (NumPy's conversion:
        floats to ints truncate, to bool is ``!= 0``), computed on the device; with
        ``copy=False`` the array itself where it already has that dtype."""
        if not copy and np.dtype(dtype) == self.dtype:
            return self
        return compiler_hook.cast_on_device(self, np.dtype(dtype))

    def any(self, axis: Axis = None, out: None = None, keepdims: bool = False,
            **kwargs: Any) -> np.bool_:
        """Whether any element is true (computed on the device; ``np.any(d)`` too)."""
        self._whole("any", axis, None, out, keepdims, axes_ok=False, **kwargs)
        return np.bool_(np.not_equal(self, 0).sum() > 0) if self.size else np.False_

    def all(self, axis: Axis = None, out: None = None, keepdims: bool = False,
            **kwargs: Any) -> np.bool_:
        """Whether every element is true (computed on the device; ``np.all(d)`` too)."""
        self._whole("all", axis, None, out, keepdims, axes_ok=False, **kwargs)
        return np.bool_(np.equal(self, 0).sum() == 0) if self.size else np.True_


for _name, _ufunc in {
    "add": np.add,
    "sub": np.subtract,
    "mul": np.multiply,
    "truediv": np.true_divide,
    "floordiv": np.floor_divide,
    "mod": np.remainder,
    "pow": np.power,
    "and": np.bitwise_and,
    "or": np.bitwise_or,
    "xor": np.bitwise_xor,
    "lshift": np.left_shift,
    "rshift": np.right_shift,
}.items():
    _op, _rop, _iop = _binary(_ufunc)
    setattr(ArrayOperators, f"__{_name}__", _op)
    setattr(ArrayOperators, f"__r{_name}__", _rop)
    setattr(ArrayOperators, f"__i{_name}__", _iop)


def _divmod(self, other):
    return np.divmod(self, other)


def _rdivmod(self, other):
    return np.divmod(other, self)


ArrayOperators.__divmod__ = _divmod
ArrayOperators.__rdivmod__ = _rdivmod
