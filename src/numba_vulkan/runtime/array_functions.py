"""NumPy's functions on device arrays that compute on the device (``__array_function__``,
runtime/array_reductions.py): the ones Dask calls on its chunks (numba_vulkan.dask) and
that users reach for.

- Joining: ``concatenate``, ``stack`` (device copies: one buffer copy per part where the
  part lands contiguously, else a copy kernel over a 2-d view).
- Creation like an array: ``empty_like``, ``zeros_like``, ``ones_like``, ``full_like``, and
  ``empty``, ``zeros``, ``ones``, ``full``, ``arange``, ``asarray``, ``array`` with
  ``like=<device array>`` (NumPy's ``like=`` protocol); fills run on the device, ``arange``
  and ``asarray`` are computed on the host and copied.
- Views and facts: ``broadcast_to``, ``reshape``, ``transpose``, ``copy``; ``shape``,
  ``ndim``, ``size`` (without a copy of the elements).
- Reductions over some axes: ``sum``, ``prod``, ``min``/``amin``, ``max``/``amax``, ``mean``
  with ``axis``, ``dtype`` and ``keepdims`` as in NumPy (result dtypes too). The reduced axes
  are moved last (one device copy where that is not already the layout), then each kernel
  pass reduces runs of at most ROW_CHUNK elements of every row into one partial, until one
  value per row is left: the loops stay far below lavapipe's 65,535-iteration cap. min and
  max propagate NaN as NumPy does. The whole-array forms without ``keepdims`` keep their
  scalar results (runtime/reduce.py).

Each function returns NotImplemented for what it does not take (``out=``, ``where=``, a
``like=`` of another kind); the caller then runs NumPy on host copies.
"""

from __future__ import annotations

import math
import operator

import numpy as np

from .. import _core, checks
from .compiler_hook import jit
from .reduce import _narrow_option

#: Elements one invocation of a row reduction adds per pass.
ROW_CHUNK = 256

_OPS = ("sum", "prod", "min", "max")
_kernels = {}
_fills = {}


def _row_kernel(op, narrow):
    """The pass of a row reduction: invocation i reduces elements [j*chunk, (j+1)*chunk) of
    row r (i = r*parts + j) of the flat (rows * n) `x` into out[i]."""
    kernel = _kernels.get((op, narrow))
    if kernel is not None:
        return kernel
    step = {
        "sum": "acc += v",
        "prod": "acc *= v",
        "min": "if v < acc or v != v:\n                acc = v",
        "max": "if v > acc or v != v:\n                acc = v",
    }[op]
    source = f"""
def _nv_rows_{op}(x, out, n, parts, chunk):
    i = global_id(0)
    if i < out.size:
        r = i // parts
        j = i - r * parts
        start = r * n + j * chunk
        stop = min(start + chunk, r * n + n)
        acc = x[start]
        for m in range(start + 1, stop):
            v = x[m]
            {step}
        out[i] = acc
"""
    from ..stubs import global_id

    namespace = {"global_id": global_id}
    exec(compile(source, f"<numba_vulkan row reduction {op}>", "exec"), namespace)
    kernel = _kernels.setdefault((op, narrow), jit(narrow=narrow)(namespace[f"_nv_rows_{op}"]))
    return kernel


def _fill_kernel():
    kernel = _fills.get("fill")
    if kernel is None:
        def _nv_fill(x, value):
            i = global_id(0)
            if i < x.size:
                x[i] = value

        from ..stubs import global_id

        kernel = _fills.setdefault("fill", jit(_nv_fill))
    return kernel


def _copy2_kernel():
    from .copies import _copy_kernel

    return _copy_kernel(2)


# ---- helpers -------------------------------------------------------------------------


#: The DeviceArray class, set by runtime/array.py once it is defined: the array's own methods
#: call this module, which therefore does not import array.py back (no import circle).
DEVICE_ARRAY = None


def _device_array():
    return DEVICE_ARRAY


def _is_device(value):
    return isinstance(value, _device_array())


def _contiguous(x):
    return x if x.is_contiguous else x.copy()


def _new(device, shape, dtype):
    return _device_array()(device, shape, dtype)


def fill(x, value):
    """Set every element of the contiguous DeviceArray `x` to `value` on the device."""
    if x.size == 0:
        return x
    value = np.asarray(value).astype(x.dtype)[()]
    if x.dtype.kind not in "biufc" or not x.is_contiguous:
        x.copy_to_device(np.full(x.shape, value, x.dtype))
        return x
    flat = x.reshape(-1)
    _fill_kernel().forall(x.size, device=x.device)(flat, value)
    return x


