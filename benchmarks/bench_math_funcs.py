"""Per-function math throughput, numba_vulkan against numba.cuda (where issue 7's speed goes).

Each function alone, float32 and float64, each backend with fastmath=False (numba_vulkan: the
accurate library; numba.cuda: libdevice) and fastmath=True, from the same kernel source:

    acc = 0; v = x[i]
    for _ in range(R):  acc += f(v); v = v * STEP
    out[i] = acc

R calls per element keep the figure compute-bound (one call per element would measure the
memory system); STEP (1 + 2^-10) moves the argument so that no call can be hoisted, staying in
the function's domain over R steps. Inputs are drawn from each function's usual range (DOMAINS).
The figure is 10^9 calls per second (n * R / time), the median of `--repeats` timings of
`--inner` launches; the ratio column is ours / numba.cuda's for the same fastmath setting.
Results are checked loosely against NumPy (a kernel that returns garbage is marked WRONG).

    python3 benchmarks/bench_math_funcs.py                                    # the GPU machine
    python3 benchmarks/bench_math_funcs.py --log2 12 --calls 4 --repeats 1 --inner 1 \
        --backends numba_vulkan --only exp,sin --out /tmp/funcs.json          # lavapipe, quick
"""

import argparse
import datetime
import json
import math
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_math import BLOCK, INDEX, device_array, timed  # noqa: E402
from backends import RESULTS, CudaBackend, VulkanBackend, cpu_name, driver_version, versions  # noqa: E402,E501

# name -> (call source with v, input range, NumPy reference of one call)
DOMAINS = {
    "exp": ("math.exp(v)", (-10, 10), np.exp),
    "log": ("math.log(v)", (0.01, 100), np.log),
    "sqrt": ("math.sqrt(v)", (0.0, 100), np.sqrt),
    "erf": ("math.erf(v)", (-3, 3), np.vectorize(math.erf)),
    "erfc": ("math.erfc(v)", (-3, 3), np.vectorize(math.erfc)),
    "sin": ("math.sin(v)", (-10, 10), np.sin),
    "cos": ("math.cos(v)", (-10, 10), np.cos),
    "tan": ("math.tan(v)", (-1.5, 1.5), np.tan),
    "log1p": ("math.log1p(v)", (-0.5, 10), np.log1p),
    "expm1": ("math.expm1(v)", (-2, 2), np.expm1),
    "log2": ("math.log2(v)", (0.01, 100), np.log2),
    "tanh": ("math.tanh(v)", (-5, 5), np.tanh),
    "atan": ("math.atan(v)", (-10, 10), np.arctan),
    "asin": ("math.asin(v)", (-0.9, 0.9), np.arcsin),
    "pow": ("math.pow(v, F(1.37))", (0.01, 100), lambda v: np.power(v, 1.37)),
    "cbrt": ("np.cbrt(v)", (-100, 100), np.cbrt),
    "cosh": ("math.cosh(v)", (-10, 10), np.cosh),
    "div": ("F(1.0) / v", (0.5, 100), lambda v: 1.0 / v),
}

SOURCE = """
def kern(x, out):
    i = {gx}
    if i < x.size:
        v = x[i]
        acc = F(0.0)
        for _ in range({calls}):
            acc += {call}
            v = v * F(1.0009765625)
        out[i] = acc
"""


def build(backend, name, dtype, fastmath, calls):
    ns = dict(backend.kernel_namespace())
    ns.update(math=math, np=np, F=dtype)
    src = SOURCE.format(gx=INDEX[backend.name], calls=calls, call=DOMAINS[name][0])
    exec(compile(src, f"<bench_math_funcs {name}>", "exec"), ns)  # noqa: S102
    jit = backend.nv.jit if backend.name == "numba_vulkan" else backend.cuda.jit
    return jit(fastmath=fastmath)(ns["kern"])


