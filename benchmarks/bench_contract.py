"""Contraction by choice: Mandelbrot and Black-Scholes float32 compiled exact (the default:
every float add, sub and mul its own rounding, as numba.njit computes) and with
``fastmath={'contract'}`` (the driver may fuse a multiply and an add into one FMA, as
numba.cuda's default does), side by side with numba.cuda where it runs.

Figures: the median time of --repeats launches (synchronised), and how many results the
contracted kernel changes against the exact one (Mandelbrot: pixels whose iteration count
differs; Black-Scholes: prices that differ, and by how many float32 ulps at most). The
exact kernel's Mandelbrot is checked against numba.njit of the same loop, bit for bit.

    python3 benchmarks/bench_contract.py                          # GPU host (4096^2, 2^24)
    python3 benchmarks/bench_contract.py --side 512 --log2 16 --repeats 3   # lavapipe
"""

import argparse
import datetime
import math
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from backends import (  # noqa: E402
    CudaBackend,
    VulkanBackend,
    cpu_name,
    driver_version,
    report,
    synced_median_time,
    versions,
)
from bench_math import BLACK_SCHOLES, INDEX  # noqa: E402

MANDELBROT = """
def mandelbrot(out, side, iters):
    i = {gx}
    if i < side * side:
        cr = F(-2.0) + F(3.0) * F(i % side) / F(side)
        ci = F(-1.5) + F(3.0) * F(i // side) / F(side)
        zr = F(0.0)
        zi = F(0.0)
        k = 0
        while k < iters and zr * zr + zi * zi < F(4.0):
            t = zr * zr - zi * zi + cr
            zi = F(2.0) * zr * zi + ci
            zr = t
            k += 1
        out[i] = k
"""
BLOCK = 256


def _kernel(backend, source, name, fastmath):
    ns = dict(backend.kernel_namespace())
    ns.update(math=math, F=np.float32)
    exec(source.format(gx=INDEX[backend.name]), ns)  # noqa: S102 - our own template
    jit = backend.nv.jit if backend.name == "numba_vulkan" else backend.cuda.jit
    return jit(fastmath=fastmath)(ns[name]) if fastmath else jit(ns[name])


def mandelbrot(backend, args, fastmath):
    n = args.side * args.side
    out = backend.to_device(np.zeros(n, np.int32))
    k = _kernel(backend, MANDELBROT, "mandelbrot", fastmath)
    launch = (lambda: k[(n + BLOCK - 1) // BLOCK, BLOCK](out, np.int32(args.side),
                                                          np.int32(args.iters)))  # fmt: skip
    seconds = synced_median_time(launch, backend.synchronize, args.repeats)
    return seconds, out.copy_to_host()


def black_scholes(backend, args, fastmath):
    n = 1 << args.log2
    rng = np.random.default_rng(0)
    S, K = rng.uniform(5, 30, n).astype(np.float32), rng.uniform(1, 100, n).astype(np.float32)
    T = rng.uniform(0.25, 10, n).astype(np.float32)
    dev = [backend.to_device(a) for a in (S, K, T, np.zeros(n, np.float32), np.zeros(n, np.float32))]
    k = _kernel(backend, BLACK_SCHOLES, "black_scholes", fastmath)
    r, v = np.float32(0.02), np.float32(0.30)
    seconds = synced_median_time(lambda: k[(n + BLOCK - 1) // BLOCK, BLOCK](*dev[:3], r, v, *dev[3:]),
                    backend.synchronize, args.repeats)  # fmt: skip
    return seconds, np.concatenate([dev[3].copy_to_host(), dev[4].copy_to_host()])


def _ulps(a, b):
    ia, ib = (x.view(np.int32).astype(np.int64) for x in (a, b))
    ia = np.where(ia < 0, -(ia & 0x7FFFFFFF), ia)
    ib = np.where(ib < 0, -(ib & 0x7FFFFFFF), ib)
    return np.abs(ia - ib)


def _mandelbrot_cpu(side, iters):
    import numba

    @numba.njit
    def cpu(out, side, iters):
        F = np.float32
        for i in range(side * side):
            cr = F(-2.0) + F(3.0) * F(i % side) / F(side)
            ci = F(-1.5) + F(3.0) * F(i // side) / F(side)
            zr, zi, k = F(0.0), F(0.0), 0
            while k < iters and zr * zr + zi * zi < F(4.0):
                t = zr * zr - zi * zi + cr
                zi = F(2.0) * zr * zi + ci
                zr = t
                k += 1
            out[i] = k

    out = np.zeros(side * side, np.int32)
    cpu(out, np.int32(side), np.int32(iters))
    return out


def run(backend, args):
    result = {"device": backend.describe()}
    m_exact_s, m_exact = mandelbrot(backend, args, False)
    m_fast_s, m_fast = mandelbrot(backend, args, {"contract"})
    b_exact_s, b_exact = black_scholes(backend, args, False)
    b_fast_s, b_fast = black_scholes(backend, args, {"contract"})
    result["mandelbrot"] = {
        "exact_ms": m_exact_s * 1e3, "contract_ms": m_fast_s * 1e3,
        "pixels_changed": int((m_exact != m_fast).sum()), "pixels": int(m_exact.size),
        "exact_is_numba_njit": bool((m_exact == _mandelbrot_cpu(args.side, args.iters)).all()),
    }  # fmt: skip
    d = _ulps(b_exact, b_fast)
    result["black_scholes_f32"] = {
        "exact_ms": b_exact_s * 1e3, "contract_ms": b_fast_s * 1e3,
        "prices_changed": int((d != 0).sum()), "prices": int(d.size), "max_ulps": int(d.max()),
    }  # fmt: skip
    return result


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--side", type=int, default=4096, help="Mandelbrot image side (4096)")
    p.add_argument("--iters", type=int, default=256, help="Mandelbrot iterations (256)")
    p.add_argument("--log2", type=int, default=24, help="log2 of the options (24)")
    p.add_argument("--repeats", type=int, default=10)
    p.add_argument("--out", help="write the JSON here")
    args = p.parse_args(argv)
    out = {"benchmark": "contract", "date": datetime.datetime.now().isoformat(timespec="minutes"),
           "cpu": cpu_name(), "driver": driver_version(), "versions": versions(),
           "args": vars(args)}  # fmt: skip
    for cls in (VulkanBackend, CudaBackend):
        try:
            backend = cls()
        except Exception as e:  # noqa: BLE001 - a backend that cannot run here is reported
            out[cls.name] = {"error": f"{type(e).__name__}: {e}"}
            continue
        out[backend.name] = run(backend, args)
    report(out, args.out)


if __name__ == "__main__":
    main()
