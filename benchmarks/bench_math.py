"""Math-heavy kernels, numba_vulkan against numba.cuda side by side (issue 7's speed figures).

Same kernel sources for both backends apart from the name of the global index
(nv.global_id(0) / cuda.grid(1)), each compiled with fastmath=False (numba_vulkan:
the accurate library, docs/math.md; numba.cuda: libdevice) and fastmath=True
(numba_vulkan: the driver's GLSL.std.450 built-ins where they exist;
numba.cuda: its fast intrinsics):

1. black_scholes_f32 / black_scholes_f64: European call and put prices of n
   options (exp, log, sqrt, erf), float32 and float64; figure: 10^9 options/s.
2. trig_chain_f64: eight rounds of v = sin(v) cos(v/2) + exp(-v^2) per element
   (float64; 24 transcendental calls); figure: 10^9 elements/s.

Each figure checks its result against NumPy / math on the host (a wrong kernel
reports WRONG next to its speed). It is timed in `--rounds` rounds, each backend in
turn within a round (the order turning), each time the median of `--repeats` runs of
`--inner` launches between synchronisations; the figure is the median of the rounds
(the H200 host drifts by several percent within a run: two runs of one kernel one
after the other measured 16.0 and 17.4). Defaults are the issue's sizes (GPU);
lavapipe needs small ones:

    python3 benchmarks/bench_math.py                                                # H200
    python3 benchmarks/bench_math.py --log2 14 --repeats 3 --inner 2 --rounds 1     # lavapipe
"""

import argparse
import datetime
import json
import math
import statistics
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from backends import (  # noqa: E402
    RESULTS,
    CudaBackend,
    VulkanBackend,
    cpu_name,
    driver_version,
    launch_time,
    versions,
)

BLOCK = 256
INDEX = {"numba_vulkan": "nv.global_id(0)", "numba.cuda": "cuda.grid(1)"}

BLACK_SCHOLES = """
def black_scholes(S, K, T, r, v, call, put):
    i = {gx}
    if i < S.size:
        s = S[i]
        k = K[i]
        t = T[i]
        sqrt_t = math.sqrt(t)
        d1 = (math.log(s / k) + (r + F(0.5) * v * v) * t) / (v * sqrt_t)
        d2 = d1 - v * sqrt_t
        cnd1 = F(0.5) * (F(1.0) + math.erf(d1 * F(0.7071067811865476)))
        cnd2 = F(0.5) * (F(1.0) + math.erf(d2 * F(0.7071067811865476)))
        e = math.exp(-r * t)
        call[i] = s * cnd1 - k * e * cnd2
        put[i] = k * e * (F(1.0) - cnd2) - s * (F(1.0) - cnd1)
"""

TRIG_CHAIN = """
def trig_chain(x, out):
    i = {gx}
    if i < x.size:
        v = x[i]
        acc = 0.0
        for _ in range(8):
            v = math.sin(v) * math.cos(v * 0.5) + math.exp(-v * v)
            acc += v
        out[i] = acc
"""


def build(backend, source, name, dtype, fastmath):
    ns = dict(backend.kernel_namespace())
    ns.update(math=math, F=dtype)
    src = source.format(gx=INDEX[backend.name])
    exec(compile(src, f"<bench_math {name}>", "exec"), ns)  # noqa: S102
    jit = backend.nv.jit if backend.name == "numba_vulkan" else backend.cuda.jit
    return jit(fastmath=fastmath)(ns[name])


def device_array(backend, n, dtype):
    if backend.name == "numba.cuda":
        return backend.cuda.device_array(n, dtype)
    return backend.nv.device_array(n, dtype)


def _bs_reference(S, K, T, r, v):
    S, K, T = (a.astype(np.float64) for a in (S, K, T))
    sqrt_t = np.sqrt(T)
    d1 = (np.log(S / K) + (r + 0.5 * v * v) * T) / (v * sqrt_t)
    d2 = d1 - v * sqrt_t
    erf = np.vectorize(math.erf)
    cnd1, cnd2 = 0.5 * (1 + erf(d1 / math.sqrt(2))), 0.5 * (1 + erf(d2 / math.sqrt(2)))
    e = np.exp(-r * T)
    return S * cnd1 - K * e * cnd2, K * e * (1 - cnd2) - S * (1 - cnd1)


