"""Parallel primitives, numba_vulkan against numba.cuda side by side (issue 8's figures).

Same kernel sources for both backends apart from the names of the intrinsics
(nv.local_id(0) / cuda.threadIdx.x ...; both spell shared.array, syncthreads
and atomic.add alike):

1. tiled_matmul: 16x16-tile float32 C = A @ B with two shared tiles and two
   barriers per step (numba-cuda's documented fast_matmul), GFLOP/s = 2 n^3 / t.
2. reduction: sum of n float32 with a shared-memory tree reduction: a
   grid-stride accumulation per invocation, then 256 -> 1 in shared memory
   per workgroup, then a second launch over the partial sums; GB/s = 4 n / t.
3. histogram: 256-bin histogram of n bytes (uint8), a shared-memory
   histogram per workgroup with shared atomics, merged with global atomics;
   GB/s = n / t.
4. subgroup_reduction (numba_vulkan only: numba.cuda has no subgroup.sum):
   the reduction with subgroup.sum instead of the shared-memory tree (one
   shared total per subgroup), GB/s = 4 n / t.

Each figure checks its result against NumPy, runs untimed for half a second
(the GPU's clocks rise under load), times `--repeats` runs of `--inner`
back-to-back executions between synchronisations and reports the median. Defaults are the issue's sizes (GPU); on lavapipe use small ones:

    python3 benchmarks/bench_parallel.py                                      # H200
    python3 benchmarks/bench_parallel.py --matmul-n 256 --reduce-log2 20 --hist-log2 20 --repeats 3
"""

import argparse
import datetime
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from backends import (  # noqa: E402
    RESULTS,
    CudaBackend,
    VulkanBackend,
    cpu_name,
    driver_version,
    launch_time,
    versions,
)

TPB = 16
BLOCK = 256
GROUPS = 1024  # workgroups of the grid-stride kernels

NAMES = {
    "numba_vulkan": dict(NS="nv", tx="nv.local_id(0)", ty="nv.local_id(1)", bx="nv.group_id(0)",
                         gx="nv.global_id(0)", gy="nv.global_id(1)", gdx="nv.num_groups(0)"),
    "numba.cuda": dict(NS="cuda", tx="cuda.threadIdx.x", ty="cuda.threadIdx.y",
                       bx="cuda.blockIdx.x", gx="cuda.grid(1)", gy="cuda.grid(2)[1]",
                       gdx="cuda.gridDim.x"),
}

MATMUL = """
def fast_matmul(A, B, C):
    sA = {NS}.shared.array(shape=(TPB, TPB), dtype=float32)
    sB = {NS}.shared.array(shape=(TPB, TPB), dtype=float32)
    x = {gx}
    y = {gy}
    tx = {tx}
    ty = {ty}
    bpg = {gdx}
    tmp = float32(0.)
    for i in range(bpg):
        sA[ty, tx] = 0
        sB[ty, tx] = 0
        if y < A.shape[0] and (tx + i * TPB) < A.shape[1]:
            sA[ty, tx] = A[y, tx + i * TPB]
        if x < B.shape[1] and (ty + i * TPB) < B.shape[0]:
            sB[ty, tx] = B[ty + i * TPB, x]
        {NS}.syncthreads()
        for j in range(TPB):
            tmp += sA[ty, j] * sB[j, tx]
        {NS}.syncthreads()
    if y < C.shape[0] and x < C.shape[1]:
        C[y, x] = tmp
"""

REDUCE = """
def block_sum(data, partial):
    s = {NS}.shared.array(BLOCK, float32)
    t = {tx}
    i = {gx}
    stride = {gdx} * BLOCK
    acc = float32(0.)
    while i < data.size:
        acc += data[i]
        i += stride
    s[t] = acc
    {NS}.syncthreads()
    half = BLOCK // 2
    while half > 0:
        if t < half:
            s[t] += s[t + half]
        {NS}.syncthreads()
        half //= 2
    if t == 0:
        partial[{bx}] = s[0]
"""

