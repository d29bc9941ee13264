"""DeviceArray's reductions: ``sum``, ``min``, ``max`` of the whole array (runtime/reduce.py's
kernels, a NumPy scalar) and ``mean`` on them, with NumPy's keyword arguments checked, so that
NumPy's ``np.sum(d)``, ``np.amax(d)``, ``np.mean(d)`` ... reach them (NumPy calls the method
with ``axis=None, dtype=None, out=None``); over some axes, with ``keepdims`` or ``dtype``,
they and ``prod`` give device arrays (runtime/array_functions.py). ``any`` and ``all``
(runtime/operators.py) reduce whole arrays only. The NumPy functions of
runtime/array_functions.py run on the device; every other NumPy function given a device
array (``np.sort(d)``, ``np.cumsum(d)``) runs on host copies, as before, but says so past
HOST_COPY_WARN_BYTES (``__array_function__``).
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
from numpy.typing import DTypeLike

from .. import checks
from ..errors import VulkanPerformanceWarning
from . import array_functions
from .device_info import Axis
from .reduce import reduce

#: NumPy functions that run on the device for a device array: the methods of that name.
_ON_DEVICE = {np.sum: "sum", np.mean: "mean", np.min: "min", np.max: "max", np.amin: "min",
              np.amax: "max", np.any: "any", np.all: "all", np.prod: "prod"}

#: A NumPy function without a device form copies its device arrays to the host; past this
#: many bytes it warns (VulkanPerformanceWarning).
HOST_COPY_WARN_BYTES = 1 << 20


class WholeArrayReductions:
    """The reductions of DeviceArray (a mixin: uses ``ndim``, ``size`` and ``dtype``), and
    NumPy's functions on it."""

    def __array_function__(self, func, types, args, kwargs):
        """NumPy's functions: the reductions above on the device; any other runs NumPy's own
        code on host copies of the device arrays among its arguments, with a
        VulkanPerformanceWarning when they hold HOST_COPY_WARN_BYTES or more."""
        name = _ON_DEVICE.get(func)
        if name is not None and args and args[0] is self:
            return getattr(self, name)(*args[1:], **kwargs)
        device_form = array_functions.FUNCTIONS.get(func)
        if device_form is not None:
            result = device_form(*args, **kwargs)
            if result is not NotImplemented:
                return result
        created = array_functions.LIKE_FUNCTIONS.get(func)
        if created is not None:  # np.ones(..., like=self)
            result = created(*args, like=self, **kwargs)
            if result is not NotImplemented:
                return result
        if any(_is_device(v) for v in _leaves(kwargs.get("out"))):
            raise NotImplementedError(
                f"np.{func.__name__}(..., out=<device array>): this function runs on the host; "
                "pass a NumPy array as out, or copy the result with d.copy_to_device(result)")
        copied = sum(v.nbytes for v in _leaves((args, kwargs)) if _is_device(v))
        if copied >= HOST_COPY_WARN_BYTES:
            warnings.warn(
                f"np.{func.__name__} has no device form: it copies {copied:,} bytes of device "
                "arrays to the host and runs NumPy there (write the step as a kernel to keep "
                "it on the device)", VulkanPerformanceWarning, stacklevel=2)  # fmt: skip
        return func(*_to_host(args), **_to_host(kwargs))

    def _whole(self, name, axis=None, dtype=None, out=None, keepdims=False, axes_ok=True,
               **unsupported):
        """Check NumPy's reduction keywords (``np.sum(d)`` passes them all). True for the
        whole-array scalar form (`axis` None or naming every axis, no `dtype`, no
        `keepdims`); False for the forms that give a device array (runtime/array_functions.py)
        where `axes_ok`. `out`, `where` and `initial` are refused."""
        axes = None if axis is None else checks.as_int_tuple(
            axis if isinstance(axis, (tuple, list)) else (axis,), "axis", min_len=0, max_len=32,
            minimum=None)  # fmt: skip
        whole = axes is None or sorted(a % max(self.ndim, 1) for a in axes) == list(range(self.ndim))
        extra = ["out"] if out is not None else []
        extra += sorted(unsupported)
        partial = not whole or keepdims or dtype is not None
        if extra or (partial and not axes_ok):
            what = ", ".join(f"{k}=..." for k in extra) if extra else (
                f"axis={axis!r}" if not whole else "keepdims=..., dtype=...")
            raise NotImplementedError(
                f"{name}({what}) of a device array: sum, prod, mean, min and max reduce over "
                f"axes into a device array (d.{name}(axis=..., keepdims=...) is not one of "
                f"them); reduce on the host (np.asarray(d).{name}(...)) or in a kernel"
            )
        return not partial

    def sum(self, axis: Axis = None, dtype: DTypeLike | None = None, out: None = None,
            keepdims: bool = False, **kwargs: Any) -> np.generic:
        """Sum of all elements, computed on the device.

        NumPy's keywords are accepted in their whole-array form (``np.sum(d)`` works);
        others raise NotImplementedError.

        Returns
        -------
        numpy scalar
            Of NumPy's result dtype (int64/uint64 for smaller integers and bool).
        """
        if not self._whole("sum", axis, dtype, out, keepdims, **kwargs):
            return array_functions.reduce_axes(self, "sum", axis, dtype, keepdims)
        return reduce(self, "sum")

    def prod(self, axis: Axis = None, dtype: DTypeLike | None = None, out: None = None,
             keepdims: bool = False, **kwargs: Any) -> Any:
        """Product of the elements over `axis` (all by default), computed on the device: a
        device array of NumPy's result shape and dtype, a NumPy scalar for the whole array
        (``np.prod(d)`` too)."""
        self._whole("prod", axis, dtype, out, keepdims, **kwargs)
        result = array_functions.reduce_axes(self, "prod", axis, dtype, keepdims)
        return result if result.ndim else result[()]

    def mean(self, axis: Axis = None, dtype: DTypeLike | None = None, out: None = None,
             keepdims: bool = False, **kwargs: Any) -> np.generic:
        """Mean of all elements: the device's sum divided by the size, in NumPy's result dtype
        (float64 for integers and bool, the float type itself for floats; NaN with a
        RuntimeWarning for an empty array, as NumPy).

        Returns
        -------
        numpy scalar
        """
        if not self._whole("mean", axis, dtype, out, keepdims, **kwargs):
            return array_functions.reduce_axes(self, "mean", axis, dtype, keepdims)
        kind = self.dtype.kind
        result = np.dtype(np.float64) if kind in "biu" else self.dtype
        if self.size == 0:
            warnings.warn("Mean of empty slice.", RuntimeWarning, stacklevel=2)
            return result.type(np.nan)
        total = self.sum()
        return result.type(result.type(total) / self.size)

    def min(self, axis: Axis = None, out: None = None, keepdims: bool = False,
            **kwargs: Any) -> np.generic:
        """Smallest element, computed on the device (NaN if any element is NaN).

        Raises
        ------
        ValueError
            If the array is empty, as in NumPy.
        """
        if not self._whole("min", axis, None, out, keepdims, **kwargs):
            return array_functions.reduce_axes(self, "min", axis, None, keepdims)
        return reduce(self, "min")

    def max(self, axis: Axis = None, out: None = None, keepdims: bool = False,
            **kwargs: Any) -> np.generic:
        """Largest element, computed on the device (NaN if any element is NaN).

        Raises
        ------
        ValueError
            If the array is empty, as in NumPy.
        """
        if not self._whole("max", axis, None, out, keepdims, **kwargs):
            return array_functions.reduce_axes(self, "max", axis, None, keepdims)
        return reduce(self, "max")


def _is_device(value):
    return isinstance(value, WholeArrayReductions)


def _leaves(value):
    """The items of nested tuples, lists and dicts."""
    if isinstance(value, (tuple, list)):
        for v in value:
            yield from _leaves(v)
    elif isinstance(value, dict):
        for v in value.values():
            yield from _leaves(v)
    else:
        yield value


def _to_host(value):
    """`value` with each device array among nested tuples, lists and dicts copied to the host."""
    if _is_device(value):
        return np.asarray(value)
    if isinstance(value, (tuple, list)):
        return type(value)(_to_host(v) for v in value)
    if isinstance(value, dict):
        return {k: _to_host(v) for k, v in value.items()}
    return value
