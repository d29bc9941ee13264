"""DeviceArray's whole-array reductions: ``sum``, ``min``, ``max`` (runtime/reduce.py's
kernels) and ``mean`` on them, with NumPy's keyword arguments checked, so that NumPy's
``np.sum(d)``, ``np.amax(d)``, ``np.mean(d)`` ... reach them (NumPy calls the method with
``axis=None, dtype=None, out=None``). ``any`` and ``all`` (runtime/operators.py) use the same
check."""

import warnings

import numpy as np

from .. import checks


class WholeArrayReductions:
    """The reductions of DeviceArray (a mixin: uses ``ndim``, ``size`` and ``dtype``)."""

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

    def sum(self, axis=None, dtype=None, out=None, keepdims=False, **kwargs):
        """Sum of all elements, computed on the device.

        NumPy's keywords are accepted in their whole-array form (``np.sum(d)`` works);
        others raise NotImplementedError.

        Returns
        -------
        numpy scalar
            Of NumPy's result dtype (int64/uint64 for smaller integers and bool).
        """
        from .reduce import reduce

        self._whole("sum", axis, dtype, out, keepdims, **kwargs)
        return reduce(self, "sum")

    def mean(self, axis=None, dtype=None, out=None, keepdims=False, **kwargs):
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

    def min(self, axis=None, out=None, keepdims=False, **kwargs):
        """Smallest element, computed on the device (NaN if any element is NaN).

        Raises
        ------
        ValueError
            If the array is empty, as in NumPy.
        """
        from .reduce import reduce

        self._whole("min", axis, None, out, keepdims, **kwargs)
        return reduce(self, "min")

    def max(self, axis=None, out=None, keepdims=False, **kwargs):
        """Largest element, computed on the device (NaN if any element is NaN).

        Raises
        ------
        ValueError
            If the array is empty, as in NumPy.
        """
        from .reduce import reduce

        self._whole("max", axis, None, out, keepdims, **kwargs)
        return reduce(self, "max")
