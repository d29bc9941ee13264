"""Session 9: where DeviceArray.sum's time goes beyond its first pass (H200: first pass
315 us for 2^28 float32, the whole sum 389-545 us; results/h200_2026-12-01_s9_sum_variants.json).

One process times, median of --repeats, each step added to the previous one:
the first pass launched and waited for; both passes; both passes and the read of the
result (the sum by hand); x.sum(); and, apart, reading a one-element device array
and allocating one. Then the Python profile of x.sum() (top 12 by own time).
"""

import cProfile
import io
import json
import pstats

import numpy as np
from s8_sum import arguments, float_sum, median_time  # same folder: run as a script

import numba_vulkan as nv
from numba_vulkan.runtime import reduce as red
from numba_vulkan.runtime.array import DeviceArray


def median_us(fn, repeats):
    return median_time(fn, repeats) * 1e6


def main():
    a = arguments(100)
    m = 1 << a.log2
    x, dev, block, kernel = float_sum(m)
    invocations = min(-(-m // red.FLOAT_CHUNK), red.MAX_INVOCATIONS)
    groups = -(-invocations // block)
    partials = nv.device_array(2 * groups, np.float32)
    final = nv.device_array(1, np.float32)
    first = kernel[groups, block, dev]
    n2 = 2 * groups
    inv2 = min(-(-n2 // red.FLOAT_CHUNK), red.MAX_INVOCATIONS)
    g2 = -(-inv2 // block)
    second = kernel[g2, block, dev]

    def pass1():
        first(x, partials, np.int32(m), np.int32(groups * block), np.int32(groups))
        nv.synchronize()

    def passes():
        first(x, partials, np.int32(m), np.int32(groups * block), np.int32(groups))
        second(partials, final, np.int32(n2), np.int32(g2 * block), np.int32(0))
        nv.synchronize()

    def by_hand():
        first(x, partials, np.int32(m), np.int32(groups * block), np.int32(groups))
        second(partials, final, np.int32(n2), np.int32(g2 * block), np.int32(0))
        return final.copy_to_host()[0]

    assert by_hand() == m and x.sum() == m
    r = {"device": dev.info.name, "n": m, "groups": [groups, g2]}
    r["first_pass_sync_us"] = median_us(pass1, a.repeats)
    r["two_passes_sync_us"] = median_us(passes, a.repeats)
    r["two_passes_read_us"] = median_us(by_hand, a.repeats)
    r["x_sum_us"] = median_us(x.sum, a.repeats)
    r["read_one_element_us"] = median_us(final.copy_to_host, a.repeats)
    r["allocate_us"] = median_us(lambda: DeviceArray(dev, (n2,), np.float32), a.repeats)
    r["empty_sync_us"] = median_us(nv.synchronize, a.repeats)
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(200):
        x.sum()
    prof.disable()
    s = io.StringIO()
    pstats.Stats(prof, stream=s).sort_stats("tottime").print_stats(12)
    print(json.dumps(r, indent=1))
    print("\n".join(s.getvalue().splitlines()[:30]))
    if a.out:
        with open(a.out, "w") as f:
            json.dump(r, f, indent=1)


if __name__ == "__main__":
    main()
