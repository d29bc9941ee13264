"""The matrix product on cooperative matrices (``matmul(..., units=True)``; docs/linalg.md).

float16 operands, float32 sums: the configuration 16x16x16 float16 x float16 + float32
that NVIDIA, AMD and Intel drivers list (and the emulation accepts). Operands are copied
into zero-padded C-contiguous float16 buffers whose sides are multiples of the block
(``pad``), so that every tile lies inside its matrix; the product goes to a padded
float32 buffer, and ``unpad`` converts the wanted part to the result's dtype and strides.

``product``: a workgroup computes a BLOCK x BLOCK block of C as four 32 x 32 quadrants,
one per subgroup (where the device gives fewer subgroups, each takes several in turn),
each quadrant 2 x 2 accumulator tiles; along k, the subgroup loads two tiles of A and two
of B from device memory (the driver's loads, cached) and makes four multiplies with them.
"""

from __future__ import annotations

import numpy as np

from ..runtime.compiler_hook import jit
from ..stubs import global_id, group_id, subgroup
from ..stubs import matrix as mx

#: The side of C a workgroup computes, and the padding of every side of the operands.
BLOCK = 64
#: Subgroups a workgroup is launched with (one per quadrant).
SUBGROUPS = 4


@jit
def product(a, b, c):
    """c = a @ b for C-contiguous a (Mp x Kp float16), b (Kp x Np float16), c (Mp x Np
    float32), Mp and Np multiples of BLOCK, Kp of 16."""
    for quadrant in range(subgroup.id(), 4, subgroup.count()):
        r0 = group_id(1) * BLOCK + (quadrant // 2) * 32
        c0 = group_id(0) * BLOCK + (quadrant % 2) * 32
        fa0 = mx.fragment("a", 16, 16, np.float16)
        fa1 = mx.fragment("a", 16, 16, np.float16)
        fb0 = mx.fragment("b", 16, 16, np.float16)
        fb1 = mx.fragment("b", 16, 16, np.float16)
        c00 = mx.fragment("acc", 16, 16, np.float32)
        c01 = mx.fragment("acc", 16, 16, np.float32)
        c10 = mx.fragment("acc", 16, 16, np.float32)
        c11 = mx.fragment("acc", 16, 16, np.float32)
        mx.fill(c00, 0.0)
        mx.fill(c01, 0.0)
        mx.fill(c10, 0.0)
        mx.fill(c11, 0.0)
        for k in range(0, a.shape[1], 16):
            mx.load(fa0, a, r0, k)
            mx.load(fa1, a, r0 + 16, k)
            mx.load(fb0, b, k, c0)
            mx.load(fb1, b, k, c0 + 16)
            mx.mma(c00, fa0, fb0)
            mx.mma(c01, fa0, fb1)
            mx.mma(c10, fa1, fb0)
            mx.mma(c11, fa1, fb1)
        mx.store(c, r0, c0, c00)
        mx.store(c, r0, c0 + 16, c01)
        mx.store(c, r0 + 16, c0, c10)
        mx.store(c, r0 + 16, c0 + 16, c11)


@jit
def pad(src, dst):
    """dst[i, j] = src[i, j] inside src, 0 outside (dst's shape, one invocation each)."""
    j, i = global_id(0), global_id(1)
    if i < dst.shape[0] and j < dst.shape[1]:
        if i < src.shape[0] and j < src.shape[1]:
            dst[i, j] = src[i, j]
        else:
            dst[i, j] = 0


@jit
def unpad(src, dst):
    """dst[i, j] = src[i, j] over dst's shape, converted to dst's dtype."""
    j, i = global_id(0), global_id(1)
    if i < dst.shape[0] and j < dst.shape[1]:
        dst[i, j] = src[i, j]


def _round_up(n, m):
    return -(-n // m) * m


def run(A, B, C, device):
    """C[b] = A[b] @ B[b] for (nb, M, K), (nb, K, N) and (nb, M, N) views, on tiles."""
    from ..runtime.array import DeviceArray

    nb, M, K = A.shape
    N = B.shape[2]
    Mp, Np, Kp = _round_up(M, BLOCK), _round_up(N, BLOCK), _round_up(K, 16)
    a = DeviceArray(device, (Mp, Kp), np.float16)
    b = DeviceArray(device, (Kp, Np), np.float16)
    c = DeviceArray(device, (Mp, Np), np.float32)
    local = SUBGROUPS * device.info.subgroup_size
    for i in range(nb):
        pad.forall((Kp, Mp), device=device)(A[i], a)
        pad.forall((Np, Kp), device=device)(B[i], b)
        product[(Np // BLOCK, Mp // BLOCK), (local, 1), device](a, b, c)
        unpad.forall((N, M), device=device)(c, C[i])
