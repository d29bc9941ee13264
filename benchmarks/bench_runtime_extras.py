"""Pinned and pageable copies, device-side sums and cached first calls, against numba.cuda.

Figures (issue 9, items 5-7):

1. copies: GB/s of host-to-device and device-to-host copies of `--copy-mib`
   MiB, from and to `pinned_array` memory and from and to ordinary (pageable)
   NumPy arrays; median of `--repeats`, each copy synchronous.
2. sum: `DeviceArray.sum()` of 2^`--sum-log2` float32 values, TB/s counting 4
   bytes per element (median of `--repeats`, each including the read-back of
   the scalar, after half a second of untimed sums: the GPU's clocks rise
   only under load); numba.cuda's `cuda.reduce` (a shared-memory tree)
   alongside, measured the same way.
3. cached_first_call: in a fresh process, after `import numba_vulkan` and
   opening the device, the first call of a `cache=True` kernel whose entry a
   previous process wrote (ms), and the same without the cache.

    python3 benchmarks/bench_runtime_extras.py                       # GPU sizes
    python3 benchmarks/bench_runtime_extras.py --copy-mib 64 --sum-log2 22 --repeats 3  # lavapipe
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from backends import median_time  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent




def _warm_up(fn, seconds=0.5):
    """Run fn untimed for `seconds`: an idle GPU runs the first sums at low clocks."""
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        fn()


def bench_vulkan(args):
    import numba_vulkan as nv

    out = {}
    n = args.copy_mib << 20
    dev_arr = nv.device_array(n, np.uint8)
    pinned = nv.pinned_array(n, np.uint8)
    pinned[...] = 1
    pageable = np.ones(n, np.uint8)
    dev_arr.copy_to_device(pinned)  # warm up
    for name, fn in {
        "h2d_pinned": lambda: dev_arr.copy_to_device(pinned),
        "d2h_pinned": lambda: dev_arr.copy_to_host(out=pinned),
        "h2d_pageable": lambda: dev_arr.copy_to_device(pageable),
        "d2h_pageable": lambda: dev_arr.copy_to_host(out=pageable),
    }.items():
        out[name + "_GBps"] = n / median_time(fn, args.repeats) / 1e9
    m = 1 << args.sum_log2
    x = nv.to_device(np.ones(m, np.float32))
    assert x.sum() == m
    _warm_up(x.sum)
    out["sum_TBps"] = 4 * m / median_time(x.sum, args.repeats) / 1e12
    return out


def bench_cuda(args):
    try:
        if not hasattr(np, "row_stack"):
            np.row_stack = np.vstack  # numba-cuda 0.30.4 still refers to it
        from numba import cuda

        if not cuda.is_available():
            return {"missing": "no CUDA GPU"}
    except Exception as e:  # noqa: BLE001
        return {"missing": f"numba.cuda: {e}"}
    out = {}
    n = args.copy_mib << 20
    d = cuda.device_array(n, np.uint8)
    pinned = cuda.pinned_array(n, np.uint8)
    pinned[...] = 1
    pageable = np.ones(n, np.uint8)
    for name, fn in {
        "h2d_pinned": lambda: d.copy_to_device(pinned),
        "d2h_pinned": lambda: d.copy_to_host(pinned),
        "h2d_pageable": lambda: d.copy_to_device(pageable),
        "d2h_pageable": lambda: d.copy_to_host(pageable),
    }.items():
        fn()
        out[name + "_GBps"] = n / median_time(fn, args.repeats) / 1e9
    m = 1 << args.sum_log2
    x = cuda.to_device(np.ones(m, np.float32))
    total = cuda.reduce(lambda a, b: a + b)
    total(x)
    _warm_up(lambda: total(x))
    out["sum_TBps"] = 4 * m / median_time(lambda: total(x), args.repeats) / 1e12
    return out


CHILD = """
import sys, time
t0 = time.perf_counter()
import numpy as np
import numba_vulkan as nv
sys.path.insert(0, sys.argv[1])
import cached_kernel
nv.get_device()
x = np.arange(1024, dtype=np.float32)
out = np.zeros_like(x)
t = time.perf_counter()
cached_kernel.scale.forall(1024)(x, out)
print((time.perf_counter() - t) * 1e3)
"""

KERNEL = """
import numba_vulkan as nv

@nv.jit(cache=True)
def scale(x, out):
    i = nv.global_id(0)
    if i < out.size:
        out[i] = x[i] * 2 + 1
"""


def bench_first_call(repeats):
    with tempfile.TemporaryDirectory() as tmp:
        Path(tmp, "cached_kernel.py").write_text(textwrap.dedent(KERNEL))
        # The child imports the numba_vulkan this process uses (installed, or the tree).
        import numba_vulkan

        package = Path(numba_vulkan.__file__).resolve().parents[1]
        path = os.pathsep.join(p for p in (str(package), os.environ.get("PYTHONPATH")) if p)
        env = dict(os.environ, PYTHONPATH=path, NUMBA_VULKAN_CACHE_DIR=tmp + "/c")

        def run(cache):
            r = subprocess.run([sys.executable, "-c", CHILD, tmp], check=True, capture_output=True,
                               text=True, env=dict(env, NUMBA_VULKAN_CACHE=cache))  # fmt: skip
            return float(r.stdout.split()[-1])

        run("1")  # writes the entry and the pipeline cache
        cached = statistics.median(run("1") for _ in range(repeats))
        uncached = statistics.median(run("0") for _ in range(repeats))
    return {"cached_first_call_ms": cached, "uncached_first_call_ms": uncached}


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--copy-mib", type=int, default=1024)
    p.add_argument("--sum-log2", type=int, default=28)
    p.add_argument("--repeats", type=int, default=7)
    p.add_argument("--out", help="write the figures as JSON here")
    args = p.parse_args()
    import numba_vulkan as nv

    result = {
        "device": nv.get_device().info.name,
        "args": vars(args),
        "numba_vulkan": {**bench_vulkan(args), **bench_first_call(args.repeats)},
        "numba_cuda": bench_cuda(args),
    }
    text = json.dumps(result, indent=1)
    print(text)
    if args.out:
        Path(args.out).write_text(text + "\n")


if __name__ == "__main__":
    main()
