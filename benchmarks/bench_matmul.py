"""Matrix product: ``nv.linalg.matmul`` (the device's kernel: the tiled SIMT kernel, or on
GPUs linalg/blocked.py's for large products), with and without ``contract=True``, against
NumPy on the host, examples/tiled_matmul.py's kernel (16x16 invocations, one result each)
and, with ``--tilings``, other tilings of the SIMT kernel, with ``--blockings`` other
kernels of blocked.py; on a CUDA machine with ``--torch`` also PyTorch's matmul (cuBLAS,
TF32 off). With ``--few``, products of few outputs instead (linalg's thin and dots
kernels, docs/linalg.md): a dot product of two n^2-vectors, an n x n matrix times a vector
(and its transpose times one), a vector times an n x n matrix, a 4 x n^2/8 by n^2/8 x 4
product; each a new result per call, figures in ms and GB/s of operands read.

Each figure checks its result against NumPy (within the float32/float64 bound of
docs/linalg.md), runs untimed for 0.3 s (``backends.warm_up``), then times ``--repeats``
calls each followed by ``nv.synchronize()`` and reports the best and the median, with
GFLOP/s = 2 n^3 / t.

    python3 benchmarks/bench_matmul.py                        # lavapipe: n = 512, float32
    python3 benchmarks/bench_matmul.py --n 4096 --dtypes float32,float64 --torch   # a GPU
    python3 benchmarks/bench_matmul.py --tilings "16,16,8,8,8,1 16,16,4,4,16,1 16,16,4,4,16,1,c"
    python3 benchmarks/bench_matmul.py --n 4096 --blockings "b128 b128,c b64,c" --torch
    python3 benchmarks/bench_matmul.py --few --n 8192 --dtypes float32,float64 --torch
"""

import argparse
import dataclasses
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np

import numba_vulkan as nv
from numba_vulkan.linalg import blocked, kernels, plans

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from backends import warm_up  # noqa: E402
from tiled_matmul import TPB, fast_matmul  # noqa: E402


def _time(fn, repeats):
    warm_up(fn, nv.synchronize)
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        nv.synchronize()
        times.append(time.perf_counter() - t0)
    return min(times), statistics.median(times)


def _figure(name, n, best, median, err=None):
    row = {"figure": name, "n": n, "best_ms": best * 1e3, "median_ms": median * 1e3,
           "gflops_best": 2 * n**3 / best / 1e9}
    if err is not None:
        row["max_error_over_bound"] = err
    print(f"  {name:<34} best {best * 1e3:9.2f} ms  median {median * 1e3:9.2f} ms  "
          f"{row['gflops_best']:9.1f} GFLOP/s")
    return row


