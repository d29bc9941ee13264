"""The 16x16 tiled matmul of bench_parallel.py in variants, with the driver's statistics
(registers, binary size): which difference to numba.cuda's SASS (inner loop unrolled,
LDS.128 of the row tile, FFMA) the H200's Vulkan compiler makes up for.

    python3 benchmarks/experiments/s11_matmul_variants.py [--n 4096] [--out FILE]
"""

import argparse
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import bench_parallel as bp  # noqa: E402
from backends import CudaBackend, VulkanBackend, each_backend  # noqa: E402

UNROLLED = "\n".join(f"        tmp += sA[ty, {j}] * sB[{j}, tx]" for j in range(bp.TPB))
FLAT = bp.MATMUL.replace("shape=(TPB, TPB)", "shape=TPB2").replace(
    "sA[ty, tx]", "sA[ty * TPB + tx]").replace("sB[ty, tx]", "sB[ty * TPB + tx]").replace(
    "sA[ty, j] * sB[j, tx]", "sA[ty * TPB + j] * sB[j * TPB + tx]")

VARIANTS = {
    "base": (bp.MATMUL, {}),
    "fastmath": (bp.MATMUL, {"fastmath": True}),
    "contract": (bp.MATMUL, {"fastmath": {"contract"}}),
    "unrolled": (bp.MATMUL.replace(
        "        for j in range(TPB):\n            tmp += sA[ty, j] * sB[j, tx]", UNROLLED), {}),
    "unrolled_contract": (bp.MATMUL.replace(
        "        for j in range(TPB):\n            tmp += sA[ty, j] * sB[j, tx]", UNROLLED),
        {"fastmath": {"contract"}}),
    "flat": (FLAT, {}),
}


def build(backend, source, options):
    names = bp.NAMES[backend.name]
    ns = dict(backend.kernel_namespace())
    ns.update(TPB=bp.TPB, TPB2=bp.TPB * bp.TPB, float32=np.float32)
    exec(compile(source.format(**names), "<s11 matmul>", "exec"), ns)  # noqa: S102
    jit = backend.nv.jit if backend.name == "numba_vulkan" else backend.cuda.jit
    return jit(**options)(ns["fast_matmul"])


def measure(backend, source, options, n, repeats):
    rng = np.random.default_rng(0)
    A = rng.standard_normal((n, n)).astype(np.float32)
    B = rng.standard_normal((n, n)).astype(np.float32)
    dA, dB = backend.to_device(A), backend.to_device(B)
    dC = bp.device_array(backend, (n, n), np.float32)
    k = build(backend, source, options)
    groups = (n // bp.TPB, n // bp.TPB)
    t = bp.timed(backend, lambda: k[groups, (bp.TPB, bp.TPB)](dA, dB, dC), repeats, 3)
    C = dC.copy_to_host()
    ok = bool(np.allclose(C[:64], A[:64].astype(np.float64) @ B, rtol=1e-3, atol=1e-2))
    return {"gflops": 2 * n**3 / t / 1e9, "correct": ok,
            "pipeline": backend.pipeline_stats(k, (dA, dB, dC), (bp.TPB, bp.TPB))}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=4096)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    results = {}
    for backend in each_backend((CudaBackend, VulkanBackend)):
        cls = type(backend)
        for name, (source, options) in VARIANTS.items():
            if cls is CudaBackend and name not in ("base", "unrolled", "flat"):
                continue
            r = measure(backend, source, options, args.n, args.repeats)
            results[f"{cls.name} {name}"] = r
            print(f"{cls.name:>13} {name:<18} {r['gflops']:8.0f} GFLOP/s  {r['correct']}  "
                  f"{r['pipeline']}", flush=True)
    if args.out:
        Path(args.out).write_text(json.dumps({"results": results}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