# ---- joining -------------------------------------------------------------------------


def concatenate(arrays, axis=0, out=None, dtype=None, casting="same_kind"):
    """np.concatenate of device arrays (of one device) into a new device array."""
    if out is not None or casting != "same_kind":
        return NotImplemented
    parts = list(arrays)
    if not parts or not all(_is_device(a) for a in parts):
        return NotImplemented
    device = parts[0].device
    for a in parts[1:]:
        if a.device is not device:
            raise ValueError(
                f"np.concatenate of device arrays on {device} and {a.device}: copy them to one "
                "device first (nv.to_device(x, device=...))"
            )
    if axis is None:
        parts = [a.ravel() for a in parts]
        axis = 0
    ndim = parts[0].ndim
    if ndim == 0:
        raise ValueError("zero-dimensional arrays cannot be concatenated")
    if any(a.ndim != ndim for a in parts):
        raise ValueError("all the input arrays must have the same number of dimensions")
    axis = operator.index(axis)
    if not -ndim <= axis < ndim:
        raise np.exceptions.AxisError(axis, ndim)
    axis %= ndim
    shape0 = parts[0].shape
    for a in parts[1:]:
        if a.shape[:axis] != shape0[:axis] or a.shape[axis + 1:] != shape0[axis + 1:]:
            raise ValueError(
                "all the input array dimensions except for the concatenation axis must match "
                f"exactly, but {shape0} and {a.shape} differ"
            )
    result_dtype = np.dtype(dtype) if dtype is not None else np.result_type(*(a.dtype for a in parts))
    shape = list(shape0)
    shape[axis] = sum(a.shape[axis] for a in parts)
    result = _new(device, tuple(shape), result_dtype)
    if result.size == 0:
        return result
    if result_dtype.kind not in "biufc":  # records, bfloat16: through the host
        result.copy_to_device(np.concatenate([np.asarray(a) for a in parts], axis=axis))
        return result
    outer = math.prod(shape[:axis])
    inner = math.prod(shape[axis + 1:])
    flat = result.reshape(outer, shape[axis] * inner) if outer > 1 else None
    k = result._itemsize
    start = 0
    for a in parts:
        width = a.shape[axis] * inner
        if width:
            if a.dtype != result_dtype:
                a = a.astype(result_dtype)
            a = _contiguous(a)
            if flat is None:  # one run of bytes each: a buffer copy
                _core.vk_copy(a._buffer, a._offset, result._buffer, start * k, width * k)
            else:
                src = a.reshape(outer, width)
                _copy2_kernel().forall(src.size, device=device)(src, flat[:, start:start + width])
        start += width
    return result


def stack(arrays, axis=0, out=None, dtype=None, casting="same_kind"):
    """np.stack of device arrays: each given a new axis of extent 1, then concatenated."""
    if out is not None:
        return NotImplemented
    parts = list(arrays)
    if not parts or not all(_is_device(a) for a in parts):
        return NotImplemented
    shape = parts[0].shape
    if any(a.shape != shape for a in parts):
        raise ValueError("all input arrays must have the same shape")
    ndim = len(shape) + 1
    axis = operator.index(axis)
    if not -ndim <= axis < ndim:
        raise np.exceptions.AxisError(axis, ndim)
    axis %= ndim
    key = (slice(None),) * axis + (None,)
    return concatenate([a[key] for a in parts], axis=axis, dtype=dtype, casting=casting)


# ---- creation ------------------------------------------------------------------------


def _like_shape(prototype, shape):
    return prototype.shape if shape is None else checks.as_shape(shape)


def empty_like(prototype, dtype=None, order="K", subok=True, shape=None, *, device=None):
    if not _is_device(prototype) or device is not None:
        return NotImplemented
    return _new(prototype.device, _like_shape(prototype, shape),
                prototype.dtype if dtype is None else dtype)  # fmt: skip


def full_like(a, fill_value, dtype=None, order="K", subok=True, shape=None, *, device=None):
    out = empty_like(a, dtype, order, subok, shape, device=device)
    if out is NotImplemented:
        return out
    return fill(out, fill_value)


def zeros_like(a, dtype=None, order="K", subok=True, shape=None, *, device=None):
    return full_like(a, 0, dtype, order, subok, shape, device=device)


