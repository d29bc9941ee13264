"""What the drivers make of bench_parallel's tiled matmul and bench_math's Black-Scholes:
numba_vulkan's pipeline statistics and internal representations (where the driver gives
them), numba.cuda's registers, PTX and SASS (where nvdisasm is installed), one file each.

    python3 benchmarks/experiments/s11_driver_code.py --dir /tmp/driver_code
"""

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import bench_math  # noqa: E402
import bench_parallel  # noqa: E402
from backends import CudaBackend, VulkanBackend, each_backend  # noqa: E402


def kernels(backend):
    """(name, kernel, arguments, local size) after one launch each."""
    n = 256
    out = []
    a = backend.to_device(np.ones((n, n), np.float32))
    c = bench_parallel.device_array(backend, (n, n), np.float32)
    k = bench_parallel.build(backend, bench_parallel.MATMUL, "fast_matmul")
    k[(n // 16, n // 16), (16, 16)](a, a, c)
    out.append(("tiled_matmul", k, (a, a, c), (16, 16)))
    for dtype in (np.float32, np.float64):
        v = backend.to_device(np.ones(n, dtype))
        r = bench_math.device_array(backend, n, dtype)
        k = bench_math.build(backend, bench_math.BLACK_SCHOLES, "black_scholes", dtype, False)
        args = (v, v, v, dtype(0.02), dtype(0.3), r, r)
        k[n // 256, 256](*args)
        out.append((f"black_scholes_{np.dtype(dtype).name}", k, args, 256))
    backend.synchronize()
    return out


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--dir", default="/tmp/driver_code")
    args = parser.parse_args()
    root = Path(args.dir)
    root.mkdir(parents=True, exist_ok=True)
    for backend in each_backend((VulkanBackend, CudaBackend)):
        cls = type(backend)
        for name, k, kargs, local in kernels(backend):
            stem = root / f"{cls.name}_{name}"
            if cls is VulkanBackend:
                try:
                    report = k.inspect_pipeline(*kargs, local_size=local, representations=True)
                except backend.nv.VulkanSupportError as e:
                    print(f"{cls.name} {name}: {e}")
                    continue
                print(f"{cls.name} {name}: {report['statistics']}")
                for rep, text in report["representations"].items():
                    path = Path(f"{stem}_{rep.replace(' ', '_').replace('/', '_')}.txt")
                    path.write_bytes(text)
                    print(f"  {rep}: {len(text)} bytes -> {path}")
                Path(f"{stem}.spvasm").write_text(k.inspect_spirv(*kargs))
            else:
                print(f"{cls.name} {name}: {backend.pipeline_stats(k, kargs, local)}")
                Path(f"{stem}.ptx").write_text(str(list(k.inspect_asm().values())[-1]))
                try:
                    Path(f"{stem}.sass").write_text(str(list(k.inspect_sass().values())[-1]))
                except Exception as e:  # noqa: BLE001  (nvdisasm missing)
                    print(f"  no SASS: {type(e).__name__}: {e}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
