"""SPIR-V instruction counts of the math kernels, compiled without a device (no GPU needed).

What bench_math.py and bench_math_funcs.py time, counted instead: the kernels are compiled
with the float controls of a device preset (`--device h200`: NVIDIA's, i.e. float32 subnormals
flushed, Fma fused, float32 division made correctly rounded in float64, kir/float_division.h;
`--device lavapipe`: none of these) and the emitted, optimised SPIR-V is counted: every
instruction of the kernel's function, its divisions by width (OpFDiv on float / double), the
float64 arithmetic and the conversions between float widths. Dynamic cost is not instruction
count (a float64 division is a long sequence on NVIDIA, a float32 one a few instructions),
but these counts show where the division pass adds work.

    python3 benchmarks/math_instructions.py                      # H200 float controls
    python3 benchmarks/math_instructions.py --only black_scholes_f32 --opcodes
    python3 benchmarks/math_instructions.py --only erf_f32 --path tail,g0   # one path's count

The scalar calls' rare blocks and cases (mathlib/rare.py) are all counted, though an
invocation runs one path through them. `--path NAMES` counts one such path instead: each rare
block left out (its condition false), each set of cases reduced to its case named in NAMES
(comma-separated), or to its last case where it has none of them (erf's small, mid and tail;
erfc's small, mid, tail, far and general; the G intervals of their tails g0 to g7).
"""

import argparse
import collections
import json
import math
import re
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_math import BLACK_SCHOLES, TRIG_CHAIN  # noqa: E402
from bench_math_funcs import DOMAINS, SOURCE  # noqa: E402

F64_OPS = ("OpFAdd", "OpFSub", "OpFMul", "OpFDiv", "OpFNegate", "OpExtInst")


def controls(device):
    from numba_vulkan import compiler
    from numba_vulkan.frontend.mathlib import denormals

    if device == "h200":
        return compiler.CodegenControls(nan_preserve=(16, 32, 64), denorm_preserve=(64,),
                                      subnormals=denormals.FLUSH, divide_f32_in_f64=True,
                                      fused_fma=True)  # fmt: skip
    return compiler.CodegenControls(nan_preserve=(16, 32, 64), denorm_preserve=(16, 32, 64),
                                  hide_float_zeros=True, subnormals=denormals.PRESERVE)  # fmt: skip


def kernels():
    """name -> (source, function name, dtype, argument layout)."""
    out = {}
    for dt, w in ((np.float32, "f32"), (np.float64, "f64")):
        out[f"black_scholes_{w}"] = (BLACK_SCHOLES, "black_scholes", dt, "aaassaa")
        for fn, (call, _, _) in DOMAINS.items():
            out[f"{fn}_{w}"] = (SOURCE.format(gx="{gx}", calls=1, call=call), "kern", dt, "aa")
    out["trig_chain_f64"] = (TRIG_CHAIN, "trig_chain", np.float64, "aa")
    return out


def compile_text(name, spec, device, fastmath):
    import numba_vulkan as nv
    from numba import from_dtype
    from numba_vulkan import compiler, narrowing
    from numba_vulkan.typing import pipeline

    source, fname, dt, layout = spec
    ns = {"nv": nv, "np": np, "math": math, "F": dt}
    exec(compile(source.format(gx="nv.global_id(0)"), f"<{name}>", "exec"), ns)  # noqa: S102
    scalar = from_dtype(np.dtype(dt))
    argtypes = tuple(scalar[::1] if c == "a" else scalar for c in layout)
    return compiler.compile_kernel(ns[fname], argtypes, pipeline.Options(fastmath=fastmath),
                                   narrowing.Mode(), codegen_controls=controls(device)).disassemble()


def only_path(names):
    """Build every rare.branch as if its condition were false and every rare.cases as its case
    named in `names` (its last case where none is): the code one invocation runs."""
    from numba_vulkan.frontend.mathlib import rare

    def branch(b, cond, values, body, tag):
        return tuple(values)

    def cases(b, values, paths, tag):
        body = next((p[2] for p in paths if p[0] in names), paths[-1][2])
        return tuple(body(*values))

    rare.branch, rare.cases = branch, cases


def count(text):
    """Counts of the kernel function's instructions (type ids resolved to float / double)."""
    floats = {m.group(1): m.group(2) for m in re.finditer(r"(%\w+) = OpTypeFloat (\d+)", text)}
    body = text[text.index(" OpFunction "):]
    ops = collections.Counter()
    for line in body.splitlines():
        m = re.match(r"\s*(?:(%\w+) = )?(Op\w+)(?: (%\w+))?", line)
        if not m or m.group(2) in ("OpFunction", "OpFunctionEnd", "OpLabel"):
            continue
        op, rtype = m.group(2), m.group(3)
        ops[op] += 1
        width = floats.get(rtype) if m.group(1) else None
        if op == "OpFDiv" and width:
            ops[f"OpFDiv f{width}"] += 1
        if width == "64" and op in F64_OPS:
            ops["f64 arithmetic"] += 1
    return ops


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", choices=("h200", "lavapipe"), default="h200")
    parser.add_argument("--fastmath", action="store_true")
    parser.add_argument("--only", default="", help="comma-separated kernel names")
    parser.add_argument("--opcodes", action="store_true", help="every opcode's count too")
    parser.add_argument("--out", default=None, help="JSON file of the counts")
    parser.add_argument("--path", default=None,
                        help="count one path: rare blocks left out, cases reduced to the "
                        "named ones (comma-separated)")
    args = parser.parse_args(argv)
    if args.path:
        only_path(args.path.split(","))
    specs = kernels()
    names = [n for n in args.only.split(",") if n] or list(specs)
    keys = ("OpFDiv f32", "OpFDiv f64", "f64 arithmetic", "OpFConvert")
    print(f"{'kernel':20} {'insts':>6} " + " ".join(f"{k:>14}" for k in keys))
    results = {}
    for name in names:
        ops = count(compile_text(name, specs[name], args.device, args.fastmath))
        total = sum(v for k, v in ops.items() if k.startswith("Op") and " " not in k)
        results[name] = {"instructions": total, **{k: ops.get(k, 0) for k in keys}}
        print(f"{name:20} {total:6d} " + " ".join(f"{ops.get(k, 0):14d}" for k in keys))
        if args.opcodes:
            print("   ", ", ".join(f"{k} {v}" for k, v in ops.most_common() if " " not in k))
    if args.out:
        Path(args.out).write_text(json.dumps({"device": args.device, "fastmath": args.fastmath,
                                              "path": args.path, "kernels": results},
                                             indent=1))  # fmt: skip


if __name__ == "__main__":
    main()
