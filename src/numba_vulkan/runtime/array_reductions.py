"""DeviceArray's whole-array reductions: ``sum``, ``min``, ``max`` (runtime/reduce.py's
kernels) and ``mean`` on them, with NumPy's keyword arguments checked, so that NumPy's
``np.sum(d)``, ``np.amax(d)``, ``np.mean(d)`` ... reach them (NumPy calls the method with
``axis=None, dtype=None, out=None``). ``any`` and ``all`` (runtime/operators.py) use the same
check. Every other NumPy function given a device array (``np.sort(d)``, ``np.cumsum(d)``)
runs on host copies, as before, but says so past HOST_COPY_WARN_BYTES
(``__array_function__``).
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
from numpy.typing import DTypeLike

from .. import checks
from ..errors import VulkanPerformanceWarning
from .device_info import Axis
from .reduce import reduce

#: NumPy functions that run on the device for a device array: the methods of that name.
_ON_DEVICE = {np.sum: "sum", np.mean: "mean", np.min: "min", np.max: "max", np.amin: "min",
              np.amax: "max", np.any: "any", np.all: "all"}

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

    def _whole(self, name, axis=None, dtype=None, out=None, keepdims=False, **unsupported):
        """Check NumPy's reduction keywords (``np.sum(d)`` passes them all): the device
        reduces the whole array into one scalar, so `axis` must be None or name every axis,
        and `dtype`, `out`, `keepdims`, `where` and `initial` be left out."""
        axes = None if axis is None else checks.as_int_tuple(
            axis if isinstance(axis, (tuple, list)) else (axis,), "axis", min_len=0, max_len=32,
            minimum=None)  # fmt: skip
        whole = axes is None or sorted(a % max(self.ndim, 1) for a in axes) == list(range(self.ndim))
        extra = [k for k, v in (("dtype", dtype), ("out", out)) if v is not None]
        extra += ["keepdims"] if keepdims else []
        extra += sorted(unsupported)
        if not whole or extra:
            what = f"axis={axis!r}" if not whole else ", ".join(f"{k}=..." for k in extra)
            raise NotImplementedError(
                f"{name}({what}) of a device array: the device reduces the whole array to one "
                f"scalar (d.{name}() or np.{name}(d)); for other forms reduce on the host "
                f"(np.asarray(d).{name}(...)) or in a kernel"
            )

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
        self._whole("sum", axis, dtype, out, keepdims, **kwargs)
        return reduce(self, "sum")

    def mean(self, axis: Axis = None, dtype: DTypeLike | None = None, out: None = None,
             keepdims: bool = False, **kwargs: Any) -> np.generic:
        """Mean of all elements: the device's sum divided by the size, in NumPy's result dtype
        (float64 for integers and bool, the float type itself for floats; NaN with a
        RuntimeWarning for an empty array, as NumPy).

        Returns
        -------
        numpy scalar
        """
        self._whole("mean", axis, dtype, out, keepdims, **kwargs)
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
        self._whole("min", axis, None, out, keepdims, **kwargs)
        return reduce(self, "min")

    def max(self, axis: Axis = None, out: None = None, keepdims: bool = False,
            **kwargs: Any) -> np.generic:
        """Largest element, computed on the device (NaN if any element is NaN).

        Raises
        ------
        ValueError
            If the array is empty, as in NumPy.
        """
        self._whole("max", axis, None, out, keepdims, **kwargs)
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
