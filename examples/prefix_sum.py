"""Inclusive prefix sum (scan) of int32 values with subgroup scans, checked against NumPy.

Three launches, in order on one stream:

1. scan_blocks: each workgroup of 256 scans its 256 elements. Every subgroup
   scans its lanes (subgroup.inclusive_sum), the last lane of each subgroup
   writes the subgroup's total to shared memory, the first subgroup scans
   those totals, and every invocation adds the totals of the subgroups before
   it. The workgroup's total goes to `sums`.
2. the same kernel scans `sums` (one workgroup: up to 256 workgroups' sums).
3. add_offsets: every element adds the scanned sums of the workgroups before it.

Works for any subgroup size that divides 256 with at most 256 // size subgroups
(lavapipe 8, NVIDIA 32, AMD 32 or 64). Sizes up to 256 * 256 elements.

Run: python3 examples/prefix_sum.py [--size N]
"""

import argparse
import sys

import numpy as np

import numba_vulkan as nv

BLOCK = 256


@nv.jit
def scan_blocks(data, out, sums):
    totals = nv.shared.array(BLOCK, np.int32)  # one per subgroup (at most BLOCK)
    g = nv.global_id(0)
    v = data[g] if g < data.size else 0
    x = nv.subgroup.inclusive_sum(v)
    lane = nv.subgroup.lane()
    sg = nv.subgroup.id()
    if lane == nv.subgroup.size() - 1:
        totals[sg] = x
    nv.barrier()
    if sg == 0:  # the first subgroup scans the subgroups' totals
        n = nv.subgroup.count()
        width = nv.subgroup.size()
        carry = 0
        start = 0
        while start < n:  # several rounds when there are more totals than lanes
            t = totals[start + lane] if start + lane < n else 0
            s = nv.subgroup.inclusive_sum(t) + carry
            if start + lane < n:
                totals[start + lane] = s
            carry = nv.subgroup.broadcast(s, width - 1)
            start += width
    nv.barrier()
    if sg > 0:
        x += totals[sg - 1]
    if g < data.size:
        out[g] = x
    if nv.local_id(0) == BLOCK - 1:
        sums[nv.group_id(0)] = x


@nv.jit
def add_offsets(out, scanned_sums):
    g = nv.global_id(0)
    b = nv.group_id(0)
    if b > 0 and g < out.size:
        out[g] += scanned_sums[b - 1]


def prefix_sum(ddata):
    n = ddata.shape[0]
    groups = (n + BLOCK - 1) // BLOCK
    if groups > BLOCK:
        raise ValueError(f"at most {BLOCK * BLOCK} elements")
    out = nv.device_array(n, np.int32)
    sums = nv.device_array(groups, np.int32)
    scanned = nv.device_array(groups, np.int32)
    unused = nv.device_array(1, np.int32)
    scan_blocks[groups, BLOCK](ddata, out, sums)
    scan_blocks[1, BLOCK](sums, scanned, unused)
    add_offsets[groups, BLOCK](out, scanned)
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=50000)
    n = parser.parse_args(argv).size
    data = np.random.default_rng(0).integers(-100, 100, n).astype(np.int32)
    got = prefix_sum(nv.to_device(data)).copy_to_host()
    want = np.cumsum(data, dtype=np.int32)
    ok = np.array_equal(got, want)
    print(f"prefix sum of {n} int32 on {nv.get_device().info.name} (subgroup size "
          f"{nv.get_device().info.subgroup_size}): out[-3:]={got[-3:]}, matches NumPy: {ok}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
