"""Cooperative matrices: a float16 matrix product on nv.matrix tiles, side by side with
cuBLAS (PyTorch) and numba.cuda's shared-memory float32 kernel in one run.

Figures, TFLOP/s = 2 n^3 / t (median of --repeats timed launches, synchronised):

1. nv.matrix: examples/matrix_tiles.py's kernel (float16 A, B; float32 C; four subgroups of
   one 16 x 16 tile per workgroup, slices staged in shared memory), on the matrix units
   where the device lists 16x16x16 float16 -> float32, else emulated.
2. nv.linalg: ``nv.linalg.matmul(a, b, units=True)`` (linalg/tiles.py: 64 x 64 blocks, four
   subgroups of 2 x 2 tiles loaded from device memory; float16 result, with its padding
   copies and conversion).
3. cuBLAS: torch.matmul of the float16 matrices (tensor cores; float16 result).
4. numba.cuda: the float32 16 x 16 shared-memory tiled kernel of its documentation (it has
   no way to reach tensor cores).

Each result is checked: the data are small integers, so every product is exact and each
backend must give NumPy's product (float16 results where it stays exact).

    python3 benchmarks/bench_matrix.py --size 4096            # GPU machine
    python3 benchmarks/bench_matrix.py --size 64 --repeats 2  # quick, lavapipe (emulated)
"""

import argparse
import datetime
import json
import platform
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "examples"))
sys.path.insert(0, str(ROOT / "benchmarks"))
from backends import synced_median_time  # noqa: E402


def ours(a, b, repeats):
    from matrix_tiles import BM, BN, matmul_tiles

    import numba_vulkan as nv

    n = a.shape[0]
    da, db = nv.to_device(a), nv.to_device(b)
    dc = nv.device_array((n, n), np.float32)
    local = 4 * nv.get_device().info.subgroup_size
    groups = ((n + BN - 1) // BN, (n + BM - 1) // BM)
    t = synced_median_time(lambda: matmul_tiles[groups, (local, 1)](da, db, dc), nv.synchronize, repeats)
    shapes = nv.matrix.shapes()
    return t, dc.copy_to_host(), {"device": nv.get_device().info.name,
                                  "units": not shapes[0].emulated}


def library(a, b, repeats):
    import numba_vulkan as nv

    da, db = nv.to_device(a), nv.to_device(b)
    out = {}
    t = synced_median_time(lambda: out.__setitem__("c", nv.linalg.matmul(da, db, units=True)),
              nv.synchronize, repeats)
    return t, out["c"].copy_to_host().astype(np.float32), {"path": "linalg.matmul(units=True)"}


def cublas(a, b, repeats):
    import torch

    ta, tb = torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda()
    out = {}
    t = synced_median_time(lambda: out.__setitem__("c", ta @ tb), torch.cuda.synchronize, repeats)
    return t, out["c"].float().cpu().numpy(), {"torch": torch.__version__}


def numba_cuda(a, b, repeats):
    """bench_parallel.py's tiled kernel (numba-cuda's documentation's), on float32 copies."""
    from backends import CudaBackend
    from bench_parallel import MATMUL, TPB, build

    backend = CudaBackend()
    cuda = backend.cuda
    kernel = build(backend, MATMUL, "fast_matmul")
    n = a.shape[0]
    da, db = cuda.to_device(a.astype(np.float32)), cuda.to_device(b.astype(np.float32))
    dc = cuda.device_array((n, n), np.float32)
    blocks = (n + TPB - 1) // TPB
    t = synced_median_time(lambda: kernel[(blocks, blocks), (TPB, TPB)](da, db, dc), cuda.synchronize,
              repeats)
    return t, dc.copy_to_host(), {"numba_cuda": "float32, 16x16 shared tiles"}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=4096)
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--json", help="write the results here")
    args = parser.parse_args(argv)
    n = args.size
    rng = np.random.default_rng(0)
    a = rng.integers(-2, 3, (n, n)).astype(np.float16)
    b = rng.integers(-2, 3, (n, n)).astype(np.float16)
    expected = a.astype(np.float32) @ b.astype(np.float32)
    flops = 2.0 * n ** 3
    results = {"size": n, "date": datetime.date.today().isoformat(),
               "host": platform.node(), "python": platform.python_version(), "rows": {}}
    for name, fn in (("nv.matrix", ours), ("nv.linalg (units)", library),
                     ("cuBLAS (torch, float16)", cublas),
                     ("numba.cuda (float32)", numba_cuda)):
        try:
            t, c, info = fn(a, b, args.repeats)
        except Exception as e:  # noqa: BLE001 - a backend that cannot run says why
            results["rows"][name] = {"error": f"{type(e).__name__}: {e}"[:300]}
            print(f"{name:28s} not measured: {type(e).__name__}: {str(e).strip().splitlines()[0][:200]}")
            continue
        exact = bool(np.array_equal(c, expected)) if np.abs(expected).max() < 2048 or \
            c.dtype == np.float32 else None
        row = {"seconds": t, "tflops": flops / t / 1e12, "exact": exact, **info}
        results["rows"][name] = row
        print(f"{name:28s} {row['tflops']:8.2f} TFLOP/s  {t * 1e3:9.3f} ms  exact={exact}  {info}")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
