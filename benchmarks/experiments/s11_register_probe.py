"""Which part of bench_math.py's Black-Scholes float64 kernel takes the registers: the
kernel with one ingredient at a time replaced by plain arithmetic, compiled for the
device and reported by its driver (kernel.inspect_pipeline; nothing is timed).

    python3 benchmarks/experiments/s11_register_probe.py [--dtype float64]
"""

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import bench_math  # noqa: E402
from backends import VulkanBackend  # noqa: E402

BASE = bench_math.BLACK_SCHOLES
ERF1 = "math.erf(d1 * F(0.7071067811865476))"
ERF2 = "math.erf(d2 * F(0.7071067811865476))"
VARIANTS = {
    "full": BASE,
    "no erf": BASE.replace(ERF1, "d1").replace(ERF2, "d2"),
    "one erf": BASE.replace(ERF2, "d2"),
    "no log": BASE.replace("math.log(s / k)", "(s / k)"),
    "no sqrt": BASE.replace("math.sqrt(t)", "t"),
    "no exp": BASE.replace("math.exp(-r * t)", "(-r * t)"),
    "no kernel division": BASE.replace("math.log(s / k)", "math.log(s * k)").replace(
        ") / (v * sqrt_t)", ") * (v * sqrt_t)"),
    "erf only": BASE.replace("math.log(s / k)", "(s * k)").replace("math.sqrt(t)", "t").replace(
        "math.exp(-r * t)", "(-r * t)").replace(") / (v * sqrt_t)", ") * (v * sqrt_t)"),
}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--dtype", default="float64")
    args = parser.parse_args()
    dtype = np.dtype(args.dtype).type
    backend = VulkanBackend()
    n = 256
    v = backend.to_device(np.ones(n, dtype))
    r = bench_math.device_array(backend, n, dtype)
    kargs = (v, v, v, dtype(0.02), dtype(0.3), r, r)
    for name, source in VARIANTS.items():
        original = bench_math.BLACK_SCHOLES
        bench_math.BLACK_SCHOLES = source
        try:
            k = bench_math.build(backend, source, "black_scholes", dtype, False)
        finally:
            bench_math.BLACK_SCHOLES = original
        try:
            stats = k.inspect_pipeline(*kargs, local_size=256)
        except backend.nv.VulkanSupportError as e:
            stats = {"error": str(e)[:60]}
        spirv = k.inspect_spirv(*kargs)
        print(f"{args.dtype} {name:<20} {stats}  SPIR-V lines {spirv.count(chr(10))}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
