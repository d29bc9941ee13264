"""Overlap of work on two streams: a host-to-device copy and a kernel, against numba.cuda.

Issue 9, item 3. A copy of `--copy-mib` MiB from pinned memory to a device array
on one stream, and a compute-bound kernel of about `--kernel-ms` ms on another
(no buffer in common, so neither waits for the other), timed

  - each alone (enqueue, then synchronize its stream),
  - both together (enqueue both, then synchronize both),

median of `--repeats` each. Where the copy runs on a copy engine and the kernel
on the compute units, `both` is clearly less than `copy + kernel` (ideally their
maximum); `overlap` = 1 - both / (copy + kernel) says how much was saved (0: none,
0.5: the two figures were equal and fully overlapped). On lavapipe there is one
queue and one CPU doing both: expect no overlap there.

The kernel's size (its number of invocations, each `--rounds` rounds of 8
float32 multiply-adds) is calibrated per backend to take about `--kernel-ms`.

    python3 benchmarks/bench_streams.py                                   # the GPU machine
    python3 benchmarks/bench_streams.py --copy-mib 16 --kernel-ms 100 --rounds 500 \\
        --repeats 2 --out /tmp/streams.json                               # lavapipe, quick
"""

import argparse
import datetime
import json
import os
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from backends import median_time  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent




