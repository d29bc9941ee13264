"""DeviceArray: arrays in device memory, their views and their copies.

A DeviceArray is a view (byte offset, shape, strides) of a pooled device
buffer. The fields the launcher needs live in the C++ base class
``_core.DeviceArrayBase``; strides there are in bytes of the *stored* element
type, which differs from the host type for bool (stored as int32) and, on
devices that lack them, 64-bit types (stored as their 32-bit counterparts).

Views are computed with NumPy itself: a dummy array with the same shape and
strides over one element of memory (never read) is indexed, transposed or
reshaped, and the result's strides and data-pointer offset give the view. A
C-contiguous array's reshape, and slices of step 1 over the leading axes, compute
NumPy's result for them directly.
"""

from __future__ import annotations

import gc
import math
import zlib
from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.lib.stride_tricks import as_strided
from numpy.typing import ArrayLike, DTypeLike, NDArray

from .. import _core, bfloat16_host, checks
from . import array_functions, copies, device_list, streams
from . import indexing as _indexing
from . import pinned as _pinned
from . import reports as _reports
from .array_reductions import WholeArrayReductions
from .device_info import DeviceLike, DeviceSpec, ShapeLike
from .dlpack import DLPackExport
from .operators import ArrayOperators


def _raw(host):
    """`host` as the buffer transfers take it: records (structured dtypes) as their bytes,
    bfloat16 as its 16-bit words."""
    if bfloat16_host.is_dtype(host.dtype):
        return host.view(np.uint16)
    return host.view(np.uint8) if host.dtype.fields is not None else host


def storage_dtype(dtype, info):
    """The element type an array of `dtype` is stored as on a device (DeviceInfo): the
    argument contract's rule (kir/abi.h, through ``_core.storage_kind``)."""
    dtype = np.dtype(dtype)
    if dtype.kind == "V" and dtype.fields is not None:  # records: their bytes as NumPy has them
        return dtype
    if bfloat16_host.is_dtype(dtype):  # its 16-bit words, which kernels read (storage16)
        return dtype
    if dtype.kind == "c" and dtype.itemsize in (8, 16):  # pairs of floats
        if dtype.itemsize == 16 and not info.float64:
            raise TypeError(f"dtype {dtype} needs float64, which this device does not support")
        return dtype
    kind = _core.kind_of_dtype(dtype.kind, dtype.itemsize)
    if kind is None:
        raise TypeError(
            f"dtype {dtype} is not supported by device arrays (booleans, integers, floats "
            "of at most 64 bits and complex64/complex128 are)"
        )
    stored = _core.storage_kind(kind, int64=bool(info.int64), float64=bool(info.float64))
    return dtype if stored == kind else np.dtype(_core.dtype_name(stored))


def _allocate(device, nbytes):
    """A device buffer of `nbytes`. Where the device is out of memory (the device gave its
    pooled buffers back and tried again already), arrays that only reference cycles still
    hold are freed by Python's collector first, and the allocation tried once more, as
    CuPy's pool does; a second MemoryError is the caller's."""
    try:
        return _core.vk_allocate(device._core, nbytes)
    except MemoryError:
        gc.collect()
        return _core.vk_allocate(device._core, nbytes)


def record_key(dtype):
    """0, or for a record dtype a 32-bit digest of its layout (field names, formats,
    offsets, size): the launcher compares it, so that a kernel specialised for one
    record type never takes an array of another record type of the same size."""
    dtype = np.dtype(dtype)
    if bfloat16_host.is_dtype(dtype):  # not a raw two-byte void ('V', 2)
        return bfloat16_host.DTYPE_KEY
    if dtype.fields is None:
        return 0
    return zlib.crc32(f"{dtype.descr!r}/{dtype.itemsize}".encode())


def _c_strides(shape, itemsize):
    strides, step = [], itemsize
    for n in reversed(shape):
        strides.append(step)
        step *= max(int(n), 1)
    return tuple(reversed(strides))


def _f_strides(shape, itemsize):
    return _c_strides(shape[::-1], itemsize)[::-1]


def host_order(host):
    """'F' for a NumPy array that is F-contiguous but not C-contiguous (its device copy
    keeps that order, as numba.cuda's do), else 'C'."""
    flags = host.flags
    return "F" if flags.f_contiguous and not flags.c_contiguous else "C"