def prepare_black_scholes(backend, args, dtype, fastmath):
    """The kernel, its launch and its check (one backend): see `measure`."""
    n = 1 << args.log2
    rng = np.random.default_rng(0)
    S = rng.uniform(5, 30, n).astype(dtype)
    K = rng.uniform(1, 100, n).astype(dtype)
    T = rng.uniform(0.25, 10, n).astype(dtype)
    r, v = dtype(0.02), dtype(0.30)
    dS, dK, dT = (backend.to_device(a) for a in (S, K, T))
    call, put = device_array(backend, n, dtype), device_array(backend, n, dtype)
    k = build(backend, BLACK_SCHOLES, "black_scholes", dtype, fastmath)
    groups = (n + BLOCK - 1) // BLOCK
    args_ = (dS, dK, dT, r, v, call, put)

    def check():
        m = min(n, 4096)  # checked on a prefix (the host reference is slow)
        want_c, want_p = _bs_reference(S[:m], K[:m], T[:m], float(r), float(v))
        got_c, got_p = call.copy_to_host()[:m], put.copy_to_host()[:m]
        tol = 1e-3 if dtype == np.float32 else 1e-9
        return bool(np.allclose(got_c, want_c, rtol=tol, atol=tol * 100)
                    and np.allclose(got_p, want_p, rtol=tol, atol=tol * 100))  # fmt: skip

    return {"n": n, "run": lambda: k[groups, BLOCK](*args_), "check": check,
            "pipeline": lambda: backend.pipeline_stats(k, args_, BLOCK)}


def trig_chain_input(n):
    """The trig chain's operands."""
    return np.random.default_rng(1).uniform(-4, 4, n)


def prepare_trig_chain(backend, args, fastmath):
    n = 1 << args.log2
    x = trig_chain_input(n)
    dx, out = backend.to_device(x), device_array(backend, n, np.float64)
    k = build(backend, TRIG_CHAIN, "trig_chain", np.float64, fastmath)
    groups = (n + BLOCK - 1) // BLOCK

    def check():
        m = min(n, 4096)
        v, acc = x[:m].copy(), np.zeros(m)
        for _ in range(8):
            v = np.sin(v) * np.cos(v * 0.5) + np.exp(-v * v)
            acc += v
        return bool(np.allclose(out.copy_to_host()[:m], acc, rtol=1e-9, atol=1e-12))

    return {"n": n, "run": lambda: k[groups, BLOCK](dx, out), "check": check,
            "pipeline": lambda: backend.pipeline_stats(k, (dx, out), BLOCK)}


PREPARE = {
    "black_scholes_f32": lambda b, a, fm: prepare_black_scholes(b, a, np.float32, fm),
    "black_scholes_f64": lambda b, a, fm: prepare_black_scholes(b, a, np.float64, fm),
    "trig_chain_f64": prepare_trig_chain,
}


def _result(backend, prepared, seconds):
    t = statistics.median(seconds)
    n = prepared["n"]
    return {"n": n, "seconds": t, "rate": n / t / 1e9,
            "rates": [n / s / 1e9 for s in seconds], "correct": prepared["check"](),
            "pipeline": prepared["pipeline"]()}


def time_in_turn(runs, args, failed=None):
    """{name: (backend, launch)} -> {name: [seconds per launch, one per round]}: `--rounds`
    rounds, each timing every launch in turn (`timed`), the order turning round by round, so
    that the host's and the GPU's drift (tens of percent within a run on the H200) falls on
    all of them. A launch that raises is recorded in `failed` (name -> message) and left out
    of the later rounds; without `failed` it propagates."""
    seconds = {name: [] for name in runs}
    order = list(runs)
    for r in range(getattr(args, "rounds", 1)):
        for name in order[r % len(order):] + order[:r % len(order)]:
            if failed is not None and name in failed:
                continue
            backend, launch = runs[name]
            try:
                seconds[name].append(launch_time(backend, launch, args.repeats, args.inner))
            except Exception as e:
                if failed is None:
                    raise
                failed[name] = f"{type(e).__name__}: {e}"
    return seconds


