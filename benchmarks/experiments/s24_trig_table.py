"""Session 24 probe: does the float64 sin/cos kernel get cheaper on NVIDIA when one polynomial
is evaluated with coefficients read from a constant table indexed by the quadrant's parity
(as libdevice's sin does), instead of both polynomials evaluated and the result selected?

The trig chain of bench_math.py is compiled as usual; its SPIR-V is then rewritten (text of
the disassembly, reassembled with spirv-as, checked by spirv-val) at each of its two
trig_kernel sites (mathlib/trig.py `_kernel`): v = A + fma(M, P(z), C) with A, M's factor and
C selected by the parity, and P's seven coefficients (cos's padded by a leading 0, so that
fma(0, z, c1) = c1 exactly) from a 14-entry array, entry 2j + odd. The results are the same
bits as the shipped code's (checked).

Variants, timed round by round in turn (the host's and the GPU's speed drift):

    as_is     the module as compiled (both polynomials, one select)
    private   the table a Private variable with a constant initializer
    function  the table a Function variable with a constant initializer
    select    the coefficients chosen by selects (session 15's form, measured slower)

numba.cuda's chain (libdevice) is timed in the same rounds where it is available.

The recorded run (benchmarks/results/h200_2026-12-02_s24_*) timed them in a fixed order each
round; the probe now takes bench_math.time_in_turn's turning order.

    PYTHONPATH=src python3 benchmarks/experiments/s24_trig_table.py [--log2 24] [--rounds 5]
"""

import argparse
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import bench_math  # noqa: E402

from numba_vulkan import launchers  # noqa: E402

SIN_LEAD = "%double_n7_5866368828251592en13"
COS_LEAD = "%double_n1_138254464534925en11"
INST = re.compile(r"^\s*(%\w+) = (Op\w+) (.*)$")


def _parse(lines):
    defs = {}
    for i, line in enumerate(lines):
        m = INST.match(line)
        if m:
            defs[m.group(1)] = (i, m.group(2), m.group(3).split())
    return defs


def _chain(defs, end, lead):
    """The Horner chain ending at `end`: its coefficients' ids, leading first, and z."""
    coefs = []
    cur = end
    while True:
        _, op, args = defs[cur]
        assert op == "OpExtInst" and args[2] == "Fma", (cur, op, args)
        coefs.append(args[5])
        if args[3].startswith("%double_"):  # the leading constant
            coefs.append(args[3])
            assert args[3] == lead, args
            return coefs[::-1], args[4]
        cur = args[3]


def rewrite(text, variant):
    """The module with each trig_kernel site's polynomials replaced (see the docstring)."""
    if variant == "as_is":
        return text
    lines = text.splitlines()
    defs = _parse(lines)
    sites = []
    for name, (i, op, args) in defs.items():
        if op != "OpSelect" or args[0] != "%double":
            continue
        odd, vc, vs = args[1:4]
        if defs.get(vc, (0, ""))[1] != "OpFAdd" or defs.get(vs, (0, ""))[1] != "OpFAdd":
            continue
        w, x = defs[vc][2][1:3]
        rh, y = defs[vs][2][1:3]
        if defs.get(x, (0, ""))[1] != "OpExtInst" or defs.get(y, (0, ""))[1] != "OpExtInst":
            continue
        xa, ya = defs[x][2], defs[y][2]
        if xa[2] != "Fma" or ya[2] != "Fma":
            continue
        try:
            cos_c, z = _chain(defs, xa[4], COS_LEAD)
            sin_c, z2 = _chain(defs, ya[4], SIN_LEAD)
        except (AssertionError, KeyError):
            continue
        assert z == z2
        sites.append(dict(line=i, v=name, odd=odd, w=w, rh=rh, zz=xa[3], corr=xa[5], ms=ya[3],
                          rlw=ya[5], z=z, sin=sin_c, cos=["%double_0"] + cos_c))
    assert len(sites) == 2, f"expected sin's and cos's kernel, found {len(sites)}"
    n = len(sites[0]["sin"])
    assert all(len(s["sin"]) == n and len(s["cos"]) == n for s in sites)
    assert sites[0]["sin"] == sites[1]["sin"] and sites[0]["cos"] == sites[1]["cos"]
    table = [c for pair in zip(sites[0]["sin"], sites[0]["cos"]) for c in pair]

    ext = next(a[1] for _, (_, op, a) in defs.items() if op == "OpExtInst")
    decor, glob, first = [], [], []
    assert "%uint = OpTypeInt 32 0" in text  # the kernel's own (its index arithmetic)
    uint = "%uint"
    for k in range(2 * n + 1):
        glob.append(f"%nvx_u{k} = OpConstant {uint} {k}")
    glob.append(f"%nvx_arr = OpTypeArray %double %nvx_u{2 * n}")
    glob.append(f"%nvx_carr = OpConstantComposite %nvx_arr {' '.join(table)}")
    storage = {"private": "Private", "function": "Function"}.get(variant)
    if storage:
        glob.append(f"%nvx_parr = OpTypePointer {storage} %nvx_arr")
        glob.append(f"%nvx_pd = OpTypePointer {storage} %double")
        var = f"%nvx_coefs = OpVariable %nvx_parr {storage} %nvx_carr"
        if storage == "Private":
            glob.append(var)
        else:
            first.append(var)

    out_sites = {}
    for s_i, s in enumerate(sites):
        p = f"%nvx{s_i}_"
        body = []
        if storage:
            body.append(f"{p}oddu = OpSelect {uint} {s['odd']} %nvx_u1 %nvx_u0")
        coef = []
        for j in range(n):
            if storage:
                body.append(f"{p}ix{j} = OpIAdd {uint} {p}oddu %nvx_u{2 * j}")
                body.append(f"{p}pt{j} = OpAccessChain %nvx_pd %nvx_coefs {p}ix{j}")
                body.append(f"{p}c{j} = OpLoad %double {p}pt{j}")
            else:
                body.append(f"{p}c{j} = OpSelect %double {s['odd']} {s['cos'][j]} {s['sin'][j]}")
            coef.append(f"{p}c{j}")
        acc = coef[0]
        for j in range(1, n):
            body.append(f"{p}h{j} = OpExtInst %double {ext} Fma {acc} {s['z']} {coef[j]}")
            acc = f"{p}h{j}"
        body += [
            f"{p}a = OpSelect %double {s['odd']} {s['w']} {s['rh']}",
            f"{p}mf = OpSelect %double {s['odd']} {s['z']} {s['rh']}",
            f"{p}m = OpFMul %double {p}mf {s['z']}",
            f"{p}c = OpSelect %double {s['odd']} {s['corr']} {s['rlw']}",
            f"{p}t = OpExtInst %double {ext} Fma {p}m {acc} {p}c",
            f"{s['v']} = OpFAdd %double {p}a {p}t",
        ]
        decor += [f"OpDecorate {p}m NoContraction", f"OpDecorate {s['v']} NoContraction"]
        out_sites[s["line"]] = body

    out = []
    placed_decor = placed_glob = False
    in_function = entry_done = False
    for i, line in enumerate(lines):
        stripped = line.strip()
        if stripped.startswith("OpEntryPoint") and storage == "Private":
            line = line + " %nvx_coefs"
        if i in out_sites:
            out += out_sites[i]
            continue
        if not placed_glob and " OpFunction " in line:
            out += glob
            placed_glob = True
            in_function = True
        if not placed_decor and not stripped.startswith(("OpDecorate", "OpMemberDecorate")) \
                and any(ln.strip().startswith("OpDecorate") for ln in lines[:i]):
            out += decor
            placed_decor = True
        out.append(line)
        if in_function and not entry_done and stripped.endswith("OpLabel"):
            out += first
            entry_done = True
    return "\n".join(out) + "\n"