HISTOGRAM = """
def histogram(data, hist):
    h = {NS}.shared.array(256, uint32)
    t = {tx}
    h[t] = 0
    {NS}.syncthreads()
    i = {gx}
    stride = {gdx} * BLOCK
    while i < data.size:
        {NS}.atomic.add(h, data[i], 1)
        i += stride
    {NS}.syncthreads()
    {NS}.atomic.add(hist, t, h[t])
"""


SUBGROUP_REDUCE = """
def sg_sum(data, partial):
    s = nv.shared.array(BLOCK, float32)
    i = nv.global_id(0)
    stride = nv.num_groups(0) * BLOCK
    acc = float32(0.)
    while i < data.size:
        acc += data[i]
        i += stride
    acc = nv.subgroup.sum(acc)
    if nv.subgroup.lane() == 0:
        s[nv.subgroup.id()] = acc
    nv.syncthreads()
    if nv.local_id(0) == 0:
        total = float32(0.)
        for k in range(nv.subgroup.count()):
            total += s[k]
        partial[nv.group_id(0)] = total
"""


def build(backend, source, name):
    names = NAMES[backend.name]
    src = source.format(**names)
    ns = dict(backend.kernel_namespace())
    ns.update(TPB=TPB, BLOCK=BLOCK, float32=np.float32, uint32=np.uint32)
    exec(compile(src, f"<bench_parallel {name}>", "exec"), ns)  # noqa: S102
    return backend.jit(ns[name])


def timed(backend, run, repeats, inner):
    """launch_time after half a second of untimed runs."""
    return launch_time(backend, run, repeats, inner, warm_s=0.5)


def device_array(backend, shape, dtype):
    if backend.name == "numba.cuda":
        return backend.cuda.device_array(shape, dtype)
    return backend.nv.device_array(shape, dtype)