_check_stream = streams.check


def _unpickle(host):
    """A pickled DeviceArray (``DeviceArray.__reduce__``): `host` on the current device."""
    return DeviceArray(None, host.shape, host.dtype, order=host_order(host)).copy_to_device(host)


class DeviceArray(ArrayOperators, WholeArrayReductions, DLPackExport, _core.DeviceArrayBase):
    """An array that lives on a Vulkan device.

    Kernels use device arrays in place, without the copies that NumPy arguments
    need on every call. Create them with :func:`to_device`, :func:`device_array`
    or :func:`device_array_like`.

    Indexing works as on NumPy arrays: an integer for every axis reads or
    writes one element; slices, integers for some axes, ``...`` and ``None``
    give views sharing the memory. Index arrays, lists and boolean masks (NumPy
    or device arrays) give new arrays gathered on the device, and assignments
    through them scatter on the device (runtime/indexing.py). ``.T``,
    ``transpose`` and ``reshape`` give views.

    NumPy's ufuncs and Python's operators compute on the device and return
    device arrays (``d + 1``, ``np.sin(d)``, ``d[d > 0]``; runtime/operators.py);
    ``np.asarray(d)`` copies to the host.

    Parameters
    ----------
    device : Device
        The device that holds the array.
    shape : tuple of int
        Shape of the array.
    dtype : numpy.dtype
        Element type. Bool arrays are stored as int32 on the device (``dtype``
        still says bool); 64-bit types are stored as 32-bit ones on devices that
        lack them.
    order : {'C', 'F'}
        Element order of a new array: C (row-major, the default) or Fortran
        (column-major; kernels type it with layout 'F').
    _stored : tuple, optional
        Internal: ``(buffer, byte_offset, strides_in_stored_bytes)`` of a view.

    Attributes
    ----------
    device : Device
    shape : tuple of int
    dtype : numpy.dtype
    """

    device: DeviceLike
    shape: tuple[int, ...]
    dtype: np.dtype[Any]

    def __init__(self, device: DeviceSpec, shape: ShapeLike, dtype: DTypeLike,
                 _stored: tuple[Any, int, tuple[int, ...]] | None = None,
                 order: str = "C") -> None:
        device = device_list.get_device(device)
        dtype = checks.as_dtype(dtype)
        stored = storage_dtype(dtype, device.info)
        shape = checks.as_shape(shape)
        if _stored is None:
            nbytes = checks.nbytes_of(shape, stored.itemsize)
            buffer = _allocate(device, nbytes)
            # NumPy's strides: C or F order, all 0 for an empty array (a view keeps its
            # base's); computed, not taken from a host array of that size (which would
            # need its memory).
            if order not in ("C", "F"):
                raise ValueError(f"order must be 'C' or 'F', not {order!r}")
            offset = 0
            contiguous = _c_strides if order == "C" else _f_strides
            strides = (0,) * len(shape) if 0 in shape else contiguous(shape, stored.itemsize)
        else:
            buffer, offset, strides = _stored
        # What the launcher compares with a kernel's declared dtype.
        code = _core.dtype_code(dtype.kind, dtype.itemsize, record_key(dtype))
        super().__init__(device._core, buffer, offset, shape, tuple(strides), code, stored.itemsize)
        self.device = device
        self.dtype = dtype
        self._stored_dtype = stored

    # ---- facts -------------------------------------------------------------------
    @property
    def ndim(self) -> int:
        """Number of dimensions."""
        return len(self.shape)

    @property
    def size(self) -> int:
        """Number of elements."""
        return math.prod(self.shape)

    @property
    def nbytes(self) -> int:
        """Size of the elements in bytes, as they are stored on the host."""
        return self.size * self.dtype.itemsize

    @property
    def strides(self) -> tuple[int, ...]:
        """Steps between elements along each axis in bytes, as in NumPy (host itemsize)."""
        k = self._itemsize
        return tuple(s // k * self.dtype.itemsize for s in self._dev_strides)

    @property
    def is_contiguous(self) -> bool:
        """Whether the elements lie one after the other in C order (bool)."""
        known = self.__dict__.get("_c_contiguous")  # shape and strides never change
        if known is None:
            expected = _c_strides(self.shape, self._itemsize)
            known = self.size == 0 or all(
                n <= 1 or s == e for n, s, e in zip(self.shape, self._dev_strides, expected))
            self._c_contiguous = known
        return known

    def is_c_contiguous(self) -> bool:
        """numba.cuda's DeviceNDArray.is_c_contiguous(): ``is_contiguous``."""
        return self.is_contiguous

    def is_f_contiguous(self) -> bool:
        """Whether the elements lie one after the other in Fortran order."""
        if self.size == 0:
            return True
        expected = _f_strides(self.shape, self._itemsize)
        return all(n <= 1 or s == e for n, s, e in zip(self.shape, self._dev_strides, expected))

    @property
    def flags(self) -> dict[str, bool]:
        """NumPy's ``flags`` keys that describe the layout (numba.cuda's arrays have them)."""
        c, f = self.is_contiguous, self.is_f_contiguous()
        return {"C_CONTIGUOUS": c, "F_CONTIGUOUS": f, "CONTIGUOUS": c, "FORTRAN": f and not c}

    def _f_only(self):
        """Whether the array is F-contiguous but not C-contiguous: its transpose is a
        C-contiguous array over the same memory, which copies go through."""
        return self.ndim > 1 and not self.is_contiguous and self.is_f_contiguous()

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        """Pickling copies the elements to the host; unpickling copies them to the current
        device of the unpickling thread (as numba.cuda's device arrays pickle). Dask's
        ``distributed`` sends them so (numba_vulkan.dask registers the same for its own
        serialisation)."""
        return _unpickle, (self.copy_to_host(),)

    def _item(self, what: str) -> Any:
        if self.size != 1:
            raise TypeError(f"only a device array of one element converts to {what}, not one "
                            f"of shape {self.shape}")  # fmt: skip
        return self.copy_to_host().reshape(()).item()

    def __float__(self) -> float:
        """``float(d)`` of a one-element array (a copy to the host), as NumPy's arrays."""
        return float(self._item("float"))

    def __int__(self) -> int:
        return int(self._item("int"))

    def __complex__(self) -> complex:
        return complex(self._item("complex"))

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a 0-d device array")
        return self.shape[0]

    def __repr__(self) -> str:
        return f"<DeviceArray shape={self.shape} dtype={self.dtype} on {self.device.info.name!r}>"

    # ---- views -------------------------------------------------------------------
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
        view = DeviceArray.__new__(DeviceArray)
        _core.DeviceArrayBase.__init__(view, self._device_core, self._buffer, offset,
                                       tuple(shape), tuple(strides), self._code, self._itemsize)
        view.device = self.device
        view.dtype = self.dtype
        view._stored_dtype = self._stored_dtype
        return view

    def _element_offset(self, key):
        """Byte offset of one element if `key` indexes every axis with an int, else None."""
        if not isinstance(key, tuple):
            key = (key,)
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

    def _check_key(self, key):
        for k in key if isinstance(key, tuple) else (key,):
            if isinstance(k, bool) or not (
                k is None or k is Ellipsis or isinstance(k, (int, np.integer, slice))
            ):
                raise IndexError(
                    "device arrays support integers, slices, ..., None, integer arrays and "
                    f"boolean masks as indices, not {type(k).__name__}"
                )

    def __getitem__(self, key: Any) -> Any:
        if _indexing.is_advanced(key):  # index arrays, lists, masks: gathered on the device
            return _indexing.getitem(self, key)
        self._check_key(key)
        offset = self._element_offset(key)
        if offset is not None:
            host = np.empty((), self._stored_dtype)
            self._buffer.read(offset, _raw(host.reshape(1)))
            return host.astype(self.dtype)[()]
        view = self._slices_view(key)
        if view is not None:
            return view
        dummy = self._dummy()
        return self._view_from(dummy, dummy[key])

    def _slices_view(self, key):
        """The view of `key` where it is slices of step 1 over the leading axes (Dask's
        chunks are such views), computed directly: NumPy's offset and strides for it; None
        for any other key, or one that leaves an axis empty (NumPy's view of the dummy
        gives those)."""
        if not isinstance(key, tuple):
            key = (key,)
        if len(key) > self.ndim:
            return None
        shape, offset = list(self.shape), self._offset
        for axis, k in enumerate(key):
            if type(k) is not slice or k.step not in (None, 1):
                return None
            start, stop, _ = k.indices(shape[axis])
            if stop <= start:
                return None
            shape[axis] = stop - start
            offset += start * self._dev_strides[axis]
        return self._view(tuple(shape), offset, self._dev_strides)

    def __setitem__(self, key: Any, value: ArrayLike | DeviceArray) -> None:
        if _indexing.is_advanced(key):  # scattered on the device
            return _indexing.setitem(self, key, value)
        self._check_key(key)
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
    def T(self) -> DeviceArray:
        """The array with its axes reversed, as a view."""
        return self.transpose()

    def transpose(self, *axes: int | Sequence[int] | None) -> DeviceArray:
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

    def reshape(self, *shape: int | Sequence[int]) -> DeviceArray:
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

    def ravel(self) -> DeviceArray:
        """The array as one dimension, a view where the layout allows it."""
        try:
            return self.reshape(-1)
        except ValueError:
            return self.copy().reshape(-1)

    def copy(self) -> DeviceArray:
        """A contiguous copy on the same device (DeviceArray)."""
        out = DeviceArray(self.device, self.shape, self.dtype)
        if self.is_contiguous:
            nbytes = self.size * self._itemsize
            _core.vk_copy(self._buffer, self._offset, out._buffer, 0, nbytes)
        else:  # on the device, ordered like any other work on these buffers
            copies.copy_view(self, out)
        return out

    # ---- copies ------------------------------------------------------------------
    def _span(self):
        """(first byte, byte count) of the memory the view touches."""
        lo = hi = self._offset
        for n, s in zip(self.shape, self._dev_strides):
            if n == 0:
                return self._offset, 0
            if s < 0:
                lo += (n - 1) * s
            else:
                hi += (n - 1) * s
        return lo, hi - lo + self._itemsize

    def _read_stored(self):
        """The elements as a C-contiguous host array of the stored type."""
        if self.size == 0:
            return np.empty(self.shape, self._stored_dtype)
        if self.is_contiguous:
            host = np.empty(self.shape, self._stored_dtype)
            self._buffer.read(self._offset, _raw(host))
            return host
        lo, n = self._span()
        raw = np.empty(n, np.uint8)
        self._buffer.read(lo, _raw(raw))
        return np.ascontiguousarray(self._span_view(raw, lo))

    def _span_view(self, raw, lo):
        """The view's elements inside `raw`, the bytes of its span starting at `lo`."""
        start = self._offset - lo  # strides are multiples of the itemsize, so is the rest
        first = raw[start:].view(self._stored_dtype)
        return as_strided(first, self.shape, self._dev_strides, writeable=True)

    @_reports.after_copy  # raises what a kernel raised (runtime/reports.py)
    def copy_to_host(self, out: NDArray[Any] | None = None,
                     stream: streams.Stream | None = None) -> NDArray[Any]:
        """Copy the contents to a NumPy array.

        Without a stream, waits for the launches and streams that still use the
        array's buffer (not for the others).

        Parameters
        ----------
        out : numpy.ndarray, optional
            C-contiguous array of the same shape and dtype to fill (or F-contiguous
            where this array is).
        stream : Stream, optional
            Copy on a stream, after the work enqueued there. Into a pinned or mapped
            array (``pinned_array``, ``mapped_array``) the call returns at once and
            `out` holds the data after ``stream.synchronize()``; into ordinary
            (pageable) memory, or without `out`, it returns once the data is there,
            as numba.cuda's copies to pageable memory do.

        Returns
        -------
        numpy.ndarray
            In F order where this array is F-contiguous (not C-contiguous), as numba.cuda
            gives it; else in C order.
        """
        _check_stream(stream, self.device)
        f_only = self._f_only()
        if out is not None:
            if not isinstance(out, np.ndarray):
                raise TypeError(f"out must be a NumPy array, not {type(out).__name__}")
            if out.shape != self.shape or out.dtype != self.dtype:
                raise ValueError(
                    f"out must be a NumPy array of shape {self.shape} and dtype {self.dtype}, "
                    f"not {out.shape} {out.dtype}"
                )
            if not (out.flags.c_contiguous or f_only and out.flags.f_contiguous):
                raise ValueError("out must be C-contiguous" + (
                    " or F-contiguous" if f_only else ""))
            if not out.flags.writeable:
                raise ValueError("out is read-only")
        if f_only and (out is None or not out.flags.c_contiguous):
            # The transpose is C-contiguous over the same memory: copied as such.
            host = self.T.copy_to_host(out=None if out is None else out.T, stream=stream)
            return host.T if out is None else out
        if stream is not None:
            if out is None:
                out = np.empty(self.shape, self.dtype)
            copies.copy_to_host(self, out, stream)
            return out
        if out is not None:
            if self.dtype == self._stored_dtype and self.is_contiguous and self.size:
                # One buffer copy, no staging; on a stream it returns at once.
                pinned_ok = out.dtype.fields is None  # records go as bytes below
                if pinned_ok and _pinned.copy_to_host(self, out):
                    return out
                self._buffer.read(self._offset, _raw(out))  # straight into `out`, no temporary
                return out
        values = self._read_stored()
        if self.dtype.kind == "b":
            values = values != 0
        elif values.dtype != self.dtype:
            values = values.astype(self.dtype)
        if out is None:
            return values
        np.copyto(out, values)
        return out

    @_reports.after_copy
    def copy_to_device(self, array: ArrayLike | DeviceArray,
                       stream: streams.Stream | None = None) -> DeviceArray:
        """Overwrite the contents with those of a host array.

        Parameters
        ----------
        array : array_like
            Values of the same shape; converted to the element type.
        stream : Stream, optional
            Enqueue the copy on a stream and return at once. An ordinary (pageable)
            `array` has been read when the call returns and may change right away,
            as with numba.cuda; a pinned array (``pinned_array``) of the stored type
            is read when the stream gets there.

        Returns
        -------
        DeviceArray
            The array itself.

        Raises
        ------
        ValueError
            If the shapes differ.
        """
        _check_stream(stream, self.device)
        if isinstance(array, DeviceArray):
            if stream is not None and array.shape == self.shape:
                if copies.copy_device_to_device(array, self, stream):
                    return self
            array = array.copy_to_host()
        host = checks.host_array(array, "array")
        if host.shape != self.shape:
            raise ValueError(
                f"cannot copy an array of shape {host.shape} into one of {self.shape} (array)"
            )
        if self._f_only():  # the transposes: a C-contiguous array, and C-ordered for F `host`
            self.T.copy_to_device(host.T, stream=stream)
            return self
        if stream is not None:
            copies.copy_to_device(self, host, stream)
            return self
        # One buffer copy, no staging; on a stream it returns at once.
        pinned_ok = host.dtype.fields is None  # records go as bytes below
        if self.size and pinned_ok and _pinned.copy_to_device(self, host):
            return self
        stored = np.ascontiguousarray(host.astype(self.dtype, copy=False), dtype=self._stored_dtype)
        if self.size == 0:
            return self
        if self.is_contiguous:
            self._buffer.write(self._offset, _raw(stored))
            return self
        # A view with gaps: read the span it touches, scatter into it, write it back.
        lo, n = self._span()
        raw = np.empty(n, np.uint8)
        self._buffer.read(lo, _raw(raw))
        view = self._span_view(raw, lo)
        view[...] = stored
        self._buffer.write(lo, _raw(raw))
        return self

    # ---- reductions (on the device: runtime/reduce.py) -----------------------------

    def __array__(self, dtype: DTypeLike | None = None, copy: bool | None = None) -> NDArray[Any]:
        """``np.asarray(d)``: a copy on the host (``copy=False`` is refused: the data are on
        the device). NumPy's ufuncs and operators do not come here: they run on the
        device (``__array_ufunc__``, runtime/operators.py)."""
        if copy is False:
            raise ValueError("a device array cannot be converted to a NumPy array without a "
                             "copy (copy=False); use np.asarray(d) or d.copy_to_host()")
        values = self.copy_to_host()
        return values if dtype is None else values.astype(dtype, copy=False)


array_functions.DEVICE_ARRAY = DeviceArray  # its NumPy functions make device arrays
