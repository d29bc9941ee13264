"""256-bin histogram of bytes with shared-memory atomics, checked against NumPy.

Each workgroup counts its grid-stride slice of the data into a private
256-bin histogram in shared memory (atomic adds: many invocations hit the
same bin at once), then adds its bins to the global histogram with one
global atomic per bin. Without the atomics, concurrent increments of one bin
would be lost.

Run: python3 examples/histogram.py [--size N]
"""

import argparse
import sys

import numpy as np

import numba_vulkan as nv

BINS = 256
BLOCK = 256


@nv.jit
def histogram(data, hist):
    h = nv.shared.array(BINS, np.uint32)
    t = nv.local_id(0)
    h[t] = 0  # BLOCK == BINS: one bin per invocation
    nv.barrier()
    i = nv.global_id(0)
    stride = nv.num_groups(0) * BLOCK
    while i < data.size:
        nv.atomic.add(h, data[i], 1)
        i += stride
    nv.barrier()
    nv.atomic.add(hist, t, h[t])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=1 << 18)
    parser.add_argument("--groups", type=int, default=64)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(0)
    # Skewed data: a few bins take most of the bytes, so collisions are frequent.
    data = np.minimum(rng.exponential(12.0, args.size), 255).astype(np.uint8)
    hist = np.zeros(BINS, np.uint32)
    histogram[args.groups, BLOCK](data, hist)
    want = np.bincount(data, minlength=BINS).astype(np.uint32)
    ok = np.array_equal(hist, want)
    print(f"histogram of {args.size} bytes on {nv.get_device().info.name}: "
          f"bins[:4]={hist[:4]}, matches NumPy: {ok}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
