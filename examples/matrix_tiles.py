"""Matrix product on cooperative matrices (nv.matrix), any size, staged in shared memory.

Each workgroup computes a 32 x 32 block of C = A @ B (A, B float16; C float32) with four
subgroups, one 16 x 16 tile each. Along k, the whole workgroup copies a 32 x 16 slice of A
and a 16 x 32 slice of B into shared memory (zeros past the matrices' edges, so any size
works), waits at a barrier, and each subgroup loads its tiles from there and multiplies
them into its accumulator. At the end the accumulators go through shared memory to C,
again with the edges checked. On a device with matrix units (tensor cores) the multiply
runs on them; elsewhere (lavapipe) it is emulated exactly (docs/matrix.md).

Run: python3 examples/matrix_tiles.py [--m M --n N --k K]
"""

import argparse
import sys

import numpy as np

import numba_vulkan as nv
from numba_vulkan import matrix as mx

BM, BN, BK = 32, 32, 16  # the block of C a workgroup computes, and the slice along k


@nv.jit
def matmul_tiles(a, b, c):
    sa = nv.shared.array((BM, BK), np.float16)
    sb = nv.shared.array((BK, BN), np.float16)
    sc = nv.shared.array((BM, BN), np.float32)
    m, k_total = a.shape
    n = b.shape[1]
    row0 = nv.group_id(1) * BM
    col0 = nv.group_id(0) * BN
    tid = nv.local_id(0)
    threads = nv.local_size(0)
    sub = nv.subgroup.id()  # this subgroup's tile of the block: 2 x 2 tiles
    ti = (sub // 2) * 16
    tj = (sub % 2) * 16

    fa = mx.fragment("a", 16, 16, np.float16)
    fb = mx.fragment("b", 16, 16, np.float16)
    acc = mx.fragment("acc", 16, 16, np.float32)
    mx.fill(acc, 0.0)
    for k0 in range(0, k_total, BK):
        for e in range(tid, BM * BK, threads):
            i, j = e // BK, e % BK
            x = 0.0
            if row0 + i < m and k0 + j < k_total:
                x = a[row0 + i, k0 + j]
            sa[i, j] = x
        for e in range(tid, BK * BN, threads):
            i, j = e // BN, e % BN
            x = 0.0
            if k0 + i < k_total and col0 + j < n:
                x = b[k0 + i, col0 + j]
            sb[i, j] = x
        nv.barrier()
        mx.load(fa, sa, ti, 0)
        mx.load(fb, sb, 0, tj)
        mx.mma(acc, fa, fb)
        nv.barrier()  # before the next slice overwrites sa and sb
    mx.store(sc, ti, tj, acc)
    nv.barrier()
    for e in range(tid, BM * BN, threads):
        i, j = e // BN, e % BN
        if row0 + i < m and col0 + j < n:
            c[row0 + i, col0 + j] = sc[i, j]


def matmul(a, b):
    """C = A @ B in float32 for float16 A and B, one kernel launch."""
    m, n = a.shape[0], b.shape[1]
    c = nv.device_array((m, n), np.float32)
    local = 4 * nv.get_device().info.subgroup_size  # four subgroups, one per 16 x 16 tile
    groups = ((n + BN - 1) // BN, (m + BM - 1) // BM)
    matmul_tiles[groups, (local, 1)](a, b, c)
    return c


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--m", type=int, default=70)
    parser.add_argument("--n", type=int, default=45)
    parser.add_argument("--k", type=int, default=40)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(0)
    # Small integers: every product and sum is exact, so any device gives NumPy's result.
    a = rng.integers(-8, 9, (args.m, args.k)).astype(np.float16)
    b = rng.integers(-8, 9, (args.k, args.n)).astype(np.float16)
    c = matmul(nv.to_device(a), nv.to_device(b)).copy_to_host()
    expected = a.astype(np.float32) @ b.astype(np.float32)
    ok = np.array_equal(c, expected)
    shapes = nv.matrix.shapes()
    how = "emulated" if shapes[0].emulated else "the device's matrix units"
    print(f"C = A @ B, {args.m}x{args.k} @ {args.k}x{args.n} float16 -> float32 on "
          f"{nv.get_device().info.name} ({how}): {'matches NumPy' if ok else 'WRONG'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
