"""numba_vulkan against numba.cuda, side by side in one run.

Figures (see benchmarks/README.md for what each one means):

1. launch: host time per asynchronous launch of a small kernel with three
   device arrays and a scalar (median over repeats of a loop of launches;
   the final synchronisation is outside the timed loop).
2. triad: STREAM triad a[i] = b[i] + s * c[i] on float32 arrays, GB/s
   counting 3 arrays x 4 bytes x n per launch; synchronised around N launches.
3. first_call: time of the first call of a kernel never seen before
   (typing + compile + pipeline creation + launch + synchronise), with disk
   caches off and a fresh function each time. Each fresh kernel adds its own
   constant ({salt}, random), so that its machine code is new too: the same SPIR-V
   again would be answered from the driver's pipeline caches (in memory and on disk),
   skipping the driver's compilation, which numba.cuda (whose PTX names the kernel)
   never skips.
   ``--same-code`` leaves the constant out (how first calls were measured before
   2026-12-02).
   first_call_devfn: the same for a kernel calling five device functions
   (``@nv.jit(device=True)`` / ``@cuda.jit(device=True)``, one calling two others).
4. matmul: naive float32 matrix product C = A @ B (2-d grid of 16 x 16, one
   output element per invocation, an inner loop over k), GFLOP/s = 2 n^3 / t.
5. xorshift: 16 rounds of a 32-bit xorshift hash on 2^24 uint32 seeds, each
   step cast back to np.uint32 (Numba computes uint32 << uint32 in 64 bits;
   written as `h ^= h << 13`, h becomes a uint64 and the hash a 64-bit one);
   both backends' results must equal numba.njit's on the CPU.

numba.cuda is measured where it imports and finds a GPU; otherwise its
columns say why it is missing.

    python3 benchmarks/bench_vs_cuda.py                    # full sizes (GPU machine)
    python3 benchmarks/bench_vs_cuda.py --size 20 --launches 200 --repeats 3   # quick (lavapipe)
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

import numpy as np

from backends import (
    RESULTS,
    CudaBackend,
    VulkanBackend,
    cpu_name,
    driver_version,
    make_kernel,
    versions,
)


KERNEL_SOURCE = """
def {name}(a, b, c, s):
    i = {index}
    if i < a.size:
        a[i] = b[i] + s * c[i] + np.float32({salt})
"""


MATMUL_SOURCE = """
def {name}(a, b, c):
    i, j = {index2d}
    if i < c.shape[0] and j < c.shape[1]:
        acc = np.float32(0.0)
        for k in range(a.shape[1]):
            acc += a[i, k] * b[k, j]
        c[i, j] = acc
"""

# The same product with the grid's x axis along the columns: neighbouring invocations
# read neighbouring elements of b and write neighbouring elements of c.
MATMUL_COALESCED_SOURCE = MATMUL_SOURCE.replace("i, j = {index2d}", "j, i = {index2d}")

XORSHIFT_SOURCE = """
def {name}(seeds, out):
    i = {index}
    if i < out.size:
        h = seeds[i]
        for _ in range(16):
            h = np.uint32(h ^ (h << np.uint32(13)))
            h = np.uint32(h ^ (h >> np.uint32(17)))
            h = np.uint32(h ^ (h << np.uint32(5)))
        out[i] = h
"""


# The triad's result through five device functions (issue 6: compile time of calls).
DEVFN_SOURCE = """
@{device}
def {name}_f1(x):
    return x * np.float32(1.5) + np.float32(2.0)

@{device}
def {name}_f2(x, y):
    if x > y:
        return x - y
    return y - x

@{device}
def {name}_f3(x):
    acc = np.float32(0.0)
    for k in range(4):
        acc += x * np.float32(k)
    return acc

@{device}
def {name}_f4(x):
    return min(max(x, np.float32(-1.0)), np.float32(1.0))

@{device}
def {name}_f5(x, y):
    return {name}_f1(x) * {name}_f4(y)

