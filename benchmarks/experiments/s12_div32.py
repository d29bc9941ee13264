"""float32 division: what one costs, numba_vulkan's ways against numba.cuda's (session 12).

1. SPIR-V counts of `out[i] = x[i] / y[i]` compiled with the H200's float controls (no GPU
   needed): the float64 way (divide_f32_in_f64 alone, as before session 12) and the fused
   sequence (fused_fma too: kir/float_division.h), the latter's float64 branch counted apart.
2. Throughput (GPU): R dependent divisions per element, v = a / v + 1 (v stays in [1, 3]),
   10^9 divisions per second, each numba_vulkan way (the device's own choice, the float64
   way forced, fastmath: the driver's) and numba.cuda's (prec_div: div.rn.f32; fastmath).
   Every correctly rounded result is checked against NumPy bit for bit (the same float32
   operations on the host); fastmath's is reported in ulps.
3. Black-Scholes float32 (bench_math.py; two divisions per option) with the device's choice
   and with the float64 way forced, and numba.cuda's, in the same run.

    python3 benchmarks/experiments/s12_div32.py                   # H200
    python3 benchmarks/experiments/s12_div32.py --log2 14 --calls 4 --repeats 1 --inner 1
"""

import argparse
import datetime
import json
import re
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import bench_math  # noqa: E402
from backends import RESULTS, CudaBackend, VulkanBackend, each_backend, versions  # noqa: E402

DIV = """
def kern(x, y, out):
    i = {gx}
    if i < x.size:
        a = x[i]
        v = y[i]
        for _ in range({calls}):
            v = a / v + F(1.0)
        out[i] = v
"""

ONE = """
def one(x, y, out):
    i = nv.global_id(0)
    if i < out.size:
        out[i] = x[i] / y[i]
"""


def h200_controls(fused):
    from numba_vulkan import compiler
    from numba_vulkan.frontend.mathlib import denormals

    return compiler.CodegenControls(nan_preserve=(16, 32, 64), denorm_preserve=(16,),
                                    subnormals=denormals.FLUSH, divide_f32_in_f64=True,
                                    fused_fma=fused, hide_int_ranges=7)  # fmt: skip


def spirv_counts():
    """Instructions of the kernel's function, and of the block holding OpFDiv on double."""
    import numba_vulkan as nv
    from numba import float32
    from numba_vulkan import compiler, narrowing
    from numba_vulkan.typing import pipeline

    ns = {"nv": nv}
    exec(compile(ONE, "<s12 one>", "exec"), ns)  # noqa: S102
    out = {}
    for fused in (False, True):
        text = compiler.compile_kernel(ns["one"], (float32[::1],) * 3, pipeline.Options(),
                                       narrowing.Mode(), codegen_controls=h200_controls(fused),
                                       ).disassemble()  # fmt: skip
        body = text[text.index(" OpFunction "):]
        blocks, current = {}, None
        for line in body.splitlines():
            m = re.match(r"\s*(?:(%\w+) = )?(Op\w+)", line)
            if not m:
                continue
            if m.group(2) == "OpLabel":
                current = m.group(1)
                blocks[current] = []
            elif current is not None and m.group(2) != "OpFunctionEnd":
                blocks[current].append(m.group(2))
        total = sum(len(b) for b in blocks.values())
        rare = [b for b in blocks.values() if "OpFDiv" in b and "OpFConvert" in b and fused]
        out["fused" if fused else "float64"] = {
            "instructions": total,
            "float64 branch": sum(len(b) for b in rare),
            "Fma": body.count(" Fma "),
            "OpFDiv": sum(b.count("OpFDiv") for b in blocks.values()),
            "OpFConvert": sum(b.count("OpFConvert") for b in blocks.values()),
        }
    return out


def vulkan_variants(backend):
    """name -> (CodegenControls override or None, fastmath)."""
    from numba_vulkan import launchers

    real = launchers.codegen_controls
    return {"device": (None, False),
            "float64 way": (lambda d: real(d)._replace(divide_f32_in_f64=True,
                                                       fused_fma=False), False),
            "fastmath": (None, True)}  # fmt: skip


