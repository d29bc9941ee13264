"""Cooperative matrices: a float16 matrix product on nv.matrix tiles, side by side with
cuBLAS (PyTorch) and numba.cuda's shared-memory float32 kernel in one run.

Figures, TFLOP/s = 2 n^3 / t (median of --repeats timed launches, synchronised):

1. nv.matrix: examples/matrix_tiles.py's kernel (float16 A, B; float32 C; four subgroups of
   one 16 x 16 tile per workgroup, slices staged in shared memory), on the matrix units
   where the device lists 16x16x16 float16 -> float32, else emulated.
2. nv.linalg[<variant>], one row per product kernel of linalg/tiles.py (``VARIANTS``; the
   row of ``tiles.choose``'s is the one ``nv.linalg.matmul(a, b, units=True)`` runs):
   ``nv.linalg.matmul(a, b, units=True)`` with that kernel (float16 result: ``tflops``;
   ``in_place`` says which of a, b and the result the kernel read or wrote as they are,
   without a padding copy: all three where the size is a multiple of the block), and the
   product kernel alone into a float32 buffer (``kernel_tflops``, checked exactly; the
   operands as the whole call passes them, padded once where it pads them); the whole
   call into a result made beforehand (``out_tflops``: no allocation in the call), of
   float16 operands also into a float32 one (``out_float32_tflops``: float16 x float16 ->
   float32 through the library), and the float16-storing kernel alone
   (``float16_kernel_tflops``, where the call stores in place); with what
   the driver reports of its pipeline (``pipeline``: registers, spills as local memory,
   shared memory on NVIDIA; an error on drivers without
   VK_KHR_pipeline_executable_properties; ``pipeline_float16`` the same of the whole
   call's kernel, which converts to float16 before storing, where it stored in place). A
   variant that needs more shared memory than the device has is "not measured" with the
   reason. ``--variants g64,s128`` times only those; ``--swizzle 8`` adds, beside each
   nv.linalg row, the same kernel with its workgroups in bands of up to 8 rows of blocks.
3. cuBLAS: torch.matmul of the float16 matrices (tensor cores; float16 result).
4. numba.cuda: the float32 16 x 16 shared-memory tiled kernel of its documentation (it has
   no way to reach tensor cores).
5. bfloat16 (``--bfloat16 no`` leaves it out): ``nv.linalg[<choose's>] bfloat16``, the same
   measures of ``nv.linalg.matmul(a, b, units=True)`` with two bfloat16 operands (16x16x16
   bfloat16 x bfloat16 + float32 tiles; float32 result, as NumPy's), and cuBLAS on the
   same matrices (torch.matmul of bfloat16: bfloat16 result, float32 accumulation).
6. int8 (``--int8 no`` leaves it out): ``nv.linalg[<choose's>] int8``, the same measures of
   ``nv.linalg.matmul(a, b, dtype=np.int32, units=True)`` with the rows' integers as int8
   (16x16x32 int8 x int8 + int32 tiles; NumPy's int32 loop, exact), and cuBLAS's integer
   path on the same matrices (``torch._int_mm``: int32 result). TOPS, printed as TFLOP/s.

Each result is checked: the data of rows 1-4 are small integers, so every product is
exact and each backend must give NumPy's product (float16 results where it stays exact).
The bfloat16 rows' data are uniform in [-1, 1) rounded to bfloat16: their ``error`` is
against NumPy's float64 product of the same bfloat16 inputs (the largest difference over
the largest magnitude, and the Frobenius norm of the difference over that of the product).

    python3 benchmarks/bench_matrix.py --size 4096            # GPU machine
    python3 benchmarks/bench_matrix.py --size 128 --repeats 1  # quick, lavapipe (emulated)
"""

import argparse
import dataclasses
import datetime
import json
import platform
import sys
from pathlib import Path

import ml_dtypes
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "examples"))
sys.path.insert(0, str(ROOT / "benchmarks"))
from backends import synced_median_time  # noqa: E402

