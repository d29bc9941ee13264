"""``VulkanUFunc.reduce``: a binary vectorized function folded over an array, on the device.

Each pass combines the first half of the values with the second half, element
by element (one launch of the function itself), until one value is left; an
odd element out is folded into the first. That is a tree, not NumPy's
left-to-right loop: for associative integer functions the result is the same,
float results may differ in rounding (numba.cuda's ``reduce`` does the same).
"""

import numpy as np

from ..runtime.array import DeviceArray
from ..runtime.creation import to_device
from . import operands


def tree_reduce(ufunc, array, axis, identity, device):
    """Fold `ufunc` over a 1-d array (or any array with ``axis=None``) -> a NumPy scalar."""
    values = operands.as_operand(array)
    if operands.is_python_scalar(values) or isinstance(values, np.generic):
        raise TypeError(f"{ufunc.__name__}.reduce needs an array, not a scalar")
    if axis is None:
        values = values.ravel() if isinstance(values, DeviceArray) else values.reshape(-1)
    elif values.ndim != 1 or axis not in (0, -1):
        raise ValueError(f"{ufunc.__name__}.reduce supports 1-d arrays (axis=0) or axis=None, "
                         f"not axis={axis!r} of a {values.ndim}-d array")  # fmt: skip
    n = values.shape[0]
    if n == 0:
        if identity is None or identity == "reorderable":
            raise ValueError(f"zero-size array to reduction operation {ufunc.__name__} "
                             "which has no identity")  # fmt: skip
        return identity
    dev = operands.device_of([values], device)
    work = values if isinstance(values, DeviceArray) else to_device(values, dev)
    if n == 1:
        return work[0]
    half = n // 2
    acc = ufunc(work[:half], work[half : 2 * half], device=dev)  # a new array: input kept
    if n % 2:
        ufunc(acc[:1], work[n - 1 :], out=acc[:1])
    n = half
    while n > 1:
        half = n // 2
        ufunc(acc[:half], acc[half : 2 * half], out=acc[:half])
        if n % 2:
            ufunc(acc[:1], acc[n - 1 : n], out=acc[:1])
        n = half
    return acc[0]
