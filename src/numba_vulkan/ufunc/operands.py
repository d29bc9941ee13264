"""The operands of an element-wise launch: device views broadcast, merged and cut to kernel rank.

Kernels take arrays of rank 1 to 3. An element-wise operation of any rank is
brought there in three steps, all on views (no data moves):

1. every array operand is broadcast to the result's shape (NumPy's rules, as
   a view with stride 0 along the broadcast axes: ``broadcast_to``);
2. axes are dropped where the result has extent 1, and neighbouring axes are
   merged where *every* operand (the outputs included) steps through them as
   through one axis (``merge_axes``): contiguous operands of one shape always
   become 1-d;
3. what is still above rank 3 is cut along its leading axes into one launch
   per leading index (``launches``).

Strides here are the device's: bytes of the *stored* element type
(``DeviceArray._dev_strides``), which is what views are built from.
"""

import itertools

import numpy as np

from .. import bfloat16_host
from ..runtime import device_list
from ..runtime.array import DeviceArray
from ..runtime.layout import broadcast_to, span, view  # noqa: F401 (the operands' views)

#: The highest array rank a kernel takes.
MAX_RANK = 3


def merge_axes(shape, strides_per_operand):
    """Drop extent-1 axes and merge neighbours every operand steps through as one axis.

    Parameters
    ----------
    shape : tuple of int
        The common shape.
    strides_per_operand : list of tuple of int
        Each operand's strides for `shape`.

    Returns
    -------
    (tuple of int, list of tuple of int)
        The merged shape (at least rank 1) and each operand's strides for it.
    """
    keep = [axis for axis, n in enumerate(shape) if n != 1]
    merged_shape = [shape[a] for a in keep]
    merged = [[s[a] for a in keep] for s in strides_per_operand]
    axis = len(merged_shape) - 1
    while axis > 0:
        inner = merged_shape[axis]
        if all(st[axis - 1] == st[axis] * inner for st in merged):
            merged_shape[axis - 1] *= inner
            del merged_shape[axis]
            for st in merged:
                st[axis - 1] = st[axis]
                del st[axis]
        axis -= 1
    if not merged_shape:
        return (1,), [(0,) for _ in strides_per_operand]
    return tuple(merged_shape), [tuple(st) for st in merged]


def launches(arrays, shape):
    """Per launch, the operands as views of rank at most MAX_RANK.

    Parameters
    ----------
    arrays : list of DeviceArray
        Operands of shape `shape` (already broadcast).
    shape : tuple of int

    Yields
    ------
    (tuple of int, list of DeviceArray)
        The launch's shape and the operands' views of that shape.
    """
    merged_shape, strides = merge_axes(shape, [a._dev_strides for a in arrays])
    lead = len(merged_shape) - MAX_RANK
    if lead <= 0:
        yield merged_shape, [view(a, merged_shape, st) for a, st in zip(arrays, strides)]
        return
    inner_shape = merged_shape[lead:]
    for index in itertools.product(*(range(n) for n in merged_shape[:lead])):
        views = []
        for a, st in zip(arrays, strides):
            offset = sum(i * s for i, s in zip(index, st[:lead]))
            views.append(view(a, inner_shape, st[lead:], offset))
        yield inner_shape, views


def same_memory(a, b):
    """Whether two device arrays' memory may overlap (same buffer, intersecting spans)."""
    if a._buffer.address != b._buffer.address:
        return False
    lo_a, hi_a = span(a)
    lo_b, hi_b = span(b)
    return lo_a < hi_b and lo_b < hi_a


def same_elements(a, b):
    """Whether two views of one shape address exactly the same elements in the same order."""
    return (
        a._buffer.address == b._buffer.address
        and a._offset == b._offset
        and a.shape == b.shape
        and all(n <= 1 or sa == sb for n, sa, sb in zip(a.shape, a._dev_strides, b._dev_strides))
    )


def device_of(values, device=None):
    """The device of the DeviceArrays among `values` (all must share it), else `device` or the
    selected one."""
    found = None
    for v in values:
        if isinstance(v, DeviceArray):
            if found is None:
                found = v.device
            elif v.device is not found:
                raise ValueError(
                    f"the device arrays of one call must be on the same device, not on "
                    f"{found} and {v.device}; copy one with nv.to_device(x, device=...)"
                )
    if found is not None:
        if device is not None and device_list.get_device(device) is not found:
            raise ValueError("device= names another device than the device arrays' one")
        return found
    return device_list.get_device(device)


def is_python_scalar(value):
    """Python's bool, int, float and complex (NumPy 2 treats int, float, complex as weak);
    not NumPy's scalars, which are strong (np.float64 is a subclass of float)."""
    return type(value) in (bool, int, float, complex)


def as_operand(value):
    """A DeviceArray, a NumPy array, or a scalar (NumPy scalars and 0-d host arrays stay
    scalars only where they are NumPy scalars); lists and the like become NumPy arrays."""
    if isinstance(value, DeviceArray) or is_python_scalar(value):
        return value
    if isinstance(value, np.generic):
        return value
    try:
        host = np.asarray(value)
    except (TypeError, ValueError) as e:
        raise TypeError(f"cannot use {type(value).__name__} as an array operand: {e}") from None
    if host.dtype.kind not in "biufc" and not bfloat16_host.is_dtype(host.dtype):
        raise TypeError(f"operands must hold numbers, not {host.dtype} ({type(value).__name__})")
    return host
