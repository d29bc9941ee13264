"""DeviceArray's views and element access (a mixin of runtime/array.py's class): indexing
and assignment, transpose, reshape, ravel.

Views are computed with NumPy itself: a dummy array with the same shape and strides over
one element of memory (never read) is indexed, transposed or reshaped, and the result's
strides and data-pointer offset give the view. A C-contiguous array's reshape, and integers
and slices of step 1 over the leading axes, compute NumPy's result for them directly
(reductions, Dask's chunks and the matrix product make such views on every call). Index
arrays and masks go to runtime/indexing.py.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, TypeVar

import numpy as np
from numpy.lib.stride_tricks import as_strided

from .. import _core, bfloat16_host, checks
from . import array_functions
from . import indexing as _indexing

#: The array a method is called on (DeviceArray, which this module cannot import).
_Array = TypeVar("_Array", bound="ArrayViews")


def _raw(host):
    """`host` as the buffer transfers take it: records (structured dtypes) as their bytes,
    bfloat16 as its 16-bit words."""
    if bfloat16_host.is_dtype(host.dtype):
        return host.view(np.uint16)
    return host.view(np.uint8) if host.dtype.fields is not None else host


def _c_strides(shape, itemsize):
    strides, step = [], itemsize
    for n in reversed(shape):
        strides.append(step)
        step *= max(int(n), 1)
    return tuple(reversed(strides))


def _f_strides(shape, itemsize):
    return _c_strides(shape[::-1], itemsize)[::-1]


class ArrayViews:
    """The views and element access of DeviceArray (a mixin: uses the base class's fields
    ``_buffer``, ``_offset``, ``_dev_strides``, ``_itemsize`` and the array's ``shape``,
    ``dtype``, ``_stored_dtype``, ``copy`` and ``copy_to_device``)."""

    def _dummy(self):
        return as_strided(np.zeros(1, self._stored_dtype), self.shape, self._dev_strides)

    def _view_from(self, dummy, view):
        base = dummy.__array_interface__["data"][0]
        delta = view.__array_interface__["data"][0] - base
        return self._view(view.shape, self._offset + delta, view.strides)

    def _view(self, shape, offset, strides):
        """A view of this array's buffer: `shape`, byte `offset` and device `strides` from a
        NumPy view of _dummy() or a C-contiguous reshape (valid by construction: nothing is
        checked again)."""
        cls = array_functions.DEVICE_ARRAY
        view = cls.__new__(cls)
        _core.DeviceArrayBase.__init__(view, self._device_core, self._buffer, offset,
                                       tuple(shape), tuple(strides), self._code, self._itemsize)
        view.device = self.device
        view.dtype = self.dtype
        view._stored_dtype = self._stored_dtype
        return view

    def _element_offset(self, key):
        """Byte offset of one element if `key` (a tuple) indexes every axis with an int, else
        None."""
        if len(key) != self.ndim or not all(
            isinstance(k, (int, np.integer)) and not isinstance(k, bool) for k in key
        ):
            return None
        offset = self._offset
        for axis, (k, n, s) in enumerate(zip(key, self.shape, self._dev_strides)):
            k = int(k)
            if not -n <= k < n:
                raise IndexError(f"index {k} is out of bounds for axis {axis} with size {n}")
            offset += (k + n if k < 0 else k) * s
        return offset

    def _basic_key(self, key):
        """`key` as a tuple of basic indices (ints, slices, ..., None), or IndexError."""
        key = key if isinstance(key, tuple) else (key,)
        for k in key:
            if isinstance(k, bool) or not (
                k is None or k is Ellipsis or isinstance(k, (int, np.integer, slice))
            ):
                raise IndexError(
                    "device arrays support integers, slices, ..., None, integer arrays and "
                    f"boolean masks as indices, not {type(k).__name__}"
                )
        return key

    def __getitem__(self, key: Any) -> Any:
        shape = self.shape
        if type(key) is int and len(shape) > 1 and -shape[0] <= key < shape[0]:
            strides = self._dev_strides  # a stack's matrix, a chunk's row: made directly
            return self._view(shape[1:], self._offset + key % shape[0] * strides[0],
                              strides[1:])
        if _indexing.is_advanced(key):  # index arrays, lists, masks: gathered on the device
            return _indexing.getitem(self, key)
        key = self._basic_key(key)
        offset = self._element_offset(key)
        if offset is not None:
            host = np.empty((), self._stored_dtype)
            self._buffer.read(offset, _raw(host.reshape(1)))
            return host.astype(self.dtype)[()]
        view = self._leading_view(key)
        if view is not None:
            return view
        dummy = self._dummy()
        return self._view_from(dummy, dummy[key])

    def _leading_view(self, key):
        """The view of `key` (a tuple) where it is integers and slices of step 1 over the
        leading axes (Dask's chunks, a stack's matrices), computed directly: NumPy's offset,
        shape and strides for it; None for any other key, or one that leaves an axis empty
        (NumPy's view of the dummy gives those).

        Raises
        ------
        IndexError
            For an integer out of its axis's bounds, with NumPy's message.
        """
        if len(key) > self.ndim:
            return None
        shape, strides, offset = list(self.shape), list(self._dev_strides), self._offset
        dropped = 0
        for axis, k in enumerate(key):
            n, step = self.shape[axis], self._dev_strides[axis]
            if type(k) is slice and k.step in (None, 1):
                start, stop, _ = k.indices(n)
                if stop <= start:
                    return None
                shape[axis - dropped] = stop - start
            elif isinstance(k, (int, np.integer)) and not isinstance(k, bool):
                start = int(k)
                if not -n <= start < n:
                    raise IndexError(f"index {start} is out of bounds for axis {axis} with "
                                     f"size {n}")
                start %= n
                del shape[axis - dropped], strides[axis - dropped]
                dropped += 1
            else:
                return None
            offset += start * step
        return self._view(tuple(shape), offset, tuple(strides))

    def __setitem__(self, key: Any, value: Any) -> None:
        if _indexing.is_advanced(key):  # scattered on the device
            return _indexing.setitem(self, key, value)
        key = self._basic_key(key)
        offset = self._element_offset(key)
        value = checks.assigned(value, self.dtype)
        if offset is not None:
            if value.size != 1:
                raise ValueError(f"value must be one element, not an array of shape {value.shape}")
            host = value.astype(self._stored_dtype).reshape(1)
            self._buffer.write(offset, _raw(host))
            return
        view = self[key]
        try:
            values = np.broadcast_to(value, view.shape)
        except ValueError:
            raise ValueError(
                f"value of shape {value.shape} cannot be broadcast to the view's shape {view.shape}"
            ) from None
        view.copy_to_device(values)

    @property
    def T(self) -> _Array:
        """The array with its axes reversed, as a view."""
        return self.transpose()

    def transpose(self, *axes: int | Sequence[int] | None) -> _Array:
        """Permute the axes, as a view.

        Parameters
        ----------
        *axes : int or tuple of int
            The new order of the axes; reversed by default.

        Returns
        -------
        DeviceArray
        """
        if len(axes) == 1 and (axes[0] is None or isinstance(axes[0], (tuple, list))):
            axes = axes[0]
        if axes:
            axes = checks.as_int_tuple(axes, "axes", min_len=0, max_len=32, minimum=None)
        dummy = self._dummy()
        try:
            view = dummy.transpose(axes or None)
        except ValueError as e:
            raise ValueError(f"axes {axes!r} do not permute the {self.ndim} axes: {e}") from None
        return self._view_from(dummy, view)

    def reshape(self, *shape: int | Sequence[int]) -> _Array:
        """Give the array a new shape without copying.

        Parameters
        ----------
        *shape : int or tuple of int
            The new shape; one extent may be -1.

        Returns
        -------
        DeviceArray
            A view sharing the data.

        Raises
        ------
        ValueError
            If the element count differs or the strides do not allow the shape
            without a copy (copy first).
        """
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        shape = checks.as_int_tuple(shape, "shape", min_len=0, max_len=32, minimum=-1)
        if self.size and self.is_contiguous:
            # A C-contiguous array takes any shape of its size with C strides, as in NumPy
            # (without building NumPy's view of a dummy array: reductions and Dask's chunks
            # reshape on every call)
            known = math.prod(n for n in shape if n != -1)
            if shape.count(-1) == 1 and known and self.size % known == 0:
                shape = tuple(self.size // known if n == -1 else n for n in shape)
            if -1 not in shape and math.prod(shape) == self.size:
                return self._view(shape, self._offset, _c_strides(shape, self._itemsize))
        dummy = self._dummy()
        try:
            view = np.reshape(dummy, shape, copy=False)
        except ValueError as e:
            raise ValueError(f"cannot reshape {self.shape} to {shape} without copying: {e}")
        return self._view_from(dummy, view)

    def ravel(self) -> _Array:
        """The array as one dimension, a view where the layout allows it."""
        try:
            return self.reshape(-1)
        except ValueError:
            return self.copy().reshape(-1)