def fig_matmul(backend, args):
    n = args.matmul_n
    rng = np.random.default_rng(0)
    A = rng.standard_normal((n, n)).astype(np.float32)
    B = rng.standard_normal((n, n)).astype(np.float32)
    dA, dB = backend.to_device(A), backend.to_device(B)
    dC = device_array(backend, (n, n), np.float32)
    k = build(backend, MATMUL, "fast_matmul")
    groups = ((n + TPB - 1) // TPB, (n + TPB - 1) // TPB)
    t = timed(backend, lambda: k[groups, (TPB, TPB)](dA, dB, dC), args.repeats, args.inner)
    C = dC.copy_to_host()
    rows = slice(0, min(n, 64))
    ok = bool(np.allclose(C[rows], A[rows].astype(np.float64) @ B, rtol=1e-3, atol=1e-2))
    return {"n": n, "seconds": t, "gflops": 2 * n**3 / t / 1e9, "correct": ok,
            "pipeline": backend.pipeline_stats(k, (dA, dB, dC), (TPB, TPB))}


def _two_pass_sum(backend, args, source, name):
    """A reduction of 2^reduce_log2 float32 in two launches (GROUPS partial sums, then one)."""
    n = 1 << args.reduce_log2
    data = np.random.default_rng(0).integers(0, 4, n).astype(np.float32)
    d = backend.to_device(data)
    partial = device_array(backend, GROUPS, np.float32)
    total = device_array(backend, 1, np.float32)
    k = build(backend, source, name)

    def run():
        k[GROUPS, BLOCK](d, partial)
        k[1, BLOCK](partial, total)

    t = timed(backend, run, args.repeats, args.inner)
    got = float(total.copy_to_host()[0])
    want = float(data.astype(np.float64).sum())
    return {"n": n, "seconds": t, "gbs": 4 * n / t / 1e9, "correct": abs(got - want) <= 1e-6 * want,
            "pipeline": backend.pipeline_stats(k, (d, partial), BLOCK)}


def fig_reduction(backend, args):
    return _two_pass_sum(backend, args, REDUCE, "block_sum")


def fig_histogram(backend, args):
    n = 1 << args.hist_log2
    rng = np.random.default_rng(0)
    data = rng.integers(0, 256, n).astype(np.uint8)
    d = backend.to_device(data)
    hist = backend.to_device(np.zeros(256, np.uint32))
    k = build(backend, HISTOGRAM, "histogram")
    t = timed(backend, lambda: k[GROUPS, BLOCK](d, hist), args.repeats, args.inner)
    hist = backend.to_device(np.zeros(256, np.uint32))  # one checked run
    k[GROUPS, BLOCK](d, hist)
    got = hist.copy_to_host()
    want = np.bincount(data, minlength=256).astype(np.uint32)
    return {"n": n, "seconds": t, "gbs": n / t / 1e9, "correct": bool(np.array_equal(got, want)),
            "pipeline": backend.pipeline_stats(k, (d, hist), BLOCK)}


def fig_subgroup_reduction(backend, args):
    if backend.name != "numba_vulkan":
        return {"error": "not measured: numba.cuda has no subgroup.sum (same source impossible)"}
    return _two_pass_sum(backend, args, SUBGROUP_REDUCE, "sg_sum")


FIGURES = {"tiled_matmul": fig_matmul, "reduction": fig_reduction, "histogram": fig_histogram,
           "subgroup_reduction": fig_subgroup_reduction}


def run_backend(cls, args):
    try:
        backend = cls()
    except Exception as e:  # no GPU, no numba.cuda: say why
        return {"available": False, "reason": f"{type(e).__name__}: {e}"}
    out = {"available": True, "device": backend.describe()}
    for name, fig in FIGURES.items():
        if name not in args.only:
            continue
        try:
            out[name] = fig(backend, args)
        except Exception as e:  # report and go on with the next figure
            out[name] = {"error": f"{type(e).__name__}: {e}"}
    return out


def table(results):
    lines = [f"{'figure':<20}" + "".join(f"{name:>22}" for name in results)]
    for fig, unit in (("tiled_matmul", "gflops"), ("reduction", "gbs"), ("histogram", "gbs"),
                      ("subgroup_reduction", "gbs")):
        row = f"{fig:<20}"
        for r in results.values():
            v = r.get(fig) if r.get("available") else None
            if isinstance(v, dict) and unit in v:
                mark = "" if v.get("correct") else " WRONG"
                row += f"{v[unit]:>14.1f} {'GFLOP/s' if unit == 'gflops' else 'GB/s':<7}{mark}"
            else:
                row += f"{'-':>22}"
        lines.append(row)
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matmul-n", type=int, default=4096)
    parser.add_argument("--reduce-log2", type=int, default=28)
    parser.add_argument("--hist-log2", type=int, default=28)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--inner", type=int, default=3, help="runs between synchronisations")
    parser.add_argument("--only", default=",".join(FIGURES))
    parser.add_argument("--backends", default="numba_vulkan,numba.cuda")
    parser.add_argument("--out", default=None)
    args = parser.parse_args(argv)
    args.only = set(args.only.split(","))
    wanted = set(args.backends.split(","))
    results = {
        cls.name: run_backend(cls, args) if cls.name in wanted
        else {"available": False, "reason": "not requested"}
        for cls in (VulkanBackend, CudaBackend)
    }
    record = {
        "benchmark": "bench_parallel",
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "machine": {"cpu": cpu_name(), "driver": driver_version()},
        "versions": versions(),
        "parameters": {"matmul_n": args.matmul_n, "reduce_n": 1 << args.reduce_log2,
                       "hist_n": 1 << args.hist_log2, "repeats": args.repeats,
                       "inner": args.inner, "groups": GROUPS, "block": BLOCK},
        "results": results,
    }
    out = Path(args.out) if args.out else \
        RESULTS / f"bench_parallel_{datetime.datetime.now():%Y%m%d_%H%M%S}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(record, indent=2) + "\n")
    print(table(results))
    for name, r in results.items():
        if not r.get("available"):
            print(f"{name}: not measured ({r['reason']})")
        for fig in FIGURES:
            if isinstance(r.get(fig), dict) and "error" in r[fig]:
                print(f"{name} {fig}: {r[fig]['error']}")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