def _over_bound(got, a, b):
    """max(|got - exact| - gamma_n |A||B|) over the first rows: <= 0 when within the bound
    (the exact product from a wider type; long double has no BLAS, hence about 2^30
    multiplies: 64 rows at n = 4096, 16 at 8192)."""
    wide = np.longdouble if got.dtype == np.float64 else np.float64
    rows = max(4, 2**30 // b.size)
    got, a = got[:rows], a[:rows]
    u = np.finfo(got.dtype).eps / 2
    k = a.shape[1]
    gamma = k * u / (1 - k * u) + k * np.finfo(wide).eps
    exact = a.astype(wide) @ b.astype(wide)
    bound = gamma * (np.abs(a).astype(wide) @ np.abs(b).astype(wide))
    return float(np.max(np.abs(got.astype(wide) - exact) - bound))


def _few(n, dtypes, repeats, torch_too, rng):
    """The --few figures: products of few outputs, each checked within the bound."""
    shapes = {"dot n^2": ((n * n,), (n * n,)), "matrix @ vector": ((n, n), (n,)),
              "matrix.T @ vector": ((n, n), (n,)), "vector @ matrix": ((n,), (n, n)),
              "4 x n^2/8 x 4": ((4, n * n // 8), (n * n // 8, 4))}
    rows = []
    for dtype in dtypes:
        print(dtype)
        for name, (sa, sb) in shapes.items():
            a, b = (rng.standard_normal(s).astype(dtype) for s in (sa, sb))
            da, db = nv.to_device(a), nv.to_device(b)
            if ".T" in name:
                a, da = a.T, da.T
            got = nv.linalg.matmul(da, db).copy_to_host()
            err = _over_bound(np.atleast_2d(got).reshape(a.shape[0] if a.ndim > 1 else 1, -1),
                              np.atleast_2d(a), b.reshape(b.shape[0], -1))
            figures = [("nv.linalg.matmul", lambda: nv.linalg.matmul(da, db), err),
                       ("NumPy (host)", lambda: a @ b, None)]
            if torch_too:
                import torch

                tb = torch.from_numpy(b).cuda()
                ta = (torch.from_numpy(np.ascontiguousarray(a.T)).cuda().T if ".T" in name
                      else torch.from_numpy(a).cuda())

                def run(ta=ta, tb=tb):
                    torch.matmul(ta, tb)
                    torch.cuda.synchronize()

                figures.append(("torch.matmul (cuBLAS)", run, None))
            for backend, fn, e in figures:
                best, med = _time(fn, repeats)
                row = {"figure": f"{name}: {backend}", "n": n, "dtype": dtype,
                       "best_ms": best * 1e3, "median_ms": med * 1e3,
                       "gbytes_per_s_best": (a.nbytes + b.nbytes) / best / 1e9}
                if e is not None:
                    row["max_error_over_bound"] = e
                print(f"  {row['figure']:<42} best {best * 1e3:8.3f} ms  median "
                      f"{med * 1e3:8.3f} ms  {row['gbytes_per_s_best']:8.1f} GB/s")
                rows.append(row)
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=512)
    parser.add_argument("--dtypes", default="float32")
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--tilings", default="",
                        help="'wx,wy,tm,tn,bk,unroll[,c] ...' to compare (c: products fused "
                             "into the sums, fastmath={'contract'})")
    parser.add_argument("--blockings", default="",
                        help="'name[,c] ...': linalg/blocked.py's BLOCKINGS to compare (c: "
                             "contracted)")
    parser.add_argument("--swizzle", type=int, default=1,
                        help="beside each --blockings row, the same kernel with workgroups "
                             "in bands of up to this many rows of blocks")
    parser.add_argument("--torch", action="store_true", help="also time torch.matmul (CUDA)")
    parser.add_argument("--few", action="store_true",
                        help="products of few outputs (vectors) instead of n x n matrices")
    parser.add_argument("--json", help="write the figures here")
    args = parser.parse_args(argv)
    n = args.n
    device = nv.get_device()
    print(f"{device.info.name}, n = {n}")
    rows = []
    rng = np.random.default_rng(0)
    if args.few:
        rows = _few(n, args.dtypes.split(","), args.repeats, args.torch, rng)
    for dtype in args.dtypes.split(",") if not args.few else ():
        print(dtype)
        a = rng.standard_normal((n, n)).astype(dtype)
        b = rng.standard_normal((n, n)).astype(dtype)
        da, db = nv.to_device(a), nv.to_device(b)
        dc = nv.device_array((n, n), dtype)
        plan = plans.choose(np.dtype(dtype), device, operands=(a.dtype, b.dtype))
        v = blocked.BLOCKINGS[blocked.DEFAULTS.get(dtype, "b128")]
        kernel = (f"blocked {v.name}" if plan.family == "blocked"
                  and (n // v.bm) * (n // v.bn) >= blocked.MIN_GROUPS else str(plan.tiling))
        for contract in (False, True):
            best, med = _time(lambda: nv.linalg.matmul(da, db, out=dc, contract=contract),
                              args.repeats)
            name = f"nv.linalg.matmul{' contract' if contract else ''} {kernel}"
            rows.append({**_figure(name, n, best, med, _over_bound(dc.copy_to_host(), a, b)),
                         "dtype": dtype})
        best, med = _time(lambda: a @ b, args.repeats)
        rows.append({**_figure("NumPy a @ b (host)", n, best, med), "dtype": dtype})
        if dtype == "float32" and n % TPB == 0:
            groups = (n // TPB, n // TPB)
            best, med = _time(lambda: fast_matmul[groups, (TPB, TPB)](da, db, dc), args.repeats)
            rows.append({**_figure("examples/tiled_matmul.py", n, best, med,
                                   _over_bound(dc.copy_to_host(), a, b)), "dtype": dtype})
        for spec in args.tilings.split():
            fields = spec.split(",")
            wx, wy, tm, tn, bk, unroll = (int(x) for x in fields[:6])
            t = kernels.Tiling(wx, wy, tm, tn, bk, unroll, unroll_loads=False)
            v = kernels.Variant(plan.acc.name, False, "{}", "{}", "{}", t, False, False, None,
                                contract=fields[6:] == ["c"])
            k = kernels.tiled(v)
            groups = (-(-n // t.bn), -(-n // t.bm), 1)
            a3, b3, c3 = da.reshape(1, n, n), db.reshape(1, n, n), dc.reshape(1, n, n)
            best, med = _time(lambda: k[groups, (wx, wy)](a3, b3, c3), args.repeats)
            rows.append({**_figure(f"tiling {spec}", n, best, med,
                                   _over_bound(dc.copy_to_host(), a, b)), "dtype": dtype})
        specs = args.blockings.split()
        if args.swizzle > 1:  # each blocking, then its banded twin
            for spec in list(specs):
                name, *c = spec.split(",")
                twin = dataclasses.replace(blocked.BLOCKINGS[name], swizzle=args.swizzle,
                                           name=f"{name}b{args.swizzle}")
                blocked.BLOCKINGS[twin.name] = twin
                specs.insert(specs.index(spec) + 1, ",".join([twin.name, *c]))
        for spec in specs:
            name, *c = spec.split(",")
            one = (da.reshape(1, n, n), db.reshape(1, n, n), dc.reshape(1, n, n))
            try:
                best, med = _time(lambda: blocked.run(*one, device, name, c == ["c"]),
                                  args.repeats)
            except ValueError as e:  # more shared memory than the device has
                print(f"  blocking {spec}: {e}")
                continue
            rows.append({**_figure(f"blocking {spec}", n, best, med,
                                   _over_bound(dc.copy_to_host(), a, b)), "dtype": dtype})
        if args.torch:
            import torch

            torch.backends.cuda.matmul.allow_tf32 = False
            ta, tb = torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda()

            def run():
                torch.matmul(ta, tb)
                torch.cuda.synchronize()

            best, med = _time(run, args.repeats)
            rows.append({**_figure("torch.matmul (cuBLAS, no TF32)", n, best, med),
                         "dtype": dtype})
    if args.json:
        Path(args.json).write_text(json.dumps({"device": device.info.name, "rows": rows},
                                              indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
