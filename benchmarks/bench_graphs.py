"""Launch graphs: a chain of small dependent kernels (x[i] += 1 on a small array), launched
one by one and replayed as a graph, numba_vulkan beside numba.cuda and CuPy's or PyTorch's
CUDA graphs in one process, where those are installed and a CUDA device exists.

Figures per backend and way of launching (each the median over --repeats):

- host_us_per_kernel: host time of issuing the chain (the loop of launches, or one
  replay call), divided by the chain's length; the GPU may still be running;
- total_ms: from the first launch (or the replay) to the chain's completion seen by the
  host (synchronize);
- for numba_vulkan's graph also the replay after a rebinding to another array (the
  command buffer is recorded again), and the one-off capture and instantiation times;
- graph_independent (numba_vulkan, CuPy): a graph of as many launches on as many arrays,
  no launch depending on another: what the dependent chain's ordering costs.

Every run checks the array afterwards (each kernel adds 1).

    python3 benchmarks/bench_graphs.py --json /tmp/graphs.json              # GPU machine
    python3 benchmarks/bench_graphs.py --chain 200 --repeats 3 --json /tmp/g.json  # lavapipe
"""

import argparse
import datetime
import os
import platform
import statistics
import sys
import time

os.environ.setdefault("NUMBA_VULKAN_CACHE", "0")
os.environ.setdefault("NUMBA_CACHE_DIR", "/nonexistent-numba-cache")

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from backends import report  # noqa: E402

N = 256  # elements: one workgroup of 256 invocations


def _median(samples):
    return statistics.median(samples) if samples else None


def _measure(issue, finish, chain, repeats):
    """{host_us_per_kernel, total_ms} over `repeats` runs of issue(); finish() waits."""
    host, total = [], []
    for _ in range(repeats):
        finish()
        t0 = time.perf_counter()
        issue()
        t1 = time.perf_counter()
        finish()
        t2 = time.perf_counter()
        host.append((t1 - t0) / chain * 1e6)
        total.append((t2 - t0) * 1e3)
    return {"host_us_per_kernel": _median(host), "total_ms": _median(total)}


def _checked(result, actual, expected):
    result["correct"] = bool(np.all(actual == expected))
    return result


# ---------------------------------------------------------------- numba_vulkan


def bench_vulkan(chain, repeats):
    import numba_vulkan as nv

    @nv.jit
    def inc(x):
        i = nv.global_id(0)
        if i < x.size:
            x[i] += 1

    device = nv.get_device()
    x = nv.to_device(np.zeros(N, np.int32))
    inc[1, N](x)  # compile
    nv.synchronize()
    out = {"device": device.info.name}
    runs = 0

    def plain():
        for _ in range(chain):
            inc[1, N](x)

    out["plain"] = _measure(plain, nv.synchronize, chain, repeats)
    runs += repeats

    s = nv.stream()

    def on_stream():
        for _ in range(chain):
            inc[1, N, s](x)

    out["stream"] = _measure(on_stream, s.synchronize, chain, repeats)
    runs += repeats

    t0 = time.perf_counter()
    with nv.graph(s) as g:
        for _ in range(chain):
            inc[1, N, s](x)
    t1 = time.perf_counter()
    exe = g.instantiate()
    exe.replay()  # records the command buffer
    s.synchronize()
    t2 = time.perf_counter()
    runs += 1
    out["capture_ms"] = (t1 - t0) * 1e3
    out["instantiate_and_first_replay_ms"] = (t2 - t1) * 1e3
    out["graph"] = _measure(exe.replay, s.synchronize, chain, repeats)
    out["graph"]["barriers"] = exe.barriers
    runs += repeats
    _checked(out["graph"], x.copy_to_host(), 1 + runs * chain)  # 1: the compiling launch
    for key in ("plain", "stream"):
        out[key]["correct"] = out["graph"]["correct"]

    # The same number of launches on as many arrays: no hazard, so no barrier between them
    # (what the chain's barriers cost, beside the dispatches themselves).
    parts = [nv.to_device(np.zeros(N, np.int32)) for _ in range(chain)]
    with nv.graph(s) as g:
        for part in parts:
            inc[1, N, s](part)
    free = g.instantiate()
    free.replay()
    s.synchronize()
    out["graph_independent"] = _measure(free.replay, s.synchronize, chain, repeats)
    out["graph_independent"]["barriers"] = free.barriers
    _checked(out["graph_independent"], np.stack([p.copy_to_host() for p in parts]), 1 + repeats)

    y = nv.to_device(np.zeros(N, np.int32))
    flip = [x, y]

    def rebound():
        flip.reverse()
        exe.rebind(x, flip[0]).replay()

    out["graph_rebind"] = _measure(rebound, s.synchronize, chain, repeats)
    done = x.copy_to_host() + y.copy_to_host()
    _checked(out["graph_rebind"], done, 1 + (runs + repeats) * chain)
    return out