def measure(backend, args, name, dtype, fastmath):
    n = 1 << args.log2
    lo, hi = DOMAINS[name][1]
    # the argument grows by (1 + 2^-10)^R: keep positive ranges inside the domain
    shrink = (1.0009765625) ** args.calls
    x = np.random.default_rng(2).uniform(lo, hi / shrink if hi > 0 else hi, n).astype(dtype)
    dx, out = backend.to_device(x), device_array(backend, n, dtype)
    k = build(backend, name, dtype, fastmath, args.calls)
    groups = (n + BLOCK - 1) // BLOCK
    t = timed(backend, lambda: k[groups, BLOCK](dx, out), args.repeats, args.inner)
    m = min(n, 2048)
    v, acc = x[:m].astype(np.float64), np.zeros(m)
    for _ in range(args.calls):
        acc += DOMAINS[name][2](v)
        v = (v.astype(dtype) * dtype(1.0009765625)).astype(np.float64)
    got = out.copy_to_host()[:m].astype(np.float64)
    tol = 1e-3 if dtype == np.float32 else 1e-9
    ok = bool(np.allclose(got, acc, rtol=tol, atol=tol * args.calls))
    return {"seconds": t, "rate": n * args.calls / t / 1e9, "correct": ok,
            "pipeline": backend.pipeline_stats(k, (dx, out), BLOCK)}


def run_backend(cls, args):
    try:
        backend = cls()
    except Exception as e:  # no GPU, no numba.cuda: say why
        return {"available": False, "reason": f"{type(e).__name__}: {e}"}
    out = {"available": True, "device": backend.describe()}
    for name in args.only:
        for dtype in (np.float32, np.float64):
            for fastmath in (False, True):
                key = f"{name}_{np.dtype(dtype).name}{'_fastmath' if fastmath else ''}"
                try:
                    out[key] = measure(backend, args, name, dtype, fastmath)
                except Exception as e:  # report and go on
                    out[key] = {"error": f"{type(e).__name__}: {e}"}
    return out


def table(results, only):
    ours, cuda = results.get("numba_vulkan", {}), results.get("numba.cuda", {})
    lines = [f"{'function':<16}{'ours':>10}{'cuda':>10}{'ratio':>8}{'ours fm':>10}{'cuda fm':>10}"
             f"{'ratio':>8}   (10^9 calls/s)"]
    for name in only:
        for dt in ("float32", "float64"):
            row = f"{name + ' ' + dt[5:]:<16}"
            for fm in ("", "_fastmath"):
                key = f"{name}_{dt}{fm}"
                a, c = ours.get(key, {}), cuda.get(key, {})
                ra, rc = a.get("rate"), c.get("rate")
                cell = lambda r, d: f"{r:>9.2f}{'' if d.get('correct', True) else '!'}"  # noqa: E731
                row += cell(ra, a) if ra else f"{'-':>10}"
                row += cell(rc, c) if rc else f"{'-':>10}"
                row += f"{ra / rc:>8.2f}" if ra and rc else f"{'-':>8}"
            lines.append(row)
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--log2", type=int, default=22, help="log2 of the element count")
    parser.add_argument("--calls", type=int, default=16, help="calls per element")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--inner", type=int, default=3)
    parser.add_argument("--only", default=",".join(DOMAINS))
    parser.add_argument("--backends", default="numba_vulkan,numba.cuda")
    parser.add_argument("--out", default=None)
    args = parser.parse_args(argv)
    args.only = [f for f in args.only.split(",") if f]
    wanted = set(args.backends.split(","))
    results = {cls.name: run_backend(cls, args) if cls.name in wanted
               else {"available": False, "reason": "not requested"}
               for cls in (VulkanBackend, CudaBackend)}  # fmt: skip
    record = {
        "benchmark": "bench_math_funcs",
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "machine": {"cpu": cpu_name(), "driver": driver_version()},
        "versions": versions(),
        "parameters": {"n": 1 << args.log2, "calls": args.calls, "repeats": args.repeats,
                       "inner": args.inner, "block": BLOCK},
        "results": results,
    }
    out = Path(args.out) if args.out else \
        RESULTS / f"bench_math_funcs_{datetime.datetime.now():%Y%m%d_%H%M%S}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(record, indent=2) + "\n")
    print(table(results, args.only))
    for name, r in results.items():
        if not r.get("available"):
            print(f"{name}: not measured ({r['reason']})")
        for key, v in r.items():
            if isinstance(v, dict) and "error" in v:
                print(f"{name} {key}: {v['error']}")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