def ones_like(a, dtype=None, order="K", subok=True, shape=None, *, device=None):
    return full_like(a, 1, dtype, order, subok, shape, device=device)


def _creation(fill_value):
    def create(shape, dtype=None, order="C", *, like=None, device=None):
        if not _is_device(like) or device is not None:
            return NotImplemented
        out = _new(like.device, shape, np.float64 if dtype is None else dtype)
        return out if fill_value is None else fill(out, fill_value)

    return create


def full(shape, fill_value, dtype=None, order="C", *, like=None, device=None):
    if not _is_device(like) or device is not None:
        return NotImplemented
    if dtype is None:
        dtype = np.asarray(fill_value).dtype
    return fill(_new(like.device, shape, dtype), fill_value)


def _to_device(values, device):
    """NumPy array `values` copied to a new device array on `device` (creation.to_device,
    which imports the array module: this one does not)."""
    host = checks.host_array(values, "array")
    return _new(device, host.shape, host.dtype).copy_to_device(host)


def arange(*args, like=None, **kwargs):
    if not _is_device(like):
        return NotImplemented
    return _to_device(np.arange(*args, **kwargs), like.device)


def asarray(a, dtype=None, order=None, *, like=None, **kwargs):
    if not _is_device(like):
        return NotImplemented
    if _is_device(a):
        if a.device is like.device:
            return a if dtype is None or np.dtype(dtype) == a.dtype else a.astype(dtype)
        a = np.asarray(a)
    return _to_device(np.asarray(a, dtype=dtype), like.device)


def array(a, dtype=None, *, copy=True, like=None, **kwargs):
    result = asarray(a, dtype, like=like)
    if result is NotImplemented or result is not a or not copy:
        return result
    return a.copy()


# ---- views ---------------------------------------------------------------------------


def broadcast_to(array, shape, subok=False):
    if not _is_device(array):
        return NotImplemented
    dummy = array._dummy()
    return array._view_from(dummy, np.broadcast_to(dummy, checks.as_shape(shape)))


def reshape(a, *args, **kwargs):
    if not _is_device(a) or kwargs.get("order", "C") != "C":
        return NotImplemented
    shape = args[0] if args else kwargs.get("newshape", kwargs.get("shape"))
    try:
        return a.reshape(shape)
    except ValueError:
        return a.copy().reshape(shape)


def transpose(a, axes=None):
    if not _is_device(a):
        return NotImplemented
    return a.transpose(axes)


def copy(a, order="K", subok=False):
    if not _is_device(a):
        return NotImplemented
    return a.copy()


# ---- reductions over axes ------------------------------------------------------------


def _axes(axis, ndim):
    if axis is None:
        return tuple(range(ndim))
    axes = axis if isinstance(axis, (tuple, list)) else (axis,)
    out = []
    for a in axes:
        a = operator.index(a)
        if not -ndim <= a < max(ndim, 1):
            raise np.exceptions.AxisError(a, ndim)
        out.append(a % max(ndim, 1))
    if len(set(out)) != len(out):
        raise ValueError("duplicate value in 'axis'")
    return tuple(sorted(out))


def result_dtype(op, dtype, given=None):
    """NumPy's result dtype of reduction `op` of an array of `dtype` (``dtype=`` given)."""
    dtype = np.dtype(dtype)
    if given is not None:
        return np.dtype(given)
    if op in ("min", "max"):
        return dtype
    if op == "mean":
        return np.dtype(np.float64) if dtype.kind in "biu" else dtype
    if dtype.kind == "b" or (dtype.kind == "i" and dtype.itemsize < 8):
        return np.dtype(np.int64)
    if dtype.kind == "u" and dtype.itemsize < 8:
        return np.dtype(np.uint64)
    return dtype


def _shaped(values, shape):
    """`values`, an array this module made, in `shape` (a view only where that differs)."""
    return values if values.shape == shape else values.reshape(shape)