def add_timing_arguments(parser):
    """--log2, --repeats, --inner, --rounds and --out: what `measure` reads."""
    parser.add_argument("--log2", type=int, default=24, help="log2 of the element count")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--inner", type=int, default=5, help="launches between synchronisations")
    parser.add_argument("--rounds", type=int, default=5,
                        help="rounds, each timing every backend in turn (the median is kept)")
    parser.add_argument("--out", default=None)


def measure(backends, name, args, fastmath):
    """One figure on each backend: the kernels built, then timed in turn (`time_in_turn`);
    the median of the rounds. backend name -> result (or {"error": ...})."""
    failed, prepared = {}, {}
    for backend in backends:
        try:
            prepared[backend.name] = (backend, PREPARE[name](backend, args, fastmath))
        except Exception as e:  # report and go on with the other backend
            failed[backend.name] = f"{type(e).__name__}: {e}"
    seconds = time_in_turn({b: (backend, p["run"]) for b, (backend, p) in prepared.items()},
                           args, failed)  # fmt: skip
    out = {b: {"error": message} for b, message in failed.items()}
    for b, (backend, p) in prepared.items():
        if b not in out:
            out[b] = _result(backend, p, seconds[b])
    return out


def run_backends(classes, args):
    """Every figure of args.only on the backends that start, interleaved (see `measure`)."""
    results, backends = {}, []
    for cls in classes:
        try:
            backend = cls()
        except Exception as e:  # no GPU, no numba.cuda: say why
            results[cls.name] = {"available": False, "reason": f"{type(e).__name__}: {e}"}
            continue
        backends.append(backend)
        results[cls.name] = {"available": True, "device": backend.describe()}
    for name in PREPARE:
        if name not in args.only:
            continue
        for fastmath in (False, True):
            key = f"{name}{'_fastmath' if fastmath else ''}"
            for b, r in measure(backends, name, args, fastmath).items():
                results[b][key] = r
    return results


def table(results):
    cols = [(b, fm) for b in results for fm in (False, True)]
    head = f"{'figure (10^9 /s)':<20}" + "".join(
        f"{b + (' fastmath' if fm else ''):>24}" for b, fm in cols)
    lines = [head]
    for fig in PREPARE:
        row = f"{fig:<20}"
        for b, fm in cols:
            r = results[b]
            v = r.get(f"{fig}{'_fastmath' if fm else ''}") if r.get("available") else None
            if isinstance(v, dict) and "rate" in v:
                mark = "" if v.get("correct") else " WRONG"
                row += f"{v['rate']:>18.3f}{mark:<6}"
            else:
                row += f"{'-':>24}"
        lines.append(row)
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_timing_arguments(parser)
    parser.add_argument("--only", default=",".join(PREPARE))
    parser.add_argument("--backends", default="numba_vulkan,numba.cuda")
    args = parser.parse_args(argv)
    args.only = set(args.only.split(","))
    wanted = set(args.backends.split(","))
    results = run_backends([c for c in (VulkanBackend, CudaBackend) if c.name in wanted], args)
    for cls in (VulkanBackend, CudaBackend):
        results.setdefault(cls.name, {"available": False, "reason": "not requested"})
    record = {
        "benchmark": "bench_math",
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "machine": {"cpu": cpu_name(), "driver": driver_version()},
        "versions": versions(),
        "parameters": {"n": 1 << args.log2, "repeats": args.repeats, "inner": args.inner,
                       "rounds": args.rounds, "block": BLOCK},
        "results": results,
    }
    out = Path(args.out) if args.out else \
        RESULTS / f"bench_math_{datetime.datetime.now():%Y%m%d_%H%M%S}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(record, indent=2) + "\n")
    print(table(results))
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
