"""Sum of an array with a shared-memory tree reduction, checked against NumPy.

Each workgroup of 256 invocations first sums a grid-stride slice of the
input per invocation, then halves the partial sums in shared memory (256 ->
128 -> ... -> 1) with a barrier after each step; invocation 0 writes the
workgroup's sum. A second launch of the same kernel sums those partial sums
(launches on one stream run in order).

Run: python3 examples/shared_reduction.py [--size N]
"""

import argparse
import sys

import numpy as np

import numba_vulkan as nv

BLOCK = 256


@nv.jit
def block_sum(data, partial):
    s = nv.shared.array(BLOCK, np.float32)
    t = nv.local_id(0)
    i = nv.global_id(0)
    stride = nv.num_groups(0) * BLOCK
    acc = np.float32(0.0)
    while i < data.size:  # grid-stride loop: any size with a fixed grid
        acc += data[i]
        i += stride
    s[t] = acc
    nv.barrier()
    half = BLOCK // 2
    while half > 0:
        if t < half:
            s[t] += s[t + half]
        nv.barrier()
        half //= 2
    if t == 0:
        partial[nv.group_id(0)] = s[0]


def reduce_sum(ddata, groups=256):
    """The sum of a float32 device array: two launches of block_sum."""
    partial = nv.device_array(groups, np.float32)
    total = nv.device_array(1, np.float32)
    block_sum[groups, BLOCK](ddata, partial)
    block_sum[1, BLOCK](partial, total)
    return total


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=1 << 16)
    n = parser.parse_args(argv).size
    # Integer-valued data: float32 sums are exact below 2^24, whatever the order.
    data = np.random.default_rng(0).integers(0, 4, n).astype(np.float32)
    total = reduce_sum(nv.to_device(data)).copy_to_host()[0]
    want = data.astype(np.float64).sum()
    ok = bool(np.isclose(total, want, rtol=1e-6))
    print(f"shared-memory reduction of {n} float32 on {nv.get_device().info.name}: "
          f"{total} (NumPy {want}), matches NumPy: {ok}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
