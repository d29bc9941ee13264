"""Session 6 experiment: which forms of the reductions, histogram and matmul run fast on the GPU.

Not a benchmark of record (bench_parallel.py and bench_runtime_extras.py are):
one process measures variants side by side so that their differences are not
run-to-run noise. Sections (``--only``):

- tree: bench_parallel's shared-memory tree reduction compiled with the unroll
  pass at 1, 4 and 8 copies, and hand-unrolled sources (one accumulator, the
  same order; the same with int32 index math; four accumulators), against
  numba.cuda on the same source;
- sg: the subgroup reduction at 4 and 8 copies;
- hist: the histogram at 4 and 8 copies, and numba.cuda;
- matmul: the tiled matmul as written, with its 16-step inner loop unrolled by
  hand, and numba.cuda;
- sum: DeviceArray.sum end to end and its first pass alone, at 4 and 8 copies
  and other MAX_INVOCATIONS (run 1 of session 6 measured the former four-lane
  chunk kernel here: CHUNK 256/1024 x LANES 4/8, 2.5 TB/s at best).

    python3 benchmarks/experiments/s6_reduce_variants.py --out v.json          # H200
    python3 benchmarks/experiments/s6_reduce_variants.py --small --out v.json  # lavapipe
"""

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
import bench_parallel as bp  # noqa: E402
from bench_vs_cuda import CudaBackend, VulkanBackend  # noqa: E402

HAND_TREE = {
    # One accumulator, the loop's own order: what the unroll pass should produce.
    "hand1": """
def block_sum(data, partial):
    s = {NS}.shared.array(BLOCK, float32)
    t = {tx}
    i = {gx}
    stride = {gdx} * BLOCK
    acc = float32(0.)
    while i + 3 * stride < data.size:
        acc += data[i]
        acc += data[i + stride]
        acc += data[i + 2 * stride]
        acc += data[i + 3 * stride]
        i += 4 * stride
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
""",
    # The same with int32 index math.
    "hand1_i32": """
def block_sum(data, partial):
    s = {NS}.shared.array(BLOCK, float32)
    t = {tx}
    i = int32({gx})
    stride = int32({gdx} * BLOCK)
    n = int32(data.size)
    acc = float32(0.)
    while i < n - 3 * stride:
        acc += data[i]
        acc += data[i + stride]
        acc += data[i + 2 * stride]
        acc += data[i + 3 * stride]
        i = int32(i + 4 * stride)
    while i < n:
        acc += data[i]
        i = int32(i + stride)
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
""",
    # Four accumulators (a different order: not bit-identical to the loop).
    "hand4acc": """
def block_sum(data, partial):
    s = {NS}.shared.array(BLOCK, float32)
    t = {tx}
    i = {gx}
    stride = {gdx} * BLOCK
    a0 = float32(0.)
    a1 = float32(0.)
    a2 = float32(0.)
    a3 = float32(0.)
    while i + 3 * stride < data.size:
        a0 += data[i]
        a1 += data[i + stride]
        a2 += data[i + 2 * stride]
        a3 += data[i + 3 * stride]
        i += 4 * stride
    while i < data.size:
        a0 += data[i]
        i += stride
    s[t] = (a0 + a1) + (a2 + a3)
    {NS}.syncthreads()
    half = BLOCK // 2
    while half > 0:
        if t < half:
            s[t] += s[t + half]
        {NS}.syncthreads()
        half //= 2
    if t == 0:
        partial[{bx}] = s[0]
""",
}

MATMUL_UNROLLED = bp.MATMUL.replace(
    """        for j in range(TPB):
            tmp += sA[ty, j] * sB[j, tx]
""",
    "".join(f"        tmp += sA[ty, {j}] * sB[{j}, tx]\n" for j in range(16)),
)
assert MATMUL_UNROLLED != bp.MATMUL