BF16 = np.dtype(ml_dtypes.bfloat16)


def ours(a, b, repeats):
    from matrix_tiles import BM, BN, matmul_tiles

    import numba_vulkan as nv

    n = a.shape[0]
    da, db = nv.to_device(a), nv.to_device(b)
    dc = nv.device_array((n, n), np.float32)
    local = 4 * nv.get_device().info.subgroup_size
    groups = ((n + BN - 1) // BN, (n + BM - 1) // BM)
    t = synced_median_time(lambda: matmul_tiles[groups, (local, 1)](da, db, dc), nv.synchronize,
                           repeats)
    shapes = nv.matrix.shapes()
    return t, dc.copy_to_host(), {"device": nv.get_device().info.name,
                                  "units": not shapes[0].emulated}


def library(name, operands="float16"):
    """The row of nv.linalg with product kernel `name` (linalg/tiles.py's VARIANTS) on tiles
    of `operands` (float16, bfloat16 or int8: the dtype of a and b; int8 with
    ``dtype=np.int32``, NumPy's int32 loop)."""

    def run(a, b, repeats):
        import numba_vulkan as nv
        from numba_vulkan.linalg import staging, tiles

        device = nv.get_device()
        v = tiles.VARIANTS[name]
        n = a.shape[0]
        da, db = nv.to_device(a), nv.to_device(b)
        out = {}
        chosen = tiles.choose(n, n, device)  # what matmul(units=True) runs
        choose, tiles.choose = tiles.choose, lambda M, N, device: name
        loop = {"dtype": np.int32} if operands == "int8" else {}
        try:
            t = synced_median_time(
                lambda: out.__setitem__("c", nv.linalg.matmul(da, db, units=True, **loop)),
                nv.synchronize, repeats)
            # The same call into a result made beforehand (no allocation in the call), and,
            # of float16 operands, into a float32 one (float16 x float16 -> float32, the
            # kernel's sums stored as they are).
            calls = {"out": nv.device_array(out["c"].shape, out["c"].dtype)}
            if operands == "float16":
                calls["out_float32"] = nv.device_array(out["c"].shape, np.float32)
            calls = {f"{key}_tflops": round(2.0 * n ** 3 / synced_median_time(
                lambda r=r: nv.linalg.matmul(da, db, out=r, units=True, **loop),
                nv.synchronize, repeats) / 1e12, 2) for key, r in calls.items()}
        finally:
            tiles.choose = choose
        # What the whole call read and wrote in place (staging.padded_batches' test).
        sums = tiles.SUMS[operands]
        sa, sb, sc = tiles.padded_shapes(v, n, n, n, operands)
        in_place = {"a": staging.in_place(da, sa, (operands,)),
                    "b": staging.in_place(db, sb, (operands,)),
                    "c": staging.in_place(out["c"], sc, ("float16", sums), "C")}
        # The product kernel alone into its sums' type, on the operands as the call passes them.
        pa, pb = da, db
        if not in_place["a"]:
            pa = nv.device_array(sa, a.dtype)
            staging.pad.forall((sa[1], sa[0]))(da, pa)
        if not in_place["b"]:
            pb = nv.device_array(sb, b.dtype)
            staging.pad.forall((sb[1], sb[0]))(db, pb)
        pc = nv.device_array(sc, sums)
        tk = synced_median_time(lambda: tiles.launch(v, pa, pb, pc, device), nv.synchronize,
                                repeats)
        if operands == "float16" and in_place["c"]:  # the whole call's kernel alone
            c16 = nv.device_array(sc, np.float16)
            calls["float16_kernel_tflops"] = round(2.0 * n ** 3 / synced_median_time(
                lambda: tiles.launch(v, pa, pb, c16, device), nv.synchronize, repeats) / 1e12, 2)
        threads = v.threads(device.info.subgroup_size)
        sg = device.info.subgroup_size
        kernel = tiles.kernel(v, threads, sg, out=sums, operands=operands)
        # The whole call's kernel of float16 stores float16 (its sums converted in the
        # kernel); bfloat16's stores float32 (NumPy's result), measured just above.
        kernel16 = tiles.kernel(v, threads, sg, out="float16")
        pipelines = {}
        for key, k, args in (("pipeline", kernel, (pa, pb, pc)),
                             ("pipeline_float16", kernel16, (pa, pb, out["c"]))):
            if key == "pipeline_float16" and (not in_place["c"] or operands != "float16"):
                continue  # padded sizes: the call stored into another buffer
            try:
                pipelines[key] = k.inspect_pipeline(*args, local_size=(threads, 1))
            except nv.VulkanSupportError as e:
                pipelines[key] = {"error": str(e).splitlines()[0][:120]}
        info = {"default": name == chosen, "kernel_seconds": tk,
                "kernel_tflops": 2.0 * n ** 3 / tk / 1e12,
                "kernel_result": pc.copy_to_host()[:n, :n],
                "block": f"{v.bm}x{v.bn}", "subgroups": f"{v.sg_m}x{v.sg_n} of {v.tm}x{v.tn}",
                "staging": v.staging if v.staging == "global" else
                f"shared, bk {v.bk}, {v.stages} slab(s), "
                f"{v.shared_bytes(np.dtype(a.dtype).itemsize)} B",
                "threads": threads, "in_place": in_place, **calls, **pipelines}
        c = out["c"].copy_to_host()
        return t, c if operands == "int8" else c.astype(np.float32), info

    return run


def cublas(a, b, repeats):
    import torch

    def on_gpu(x):  # torch has no ml_dtypes: a bfloat16 array travels as its 16-bit words
        if x.dtype == BF16:
            return torch.from_numpy(x.view(np.int16)).view(torch.bfloat16).cuda()
        return torch.from_numpy(x).cuda()

    ta, tb = on_gpu(a), on_gpu(b)
    out = {}
    if a.dtype == np.int8:  # int8 x int8 -> int32 (cuBLAS's integer path)
        t = synced_median_time(lambda: out.__setitem__("c", torch._int_mm(ta, tb)),
                               torch.cuda.synchronize, repeats)
        return t, out["c"].cpu().numpy(), {"torch": torch.__version__, "op": "torch._int_mm"}
    t = synced_median_time(lambda: out.__setitem__("c", ta @ tb), torch.cuda.synchronize, repeats)
    return t, out["c"].float().cpu().numpy(), {"torch": torch.__version__}


def error(c, exact):
    """How far `c` is from the float64 product `exact`: the largest difference over the
    largest magnitude, and the norms' ratio (Frobenius)."""
    diff = c.astype(np.float64) - exact
    return {"max": float(np.abs(diff).max() / np.abs(exact).max()),
            "norm": float(np.linalg.norm(diff) / np.linalg.norm(exact))}


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
    t = synced_median_time(lambda: kernel[(blocks, blocks), (TPB, TPB)](da, db, dc),
                           cuda.synchronize, repeats)
    return t, dc.copy_to_host(), {"numba_cuda": "float32, 16x16 shared tiles"}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=4096)
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--json", help="write the results here")
    parser.add_argument("--variants", help="nv.linalg's product kernels to time, separated "
                        "by commas (default: every one of linalg/tiles.py's VARIANTS)")
    parser.add_argument("--bfloat16", choices=("yes", "no"), default="yes",
                        help="the bfloat16 rows: nv.linalg's default kernel and cuBLAS")
    parser.add_argument("--int8", choices=("yes", "no"), default="yes",
                        help="the int8 rows (int32 sums): nv.linalg's default kernel and "
                             "cuBLAS (torch._int_mm)")
    parser.add_argument("--swizzle", type=int, default=1,
                        help="beside each nv.linalg row, the same kernel with workgroups in "
                             "bands of up to this many rows of blocks (tiles.Variant.swizzle)")
    args = parser.parse_args(argv)
    n = args.size
    rng = np.random.default_rng(0)
    a = rng.integers(-2, 3, (n, n)).astype(np.float16)
    b = rng.integers(-2, 3, (n, n)).astype(np.float16)
    expected = a.astype(np.float32) @ b.astype(np.float32)
    flops = 2.0 * n ** 3
    results = {"size": n, "date": datetime.date.today().isoformat(),
               "host": platform.node(), "python": platform.python_version(), "rows": {}}
    import numba_vulkan as nv
    from numba_vulkan.linalg import tiles

    variants = args.variants.split(",") if args.variants else list(tiles.VARIANTS)

    def twins(name):
        """`name`, and its banded twin where --swizzle asks for one (registered in VARIANTS)."""
        if args.swizzle == 1:
            return [name]
        twin = dataclasses.replace(tiles.VARIANTS[name], name=f"{name}b{args.swizzle}",
                                   swizzle=args.swizzle)
        tiles.VARIANTS[twin.name] = twin
        return [name, twin.name]

    variants = [t for v in variants for t in twins(v)]
    rows = [("nv.matrix", ours)]
    rows += [(f"nv.linalg[{v}]", library(v)) for v in variants]
    rows += [("cuBLAS (torch, float16)", cublas), ("numba.cuda (float32)", numba_cuda)]
    rows = [(name, fn, a, b) for name, fn in rows]
    if args.bfloat16 == "yes":
        ab, bb = (rng.uniform(-1, 1, (n, n)).astype(BF16) for _ in range(2))
        exact64 = ab.astype(np.float64) @ bb.astype(np.float64)
        chosen = tiles.choose(n, n, nv.get_device())
        rows += [(f"nv.linalg[{v}] bfloat16", library(v, "bfloat16"), ab, bb)
                 for v in twins(chosen)]
        rows += [("cuBLAS (torch, bfloat16)", cublas, ab, bb)]
    if args.int8 == "yes":  # the same small integers: the same exact product, in int32
        a8, b8 = a.astype(np.int8), b.astype(np.int8)
        chosen = tiles.choose(n, n, nv.get_device())
        rows += [(f"nv.linalg[{v}] int8", library(v, "int8"), a8, b8) for v in twins(chosen)]
        rows += [("cuBLAS (torch, int8)", cublas, a8, b8)]
    for name, fn, x, y in rows:
        try:
            t, c, info = fn(x, y, args.repeats)
        except Exception as e:  # noqa: BLE001 - a backend that cannot run says why
            results["rows"][name] = {"error": f"{type(e).__name__}: {e}"[:300]}
            first = str(e).strip().splitlines()[0][:200]
            print(f"{name:28s} not measured: {type(e).__name__}: {first}")
            continue
        kernel_c = info.pop("kernel_result", None)
        if x.dtype == BF16:  # random data: how far from the float64 product
            check = {"error": error(c, exact64)}
            if kernel_c is not None:
                check["kernel_error"] = error(kernel_c, exact64)
        else:
            exact = bool(np.array_equal(c, expected)) if np.abs(expected).max() < 2048 or \
                c.dtype in (np.float32, np.int32) else None
            check = {"exact": exact}
            if kernel_c is not None:
                check["kernel_exact"] = bool(np.array_equal(kernel_c, expected))
        row = {"seconds": t, "tflops": flops / t / 1e12, **check, **info}
        results["rows"][name] = row
        shown = " ".join(f"{k}={v}" for k, v in check.items() if not k.startswith("kernel_"))
        if "kernel_tflops" in info:  # nv.linalg: the kernel alone, then the rest
            rest = {k: v for k, v in info.items() if not k.startswith("kernel_")}
            kernel_check = " ".join(f"{k[7:]}={v}" for k, v in check.items()
                                    if k.startswith("kernel_"))
            info = (f"kernel alone {info['kernel_tflops']:8.2f} TFLOP/s "
                    f"{info['kernel_seconds'] * 1e3:9.3f} ms {kernel_check}  {rest}")
        print(f"{name:28s} {row['tflops']:8.2f} TFLOP/s  {t * 1e3:9.3f} ms  {shown}  {info}")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
