"""Handing device arrays to CuPy and PyTorch and back, against a host round trip.

Figures (issue 11, item 4), for one array of `--mib` MiB of float32 (median of
`--repeats`, in ms; every hand-over waits until the receiver can use the data):

- vk_to_cupy: ``nv.to_cupy(d)`` of an exportable array, the first time (``cold``:
  export the descriptor, import it into CUDA, map it; a fresh array each repeat)
  and later (``warm``: the import is kept with the array); of an ordinary array
  (``copy``: a device copy into exportable memory, then cold); against
  ``cupy.asarray(d.copy_to_host())`` (``host``).
- vk_to_torch: the same with ``nv.to_torch`` and ``torch.from_numpy(...).cuda()``.
- cupy_to_vk / torch_to_vk: ``nv.from_cuda(x)`` of CUDA-allocated memory (``copy``:
  cuMemcpyDtoD into exportable Vulkan memory) and of memory that came from us
  (``shared``: no copy), against ``nv.to_device(x.get())`` / ``x.cpu().numpy()``.
- cupy_sum: CuPy's ``sum`` over the shared memory and over CuPy's own (GB/s): the
  imported memory is as fast as CUDA's.
- checks: every path's values compared with NumPy's, and the two-way sharing
  (a Vulkan launch seen by CuPy after nv.synchronize, a CuPy write seen by a
  launch after ``from_cuda``).

    python3 benchmarks/bench_interop.py --out results.json   # on an NVIDIA GPU with CuPy/PyTorch
"""

import argparse
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from backends import report  # noqa: E402


