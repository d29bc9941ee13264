"""Session 16: where bench_math.py's two unmet kernels lose to numba.cuda, one ingredient
varied at a time, each variant timed on the device in a process of its own (registers from
the driver beside the rate), numba.cuda's figure in the same run.

Variants (the kernel stays correct on the benchmark's data, which never reaches the parts
left out; each result is still checked against the host reference):

  main        as shipped
  norare      every rare.branch block left out (sin/cos's full reduction, exp's overflow
              and underflow, log's subnormals, ...): what the rare blocks cost the others
  norare_trig only the trig functions' full reduction left out
  nodiv       Black-Scholes with both divisions made products (an upper bound of what the
              float32 division's safe-range test could give back; its prices differ, so
              WRONG is expected)
  erf_exp     erf's 2^L by the driver's Exp (fastmath's form) in the accurate kernel: what
              the library's own 2^L costs

Two more ran on a build of their own (results/h200_2026-12-01_s16_math_variants.json, run 2):
div_bits, the float32 division's safe range tested on the exponent bits as before session 16
(93.8 against 98.7 with the float comparisons), and table, the full trig reduction reading
2/pi's chunks from a local array instead of choosing them by selects (46 registers instead of
54, the same speed: 16.4 against 16.5). Run 3: sin and cos with their rare block after
the polynomials (the rare block computing the whole result; two values crossing it instead
of four) ran at 16.2 against 16.5 as shipped: not kept. Run 4: s16_hoisting.patch (a pass on
the optimised SPIR-V moving the pure instructions after each if-then above its branch, so
that sin's, cos's and exp's short paths of one statement share a block, with the rare
block after sin's and cos's polynomials): the trig chain took 64 registers and ran at 15.4,
against 16.0 with the pass off (54 registers) and 16.7 with no rare blocks (32); Black-
Scholes float32 100.4 against 99.8. Not kept: the patch stays here for a later try that
limits what it moves.

    python3 benchmarks/experiments/s16_math_variants.py [--out FILE] [--only a,b]
"""

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

os.environ.setdefault("NUMBA_VULKAN_CACHE", "0")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

VARIANTS = {
    "main": ("black_scholes_f32", "trig_chain_f64"),
    "norare": ("black_scholes_f32", "trig_chain_f64"),
    "norare_trig": ("trig_chain_f64",),
    "nodiv": ("black_scholes_f32",),
    "erf_exp": ("black_scholes_f32",),
}


def apply(variant):
    import bench_math
    from numba_vulkan.frontend.mathlib import erf, rare

    if variant == "norare":
        rare.branch = lambda b, cond, values, body, tag: tuple(values)
    elif variant == "norare_trig":
        inner = rare.branch
        rare.branch = lambda b, cond, values, body, tag: (
            tuple(values) if tag == "trig" else inner(b, cond, values, body, tag))
    elif variant == "nodiv":
        bench_math.BLACK_SCHOLES = bench_math.BLACK_SCHOLES.replace(
            "math.log(s / k)", "math.log(s * k)").replace(") / (v * sqrt_t)", ") * (v * sqrt_t)")
    elif variant == "erf_exp":
        big = erf._erf_big
        erf._erf_big = lambda b, a, fast: big(b, a, True)


def one(variant, figures, args, apply=apply):
    import bench_math
    from backends import CudaBackend, VulkanBackend

    out = {}
    backends = [VulkanBackend()]
    if variant == "main":
        try:
            backends.append(CudaBackend())
        except Exception as e:  # noqa: BLE001 - no numba.cuda: say so
            out["numba.cuda"] = f"{type(e).__name__}: {e}"
    apply(variant)
    for backend in backends:
        for fig in figures:
            r = bench_math.FIGURES[fig](backend, args, False)
            out[f"{backend.name} {fig}"] = {"rate": r["rate"], "correct": r["correct"],
                                            "pipeline": r["pipeline"]}
    return out


def main(argv=None, variants=VARIANTS, apply=apply, script=__file__, doc=__doc__):
    """Run each variant (variant -> figures) in a process of its own (`script --variant V`,
    whose main calls this with the same `variants` and `apply`); s19_trig_variants.py
    runs its own variants through it."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--variant", default=None, help="run one variant in this process")
    parser.add_argument("--only", default=",".join(variants))
    parser.add_argument("--log2", type=int, default=24)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--inner", type=int, default=5)
    parser.add_argument("--out", default=None)
    args = parser.parse_args(argv)
    if args.variant:
        print(json.dumps(one(args.variant, variants[args.variant], args, apply)))
        return 0
    results = {}
    for variant in args.only.split(","):
        cmd = [sys.executable, script, "--variant", variant, "--log2", str(args.log2),
               "--repeats", str(args.repeats), "--inner", str(args.inner)]
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
        try:
            results[variant] = json.loads(p.stdout.strip().splitlines()[-1])
        except (IndexError, json.JSONDecodeError):
            results[variant] = {"error": (p.stderr or p.stdout)[-800:]}
        for key, r in results[variant].items():
            if isinstance(r, dict) and "rate" in r:
                regs = r["pipeline"].get("Register Count", r["pipeline"].get("registers"))
                size = r["pipeline"].get("Binary Size")
                print(f"{variant:<12} {key:<32} {r['rate']:8.2f} x10^9/s  registers {regs}"
                      f"  binary {size}{'' if r['correct'] else '  WRONG'}", flush=True)
            else:
                print(f"{variant:<12} {key}: {r}", flush=True)
    if args.out:
        Path(args.out).write_text(json.dumps(results, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