def reduce_axes(x, op, axis=None, dtype=None, keepdims=False):
    """`op` ("sum", "prod", "min", "max", "mean") of DeviceArray `x` over `axis`, as a new
    DeviceArray of NumPy's result shape and dtype (computed on the device)."""
    axes = _axes(axis, x.ndim)
    kept = tuple(a for a in range(x.ndim) if a not in axes)
    rows = math.prod(x.shape[a] for a in kept)
    n = math.prod(x.shape[a] for a in axes)
    out_dtype = result_dtype(op, x.dtype, dtype)
    shape = tuple(1 if a in axes else x.shape[a] for a in range(x.ndim)) if keepdims else \
        tuple(x.shape[a] for a in kept)  # fmt: skip
    base = "sum" if op == "mean" else op
    if n == 0:
        if base in ("min", "max") and rows:
            raise ValueError(f"zero-size array to reduction operation {base}imum which has "
                             "no identity")  # fmt: skip
        value = {"sum": 0, "prod": 1}.get(base, 0)
        if op == "mean":
            value = np.nan
        return fill(_new(x.device, shape, out_dtype), value)
    if x.dtype.kind == "c" and base in ("min", "max"):
        return NotImplemented
    if n == 1:  # every reduced axis of length 1: the elements themselves, in a new array
        values = _contiguous(x)
        if values.dtype != out_dtype:
            values = values.astype(out_dtype)
        elif values is x:
            values = x.copy()
        return _shaped(values, shape)
    # The working dtype: the result's, except bool min/max (in int32, then back to bool).
    work = out_dtype
    if op == "mean" and dtype is None and x.dtype.kind in "f" and x.dtype.itemsize < 4:
        work = np.dtype(np.float32)  # NumPy's float16 mean adds in float32
    if work.kind == "b":
        work = np.dtype(np.int32)
    values = x.transpose(kept + axes) if axes != tuple(range(x.ndim - len(axes), x.ndim)) else x
    values = _contiguous(values)
    if values.dtype != work:
        values = values.astype(work)
    values = values.reshape(-1)
    device = x.device
    kernel = _row_kernel(base, _narrow_option(device))
    while n > 1:
        parts = -(-n // ROW_CHUNK)
        partial = _new(device, (rows * parts,), work)
        if partial.size:
            kernel.forall(rows * parts, device=device)(values, partial, n, parts, ROW_CHUNK)
        values, n = partial, parts
    if op == "mean":
        count = math.prod(x.shape[a] for a in axes)
        values = np.true_divide(values, work.type(count))
        if values.dtype != work:
            values = values.astype(work)
    if values.dtype != out_dtype:
        values = values.astype(out_dtype)
    return _shaped(values, shape)


def _reduction(op):
    def reduction(a, axis=None, dtype=None, out=None, keepdims=False, **kwargs):
        if not _is_device(a) or out is not None or kwargs:
            return NotImplemented
        if op in ("min", "max") and dtype is not None:
            return NotImplemented
        whole = axis is None or len(_axes(axis, a.ndim)) == a.ndim
        if whole and not keepdims and dtype is None:
            return getattr(a, op)()  # the scalar, by runtime/reduce.py (exact float sums)
        return reduce_axes(a, op, axis, dtype, keepdims)

    return reduction


def _min_max(op):
    def reduction(a, axis=None, out=None, keepdims=False, **kwargs):
        return _reduction(op)(a, axis=axis, out=out, keepdims=keepdims, **kwargs)

    return reduction


def _size(a, axis=None):
    return a.size if axis is None else a.shape[axis]


#: NumPy function -> its device form.
FUNCTIONS = {
    np.shape: lambda a: a.shape,  # facts: never a copy of the elements
    np.ndim: lambda a: a.ndim,
    np.size: _size,
    np.concatenate: concatenate,
    np.stack: stack,
    np.empty_like: empty_like,
    np.zeros_like: zeros_like,
    np.ones_like: ones_like,
    np.full_like: full_like,
    np.broadcast_to: broadcast_to,
    np.reshape: reshape,
    np.transpose: transpose,
    np.copy: copy,
    np.sum: _reduction("sum"),
    np.prod: _reduction("prod"),
    np.mean: _reduction("mean"),
    np.min: _min_max("min"),
    np.amin: _min_max("min"),
    np.max: _min_max("max"),
    np.amax: _min_max("max"),
}

#: NumPy's creation functions with ``like=<device array>`` (NumPy passes the array as the
#: ``self`` of ``__array_function__``, not among the arguments) -> their device form.
LIKE_FUNCTIONS = {
    np.empty: _creation(None),
    np.zeros: _creation(0),
    np.ones: _creation(1),
    np.full: full,
    np.arange: arange,
    np.asarray: asarray,
    np.asanyarray: asarray,
    np.array: array,
}
