"""Session 14: type-fuzz seeds 95 and 1060 on the H200, with the SPIR-V patched by hand.

Session 9 (s9_nvidia_bisect.py) varied both programs in Python and in the
compile options: nothing but removing the division beside them (or the `if`
of seed 1060) made the H200 right. Here the module each program compiles to
is edited before the device sees it, one suspect form at a time, and the
outputs are compared with numba.njit:

  sext     the sign extension i32 -> i64 written as shift left 32 / arithmetic
           shift right 32 (how the emitter widens a value the narrowing pass
           computed in 32 bits) becomes one OpSConvert
  cmp32    comparisons of 8- and 16-bit integers are done on their 32-bit
           extensions (the operands of seed 95's `s_u8 >= s_i16` are a
           uchar widened to short and a short)
  select   an `if` whose arms only compute and meet in one OpPhi becomes an
           OpSelect after both arms' instructions (if-conversion)

Python variants name the same arithmetic with one load of the tested
element (so the optimiser can make the `if` an OpSelect).

    python3 benchmarks/experiments/s14_nvidia_patches.py [--spirv DIR]
"""

import argparse
import os
import re
import sys
from pathlib import Path

os.environ.setdefault("NUMBA_VULKAN_CACHE", "0")
sys.path.insert(0, str(Path(__file__).resolve().parent))


import numba_vulkan as nv  # noqa: E402
from numba_vulkan import _core, codegen  # noqa: E402
from s9_nvidia_bisect import N, O1, arguments, run_both  # noqa: E402
from s12_matmul_spirv import assemble, validate  # noqa: E402

PROGRAMS = {
    "95 small scalars": "out0[i] = (a_i32[i] == 0) & ((s_u8 // a_u64[i]) ^ (s_u8 >= s_i16))",
    "95 original": ("out0[i] = (a_i32[i] == ((not a_u64[i]) & (a_i32[i] if a_i32[i] else s_i16)))"
                    " & ((s_u8 // a_u64[i]) ^ (s_u8 >= s_i16))"),
    "1060 int32": ("out0[i] = ((a_i8w[i] if a_i8w[i] else s_b) * (True & a_i64[i]))\n"
                   "        out1[i] = a_f64[i] / 3.0"),
    "1060 original": f"out0[i] = ((a_i8[i] if a_i8[i] else s_b) * (True & a_i64[i]))\n        {O1}",
    "1060 int32 one load": ("v = a_i8w[i]\n        out0[i] = ((v if v else s_b) * (True & a_i64[i]))\n"
                            "        out1[i] = a_f64[i] / 3.0"),
    "1060 one load": f"v = a_i8[i]\n        out0[i] = ((v if v else s_b) * (True & a_i64[i]))\n        {O1}",
}

_ASSIGN = re.compile(r"^\s*(%\S+) = (Op\w+) (%\S+)(.*)$")


def types_of(text):
    """(id -> result type, small int type -> (bits, signed), names of int and uint)"""
    result, small, wide = {}, {}, {}
    for line in text.splitlines():
        m = _ASSIGN.match(line)
        if m:
            result[m.group(1)] = m.group(3)
        t = re.match(r"^\s*(%\S+) = OpTypeInt (\d+) (\d)", line)
        if t:
            bits, signed = int(t.group(2)), t.group(3) == "1"
            if bits < 32:
                small[t.group(1)] = (bits, signed)
            elif bits == 32:
                wide[signed] = t.group(1)
    return result, small, wide


def patch_sext(text):
    """shl 32 / sar 32 of a u64 made from a 32-bit value becomes OpSConvert of that value."""
    result, _, wide = types_of(text)
    pat = re.compile(
        r"^(\s*)(%\S+) = OpUConvert (%\S+) (%\S+)\n"
        r"\s*(%\S+) = OpShiftLeftLogical \3 \2 %ulong_32\n"
        r"\s*(%\S+) = OpBitcast (%\S+) \5\n"
        r"\s*(%\S+) = OpShiftRightArithmetic \7 \6 %ulong_32\n", re.M)

    def sconvert(m):
        if result.get(m.group(4)) not in wide.values():
            return m.group(0)
        ind, rid, src = m.group(1), m.group(8), m.group(4)
        return (f"{ind}%s32_{rid[1:]} = OpBitcast {wide[True]} {src}\n"
                f"{ind}{rid} = OpSConvert {m.group(7)} %s32_{rid[1:]}\n")

    out = pat.sub(sconvert, text)
    return out, out.count("OpSConvert") - text.count("OpSConvert")


_COMPARES = {"OpSLessThan": True, "OpSLessThanEqual": True, "OpSGreaterThan": True,
             "OpSGreaterThanEqual": True, "OpULessThan": False, "OpULessThanEqual": False,
             "OpUGreaterThan": False, "OpUGreaterThanEqual": False, "OpIEqual": None,
             "OpINotEqual": None}