# ---------------------------------------------------------------- CUDA side


def bench_numba_cuda(chain, repeats):
    if not hasattr(np, "row_stack"):
        np.row_stack = np.vstack  # numba-cuda 0.30.4 still refers to it
    from numba import cuda

    if not cuda.is_available():
        return None

    @cuda.jit
    def inc(x):
        i = cuda.grid(1)
        if i < x.size:
            x[i] += 1

    x = cuda.to_device(np.zeros(N, np.int32))
    inc[1, N](x)
    cuda.synchronize()

    def plain():
        for _ in range(chain):
            inc[1, N](x)

    out = {"plain": _measure(plain, cuda.synchronize, chain, repeats)}
    _checked(out["plain"], x.copy_to_host(), 1 + repeats * chain)
    return out


def bench_cupy(chain, repeats):
    import cupy as cp

    inc = cp.RawKernel(r"""
    extern "C" __global__ void inc(int* x, int n) {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i < n) x[i] += 1;
    }""", "inc")
    x = cp.zeros(N, cp.int32)
    n = np.int32(N)
    stream = cp.cuda.Stream(non_blocking=True)
    out = {}
    with stream:
        inc((1,), (N,), (x, n))
        stream.synchronize()

        def plain():
            for _ in range(chain):
                inc((1,), (N,), (x, n))

        out["plain"] = _measure(plain, stream.synchronize, chain, repeats)
        stream.begin_capture()
        for _ in range(chain):
            inc((1,), (N,), (x, n))
        graph = stream.end_capture()
        graph.launch(stream)
        stream.synchronize()
        out["graph"] = _measure(lambda: graph.launch(stream), stream.synchronize, chain, repeats)
        _checked(out["graph"], cp.asnumpy(x), 1 + repeats * chain + chain + repeats * chain)
        parts = [cp.zeros(N, cp.int32) for _ in range(chain)]
        stream.begin_capture()
        for part in parts:
            inc((1,), (N,), (part, n))
        free = stream.end_capture()
        free.launch(stream)
        stream.synchronize()
        out["graph_independent"] = _measure(lambda: free.launch(stream), stream.synchronize,
                                            chain, repeats)  # fmt: skip
        _checked(out["graph_independent"], cp.asnumpy(cp.stack(parts)), 1 + repeats)
    return out


def bench_torch(chain, repeats):
    import torch

    if not torch.cuda.is_available():
        return None
    x = torch.zeros(N, dtype=torch.int32, device="cuda")
    x.add_(1)
    torch.cuda.synchronize()

    def plain():
        for _ in range(chain):
            x.add_(1)

    out = {"plain": _measure(plain, torch.cuda.synchronize, chain, repeats)}
    g = torch.cuda.CUDAGraph()
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        x.add_(1)  # warm-up on a side stream, as torch.cuda.graphs asks
    torch.cuda.current_stream().wait_stream(side)
    with torch.cuda.graph(g):
        for _ in range(chain):
            x.add_(1)
    g.replay()
    torch.cuda.synchronize()
    out["graph"] = _measure(g.replay, torch.cuda.synchronize, chain, repeats)
    expected = 1 + repeats * chain + 1 + chain + repeats * chain
    _checked(out["graph"], x.cpu().numpy(), expected)
    return out


def _optional(name, fn, *args):
    try:
        return fn(*args)
    except ImportError:
        return None
    except Exception as e:  # noqa: BLE001 - a missing driver or device: recorded, not fatal
        return {"error": f"{type(e).__name__}: {e}"}


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--chain", type=int, default=1000, help="kernels in the chain (1000)")
    p.add_argument("--repeats", type=int, default=7, help="runs per figure; the median (7)")
    p.add_argument("--json", help="write the results to this file")
    args = p.parse_args()

    result = {
        "benchmark": "bench_graphs",
        "date": datetime.date.today().isoformat(),
        "host": platform.node(),
        "python": sys.version.split()[0],
        "chain": args.chain,
        "elements": N,
        "repeats": args.repeats,
        "numba_vulkan": bench_vulkan(args.chain, args.repeats),
        "numba_cuda": _optional("numba.cuda", bench_numba_cuda, args.chain, args.repeats),
        "cupy": _optional("cupy", bench_cupy, args.chain, args.repeats),
        "torch": _optional("torch", bench_torch, args.chain, args.repeats),
    }
    report(result, args.json)


if __name__ == "__main__":
    main()