def build(backend, source, name, unroll=None, fastmath=False):
    names = bp.NAMES[backend.name]
    src = source.format(**names)
    ns = dict(backend.kernel_namespace())
    ns.update(TPB=bp.TPB, BLOCK=bp.BLOCK, float32=np.float32, uint32=np.uint32, int32=np.int32)
    exec(compile(src, f"<variant {name}>", "exec"), ns)  # noqa: S102
    k = backend.jit(ns[name]) if not fastmath else backend.nv.jit(fastmath=True)(ns[name])
    if unroll is not None:
        import numba_vulkan.config as config
        config.UNROLL = unroll  # read when the kernel is compiled (its first call, in timed())
    return k


def two_pass(backend, args, source, name, unroll=None):
    n = 1 << args.reduce_log2
    data = np.random.default_rng(0).integers(0, 4, n).astype(np.float32)
    d = backend.to_device(data)
    partial = bp.device_array(backend, bp.GROUPS, np.float32)
    total = bp.device_array(backend, 1, np.float32)
    k = build(backend, source, name, unroll)

    def run():
        k[bp.GROUPS, bp.BLOCK](d, partial)
        k[1, bp.BLOCK](partial, total)

    t = bp.timed(backend, run, args.repeats, args.inner)
    got = float(total.copy_to_host()[0])
    want = float(data.astype(np.float64).sum())
    return {"gbs": round(4 * n / t / 1e9, 1), "correct": abs(got - want) <= 1e-6 * want}


def histogram(backend, args, unroll=None):
    n = 1 << args.hist_log2
    data = np.random.default_rng(0).integers(0, 256, n).astype(np.uint8)
    d = backend.to_device(data)
    hist = backend.to_device(np.zeros(256, np.uint32))
    k = build(backend, bp.HISTOGRAM, "histogram", unroll)
    t = bp.timed(backend, lambda: k[bp.GROUPS, bp.BLOCK](d, hist), args.repeats, args.inner)
    hist = backend.to_device(np.zeros(256, np.uint32))
    k[bp.GROUPS, bp.BLOCK](d, hist)
    ok = bool(np.array_equal(hist.copy_to_host(), np.bincount(data, minlength=256)))
    return {"gbs": round(n / t / 1e9, 1), "correct": ok}


def matmul(backend, args, source, unroll=None, fastmath=False):
    n = args.matmul_n
    rng = np.random.default_rng(0)
    A = rng.standard_normal((n, n)).astype(np.float32)
    B = rng.standard_normal((n, n)).astype(np.float32)
    dA, dB = backend.to_device(A), backend.to_device(B)
    dC = bp.device_array(backend, (n, n), np.float32)
    k = build(backend, source, "fast_matmul", unroll, fastmath)
    g = (n + bp.TPB - 1) // bp.TPB
    t = bp.timed(backend, lambda: k[(g, g), (bp.TPB, bp.TPB)](dA, dB, dC), args.repeats, args.inner)
    C = dC.copy_to_host()
    ok = bool(np.allclose(C[:64], A[:64].astype(np.float64) @ B, rtol=1e-3, atol=1e-2))
    return {"gflops": round(2 * n**3 / t / 1e9, 1), "correct": ok}


