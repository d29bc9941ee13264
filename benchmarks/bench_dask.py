"""Dask arrays of device arrays (numba_vulkan.dask): what Dask costs on our chunks.

Parts (``--parts``, comma-separated; the GPU part only where asked):

  - **overhead**: per-task time of a small ``map_blocks`` (``block + 1``) over
    ``--tasks`` chunks of ``--chunk`` float32 elements, on device chunks and on NumPy
    chunks, with Dask's synchronous scheduler (the task's own cost, no thread hand-offs)
    and its threaded one; ``overhead_us`` is the difference per task (the goal: at most
    1000 us above NumPy's on 2 cores). ``kernel`` is the same with a ``@jit`` kernel
    writing into ``np.empty_like(block)``.
  - **startup**: seconds from ``LocalVulkanCluster(devices="0,0,...")`` (``--workers``,
    default 2 and 8; each worker opens its own logical device and runs a first kernel as
    it starts) until every worker has run a task with a kernel on its device (the goal: 8
    workers within 2 s on a CPU machine); ``up`` is the cluster's start alone. Each size
    runs in ``--runs`` fresh processes, each as a user's script: ``import numba_vulkan``
    (timed too), the device opened, then a *cold* cluster (no forkserver running yet) and
    a *warm* one (the server runs); best and median of the runs. The disk caches are a
    user's second run's (a first run fills them), or empty with ``--fresh-cache``.
  - **gpu**: an element-wise chain and a reduction, ``sum(sqrt(x * x + 1) * 0.5 - x)``,
    over ``--gib`` GiB of float32 in ``--chunk-gib`` chunks on one device, Dask's threaded
    scheduler: one fused kernel over the whole array (a grid-stride loop per invocation,
    partial sums) against three Dask forms on device chunks: ``ufuncs`` (the NumPy
    expression: a kernel per operation and chunk), ``vectorize`` (the chain as one
    ``nv.vectorize`` ufunc, then Dask's sum) and ``chunk_kernel`` (``map_blocks`` of the
    fused kernel on each chunk, its partial sum per chunk); where cupy imports, Dask with
    CuPy chunks, the same expression and a ``cupy.fuse`` kernel per chunk. The goals on
    the H200, 32 GiB in 1 GiB chunks: within 1.3x of the fused kernel, and at least as
    fast as CuPy's chunks. ``floor``: the chunk form's graph with each task returning a
    one-element array made before (Dask's own cost of the graph, no GPU work); ``_sync``:
    the chunk form and the floor with Dask's synchronous scheduler. ``_timeline_ms``: for
    the chunk form with each scheduler, the medians over five evaluations of when the graph
    was built, the first chunk's task began, the last one ended and the result came, in ms
    from the start (the first launch waits for Dask's steps before it: docs/dask.md).

    python3 benchmarks/bench_dask.py                                   # overhead, startup
    python3 benchmarks/bench_dask.py --parts gpu --gib 32 --chunk-gib 1 # the GPU machine
    python3 benchmarks/bench_dask.py --tasks 200 --workers 2 --json     # quick
    python3 benchmarks/bench_dask.py --parts startup --runs 5 --fresh-cache  # first runs

Prints one line per measure, or with ``--json`` one JSON object; ``--out`` also writes it.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from backends import median_time, report  # noqa: E402


def overhead(tasks, chunk, repeats):
    import dask.array as da

    import numba_vulkan as nv
    import numba_vulkan.dask as nvd

    @nv.jit
    def plus_one(a, out):
        i = nv.global_id(0)
        if i < out.size:
            out[i] = a[i] + 1

    def kernel_block(block):
        out = np.empty_like(block)
        plus_one.forall(block.size)(block, out)
        return out

    host = np.arange(tasks * chunk, dtype=np.float32)
    on_host = da.from_array(host, chunks=chunk)
    on_device = nvd.from_device_array(nv.to_device(host), chunks=chunk)
    device = nv.get_device()
    out = {"tasks": tasks, "chunk": chunk}
    for scheduler in ("sync", "threads"):
        def run(x, f, scheduler=scheduler):
            y = x.map_blocks(f, dtype=np.float32)
            # One persist: every block computed, results kept where they are (no gather).
            result = y.persist(scheduler=scheduler)
            device.synchronize()
            return result

        for label, x, f in (("numpy", on_host, lambda b: b + 1),
                            ("device", on_device, lambda b: b + 1),
                            ("kernel", on_device, kernel_block)):  # fmt: skip
            run(x, f)  # warm: compiles, pools
            seconds = median_time(lambda x=x, f=f: run(x, f), repeats)
            out[f"{scheduler}_{label}_us"] = seconds / tasks * 1e6
        out[f"{scheduler}_overhead_us"] = out[f"{scheduler}_device_us"] - out[f"{scheduler}_numpy_us"]
        out[f"{scheduler}_kernel_overhead_us"] = (out[f"{scheduler}_kernel_us"]
                                                  - out[f"{scheduler}_numpy_us"])  # fmt: skip
    return out


def _first_task(_):
    from numba_vulkan.dask.cluster import warm_up

    device = warm_up()  # compiled already by the worker's start: a launch
    return os.getpid(), device.info.name


def _start_cluster(n, index):
    """Seconds until `n` workers are up, and until each has run a kernel on its device."""
    from distributed import Client

    from numba_vulkan.dask import LocalVulkanCluster

    t0 = time.perf_counter()
    with LocalVulkanCluster(devices=",".join([str(index)] * n)) as cluster, \
            Client(cluster) as client:  # fmt: skip
        client.wait_for_workers(n)
        up = time.perf_counter() - t0
        addresses = list(client.scheduler_info()["workers"])
        futures = [client.submit(_first_task, i, workers=[a], pure=False)
                   for i, a in enumerate(addresses)]  # fmt: skip
        logical = client.gather(futures)
        ready = time.perf_counter() - t0
    assert len({pid for pid, _ in logical}) == n, logical  # one process each
    return up, ready


def _startup_child(n):
    """One fresh process (``--startup-child N``): what a user's script does, timed. The
    first cluster is cold (no forkserver yet), the second warm (the server runs)."""
    t0 = time.perf_counter()
    import numba_vulkan as nv

    import_s = time.perf_counter() - t0
    import distributed  # noqa: F401  (the user's script imports it before the cluster)

    import numba_vulkan.dask

    info = nv.get_device().info
    index = info.vulkan_index if info.vulkan_index >= 0 else info.index
    out = {"import_numba_vulkan_s": import_s}
    out["cold_up_s"], out["cold_first_kernel_s"] = _start_cluster(n, index)
    out["warm_up_s"], out["warm_first_kernel_s"] = _start_cluster(n, index)
    print(json.dumps(out))


def startup(workers, runs, fresh_cache=False):
    """Each cluster size started in `runs` fresh processes (cold, then warm in the same
    process): the best and the median of each measure. A first run fills the disk caches
    (kernels, driver probes, pipelines, bytecode), as a user's second run finds them; with
    `fresh_cache` each process gets an empty NUMBA_VULKAN_CACHE_DIR instead (a user's first
    run: the driver's self-test and every compilation happen in it)."""
    import subprocess
    import tempfile

    def child(n):
        env = dict(os.environ)
        if fresh_cache:
            env["NUMBA_VULKAN_CACHE_DIR"] = tempfile.mkdtemp(prefix="nvk-bench-cache-")
        done = subprocess.run([sys.executable, __file__, "--startup-child", str(n)], env=env,
                              check=True, capture_output=True, text=True)  # fmt: skip
        return json.loads(done.stdout.strip().splitlines()[-1])

    if not fresh_cache:
        child(min(workers))  # the disk caches of a second run
    out = {"runs": runs, "fresh_cache": fresh_cache}
    for n in workers:
        samples = [child(n) for _ in range(runs)]
        for key in samples[0]:
            values = sorted(s[key] for s in samples)
            out[f"workers{n}_{key[:-2]}_best_s"] = values[0]
            out[f"workers{n}_{key[:-2]}_median_s"] = statistics.median(values)
    return out


def _chain(v):
    # float32 constants: in a kernel (numba.njit's typing) `v * v + 1` would be float64 math
    # for a float32 v, where NumPy 2 and CuPy keep float32 arrays in float32
    return np.sqrt(v * v + np.float32(1)) * np.float32(0.5) - v


def gpu(gib, chunk_gib, repeats, dask_threads=4):
    """The gpu part (module doc): each pipeline's median seconds and its sum."""
    import dask
    import dask.array as da

    import numba_vulkan as nv
    import numba_vulkan.dask as nvd  # also registers the chunk type and the backend

    n = int(gib * (1 << 30)) // 4
    chunk = int(chunk_gib * (1 << 30)) // 4
    device = nv.get_device()
    threads = 1 << 20  # invocations of the fused kernels, each a grid-stride loop

    @nv.jit
    def fill(x):
        i = nv.global_id(0)
        if i < x.size:
            x[i] = (i % 1000) * np.float32(0.001)

    @nv.jit
    def fused(x, partial):
        g = nv.global_id(0)
        if g < partial.size:
            acc = np.float32(0)
            for i in range(g, x.size, partial.size):
                v = x[i]
                acc += math.sqrt(v * v + np.float32(1)) * np.float32(0.5) - v
            partial[g] = acc

    chain = nv.vectorize(["float32(float32)"])(_chain)

    stamps = []  # (start, end) of each chunk_sum call, for the timelines

    def chunk_sum(block):
        start = time.perf_counter()
        partial = nv.device_array(min(threads, block.size), np.float32)
        fused.forall(partial.size)(block, partial)
        result = partial.sum(keepdims=True)
        stamps.append((start, time.perf_counter()))
        return result

    def timeline(name):
        """Medians of five evaluations of the chunk form, in ms from its start."""
        rows = []
        for _ in range(5):
            t0 = time.perf_counter()
            graph = dx.map_blocks(chunk_sum, chunks=(1,), dtype=np.float32).sum()
            built = time.perf_counter()
            stamps.clear()  # Dask called chunk_sum on its meta while building
            float(graph.compute())
            end = time.perf_counter()
            rows.append((built - t0, min(s for s, _ in stamps) - t0,
                         max(e for _, e in stamps) - t0, end - t0))
        keys = ("graph_built", "first_chunk_task", "last_chunk_task_end", "result")
        out[name + "_timeline_ms"] = {
            k: round(statistics.median(r[i] for r in rows) * 1e3, 3) for i, k in enumerate(keys)}

    x = nv.device_array(n, np.float32)
    fill.forall(n)(x)
    device.synchronize()
    # Views of x: da.from_array would copy it on the device first (docs/dask.md)
    dx = nvd.from_device_array(x, chunks=chunk)
    out = {"gib": gib, "chunk_gib": chunk_gib, "device": device.info.name,
           "dask_threads": dask_threads}

    def timed(name, fn):
        value = fn()  # compiles, and the value checked below
        before = device.pool_stats()
        out[name + "_s"] = median_time(fn, repeats)
        out[name + "_sum"] = value
        after = device.pool_stats()
        # New buffers made while timing (the pool keeps pool_limit bytes of released ones)
        out[name + "_pool_misses"] = (after["misses"] - before["misses"]) // repeats

    partial = nv.device_array(threads, np.float32)

    def one_kernel():
        fused.forall(threads)(x, partial)
        return float(partial.sum())

    with dask.config.set(scheduler="threads", num_workers=dask_threads):
        timed("fused_kernel", one_kernel)
        timed("dask_vulkan_ufuncs", lambda: float(_chain(dx).sum().compute()))
        timed("dask_vulkan_vectorize", lambda: float(chain(dx).sum().compute()))
        timed("dask_vulkan_chunk_kernel", lambda: float(
            dx.map_blocks(chunk_sum, chunks=(1,), dtype=np.float32).sum().compute()))
        timeline("dask_vulkan_chunk_kernel")
        # Dask's own cost of that graph: each chunk's task returns one element made before
        # (no kernel, no allocation), the sum of those as before
        zero = nv.to_device(np.zeros(1, np.float32))
        timed("dask_vulkan_floor", lambda: float(
            dx.map_blocks(lambda b: zero, chunks=(1,), dtype=np.float32).sum().compute()))
    with dask.config.set(scheduler="sync"):  # the same graphs, run by the calling thread
        timed("dask_vulkan_chunk_kernel_sync", lambda: float(
            dx.map_blocks(chunk_sum, chunks=(1,), dtype=np.float32).sum().compute()))
        timeline("dask_vulkan_chunk_kernel_sync")
        timed("dask_vulkan_floor_sync", lambda: float(
            dx.map_blocks(lambda b: zero, chunks=(1,), dtype=np.float32).sum().compute()))
    with dask.config.set(scheduler="threads", num_workers=dask_threads):
        # The element-wise forms again with a pool that keeps the chunks' temporaries
        # (NUMBA_VULKAN_POOL_MB's default, 1 GiB, holds one 1 GiB chunk).
        limit, device.pool_limit = device.pool_limit, 16 * chunk * 4 * dask_threads
        try:
            timed("dask_vulkan_ufuncs_big_pool", lambda: float(_chain(dx).sum().compute()))
            timed("dask_vulkan_vectorize_big_pool", lambda: float(chain(dx).sum().compute()))
        finally:
            device.pool_limit = limit
            device.trim(limit)
    for name in ("ufuncs", "vectorize", "chunk_kernel", "chunk_kernel_sync", "floor", "floor_sync"):
        out[f"dask_vulkan_{name}_over_fused"] = out[f"dask_vulkan_{name}_s"] / out["fused_kernel_s"]
    # The most device memory our arrays held at once (the array, the chunks' temporaries,
    # released buffers waiting for the device, the pool's)
    out["device_peak_gib"] = device.pool_stats()["peak_bytes"] / (1 << 30)
    dx = x = partial = None  # ours freed before CuPy allocates
    device.synchronize()
    try:
        import cupy
    except ImportError:
        return out
    # CuPy's chunks, after ours are freed: the same expression, and one fused kernel per chunk.
    cx = cupy.empty(n, cupy.float32)
    step = 1 << 28
    for s in range(0, n, step):
        cx[s:s + step] = (cupy.arange(s, min(s + step, n)) % 1000) * cupy.float32(0.001)
    dcx = da.from_array(cx, chunks=chunk, asarray=False, name=False)

    def cupy_chain_sum(v):  # cupy.fuse names its CUDA kernel after the function: not a lambda
        return cupy.sum(cupy.sqrt(v * v + 1) * cupy.float32(0.5) - v)

    cupy_chunk_sum = cupy.fuse(cupy_chain_sum)

    def synced(fn):
        value = fn()
        cupy.cuda.Device().synchronize()
        return value

    czero = cupy.zeros(1, cupy.float32)

    def cupy_chunks(per_chunk):
        graph = dcx.map_blocks(per_chunk, chunks=(1,), dtype=np.float32).sum()
        return synced(lambda: float(graph.compute()))

    for scheduler, suffix in (("threads", ""), ("sync", "_sync")):
        with dask.config.set(scheduler=scheduler, num_workers=dask_threads):
            if not suffix:
                timed("dask_cupy_ufuncs",
                      lambda: synced(lambda: float(_chain(dcx).sum().compute())))
            timed("dask_cupy_fused_chunks" + suffix,
                  lambda: cupy_chunks(lambda b: cupy_chunk_sum(b).reshape(1)))
            timed("dask_cupy_floor" + suffix, lambda: cupy_chunks(lambda b: czero))
    out["ufuncs_vulkan_over_cupy"] = out["dask_vulkan_ufuncs_s"] / out["dask_cupy_ufuncs_s"]
    out["chunk_kernel_vulkan_over_cupy_fused"] = (out["dask_vulkan_chunk_kernel_s"]
                                                  / out["dask_cupy_fused_chunks_s"])
    out["chunk_kernel_vulkan_over_cupy_fused_sync"] = (out["dask_vulkan_chunk_kernel_sync_s"]
                                                       / out["dask_cupy_fused_chunks_sync_s"])
    return out


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--parts", default="overhead,startup", help="overhead,startup,gpu")
    p.add_argument("--tasks", type=int, default=1000, help="chunks of the overhead part")
    p.add_argument("--chunk", type=int, default=1024, help="float32 elements per chunk")
    p.add_argument("--workers", default="2,8", help="cluster sizes of the startup part")
    p.add_argument("--gib", type=float, default=32.0, help="GiB of float32 (gpu part)")
    p.add_argument("--chunk-gib", type=float, default=1.0, help="GiB per chunk (gpu part)")
    p.add_argument("--dask-threads", type=int, default=4,
                   help="Dask's threads (gpu part; each holds a few chunks' intermediates)")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--runs", type=int, default=5, help="fresh processes per size (startup)")
    p.add_argument("--fresh-cache", action="store_true",
                   help="startup: an empty disk cache for each process (a first run)")
    p.add_argument("--startup-child", type=int, help=argparse.SUPPRESS)
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--out", help="also write the JSON here")
    args = p.parse_args(argv)
    if args.startup_child:
        _startup_child(args.startup_child)
        return 0

    import numba_vulkan as nv

    device = nv.get_device()
    results = {"device": device.info.name, "cpus": os.cpu_count()}
    parts = [s.strip() for s in args.parts.split(",") if s.strip()]
    if "overhead" in parts:
        results["overhead"] = overhead(args.tasks, args.chunk, args.repeats)
    if "startup" in parts:
        results["startup"] = startup([int(w) for w in args.workers.split(",")], args.runs,
                                     args.fresh_cache)
    if "gpu" in parts:
        results["gpu"] = gpu(args.gib, args.chunk_gib, args.repeats, args.dask_threads)
    report(results, args.out, show=args.json)
    if not args.json:
        for part, values in results.items():
            if isinstance(values, dict):
                for k, v in values.items():
                    print(f"{part}.{k}: {v:.4g}" if isinstance(v, float) else f"{part}.{k}: {v}")
            else:
                print(f"{part}: {values}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
