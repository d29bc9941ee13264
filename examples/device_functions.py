"""Device functions, as numba-cuda's documentation writes them ("Writing Device Functions").

The helper is numba-cuda's, changed only in the import (``numba_vulkan as nv``
for ``numba.cuda``); the kernel around it follows numba-cuda's vector-add
example with ``cuda.grid(1)`` -> ``nv.global_id(0)``. A device function may
return several values, take default and keyword arguments and call other
device functions; every call is inlined into the kernel (docs/device-functions.md).
"""

import numpy as np

import numba_vulkan as nv


@nv.jit(device=True)
def a_device_function(a, b):
    return a + b


@nv.jit(device=True)
def min_max(a, b):
    if a < b:
        return a, b
    return b, a


@nv.jit(device=True)
def spread(a, b, scale=1.0):
    lo, hi = min_max(a, b)
    return (hi - lo) * scale


@nv.jit
def f(a, b, c, d):
    # like threadIdx.x + blockIdx.x * blockDim.x
    tid = nv.global_id(0)
    size = len(c)
    if tid < size:
        c[tid] = a_device_function(a[tid], b[tid])
        d[tid] = spread(a[tid], b[tid], scale=0.5)


N = 100_000
rng = np.random.default_rng(0)
a = rng.random(N, dtype=np.float32)
b = rng.random(N, dtype=np.float32)
d_a, d_b = nv.to_device(a), nv.to_device(b)
d_c, d_d = nv.device_array_like(d_a), nv.device_array_like(d_a)

f.forall(len(d_a))(d_a, d_b, d_c, d_d)

c, d = d_c.copy_to_host(), d_d.copy_to_host()
np.testing.assert_array_equal(c, a + b)
np.testing.assert_array_equal(d, np.abs(a - b) * np.float32(0.5))
print(c[:4], d[:4])
print("ok")