def sum_variants(args):
    import numba_vulkan as nv
    from numba_vulkan.runtime import reduce as red

    m = 1 << args.sum_log2
    x = nv.to_device(np.ones(m, np.float32))
    out = {}

    def med(fn):
        fn()
        nv.synchronize()
        end = time.perf_counter() + 0.5
        while time.perf_counter() < end:
            fn()
        nv.synchronize()
        ts = []
        for _ in range(args.repeats):
            t0 = time.perf_counter()
            fn()
            nv.synchronize()
            ts.append(time.perf_counter() - t0)
        return statistics.median(ts)

    import numba_vulkan.config as config

    for unroll, cap in ((8, 1 << 18), (4, 1 << 18), (8, 1 << 17), (8, 1 << 19)):
        config.UNROLL, red.MAX_INVOCATIONS = unroll, cap
        red._kernels.clear()
        key = f"u{unroll}_cap{cap}"
        try:
            assert x.sum() == m
            t_all = med(x.sum)
            # The first pass alone, as reduce() launches it.
            stride = min(-(-m // red.CHUNK), cap)
            partials = nv.device_array(stride, np.float32)
            k = red._kernel("sum", "float32", 1, red._narrow_option(x.device))
            launch = k.forall(stride, device=x.device)
            t_pass = med(lambda: launch(x, partials, np.int32(m), np.int32(stride)))
            out[key] = {"sum_TBps": round(4 * m / t_all / 1e12, 3),
                        "pass1_TBps": round(4 * m / t_pass / 1e12, 3)}
        except Exception as e:  # report and go on
            out[key] = {"error": f"{type(e).__name__}: {e}"}
        print(key, out[key], flush=True)
    config.UNROLL, red.MAX_INVOCATIONS = 8, 1 << 18
    red._kernels.clear()
    return out


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--only", default="tree,sg,hist,matmul,sum")
    p.add_argument("--small", action="store_true")
    p.add_argument("--cuda", action="store_true", help="also numba.cuda on the same sources")
    p.add_argument("--out", required=True)
    args = p.parse_args()
    big = not args.small
    args.reduce_log2 = 28 if big else 18
    args.hist_log2 = 28 if big else 18
    args.sum_log2 = 28 if big else 18
    args.matmul_n = 4096 if big else 128
    args.repeats, args.inner = (5, 3) if big else (2, 1)
    only = set(args.only.split(","))
    res = {"old_guard": bool(os.environ.get("NVK_UNROLL_OLD_GUARD"))}
    vk = VulkanBackend()
    cu = CudaBackend() if args.cuda else None

    def record(key, fn):
        try:
            res[key] = fn()
        except Exception as e:  # report and go on
            res[key] = {"error": f"{type(e).__name__}: {e}"}
        print(key, res[key], flush=True)

    if "tree" in only:
        for u in (1, 4, 8):  # run 1 of session 6 also ran these with NVK_UNROLL_OLD_GUARD=1 (the guard without the window)
            record(f"tree_auto{u}", lambda: two_pass(vk, args, bp.REDUCE, "block_sum", u))
        for name, src in HAND_TREE.items():
            record(f"tree_{name}", lambda: two_pass(vk, args, src, "block_sum", 1))
        if cu:
            record("tree_cuda", lambda: two_pass(cu, args, bp.REDUCE, "block_sum"))
            record("tree_hand4acc_cuda", lambda: two_pass(cu, args, HAND_TREE["hand4acc"], "block_sum"))
    if "sg" in only:
        for u in (4, 8):
            record(f"sg_auto{u}", lambda: two_pass(vk, args, bp.SUBGROUP_REDUCE, "sg_sum", u))
    if "hist" in only:
        for u in (4, 8):
            record(f"hist_auto{u}", lambda: histogram(vk, args, u))
        if cu:
            record("hist_cuda", lambda: histogram(cu, args))
    if "matmul" in only:
        record("matmul", lambda: matmul(vk, args, bp.MATMUL, 4))
        record("matmul_hand_unrolled", lambda: matmul(vk, args, MATMUL_UNROLLED, 4))
        # fastmath lets the driver fuse a * b + c (numba.cuda's NVVM fuses by default).
        record("matmul_fastmath", lambda: matmul(vk, args, bp.MATMUL, 8, True))
        if cu:
            record("matmul_cuda", lambda: matmul(cu, args, bp.MATMUL))
    if "sum" in only:
        import numba_vulkan.config as config
        config.UNROLL = 4
        record("sum", lambda: sum_variants(args))
    Path(args.out).write_text(json.dumps(res, indent=1) + "\n")


if __name__ == "__main__":
    main()
