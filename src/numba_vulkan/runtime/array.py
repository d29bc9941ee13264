"""DeviceArray: arrays in device memory and their copies.

A DeviceArray is a view (byte offset, shape, strides) of a pooled device
buffer. The fields the launcher needs live in the C++ base class
``_core.DeviceArrayBase``; strides there are in bytes of the *stored* element
type, which differs from the host type for bool (stored as int32) and, on
devices that lack them, 64-bit types (stored as their 32-bit counterparts).

Views and element access are runtime/array_views.py's (a mixin), the reductions
runtime/array_reductions.py's, the operators runtime/operators.py's.
"""

from __future__ import annotations

import gc
import math
import zlib
from typing import Any

import numpy as np
from numpy.lib.stride_tricks import as_strided
from numpy.typing import ArrayLike, DTypeLike, NDArray

from .. import _core, bfloat16_host, checks
from . import array_functions, copies, device_list, streams
from . import pinned as _pinned
from . import reports as _reports
from .array_reductions import WholeArrayReductions
from .array_views import ArrayViews, _c_strides, _f_strides, _raw
from .device_info import DeviceLike, DeviceSpec, ShapeLike
from .dlpack import DLPackExport
from .operators import ArrayOperators


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


_STORED_AND_CODE = {}


def _stored_and_code(dtype, info):
    """(storage_dtype, the code the launcher compares with a kernel's declared dtype) of
    arrays of `dtype` on the device `info`; remembered for all but records (every new array
    asks; a record's code digests its layout, which dtype equality does not all compare)."""
    key = (dtype, info.int64, info.float64)
    facts = _STORED_AND_CODE.get(key)
    if facts is None:
        stored = storage_dtype(dtype, info)
        facts = stored, _core.dtype_code(dtype.kind, dtype.itemsize, record_key(dtype))
        if dtype.fields is None:
            _STORED_AND_CODE[key] = facts
    return facts


def host_order(host):
    """'F' for a NumPy array that is F-contiguous but not C-contiguous (its device copy
    keeps that order, as numba.cuda's do), else 'C'."""
    flags = host.flags
    return "F" if flags.f_contiguous and not flags.c_contiguous else "C"


_check_stream = streams.check


def _unpickle(host):
    """A pickled DeviceArray (``DeviceArray.__reduce__``): `host` on the current device."""
    return DeviceArray(None, host.shape, host.dtype, order=host_order(host)).copy_to_device(host)


class DeviceArray(ArrayViews, ArrayOperators, WholeArrayReductions, DLPackExport,
                  _core.DeviceArrayBase):
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
        stored, code = _stored_and_code(dtype, device.info)
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
        return self._has_layout("C")

    def is_c_contiguous(self) -> bool:
        """numba.cuda's DeviceNDArray.is_c_contiguous(): ``is_contiguous``."""
        return self.is_contiguous

    def is_f_contiguous(self) -> bool:
        """Whether the elements lie one after the other in Fortran order."""
        return self._has_layout("F")

    @property
    def flags(self) -> dict[str, bool]:
        """NumPy's ``flags`` keys that describe the layout (numba.cuda's arrays have them)."""
        c, f = self.is_contiguous, self.is_f_contiguous()
        return {"C_CONTIGUOUS": c, "F_CONTIGUOUS": f, "CONTIGUOUS": c, "FORTRAN": f and not c}

    def view(self, dtype: DTypeLike) -> DeviceArray:
        """The same memory seen as elements of `dtype`, as NumPy's ``ndarray.view(dtype)``
        (and numba.cuda's ``DeviceNDArray.view``): no copy; of the same itemsize, the same
        shape; of another, the last axis (contiguous) scaled by the ratio of the itemsizes.

        Raises
        ------
        TypeError
            Where either dtype is stored in another form on this device (bool as int32,
            64-bit types on a device without them) or is a record: the view would see the
            device's bytes, not the host's.
        ValueError
            NumPy's (a last axis that is not contiguous or whose bytes do not divide into
            the new itemsize, a 0-d array), or a first element off the new itemsize's
            alignment (the device reads aligned elements only).
        """
        dtype = checks.as_dtype(dtype)
        stored = storage_dtype(dtype, self.device.info)
        for d, s in ((self.dtype, self._stored_dtype), (dtype, stored)):
            if d.itemsize != s.itemsize or d.fields is not None:
                raise TypeError(f"a view of a device array of {self.dtype} as {dtype}: {d} is "
                                f"stored as {s} on this device (views reinterpret bytes stored "
                                "as they are on the host)")
        old, new = self._itemsize, dtype.itemsize
        shape, strides = self.shape, self._dev_strides
        if old != new and shape and strides[-1] == old and shape[-1] * old % new == 0:
            shape = shape[:-1] + (shape[-1] * old // new,)  # NumPy's rule, computed
            strides = strides[:-1] + (new,)
        elif old != new:  # NumPy's shape and strides, or its error (stored as on the host)
            host = self._dummy().view(dtype)
            shape, strides = host.shape, host.strides
        if self._offset % new:
            raise ValueError(f"a view as {dtype} of a device array whose first element is at "
                             f"byte {self._offset} of its buffer, not a multiple of {new}")
        return type(self)(self.device, shape, dtype, _stored=(self._buffer, self._offset, strides))

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