def _calibrate(run, target_s, start=4096):
    """The invocation count whose kernel (run(n), synchronous) takes about target_s."""
    n = start
    while True:
        t = median_time(lambda: run(n), 2)
        if t >= min(0.05, target_s / 4) or n >= 1 << 31:
            break
        n *= 4
    return max(256, int(n * target_s / max(t, 1e-6)) // 256 * 256)


def _figures(copy, kernel, both, repeats):
    c, k, b = median_time(copy, repeats), median_time(kernel, repeats), median_time(both, repeats)
    return {"copy_ms": c * 1e3, "kernel_ms": k * 1e3, "both_ms": b * 1e3,
            "sum_ms": (c + k) * 1e3, "overlap": 1 - b / (c + k)}  # fmt: skip


def bench_vulkan(args):

    import numba_vulkan as nv

    @nv.jit
    def busy(out, rounds, n):
        i = nv.global_id(0)
        if i < n:
            a = np.float32(i) * np.float32(1e-9)
            b = a + np.float32(1e-3)
            for _ in range(rounds):  # 8 multiply-adds a round, two chains
                a = a * np.float32(0.999999) + np.float32(1e-7)
                b = b * np.float32(0.999998) + np.float32(2e-7)
                a = a * np.float32(0.999997) + np.float32(3e-7)
                b = b * np.float32(0.999996) + np.float32(4e-7)
                a = a * np.float32(0.999995) + np.float32(5e-7)
                b = b * np.float32(0.999994) + np.float32(6e-7)
                a = a * np.float32(0.999993) + np.float32(7e-7)
                b = b * np.float32(0.999992) + np.float32(8e-7)
            if a + b == np.float32(-1.0):  # never: keeps the loop
                out[0] = a

    dev = nv.get_device()
    nbytes = args.copy_mib << 20
    host = nv.pinned_array(nbytes, np.uint8)
    host[...] = 7
    target = nv.device_array(nbytes, np.uint8)
    out = nv.device_array(1, np.float32)
    s_copy, s_kernel = nv.stream(), nv.stream()
    rounds = np.int32(args.rounds)

    def kernel_alone(n):
        busy.forall(n, stream=s_kernel)(out, rounds, np.int64(n))
        s_kernel.synchronize()

    kernel_alone(256)  # compile
    n = _calibrate(kernel_alone, args.kernel_ms / 1e3)

    def copy():
        target.copy_to_device(host, stream=s_copy)
        s_copy.synchronize()

    def kernel():
        kernel_alone(n)

    def both():
        target.copy_to_device(host, stream=s_copy)
        busy.forall(n, stream=s_kernel)(out, rounds, np.int64(n))
        s_copy.synchronize()
        s_kernel.synchronize()

    copy()
    r = _figures(copy, kernel, both, args.repeats)
    r["copy_GBps"] = nbytes / (r["copy_ms"] / 1e3) / 1e9
    assert target[nbytes - 1] == 7
    kernels, copies = dev.stream_queues
    r.update(invocations=n, kernel_queue=kernels, copy_queue=copies, device=dev.info.name)
    return r


def bench_cuda(args):
    try:
        if not hasattr(np, "row_stack"):
            np.row_stack = np.vstack  # numba-cuda 0.30.4 still refers to it
        from numba import cuda

        if not cuda.is_available():
            return {"missing": "no CUDA GPU"}
    except Exception as e:  # noqa: BLE001
        return {"missing": f"numba.cuda: {e}"}

    @cuda.jit
    def busy(out, rounds, n):
        i = cuda.grid(1)
        if i < n:
            a = np.float32(i) * np.float32(1e-9)
            b = a + np.float32(1e-3)
            for _ in range(rounds):  # as bench_vulkan's kernel
                a = a * np.float32(0.999999) + np.float32(1e-7)
                b = b * np.float32(0.999998) + np.float32(2e-7)
                a = a * np.float32(0.999997) + np.float32(3e-7)
                b = b * np.float32(0.999996) + np.float32(4e-7)
                a = a * np.float32(0.999995) + np.float32(5e-7)
                b = b * np.float32(0.999994) + np.float32(6e-7)
                a = a * np.float32(0.999993) + np.float32(7e-7)
                b = b * np.float32(0.999992) + np.float32(8e-7)
            if a + b == np.float32(-1.0):
                out[0] = a

    nbytes = args.copy_mib << 20
    host = cuda.pinned_array(nbytes, np.uint8)
    host[...] = 7
    target = cuda.device_array(nbytes, np.uint8)
    out = cuda.device_array(1, np.float32)
    s_copy, s_kernel = cuda.stream(), cuda.stream()
    rounds = np.int32(args.rounds)

    def launch(n):
        busy[(n + 255) // 256, 256, s_kernel](out, rounds, np.int64(n))

    def kernel_alone(n):
        launch(n)
        s_kernel.synchronize()

    kernel_alone(256)
    n = _calibrate(kernel_alone, args.kernel_ms / 1e3)

    def copy():
        target.copy_to_device(host, stream=s_copy)
        s_copy.synchronize()

    def both():
        target.copy_to_device(host, stream=s_copy)
        launch(n)
        s_copy.synchronize()
        s_kernel.synchronize()

    copy()
    r = _figures(copy, lambda: kernel_alone(n), both, args.repeats)
    r["copy_GBps"] = nbytes / (r["copy_ms"] / 1e3) / 1e9
    r["invocations"] = n
    return r


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--copy-mib", type=int, default=1024, help="MiB copied (default 1024)")
    p.add_argument("--kernel-ms", type=float, default=1000.0,
                   help="the kernel's target duration (default 1000)")  # fmt: skip
    p.add_argument("--rounds", type=int, default=20000,
                   help="loop rounds (8 multiply-adds each) per invocation, below 65,535 "
                   "(default 20000)")  # fmt: skip
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--backends", default="numba_vulkan,numba.cuda")
    p.add_argument("--out", help="JSON file (default benchmarks/results/bench_streams_<date>.json)")
    args = p.parse_args()
    if not 0 < args.rounds < 65535:
        p.error("--rounds must be between 1 and 65,534 (lavapipe ends longer loops)")
    backends = args.backends.split(",")
    result = {"date": datetime.date.today().isoformat(), "args": vars(args)}
    if "numba_vulkan" in backends:
        result["numba_vulkan"] = bench_vulkan(args)
    if "numba.cuda" in backends:
        result["numba_cuda"] = bench_cuda(args)
    text = json.dumps(result, indent=1)
    print(text)
    out = args.out or ROOT / "benchmarks" / "results" / f"bench_streams_{result['date']}.json"
    Path(out).write_text(text + "\n")


if __name__ == "__main__":
    main()