def {name}(a, b, c, s):
    i = {index}
    if i < a.size:
        x = b[i]
        v = {name}_f1(x) + {name}_f2(x, s) + {name}_f3(x) + {name}_f4(c[i]) + {name}_f5(x, s)
        a[i] = v + np.float32({salt})
"""


def arrays(backend, n):
    rng = np.random.default_rng(0)
    b = rng.standard_normal(n, dtype=np.float32)
    c = rng.standard_normal(n, dtype=np.float32)
    return backend.to_device(np.zeros(n, np.float32)), backend.to_device(b), backend.to_device(c)


def bench_launch(backend, launches, repeats, n=1024):
    """Median host microseconds per asynchronous launch (small kernel, 3 arrays + scalar)."""
    kernel = make_kernel(backend, "launch_kernel", KERNEL_SOURCE)
    a, b, c = arrays(backend, n)
    s = np.float32(2.0)
    # Compile, then half a second of untimed launches: on the H200 the first
    # repeats after an idle spell ran at half speed while the GPU's clocks rose
    # (a full batch waits for the GPU, so a slow GPU shows in this figure).
    warm_until = time.perf_counter() + 0.5
    while time.perf_counter() < warm_until:
        for _ in range(launches):
            backend.launch(kernel, n, (a, b, c, s))
        backend.synchronize()
    per_launch = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(launches):
            backend.launch(kernel, n, (a, b, c, s))
        per_launch.append((time.perf_counter() - start) / launches)
        backend.synchronize()  # not timed
    return {
        "us_per_launch": statistics.median(per_launch) * 1e6,
        "all_us": [t * 1e6 for t in per_launch],
        "launches": launches,
    }


def bench_triad(backend, log2_n, launches, repeats):
    """STREAM triad bandwidth in GB/s (10^9 bytes/s), 12 bytes moved per element."""
    n = 1 << log2_n
    kernel = make_kernel(backend, "triad_kernel", KERNEL_SOURCE)
    a, b, c = arrays(backend, n)
    s = np.float32(3.0)
    # Warm-up: a second of untimed launches. On the H200 the first ~0.2 s of
    # triads after an idle spell ran at a third of the bandwidth, whichever
    # backend went first (the GPU's clocks ramping up).
    warm_until = time.perf_counter() + 1.0
    while time.perf_counter() < warm_until:
        for _ in range(launches):
            backend.launch(kernel, n, (a, b, c, s))
        backend.synchronize()
    seconds = []
    for _ in range(repeats):
        backend.synchronize()
        start = time.perf_counter()
        for _ in range(launches):
            backend.launch(kernel, n, (a, b, c, s))
        backend.synchronize()
        seconds.append((time.perf_counter() - start) / launches)
    # Check the result once, so a broken kernel cannot report a bandwidth.
    host = a.copy_to_host()
    bh, ch = b.copy_to_host(), c.copy_to_host()
    sample = slice(0, min(n, 1 << 16))
    # Tolerance: numba.cuda contracts b + s * c into a fused multiply-add by default.
    if not np.allclose(host[sample], bh[sample] + s * ch[sample], rtol=1e-6, atol=1e-6):
        raise AssertionError(f"{backend.name}: triad computed wrong values")
    best = min(seconds)
    moved = 3 * 4 * n
    return {
        "n": n,
        "bytes_per_launch": moved,
        "GBps_best": moved / best / 1e9,
        "GBps_median": moved / statistics.median(seconds) / 1e9,
        "ms_per_launch_median": statistics.median(seconds) * 1e3,
        "all_GBps": [moved / t / 1e9 for t in seconds],
        "launches": launches,
    }


def bench_first_call(backend, repeats, n=1024, source=KERNEL_SOURCE, same_code=False):
    """Seconds from a new kernel function to its first result (compile + load + run)."""
    a, b, c = arrays(backend, n)
    s = np.float32(1.5)
    times = []
    for k in range(repeats):
        name = f"fresh_kernel_{os.getpid()}_{k}_{time.monotonic_ns()}"
        # a float32 integer of 24 random bits: new to the driver's caches on disk too
        salt = "0.0" if same_code else f"{int.from_bytes(os.urandom(3), 'little')}.0"
        kernel = make_kernel(backend, name, source, salt=salt)
        start = time.perf_counter()
        backend.launch(kernel, n, (a, b, c, s))
        backend.synchronize()
        times.append(time.perf_counter() - start)
    return {"ms_median": statistics.median(times) * 1e3, "all_ms": [t * 1e3 for t in times]}


def bench_matmul(backend, n, repeats, launches=5, source=MATMUL_SOURCE):
    """Naive float32 matmul of two n x n matrices, GFLOP/s (2 n^3 per launch)."""
    kernel = make_kernel(backend, "matmul_kernel", source)
    rng = np.random.default_rng(1)
    ah = rng.standard_normal((n, n), dtype=np.float32)
    bh = rng.standard_normal((n, n), dtype=np.float32)
    a, b = backend.to_device(ah), backend.to_device(bh)
    c = backend.to_device(np.zeros((n, n), np.float32))
    warm_until = time.perf_counter() + 1.0
    while time.perf_counter() < warm_until:
        backend.launch2d(kernel, n, n, (a, b, c))
        backend.synchronize()
    seconds = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(launches):
            backend.launch2d(kernel, n, n, (a, b, c))
        backend.synchronize()
        seconds.append((time.perf_counter() - start) / launches)
    got = c.copy_to_host()
    rows = slice(0, 64)
    if not np.allclose(got[rows], ah[rows] @ bh, rtol=1e-3, atol=1e-2 * np.sqrt(n)):
        raise AssertionError(f"{backend.name}: matmul computed wrong values")
    flop = 2.0 * n**3
    return {
        "n": n,
        "GFLOPs_best": flop / min(seconds) / 1e9,
        "GFLOPs_median": flop / statistics.median(seconds) / 1e9,
        "all_GFLOPs": [flop / t / 1e9 for t in seconds],
    }


def bench_xorshift(backend, log2_n, repeats, launches=20):
    """16 rounds of uint32 xorshift on 2^log2_n seeds: G-hashes/s, and bit-exact results."""
    import numba

    n = 1 << log2_n
    kernel = make_kernel(backend, "xorshift_kernel", XORSHIFT_SOURCE)
    seeds_h = np.random.default_rng(2).integers(1, 2**32, n, dtype=np.uint64).astype(np.uint32)
    seeds, out = backend.to_device(seeds_h), backend.to_device(np.zeros(n, np.uint32))
    warm_until = time.perf_counter() + 1.0
    while time.perf_counter() < warm_until:
        backend.launch(kernel, n, (seeds, out))
        backend.synchronize()
    seconds = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(launches):
            backend.launch(kernel, n, (seeds, out))
        backend.synchronize()
        seconds.append((time.perf_counter() - start) / launches)
    # The reference: the same source under numba.njit on the CPU, one seed per call.
    cpu = make_kernel(
        backend, "xorshift_cpu", XORSHIFT_SOURCE.replace("{index}", "0"), jit=numba.njit
    )
    sample = 4096
    expected = np.zeros(1, np.uint32)
    got = out.copy_to_host()
    for i in range(sample):
        cpu(seeds_h[i : i + 1], expected)
        if expected[0] != got[i]:
            raise AssertionError(
                f"{backend.name}: xorshift of seed {seeds_h[i]} gave {got[i]}, "
                f"numba.njit gives {expected[0]}"
            )
    return {
        "n": n,
        "ms_median": statistics.median(seconds) * 1e3,
        "Ghash_per_s_median": n / statistics.median(seconds) / 1e9,
        "checked_against_njit": sample,
    }


def make_backend(cls):
    """(backend, its result dict): backend None where it is missing, the dict saying why."""
    try:
        backend = cls()
    except Exception as e:  # missing package or no device: report, do not fail  # noqa: BLE001
        return None, {"available": False, "reason": f"{type(e).__name__}: {e}"}
    return backend, {"available": True, "device": backend.describe()}


def _figure(result, name, fn):
    try:
        result[name] = fn()
    except Exception as e:  # noqa: BLE001
        result[name] = {"error": f"{type(e).__name__}: {e}"}


def run_backend(backend, result, args):
    """The figures other than the first calls, for one backend."""
    for name, fn in (
        ("launch", lambda: bench_launch(backend, args.launches, args.repeats)),
        ("triad", lambda: bench_triad(backend, args.size, args.triad_launches, args.repeats)),
        ("matmul", lambda: bench_matmul(backend, args.matmul_n, args.repeats)),
        (
            "matmul_coalesced",
            lambda: bench_matmul(
                backend, args.matmul_n, args.repeats, source=MATMUL_COALESCED_SOURCE
            ),
        ),
        ("xorshift", lambda: bench_xorshift(backend, args.xorshift_size, args.repeats)),
    ):
        if name in args.only:
            _figure(result, name, fn)
            print(f"  {backend.name:13s} {name:10s} done", file=sys.stderr, flush=True)


def run_first_calls(backends, args):
    """The first-call figures, the backends taking turns kernel by kernel: the host's speed
    drifts by tens of percent within seconds (the GPU machine is a shared VM), and a ratio of
    two figures measured one after the other would carry the drift."""
    for name, source in (("first_call", KERNEL_SOURCE), ("first_call_devfn", DEVFN_SOURCE)):
        if name not in args.only:
            continue
        times = {b.name: [] for b, _ in backends}
        for _ in range(args.first_calls):
            for backend, result in backends:
                if "error" in result.get(name, {}):
                    continue
                try:
                    got = bench_first_call(backend, 1, source=source, same_code=args.same_code)
                    times[backend.name] += got["all_ms"]
                except Exception as e:  # noqa: BLE001
                    result[name] = {"error": f"{type(e).__name__}: {e}"}
        for backend, result in backends:
            if "error" not in result.get(name, {}):
                ms = times[backend.name]
                result[name] = {"ms_median": statistics.median(ms), "all_ms": ms}
        print(f"  {name} done", file=sys.stderr, flush=True)


def table(results):
    rows = [("figure", "numba_vulkan", "numba.cuda")]

    def cell(r, figure, key, fmt):
        if not r.get("available"):
            return "n/a"
        value = r.get(figure, {})
        if "error" in value:
            return "error"
        return fmt.format(value[key]) if key in value else "-"

    v, c = results["numba_vulkan"], results["numba.cuda"]
    rows.append(
        (
            "launch (us/launch, host)",
            cell(v, "launch", "us_per_launch", "{:.2f}"),
            cell(c, "launch", "us_per_launch", "{:.2f}"),
        )
    )
    rows.append(
        (
            "triad (GB/s, best)",
            cell(v, "triad", "GBps_best", "{:.1f}"),
            cell(c, "triad", "GBps_best", "{:.1f}"),
        )
    )
    rows.append(
        (
            "triad (GB/s, median)",
            cell(v, "triad", "GBps_median", "{:.1f}"),
            cell(c, "triad", "GBps_median", "{:.1f}"),
        )
    )
    rows.append(
        (
            "first call (ms)",
            cell(v, "first_call", "ms_median", "{:.1f}"),
            cell(c, "first_call", "ms_median", "{:.1f}"),
        )
    )
    rows.append(
        (
            "first call, 5 device functions (ms)",
            cell(v, "first_call_devfn", "ms_median", "{:.1f}"),
            cell(c, "first_call_devfn", "ms_median", "{:.1f}"),
        )
    )
    rows.append(
        (
            "matmul (GFLOP/s, median)",
            cell(v, "matmul", "GFLOPs_median", "{:.0f}"),
            cell(c, "matmul", "GFLOPs_median", "{:.0f}"),
        )
    )
    rows.append(
        (
            "matmul, x along columns (GFLOP/s)",
            cell(v, "matmul_coalesced", "GFLOPs_median", "{:.0f}"),
            cell(c, "matmul_coalesced", "GFLOPs_median", "{:.0f}"),
        )
    )
    rows.append(
        (
            "xorshift (ms, median)",
            cell(v, "xorshift", "ms_median", "{:.3f}"),
            cell(c, "xorshift", "ms_median", "{:.3f}"),
        )
    )
    widths = [max(len(r[k]) for r in rows) for k in range(3)]
    lines = ["  ".join(text.ljust(w) for text, w in zip(r, widths)) for r in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description="numba_vulkan vs numba.cuda")
    parser.add_argument("--size", type=int, default=28, help="log2 of the triad's element count")
    parser.add_argument(
        "--launches", type=int, default=2000, help="launches per launch-timing loop"
    )
    parser.add_argument("--triad-launches", type=int, default=20, help="launches per triad timing")
    parser.add_argument("--repeats", type=int, default=7, help="repeats (median is reported)")
    parser.add_argument("--first-calls", type=int, default=5, help="fresh kernels for first_call")
    parser.add_argument(
        "--same-code", action="store_true",
        help="first calls: the same code each time (the driver's pipeline cache answers)",
    )
    parser.add_argument("--matmul-n", type=int, default=2048, help="matmul matrix size")
    parser.add_argument("--xorshift-size", type=int, default=24, help="log2 of the seed count")
    parser.add_argument(
        "--only",
        default="launch,triad,first_call,first_call_devfn,matmul,matmul_coalesced,xorshift",
        help="comma-separated figures",
    )
    parser.add_argument("--backends", default="numba_vulkan,numba.cuda")
    parser.add_argument("--out", default=None, help="JSON path (default: benchmarks/results/...)")
    args = parser.parse_args(argv)
    args.only = set(args.only.split(","))

    wanted = set(args.backends.split(","))
    results = {}
    backends = []
    for cls in (VulkanBackend, CudaBackend):
        if cls.name not in wanted:
            results[cls.name] = {"available": False, "reason": "not requested"}
            continue
        backend, results[cls.name] = make_backend(cls)
        if backend is not None:
            run_backend(backend, results[cls.name], args)
            backends.append((backend, results[cls.name]))
    run_first_calls(backends, args)

    record = {
        "benchmark": "bench_vs_cuda",
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "machine": {
            "cpu": cpu_name(),
            "host": platform.node(),
            "os": platform.platform(),
            "gpu": next((r["device"]["gpu"] for r in results.values() if r.get("available")), None),
            "driver": driver_version(),
        },
        "versions": versions(),
        "parameters": {
            "triad_n": 1 << args.size,
            "launches": args.launches,
            "triad_launches": args.triad_launches,
            "repeats": args.repeats,
            "first_calls": args.first_calls,
            "first_calls_same_code": args.same_code,
            "matmul_n": args.matmul_n,
            "xorshift_n": 1 << args.xorshift_size,
        },
        "results": results,
    }
    out = (
        Path(args.out)
        if args.out
        else RESULTS / (f"bench_vs_cuda_{datetime.datetime.now():%Y%m%d_%H%M%S}.json")
    )
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(record, indent=2) + "\n")
    print(table(results))
    for name, r in results.items():
        if not r.get("available"):
            print(f"{name}: not measured ({r['reason']})")
        for figure in ("launch", "triad", "first_call", "first_call_devfn", "matmul", "matmul_coalesced", "xorshift"):
            if isinstance(r.get(figure), dict) and "error" in r[figure]:
                print(f"{name} {figure}: {r[figure]['error']}")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
