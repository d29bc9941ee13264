"""numba-cuda's "JIT Function CPU-GPU Compatibility" example, ported.

From numba-cuda's documentation (user/examples.rst). Changes: the import
(``numba_vulkan as nv`` for ``numba.cuda``) and ``cuda.grid(1)`` ->
``nv.global_id(0)``. A function decorated with ``numba.jit`` is reused, as
is, inside the kernel: it is recompiled for Vulkan and inlined.
"""

import math

import numpy as np
from numba import jit

import numba_vulkan as nv


@jit
def business_logic(x, y, z):
    return 4 * z * (2 * x - (4 * y) / 2 * math.pi)


@nv.jit
def f(res, xarr, yarr, zarr):
    tid = nv.global_id(0)
    if tid < len(xarr):
        # The function decorated with numba.jit may be directly reused
        res[tid] = business_logic(xarr[tid], yarr[tid], zarr[tid])


X = nv.to_device([1, 10, 234])
Y = nv.to_device([2, 2, 4014])
Z = nv.to_device([3, 14, 2211])
results = nv.to_device(np.zeros(3))

f.forall(len(X))(results, X, Y, Z)

print(results.copy_to_host())
# [-126.79644737231007 416.28324559588634 -218912930.2987788]

# Not in the original: the same function on the CPU gives the same numbers.
got = results.copy_to_host()
expect = [business_logic(x, y, z) for x, y, z in zip([1, 10, 234], [2, 2, 4014], [3, 14, 2211])]
assert np.allclose(got, expect, rtol=1e-12), (got, expect)
print("ok")
