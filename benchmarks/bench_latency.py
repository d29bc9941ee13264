"""Launch latency: numba_vulkan against numba.cuda, side by side in one run.

Figures (issue 10, item 7; each the median over --repeats of the mean of a loop):

1. launch_sync_us: one launch of a tiny kernel (one workgroup, a device array
   and a scalar) followed by synchronize(), per iteration. What the host sees as
   the round trip to the GPU.
2. numpy3_us: one launch of c[i] = a[i] + b[i] with three 4 KiB float32 NumPy
   arrays (two copied in, one copied in and back), synchronous as NumPy
   arguments are. The cost of staging small arrays.
3. async_launch_us: host time per asynchronous launch of the same tiny kernel,
   each launch writing a different one of 8 device arrays (no dependency
   between them), the final synchronisation outside the timed loop.
4. async_chain_us: as 3, but every launch reads and writes the same array (a
   dependency between each launch and the next, so a barrier each).

    python3 benchmarks/bench_latency.py                 # GPU machine
    python3 benchmarks/bench_latency.py --iters 200 --repeats 3   # quick (lavapipe)

Writes benchmarks/results/bench_latency_<date>.json (or --out).
"""

import argparse
import datetime
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("NUMBA_CACHE_DIR", "/nonexistent-numba-cache")

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import backends as common  # noqa: E402  (backends, machine description)

RESULTS = Path(__file__).resolve().parent / "results"

TINY_SOURCE = """
def {name}(a, s):
    i = {index}
    if i < a.size:
        a[i] = a[i] + s
"""

ADD_SOURCE = """
def {name}(a, b, c):
    i = {index}
    if i < c.size:
        c[i] = c[i] + a[i] + b[i]
"""


def timed(repeats, iters, body, after=None):
    """Median over `repeats` of the mean time (µs) of `iters` calls of body()."""
    samples = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(iters):
            body()
        if after is not None:
            after()  # not timed for async figures: see below
        samples.append((time.perf_counter() - t0) / iters * 1e6)
    return samples


def run_backend(cls, args):
    try:
        backend = cls()
    except Exception as e:  # noqa: BLE001 - any failure to start is reported, not raised
        return {"available": False, "reason": f"{type(e).__name__}: {e}"}
    out = {"available": True, "device": backend.describe()}
    try:
        measure(backend, args, out)
    except Exception as e:  # noqa: BLE001 - keep the figures so far, and the other backend
        out["error"] = f"{type(e).__name__}: {e}"
    return out


def measure(backend, args, out):
    tiny = common.make_kernel(backend, "tiny", TINY_SOURCE)
    add = common.make_kernel(backend, "add3", ADD_SOURCE)
    n_small = 64
    a = backend.to_device(np.zeros(n_small, np.float32))
    s = np.float32(1.0)

    def launch_tiny(arr=a):
        backend.launch(tiny, n_small, (arr, s), local=64)

    # Warm up: compile, pipelines, pools.
    for _ in range(20):
        launch_tiny()
    backend.synchronize()

    def sync_once():
        launch_tiny()
        backend.synchronize()

    samples = timed(args.repeats, args.iters, sync_once)
    out["launch_sync_us"] = {"median": statistics.median(samples), "samples": samples}

    n = 1024  # 4 KiB of float32
    ha, hb, hc = (np.ones(n, np.float32) for _ in range(3))
    hc[:] = 0

    def numpy3():
        backend.launch(add, n, (ha, hb, hc), local=256)

    for _ in range(5):
        numpy3()
    backend.synchronize()
    hc[:] = 0
    samples = timed(args.repeats, args.iters, numpy3)
    good = bool(np.all(hc == 2.0 * args.repeats * args.iters))  # exact in float32 here
    out["numpy3_us"] = {"median": statistics.median(samples), "samples": samples,
                        "result_ok": good}

    outs = [backend.to_device(np.zeros(n_small, np.float32)) for _ in range(8)]
    for o in outs:
        launch_tiny(o)
    backend.synchronize()
    samples = []
    for _ in range(args.repeats):
        t0 = time.perf_counter()
        for k in range(args.async_iters):
            backend.launch(tiny, n_small, (outs[k & 7], s), local=64)
        samples.append((time.perf_counter() - t0) / args.async_iters * 1e6)
        backend.synchronize()
    out["async_launch_us"] = {"median": statistics.median(samples), "samples": samples}

    samples = []
    for _ in range(args.repeats):
        t0 = time.perf_counter()
        for _ in range(args.async_iters):
            launch_tiny()
        samples.append((time.perf_counter() - t0) / args.async_iters * 1e6)
        backend.synchronize()
    out["async_chain_us"] = {"median": statistics.median(samples), "samples": samples}


def main(argv=None):
    parser = argparse.ArgumentParser(description="launch latency: numba_vulkan vs numba.cuda")
    parser.add_argument("--iters", type=int, default=2000, help="iterations per timed loop")
    parser.add_argument("--async-iters", type=int, default=10000,
                        help="launches per asynchronous timed loop")
    parser.add_argument("--repeats", type=int, default=7, help="repeats (median is reported)")
    parser.add_argument("--backends", default="numba_vulkan,numba.cuda")
    parser.add_argument("--out", default=None, help="JSON path (default: benchmarks/results/...)")
    args = parser.parse_args(argv)
    wanted = set(args.backends.split(","))
    results = {}
    for cls in (common.VulkanBackend, common.CudaBackend):
        results[cls.name] = (
            run_backend(cls, args)
            if cls.name in wanted
            else {"available": False, "reason": "not requested"}
        )
    record = {
        "benchmark": "bench_latency",
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "machine": {
            "cpu": common.cpu_name(),
            "host": platform.node(),
            "os": platform.platform(),
            "gpu": next((r["device"]["gpu"] for r in results.values() if r.get("available")), None),
            "driver": common.driver_version(),
        },
        "versions": common.versions(),
        "parameters": vars(args),
        "targets_us": {"launch_sync_us": 20, "numpy3_us": 100, "async_launch_us": 3},
        "results": results,
    }
    out = Path(args.out) if args.out else (
        RESULTS / f"bench_latency_{datetime.datetime.now():%Y%m%d_%H%M%S}.json")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(record, indent=2) + "\n")
    figures = ("launch_sync_us", "numpy3_us", "async_launch_us", "async_chain_us")
    print(f"{'figure':18s}" + "".join(f"{name:>16s}" for name in results))
    for f in figures:
        row = f"{f:18s}"
        for r in results.values():
            row += f"{r[f]['median']:16.2f}" if f in r else f"{'-':>16s}"
        print(row)
    for name, r in results.items():
        if not r.get("available"):
            print(f"{name}: not measured ({r['reason']})")
        if "error" in r:
            print(f"{name}: stopped by {r['error']}")
        if "numpy3_us" in r and not r["numpy3_us"]["result_ok"]:
            print(f"{name}: numpy3 gave a WRONG result")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
