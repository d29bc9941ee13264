"""Session 8 experiment: DeviceArray.sum's one-partial-per-workgroup form on the GPU.

Not a benchmark of record (bench_runtime_extras.py is). One process times, for
2^--log2 float32 ones, ``x.sum()`` end to end and the first launch alone, with
MAX_INVOCATIONS at 2^17..2^20 (the first launch's invocations, rounded to
workgroups of 256), so that their differences are not run-to-run noise.

    python3 benchmarks/experiments/s8_sum.py --out s.json              # H200
    python3 benchmarks/experiments/s8_sum.py --log2 22 --repeats 5     # lavapipe
"""

import argparse
import json
import statistics
import time

import numpy as np

import numba_vulkan as nv
from numba_vulkan.runtime import reduce as red


def median_time(fn, repeats, sync=None):
    end = time.perf_counter() + 0.5  # an idle GPU starts at low clocks
    while time.perf_counter() < end:
        fn()
        if sync:
            sync()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        if sync:
            sync()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def arguments(repeats):
    """The experiments' options: --log2 (array size), --repeats, --out (JSON)."""
    p = argparse.ArgumentParser()
    p.add_argument("--log2", type=int, default=28)
    p.add_argument("--repeats", type=int, default=repeats)
    p.add_argument("--out")
    return p.parse_args()


def float_sum(m):
    """2^log2 float32 ones on the device, the device, the workgroup size of the sum's GPU
    form (also on lavapipe) and its kernel."""
    x = nv.to_device(np.ones(m, np.float32))
    dev = x.device
    block = red._block(dev) or red.BLOCK
    return x, dev, block, red._kernel("sum", "float32", 1, red._narrow_option(dev), block)


def main():
    args = arguments(50)
    m = 1 << args.log2
    x, dev, block, kernel = float_sum(m)
    results = {"device": dev.info.name, "n": m, "block": block}
    for log2_inv in (17, 18, 19, 20):
        red.MAX_INVOCATIONS = 1 << log2_inv
        assert x.sum() == m
        whole = median_time(x.sum, args.repeats)
        invocations = min(-(-m // red.FLOAT_CHUNK), red.MAX_INVOCATIONS)
        groups = -(-invocations // block)
        partials = nv.device_array(2 * groups, np.float32)  # sums, then their errors
        launch = kernel[groups, block, dev]
        first = median_time(
            lambda: launch(x, partials, np.int32(m), np.int32(groups * block), np.int32(groups)),
            args.repeats, nv.synchronize)
        results[f"inv_2^{log2_inv}"] = {"sum_TBps": 4 * m / whole / 1e12, "sum_us": whole * 1e6,
                                        "first_pass_TBps": 4 * m / first / 1e12,
                                        "first_pass_us": first * 1e6}
        print(log2_inv, results[f"inv_2^{log2_inv}"], flush=True)
    if args.out:
        with open(args.out, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