def with_controls(override, run):
    from numba_vulkan import launchers

    saved = launchers.codegen_controls
    if override is not None:
        launchers.codegen_controls = override
    try:
        return run()
    finally:
        launchers.codegen_controls = saved


def host_chain(x, y, calls):
    v = y.copy()
    for _ in range(calls):
        v = (x / v + np.float32(1.0)).astype(np.float32)
    return v


def ulps(a, b):
    ia, ib = a.view(np.int32).astype(np.int64), b.view(np.int32).astype(np.int64)
    return int(np.abs(ia - ib).max())


def fig_div(backend, args, fastmath):
    n = 1 << args.log2
    rng = np.random.default_rng(12)
    x = rng.uniform(0.5, 2.0, n).astype(np.float32)
    y = rng.uniform(1.0, 3.0, n).astype(np.float32)
    dx, dy = backend.to_device(x), backend.to_device(y)
    out = bench_math.device_array(backend, n, np.float32)
    ns = dict(backend.kernel_namespace())
    ns.update(F=np.float32)
    src = DIV.format(gx=bench_math.INDEX[backend.name], calls=args.calls)
    exec(compile(src, "<s12 div>", "exec"), ns)  # noqa: S102
    jit = backend.nv.jit if backend.name == "numba_vulkan" else backend.cuda.jit
    k = jit(fastmath=fastmath)(ns["kern"])
    groups = (n + bench_math.BLOCK - 1) // bench_math.BLOCK
    t = bench_math.timed(backend, lambda: k[groups, bench_math.BLOCK](dx, dy, out),
                         args.repeats, args.inner)  # fmt: skip
    got = out.copy_to_host()
    want = host_chain(x, y, args.calls)
    return {"n": n, "calls": args.calls, "seconds": t, "rate": n * args.calls / t / 1e9,
            "bit_exact": bool((got.view(np.uint32) == want.view(np.uint32)).all()),
            "max_ulps": ulps(got, want)}


def measure(backend, args):
    out = {"device": backend.describe()}
    if backend.name == "numba_vulkan":
        variants = vulkan_variants(backend)
    else:
        variants = {"prec_div": (None, False), "fastmath": (None, True)}
    for name, (override, fastmath) in variants.items():
        try:
            out[f"div {name}"] = with_controls(override, lambda: fig_div(backend, args, fastmath))
            out[f"black_scholes_f32 {name}"] = with_controls(
                override, lambda: bench_math.fig_black_scholes(backend, args, np.float32, fastmath))
        except Exception as e:  # report and go on
            out[f"div {name}"] = {"error": f"{type(e).__name__}: {e}"}
    return out


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--log2", type=int, default=24)
    p.add_argument("--calls", type=int, default=16)
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--inner", type=int, default=5)
    p.add_argument("--out", default=None)
    args = p.parse_args(argv)
    record = {"experiment": "s12_div32", "versions": versions(),
              "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
              "parameters": vars(args), "spirv_one_division_h200_controls": spirv_counts()}
    counts = record["spirv_one_division_h200_controls"]
    print("one float32 division, H200 controls:", json.dumps(counts))
    for backend in each_backend((VulkanBackend, CudaBackend)):
        r = measure(backend, args)
        record[backend.name] = r
        for key, v in r.items():
            if not isinstance(v, dict) or ("rate" not in v and "error" not in v):
                print(f"{backend.name}: {v}")
            elif "error" in v:
                print(f"{backend.name} {key}: {v['error']}")
            else:
                check = (f"bit-exact {v['bit_exact']}, max {v['max_ulps']} ulps"
                         if "bit_exact" in v else f"correct {v['correct']}")
                print(f"{backend.name} {key}: {v['rate']:.3f} 10^9/s ({check})")
    out = Path(args.out) if args.out else \
        RESULTS / f"s12_div32_{datetime.datetime.now():%Y%m%d_%H%M%S}.json"
    out.write_text(json.dumps(record, indent=2, default=str) + "\n")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