def patch_cmp32(text):
    result, small, wide = types_of(text)
    lines, n = [], 0
    for line in text.splitlines():
        m = re.match(r"^(\s*)(%\S+) = (Op\w+) (%\S+) (%\S+) (%\S+)$", line)
        if m and m.group(3) in _COMPARES and result.get(m.group(5)) in small:
            ind, rid, op, ty, a, b = m.groups()
            signed = _COMPARES[op]
            if signed is None:
                signed = small[result[a]][1]
            conv, wty = ("OpSConvert", wide[True]) if signed else ("OpUConvert", wide[False])
            lines += [f"{ind}%w32a_{rid[1:]} = {conv} {wty} {a}",
                      f"{ind}%w32b_{rid[1:]} = {conv} {wty} {b}",
                      f"{ind}{rid} = {op} {ty} %w32a_{rid[1:]} %w32b_{rid[1:]}"]
            n += 1
        else:
            lines.append(line)
    return "\n".join(lines) + "\n", n


def patch_select(text):
    """A selection whose two arms only compute (no stores) and meet in one OpPhi: the arms'
    instructions move before the branch and the OpPhi becomes an OpSelect (if-conversion)."""
    pat = re.compile(
        r"^(\s*)OpSelectionMerge (%\S+) None\n\s*OpBranchConditional (%\S+) (%\S+) (%\S+)\n"
        r"\s*(%\S+) = OpLabel\n((?:\s*%\S+ = Op(?!Phi)\w+[^\n]*\n)*)\s*OpBranch \2\n"
        r"\s*(%\S+) = OpLabel\n((?:\s*%\S+ = Op(?!Phi)\w+[^\n]*\n)*)\s*OpBranch \2\n"
        r"\s*\2 = OpLabel\n\s*(%\S+) = OpPhi (%\S+) (%\S+) (%\S+) (%\S+) (%\S+)\n", re.M)

    def convert(m):
        ind, _, cond, t, f, b1, body1, b2, body2, x, ty, v1, l1, v2, l2 = m.groups()
        arms = {b1: body1, b2: body2}
        if {l1, l2} != {b1, b2} or {b1, b2} != {t, f}:
            return m.group(0)
        on_true, on_false = (v1, v2) if l1 == t else (v2, v1)
        return f"{arms[t]}{arms[f]}{ind}{x} = OpSelect {ty} {cond} {on_true} {on_false}\n"

    out, n = pat.subn(convert, text)
    return out, n


def apply(text, names):
    counts = {}
    for name in names:
        text, counts[name] = PATCHES[name](text)
    return text, counts


PATCHES = {"sext": patch_sext, "cmp32": patch_cmp32, "select": patch_select}
SETS = [(), ("sext",), ("cmp32",), ("sext", "cmp32"), ("select",), ("select", "sext", "cmp32")]

_patch = {"names": ()}
_init = codegen.CompiledKernel.__init__


def _patched_init(self, *a, **kw):
    _init(self, *a, **kw)
    if _patch["names"]:
        text, _patch["counts"] = apply(_core.disassemble(self.words), _patch["names"])
        _patch["text"] = text
        self.words = assemble(text)
        _patch["val"] = validate(self.words)


codegen.CompiledKernel.__init__ = _patched_init


def run(name, body, args, names, spirv_dir):
    _patch.update(names=names, counts={}, val=None, text=None)
    src, _, _, want, got, bad = run_both(body, args)
    counts = ", ".join(f"{k} x{v}" for k, v in _patch["counts"].items()) or "as compiled"
    val = _patch["val"]
    val = "" if val in (None, "ok") else f" spirv-val: {val[:120]}"
    verdict = "ok   " if not any(map(len, bad)) else f"WRONG ({len(bad[0])}/{len(bad[1])} of {N})"
    print(f"{verdict:<18} {name:<22} [{counts}]{val}", flush=True)
    for k, (ww, gg, bb) in enumerate(zip(want, got, bad)):
        if len(bb):
            print(f"    out{k}[{bb[0]}]: njit {ww[bb[0]]!r} device {gg[bb[0]]!r}")
    if spirv_dir and _patch["text"]:
        os.makedirs(spirv_dir, exist_ok=True)
        tag = "".join(c if c.isalnum() else "_" for c in f"{name} {'+'.join(names)}")
        Path(spirv_dir, f"{tag}.spvasm").write_text(src + "\n" + _patch["text"])


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--spirv")
    a = p.parse_args()
    print(f"device: {nv.get_device().info.name}", flush=True)
    args = arguments()
    for names in SETS:
        for name, body in PROGRAMS.items():
            try:
                run(name, body, args, names, a.spirv)
            except Exception as e:  # noqa: BLE001
                print(f"ERROR   {name} {names}: {type(e).__name__}: {str(e).splitlines()[0][:200]}")


if __name__ == "__main__":
    main()
