"""Global arrays in kernels: inlined constants (a select per element at each read) against
constant buffers (one load), by table size. Decides frontend/constants.MAX_ELEMENTS.

Usage: PYTHONPATH=src python3 benchmarks/bench_constants.py [--n 1048576] [--reps 5]
Prints one line per (size, form): the median time of a launch that reads the table 16
times per invocation, on the default device.
"""

import argparse
import time

import numpy as np

import numba_vulkan as nv
from numba_vulkan.frontend import constants


def make_kernel(table):
    @nv.jit
    def k(out):
        i = nv.global_id(0)
        if i < out.size:
            acc = np.float32(0)
            for j in range(16):
                acc += table[(i * 7 + j) % table.size]
            out[i] = acc

    return k


def measure(table, inline, n, reps):
    saved = constants.MAX_ELEMENTS
    constants.MAX_ELEMENTS = table.size if inline else 0
    try:
        k = make_kernel(table)
        out = nv.device_array(n, np.float32)
        k.forall(n)(out)  # compile
        nv.synchronize()
        times = []
        for _ in range(reps):
            t = time.perf_counter()
            k.forall(n)(out)
            nv.synchronize()
            times.append(time.perf_counter() - t)
    finally:
        constants.MAX_ELEMENTS = saved
    (compiled,) = k.specialisations.values()
    assert bool(compiled.hidden) != inline
    i = np.arange(n)
    want = sum(table[(i * 7 + j) % table.size] for j in range(16)).astype(np.float32)
    np.testing.assert_allclose(out.copy_to_host(), want, rtol=1e-5)
    return float(np.median(times)), len(compiled.words)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--n", type=int, default=1 << 20)
    p.add_argument("--reps", type=int, default=5)
    args = p.parse_args()
    print(f"device: {nv.get_device().info.name}, {args.n} invocations x 16 reads")
    for size in (8, 32, 64, 256):
        table = (np.arange(size, dtype=np.float32) * 0.5) % 7
        for inline in (True, False):
            t, words = measure(table, inline, args.n, args.reps)
            form = "inline" if inline else "buffer"
            print(f"{size:4d} elements {form:6s}: {t * 1e3:8.2f} ms per launch, {words} SPIR-V words")


if __name__ == "__main__":
    main()