def assemble(text):
    with tempfile.TemporaryDirectory() as d:
        src, dst = Path(d) / "m.spvasm", Path(d) / "m.spv"
        src.write_text(text)
        subprocess.run(["spirv-as", "--target-env", "vulkan1.2", "--preserve-numeric-ids",
                        "-o", str(dst), str(src)], check=True)  # fmt: skip
        subprocess.run(["spirv-val", "--target-env", "vulkan1.2", str(dst)], check=True)
        return np.frombuffer(dst.read_bytes(), dtype=np.uint32).copy()


class _Words:
    def __init__(self, compiled, words):
        self._compiled, self.words = compiled, words

    def __getattr__(self, name):
        return getattr(self._compiled, name)


def main(argv=None):
    parser = argparse.ArgumentParser()
    bench_math.add_timing_arguments(parser)
    parser.add_argument("--variants", default="as_is,private,function,select")
    args = parser.parse_args(argv)
    variants = args.variants.split(",")

    from backends import VulkanBackend

    vk, cu = VulkanBackend(), bench_math.cuda_or_none()
    n = 1 << args.log2
    x = bench_math.trig_chain_input(n)
    dx, out = vk.to_device(x), bench_math.device_array(vk, n, np.float64)
    group = bench_math.BLOCK
    groups = (n + group - 1) // group

    words = {}
    original = launchers.make_launcher
    current = {"v": "as_is"}

    def patched(device, compiled):
        if current["v"] == "as_is":
            return original(device, compiled)
        if current["v"] not in words:
            words[current["v"]] = assemble(rewrite(compiled.disassemble(), current["v"]))
        return original(device, _Words(compiled, words[current["v"]]))

    launchers.make_launcher = patched
    kernels, results, stats = {}, {}, {}
    for v in variants:  # a kernel object of its own per variant: its launcher is cached
        current["v"] = v
        k = bench_math.build(vk, bench_math.TRIG_CHAIN, "trig_chain", np.float64, False)
        k[groups, group](dx, out)
        vk.synchronize()
        kernels[v] = k
        results[v] = out.copy_to_host()
        stats[v] = vk.pipeline_stats(k, (dx, out), group)
    launchers.make_launcher = original
    same = {v: bool(np.array_equal(results[v].view(np.int64), results["as_is"].view(np.int64)))
            for v in variants}  # fmt: skip
    print("same bits as as_is:", same, "words:", {v: len(w) for v, w in words.items()})
    print("pipeline:", json.dumps(stats))
    if cu is not None:
        cx, cout = cu.to_device(x), bench_math.device_array(cu, n, np.float64)
        ck = bench_math.build(cu, bench_math.TRIG_CHAIN, "trig_chain", np.float64, False)

    runs = {v: (vk, lambda k=kernels[v]: k[groups, group](dx, out)) for v in variants}
    if cu is not None:
        runs["numba.cuda"] = (cu, lambda: ck[groups, group](cx, cout))
    seconds = bench_math.time_in_turn(runs, args)
    bench_math.report_rates(seconds, n, args.out, same=same, pipeline=stats)

if __name__ == "__main__":
    main()