def _ms(fn, repeats, setup=None):
    times = []
    for _ in range(repeats):
        arg = setup() if setup else None
        t = time.perf_counter()
        fn(arg) if setup else fn()
        times.append((time.perf_counter() - t) * 1e3)
    return round(statistics.median(times), 3)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--mib", type=int, default=256)
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--out")
    args = p.parse_args()

    import cupy
    import torch

    import numba_vulkan as nv

    @nv.jit
    def fill(a, scale):
        i = nv.global_id(0)
        if i < a.size:
            a[i] = (i % 1000003) * scale

    @nv.jit
    def bump(a):
        i = nv.global_id(0)
        if i < a.size:
            a[i] += 1.0

    n = (args.mib << 20) // 4
    groups = (n + 255) // 256
    expect = (np.arange(n, dtype=np.int64) % 1000003).astype(np.float32) * np.float32(0.5)
    dev = nv.get_device()
    res = {"device": dev.info.name, "driver": dev.info.driver_info, "mib": args.mib,
           "repeats": args.repeats, "cupy": cupy.__version__, "torch": torch.__version__}  # fmt: skip
    checks = {}

    def exportable():
        d = nv.device_array(n, np.float32, exportable=True)
        fill[groups, 256](d, np.float32(0.5))
        nv.synchronize()
        return d

    ordinary = nv.device_array(n, np.float32)
    fill[groups, 256](ordinary, np.float32(0.5))
    nv.synchronize()
    shared = exportable()

    def sync_all():
        cupy.cuda.runtime.deviceSynchronize()

    # ---- Vulkan -> CuPy ------------------------------------------------------------
    c = nv.to_cupy(shared)
    checks["to_cupy_shared"] = bool(np.array_equal(c.get(), expect))
    checks["to_cupy_copy"] = bool(np.array_equal(nv.to_cupy(ordinary).get(), expect))
    checks["to_cupy_host"] = bool(np.array_equal(cupy.asarray(ordinary.copy_to_host()).get(),
                                                 expect))  # fmt: skip
    r = {}
    r["cold"] = _ms(lambda d: nv.to_cupy(d), args.repeats, setup=exportable)
    r["warm"] = _ms(lambda: nv.to_cupy(shared), args.repeats)
    r["copy"] = _ms(lambda: nv.to_cupy(ordinary), args.repeats)

    def host_cupy():
        cupy.asarray(ordinary.copy_to_host())
        sync_all()

    r["host"] = _ms(host_cupy, args.repeats)
    res["vk_to_cupy_ms"] = r

    # ---- Vulkan -> PyTorch ---------------------------------------------------------
    t = nv.to_torch(shared)
    checks["to_torch_shared"] = bool(np.array_equal(t.cpu().numpy(), expect))
    checks["to_torch_copy"] = bool(np.array_equal(nv.to_torch(ordinary).cpu().numpy(), expect))
    r = {}
    r["cold"] = _ms(lambda d: nv.to_torch(d), args.repeats, setup=exportable)
    r["warm"] = _ms(lambda: nv.to_torch(shared), args.repeats)
    r["copy"] = _ms(lambda: nv.to_torch(ordinary), args.repeats)

    def host_torch():
        torch.from_numpy(ordinary.copy_to_host()).cuda()
        torch.cuda.synchronize()

    r["host"] = _ms(host_torch, args.repeats)
    res["vk_to_torch_ms"] = r

    # ---- CuPy / PyTorch -> Vulkan --------------------------------------------------
    own = cupy.asarray(expect)
    sync_all()
    checks["from_cupy_copy"] = bool(np.array_equal(nv.from_cuda(own).copy_to_host(), expect))
    back = nv.from_cuda(c)
    checks["from_cupy_shared_aliases"] = back._buffer.address == shared._buffer.address
    checks["from_cupy_shared"] = bool(np.array_equal(back.copy_to_host(), expect))
    r = {}
    r["copy"] = _ms(lambda: nv.from_cuda(own), args.repeats)
    r["shared"] = _ms(lambda: nv.from_cuda(c), args.repeats)
    r["host"] = _ms(lambda: (nv.to_device(own.get()), nv.synchronize()), args.repeats)
    res["cupy_to_vk_ms"] = r

    tt = torch.from_numpy(expect).cuda()
    torch.cuda.synchronize()
    checks["from_torch_copy"] = bool(np.array_equal(nv.from_cuda(tt).copy_to_host(), expect))
    checks["from_torch_shared"] = nv.from_cuda(t)._buffer.address == shared._buffer.address
    r = {}
    r["copy"] = _ms(lambda: nv.from_cuda(tt), args.repeats)
    r["shared"] = _ms(lambda: nv.from_cuda(t), args.repeats)
    r["host"] = _ms(lambda: (nv.to_device(tt.cpu().numpy()), nv.synchronize()), args.repeats)
    res["torch_to_vk_ms"] = r

    # ---- reading the shared memory from CUDA ---------------------------------------
    def sum_gbs(x):
        x.sum()
        sync_all()
        ms = _ms(lambda: (x.sum(), sync_all()), max(args.repeats, 5))
        return round(n * 4 / (ms * 1e-3) / 1e9, 1)

    res["cupy_sum_gbs"] = {"shared": sum_gbs(c), "cupy_own": sum_gbs(own)}

    # ---- two-way sharing -------------------------------------------------------------
    small = nv.device_array(1 << 20, np.float32, exportable=True)
    fill[(1 << 20) // 256, 256](small, np.float32(1.0))
    cs = nv.to_cupy(small)
    bump[(1 << 20) // 256, 256](small)  # issued after the hand-over: needs nv.synchronize()
    nv.synchronize()
    ref = (np.arange(1 << 20) % 1000003).astype(np.float32) + 1
    checks["vulkan_write_seen_by_cupy"] = bool(np.array_equal(cs.get(), ref))
    cs *= 2  # CuPy writes; from_cuda waits for CuPy's stream, then a launch reads it
    bump[(1 << 20) // 256, 256](nv.from_cuda(cs))
    checks["cupy_write_seen_by_vulkan"] = bool(np.array_equal(small.copy_to_host(), 2 * ref + 1))
    ts = nv.to_torch(small)
    ts.add_(1)
    torch.cuda.synchronize()
    checks["torch_write_seen_by_vulkan"] = bool(np.array_equal(small.copy_to_host(), 2 * ref + 2))

    res["checks"] = checks
    report(res, args.out)
    if not all(checks.values()):
        raise SystemExit("some interop checks failed: " + str(checks))


if __name__ == "__main__":
    main()
