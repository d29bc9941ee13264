"""Advanced indexing of device arrays: index arrays, lists and boolean masks.

``d[mask]``, ``d[[0, 2]]``, ``d[idx, 1:]`` give new device arrays gathered on
the device; ``d[mask] = v`` scatters on the device. NumPy's rules apply in full
because NumPy itself applies the key: for every axis, a stride-0 view of that
axis's element positions is indexed with the key, and the positions of the
selected elements are the sums (memory grows with the result only, never with
the array). Positions count stored elements from the lowest one the array
touches, so they are never negative (a kernel would wrap negative indices).

Writes follow NumPy where an element is selected more than once: the last
value given for it wins (the positions are made unique on the host, keeping
each one's last occurrence, before the parallel scatter).

Index arrays on the device are copied to the host to compute positions.
Records (structured dtypes) go through the host.
"""

import numpy as np

from .. import _core, checks
from ..stubs import global_id
from . import compiler_hook
from .compiler_hook import jit
from .layout import broadcast_to, span, view


def _is_device_array(value):
    return isinstance(value, _core.DeviceArrayBase)

_kernels = {}


def is_advanced(key):
    """Whether `key` uses advanced indexing (arrays, lists, booleans)."""
    parts = key if isinstance(key, tuple) else (key,)
    return any(isinstance(p, (list, np.ndarray, bool, np.bool_)) or _is_device_array(p)
               for p in parts)


def _host_key(key):
    parts = key if isinstance(key, tuple) else (key,)
    fixed = []
    for p in parts:
        if _is_device_array(p):
            p = p.copy_to_host()
        elif isinstance(p, list):
            p = np.asarray(p)
            if p.dtype.kind not in "biu" and p.size:
                raise IndexError(f"index lists must hold integers or booleans, not {p.dtype}")
            if p.size == 0:
                p = p.astype(np.intp)
        if isinstance(p, np.ndarray) and p.dtype.kind not in "biu":
            raise IndexError(f"index arrays must be integers or booleans, not {p.dtype}")
        fixed.append(p)
    return tuple(fixed)


def positions(array, key):
    """(positions of the selected elements in stored elements from the span's start, byte
    offset of that start relative to the array's first element)."""
    key = _host_key(key)
    lo, _ = span(array)
    k = array._itemsize
    base = (array._offset - lo) // k
    pos = None
    for axis, (n, stride) in enumerate(zip(array.shape, array._dev_strides)):
        along = (np.arange(n, dtype=np.int64) * (stride // k)).reshape(
            [-1 if d == axis else 1 for d in range(array.ndim)]
        )
        part = np.broadcast_to(along, array.shape)[key]
        pos = part if pos is None else pos + part
    if pos is None:  # 0-d array
        pos = np.zeros((), np.int64)[key]
    return np.asarray(pos + base, dtype=np.int64), lo - array._offset


def _whole(array, start, count):
    """The span's elements as a 1-d view (stored elements from byte `start` relative)."""
    return view(array, (max(count, 1),), (array._itemsize,), start)


def _kernel(name):
    kernel = _kernels.get(name)
    if kernel is None:
        if name == "gather":

            def gather(src, pos, out):
                i = global_id(0)
                if i < out.shape[0]:
                    out[i] = src[pos[i]]

            kernel = jit(gather)
        else:

            def scatter(dst, pos, values):
                i = global_id(0)
                if i < values.shape[0]:
                    dst[pos[i]] = values[i]

            kernel = jit(scatter)
        _kernels[name] = kernel
    return kernel


def _index_array(array, pos):
    """The positions as an index array on `array`'s device (int32 where they fit)."""
    small = pos.size == 0 or pos.max(initial=0) < 2**31
    return _upload(array, pos.reshape(-1).astype(np.int32 if small else np.int64))


def _upload(like, host):
    """`host` copied to a new device array on `like`'s device, of `like`'s class."""
    return type(like)(like.device, host.shape, host.dtype).copy_to_device(host)


def getitem(array, key):
    """``array[key]`` for an advanced `key`: a new DeviceArray (or a scalar for 0-d)."""
    if array.dtype.fields is not None:
        return _through_host_get(array, key)
    pos, start = positions(array, key)
    out = type(array)(array.device, pos.shape, array.dtype)
    if pos.size:
        count = int(pos.max()) + 1
        _kernel("gather").forall(pos.size, device=array.device)(
            _whole(array, start, count), _index_array(array, pos), out.reshape(-1)
        )
    if out.ndim == 0:
        return out.copy_to_host()[()]
    return out


def setitem(array, key, value):
    """``array[key] = value`` for an advanced `key`, scattered on the device."""
    if array.dtype.fields is not None:
        host = array.copy_to_host()
        host[_host_key(key)] = np.asarray(value)
        array.copy_to_device(host)
        return
    pos, start = positions(array, key)
    if pos.size == 0:
        return
    if _is_device_array(value):
        try:
            values = compiler_hook.cast_on_device(broadcast_to(value, pos.shape), array.dtype).reshape(-1)
        except ValueError:
            raise ValueError(f"value of shape {value.shape} cannot be broadcast to the "
                             f"selection's shape {pos.shape}") from None  # fmt: skip
    else:
        try:
            host = np.broadcast_to(checks.assigned(value, array.dtype), pos.shape)
        except ValueError:
            raise ValueError(f"value of shape {np.shape(value)} cannot be broadcast to the "
                             f"selection's shape {pos.shape}") from None  # fmt: skip
        values = _upload(array, np.ascontiguousarray(host).reshape(-1))
    flat = pos.reshape(-1)
    # Repeated positions: the last value wins, as in NumPy.
    unique, first_from_end = np.unique(flat[::-1], return_index=True)
    if unique.size != flat.size:
        keep = np.sort(flat.size - 1 - first_from_end)
        flat = flat[keep]
        values = getitem(values, keep)
    count = int(flat.max()) + 1
    _kernel("scatter").forall(flat.size, device=array.device)(
        _whole(array, start, count), _index_array(array, flat), values
    )


def _through_host_get(array, key):
    picked = array.copy_to_host()[_host_key(key)]
    return _upload(array, picked) if picked.ndim else picked[()]
