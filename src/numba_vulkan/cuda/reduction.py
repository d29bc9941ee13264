"""``cuda.reduce`` / ``cuda.Reduce``: reduce a 1-d array with a user's binary function.

numba.cuda's API::

    @cuda.reduce
    def sum_reduce(a, b):
        return a + b

    total = sum_reduce(array)                     # NumPy or device array
    sum_reduce(d_array, size=n, res=d_res, init=1)  # into d_res[0], nothing returned

The function is compiled as a device function and called in passes, as
runtime/reduce.py does for DeviceArray.sum: in a pass of ``P = ceil(n / CHUNK)``
invocations, invocation ``i`` folds the elements ``i, i + P, i + 2P ...`` (at most
CHUNK of them: no loop near lavapipe's iteration cap, and neighbouring invocations
read neighbouring elements) into ``partials[i]``; the next pass folds the partials,
until one value is left. Like numba.cuda's tree, the order of the calls is not
left-to-right: the function must be associative and commutative (numba.cuda's
requirement too); ``init`` is folded in once, as ``fn(partial, init)``, in the first
pass. Values are stored in the array's dtype between calls, as numba.cuda does.
"""

import numpy as np

from .. import dispatcher as _dispatcher
from .. import runtime as _rt
from .. import stubs as _s

CHUNK = 256  # elements one invocation folds per pass
LOCAL = 64


def _pass_kernel(device_fn):
    """The kernel of one pass, calling `device_fn` (a closure: one kernel per function)."""

    def reduce_pass(x, out, n, stride, init, use_init):
        i = _s.global_id(0)
        if i < stride:
            acc = x[i]
            for k in range(1, CHUNK):
                j = i + k * stride
                if j >= n:
                    break
                acc = device_fn(acc, x[j])
            if use_init and i == 0:
                acc = device_fn(acc, init)
            out[i] = acc

    return _dispatcher.jit(reduce_pass)


class Reduce:
    """A reduction with a binary function; ``cuda.reduce`` is this class (a decorator)."""

    def __init__(self, functor):
        self._functor = functor
        device_fn = functor if isinstance(functor, _dispatcher.Dispatcher) else \
            _dispatcher.jit(functor, device=True)
        self._kernel = _pass_kernel(device_fn)

    def __call__(self, arr, size=None, res=None, init=0, stream=0):
        """Reduce ``arr[:size]``; the result (arr's dtype), or None with ``res`` given
        (then written to ``res[0]`` on the device). An empty range gives ``init``."""
        if arr.ndim != 1:
            raise TypeError("cuda.reduce: only 1-d arrays are supported (as numba.cuda)")
        n = arr.shape[0] if size is None else min(int(size), arr.shape[0])
        dtype = np.dtype(arr.dtype)
        init = dtype.type(init)
        if n < 1:
            return init
        if stream == 0:
            stream = None
        if isinstance(arr, np.ndarray):
            arr = _rt.to_device(np.ascontiguousarray(arr), stream=stream)
        x, use_init = arr, True
        while True:
            parts = -(-n // CHUNK)
            out = res if parts == 1 and res is not None else _rt.device_array(parts, dtype)
            groups = -(-parts // LOCAL)
            launch = self._kernel[groups, LOCAL, stream] if stream is not None else \
                self._kernel[groups, LOCAL]
            launch(x, out, n, parts, init, use_init)
            x, n, use_init = out, parts, False
            if n == 1:
                break
        if res is not None:
            return None
        return out.copy_to_host()[0]


reduce = Reduce
