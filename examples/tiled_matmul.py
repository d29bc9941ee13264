"""Tiled matrix product with shared memory, in the style of numba-cuda's documentation.

Each workgroup of TPB x TPB invocations computes a TPB x TPB tile of C = A @ B:
for each tile along k it copies one tile of A and one of B into shared
memory, waits at a barrier, multiplies them from shared memory, and waits
again before the next copy overwrites them. Checked against NumPy.

Run: python3 examples/tiled_matmul.py [--size N]   (N a multiple of 16; small by default)
"""

import argparse
import sys

import numpy as np
from numpy import float32

import numba_vulkan as nv

TPB = 16  # threads per block along each axis: a 16 x 16 workgroup


@nv.jit
def fast_matmul(A, B, C):
    sA = nv.shared.array(shape=(TPB, TPB), dtype=float32)
    sB = nv.shared.array(shape=(TPB, TPB), dtype=float32)

    x = nv.global_id(0)  # column of C
    y = nv.global_id(1)  # row of C
    tx = nv.local_id(0)
    ty = nv.local_id(1)
    bpg = nv.num_groups(0)  # tiles along k (square matrices)

    # No early return for invocations outside C: every invocation of the workgroup must
    # reach the barriers (the kernel refuses to compile otherwise); the bounds checks
    # below guard the loads and the store instead.
    tmp = float32(0.0)
    for i in range(bpg):
        # Preload one tile of A and one of B into shared memory.
        sA[ty, tx] = 0
        sB[ty, tx] = 0
        if y < A.shape[0] and tx + i * TPB < A.shape[1]:
            sA[ty, tx] = A[y, tx + i * TPB]
        if x < B.shape[1] and ty + i * TPB < B.shape[0]:
            sB[ty, tx] = B[ty + i * TPB, x]
        nv.syncthreads()  # every invocation's copy is done
        for j in range(TPB):
            tmp += sA[ty, j] * sB[j, tx]
        nv.syncthreads()  # everyone is done with the tiles before the next copy
    if y < C.shape[0] and x < C.shape[1]:
        C[y, x] = tmp


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=64, help="matrix side (multiple of 16)")
    n = parser.parse_args(argv).size
    rng = np.random.default_rng(0)
    A = rng.standard_normal((n, n)).astype(np.float32)
    B = rng.standard_normal((n, n)).astype(np.float32)
    dA, dB, dC = nv.to_device(A), nv.to_device(B), nv.device_array((n, n), np.float32)
    groups = ((n + TPB - 1) // TPB, (n + TPB - 1) // TPB)
    fast_matmul[groups, (TPB, TPB)](dA, dB, dC)
    C = dC.copy_to_host()
    want = A.astype(np.float64) @ B.astype(np.float64)
    ok = np.allclose(C, want, rtol=1e-4, atol=1e-3 * np.sqrt(n))
    print(f"tiled matmul {n}x{n} on {nv.get_device().info.name}: C[0, :3]={C[0, :3]}, "
          f"matches NumPy: {ok}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
