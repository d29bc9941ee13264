"""Session 21 probe: which kernels of `x + x` compared in a branch does NVIDIA get wrong?

    python3 benchmarks/experiments/s21_nvidia_addself.py     # on the GPU

The reduced fuzz seeds 2792 and 4444 (tests/fuzz/reduce.py on the H200) branch on
`(x + x) > -3` and `16 > (x + x)` of an int32 input widened to int64, and take the wrong
arm for inputs of one sign, while the same comparisons stored as values are right. Each
kernel below runs over small inputs and the int32 extremes against CPython; then the
loop form's module is edited by hand (the doubling as a shift, as a multiplication, as an
add of a second sign extension; the comparison at 32 bits) to find a form NVIDIA gets right.
`2` runs the second round (EXPRS2, edits2). Results, before and after the fix (mask 16 of
kir/int_ranges.h, which hides the constant, so that round 2's edits no longer find it):
benchmarks/results/h200_2026-12-01_s21_addself.txt. On the GPU host, put the cmeel wheel's
SPIRV-Tools first on PATH (.gl/remote-setup.sh puts Debian's older ones there, whose
spirv-as takes no `--target-env=`).
"""

import re
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, __file__.rsplit("/benchmarks/", 1)[0] + "/tests/fuzz")
from gen import _load as load  # noqa: E402

XS = list(range(-12, 13)) + [999, -999, 2**31 - 1, -(2**31), 2**30, -(2**30)]  # uint: wrapped

LOOP = """def k(inp, out):
    i = nv.global_id(0)
    if i < inp.size:
        x = inp[i]
        a = x % 17
        w0 = 0
        while w0 < 3 and (not ({e})):
            w0 += 1
            a = a % -1000
        out[i] = a
"""
IF = """def k(inp, out):
    i = nv.global_id(0)
    if i < inp.size:
        x = inp[i]
        a = x % 17
        if {e}:
            a = a % -1000
        out[i] = a
"""
STORED = """def k(inp, out):
    i = nv.global_id(0)
    if i < inp.size:
        x = inp[i]
        out[i] = 1 if {e} else 0
"""
# The reduced seeds themselves, results packed into one int64.
R2792 = """def k(inp, out):
    i = nv.global_id(0)
    if i < inp.size:
        x = inp[i]
        a = x % 17
        b = 5 - x // 100
        c = abs(x) % 7
        if not ((b // 2) % 3 == 0):
            b = (b + x) % 997
            if (17 * -6) % 3 == 1:
                a = (a + c) % 1000
            elif not ((-1 - -20) >= (b // (a | 1))):
                w0 = 0
                while w0 < 3 and (not ((x + x) > (-3))):
                    w0 += 1
                    a = a % -1000
        out[i] = (a * 4096 + b) * 4096 + c
"""
R4444 = """def k(inp, out):
    i = nv.global_id(0)
    if i < inp.size:
        x = inp[i]
        a = x % 17
        b = 5 - x // 100
        c = abs(x) % 7
        if x < -11 <= b:
            c = (b * c) % -97
        elif (16 > (x + x)) or ((-7 < (0 % -3) <= -4) or (c <= (a % (a | 1)))):
            w0 = 0
            while w0 < 6 and (not ((10 if (-20 - a) != a else b) == (c + -19))):
                c = (c + (-(x - 11))) % 331
        out[i] = (a * 4096 + b) * 4096 + c
"""
EXPRS = ["(x + x) > (-3)", "16 > (x + x)", "(x * 2) > (-3)", "(2 * x) > (-3)", "x > -2",
         "(x + x) >= 0", "(x - -x) > (-3)", "(x + 1) > (-3)"]  # fmt: skip


def reference(src, xs):
    """The kernel's results from numba.njit, one input at a time (the oracle: int32 `-x`
    wraps there as on the device)."""
    import numba

    f = numba.njit(load(src.replace("nv.global_id(0)", "0"), "k", {"np": np}))
    want = np.zeros(len(xs), np.int64)
    for j, x in enumerate(xs):
        one = np.zeros(1, np.int64)
        f(xs[j : j + 1], one)
        want[j] = one[0]
    return want


def check(name, src, dtype, words=None, small=False, **jit_options):
    """Runs the kernel `src` over XS as `dtype` (wrapped for unsigned; `small`: only those
    whose double fits 32 bits, as narrow="ints" computes it) against numba.njit."""
    import numba_vulkan as nv
    import numba_vulkan.codegen as cg

    xs = np.array([x for x in XS if not small or abs(x) < 2**29], np.int64).astype(dtype)
    init = cg.CompiledKernel.__init__
    seen = {}

    def swapped(self, *a, **kw):
        init(self, *a, **kw)
        seen["words"] = self.words.copy()
        if words is not None:
            self.words = words

    cg.CompiledKernel.__init__ = swapped
    try:
        k = nv.jit(load(src, "k", {"nv": nv, "np": np}), **jit_options)
        out = np.full(xs.size, -77777, np.int64)
        k.forall(xs.size)(xs, out)
    finally:
        cg.CompiledKernel.__init__ = init
    want = reference(src, xs)
    bad = np.flatnonzero(out != want)
    shown = "; ".join(f"x={xs[i]}: {out[i]} want {want[i]}" for i in bad[:4])
    print(f"  {name:60s} {'ok' if bad.size == 0 else f'WRONG {bad.size}: {shown}'}", flush=True)
    return seen["words"]


def spirv(args, data, binary_out=True):
    with tempfile.TemporaryDirectory() as d:
        src = f"{d}/in"
        if isinstance(data, str):
            open(src, "w").write(data)
        else:
            data.tofile(src)
        to = [] if args[0] == "spirv-val" else ["-o", f"{d}/out"]
        r = subprocess.run([*args, src, *to], capture_output=True, text=True)
        if r.returncode:
            raise RuntimeError(r.stderr + r.stdout)
        if binary_out is None:
            return None
        if binary_out:
            return np.fromfile(f"{d}/out", dtype=np.uint32)
        return open(f"{d}/out").read()


def edits(text):
    """(name, edited text) for each hand edit of the loop form's doubling and compare."""
    m = re.search(r"(%\S+) = OpIAdd (%\S+) (%\S+) \3\n", text)  # the first x + x
    if not m:
        return []
    res, ty, v = m.groups()
    const = re.search(r"(%\S+) = OpTypeInt 64 0\n", text)
    one = f"{const.group(0)}%c64one = OpConstant {const.group(1)} 1\n"
    two = f"%c64two = OpConstant {const.group(1)} 2\n"
    base = text.replace(const.group(0), one + two)
    out = [("shl by 1", base.replace(m.group(0), f"{res} = OpShiftLeftLogical {ty} {v} %c64one\n")),
           ("imul by 2", base.replace(m.group(0), f"{res} = OpIMul {ty} {v} %c64two\n")),
           ("add of a copy", base.replace(m.group(0), f"%cp = OpCopyObject {ty} {v}\n"
                                          f"{res} = OpIAdd {ty} {v} %cp\n"))]  # fmt: skip
    return out


# Second round: NVIDIA got the int64 forms of `(x + x) > (-3)` wrong in branches (not the
# int32 ones, not the stored ones). Which expressions, and which edit of the module avoids it?
EXPRS2 = ["(x * 2) > (-3)", "(x * 3) > (-3)", "(x * 4) > (-3)", "(x << 1) > (-3)",
          "(x + x) > 3", "(x + x) > (-4)", "(x + x) < (-3)", "(x + x) >= (-3)",
          "(x + x) == (-4)", "(x + x) > y", "(x * 2 + 1) > (-3)", "(x + 5) > (-3)",
          "(x - 1) * 2 > (-3)", "(x * 2) > 10", "(x * 2) > 0", "x * 2 > -(2**40)",
          "(x * 2) > (-3) and x != 99"]  # fmt: skip
IF2 = """def k(inp, out):
    i = nv.global_id(0)
    if i < inp.size:
        x = inp[i]
        y = inp[0] * 0 - 3
        a = x % 17
        if {e}:
            a = a % -1000
        out[i] = a
"""


def edits2(text):
    """(name, edited text): ways to write the branch's 64-bit signed comparison."""
    m = re.search(r"(%\S+) = OpSGreaterThan %bool (%\S+) (%long_n3)\n", text)
    add = re.search(r"(%\S+) = OpIAdd %ulong (%\S+) \2\n(\s*)(%\S+) = OpBitcast %long \1\n", text)
    res, v, c = m.groups()
    pre = text.replace("%long = OpTypeInt 64 1\n", "%long = OpTypeInt 64 1\n%long_n2x = "
                       "OpConstant %long -2\n%int_0x = OpConstant %int 0\n%int_1x = "
                       "OpConstant %int 1\n%uint_32x = OpConstant %uint 32\n%long_mx = "
                       "OpConstant %long -1\n%uint_hix = OpConstant %uint 4294967295\n"
                       "%uint_lox = OpConstant %uint 4294967293\n")  # fmt: skip
    # The loaded value, as long: the add's operand is a bitcast of it to ulong.
    load = re.search(rf"{re.escape(add.group(2))} = OpBitcast %ulong (%\S+)\n", text).group(1)
    out = [
        ("swapped", pre.replace(m.group(0), f"{res} = OpSLessThan %bool {c} {v}\n")),
        (">= -2", pre.replace(m.group(0), f"{res} = OpSGreaterThanEqual %bool {v} %long_n2x\n")),
        ("signed add", pre.replace(add.group(0), f"{add.group(1)} = OpIAdd %long {load} {load}\n"
                                   f"{add.group(3)}{add.group(4)} = OpCopyObject %long "
                                   f"{add.group(1)}\n")),  # fmt: skip
        ("materialised", pre.replace(m.group(0), f"%cmp = OpSGreaterThan %bool {v} {c}\n"
                                     f"%sel = OpSelect %int %cmp %int_1x %int_0x\n"
                                     f"{res} = OpINotEqual %bool %sel %int_0x\n")),  # fmt: skip
        ("hi/lo words", pre.replace(m.group(0), f"%u = OpBitcast %ulong {v}\n"
                                    f"%lo64 = OpUConvert %uint %u\n"
                                    f"%hi64 = OpShiftRightArithmetic %long {v} %uint_32x\n"
                                    f"%hi = OpSConvert %int %hi64\n"
                                    f"%hiint = OpBitcast %int %uint_hix\n"
                                    f"%hgt = OpSGreaterThan %bool %hi %hiint\n"
                                    f"%heq = OpIEqual %bool %hi %hiint\n"
                                    f"%lgt = OpUGreaterThan %bool %lo64 %uint_lox\n"
                                    f"%both = OpLogicalAnd %bool %heq %lgt\n"
                                    f"{res} = OpLogicalOr %bool %hgt %both\n")),  # fmt: skip
    ]
    return out


def main2():
    for e in EXPRS2:
        check(f"if {e:30s} int64", IF2.format(e=e), np.int64)
    src = IF2.format(e="(x + x) > (-3)")
    words = check("if (x + x) > (-3) int64 (module for edits)", src, np.int64)
    text = spirv(["spirv-dis"], words, binary_out=False)
    for name, edited in edits2(text):
        try:
            w = spirv(["spirv-as", "--target-env", "vulkan1.2"], edited)
            spirv(["spirv-val", "--target-env", "vulkan1.2"], w, binary_out=None)
            check(f"if (x + x) > (-3) int64: {name}", src, np.int64, w)
        except RuntimeError as err:
            print(f"  {name}: edit failed: {str(err)[:300]}")


# Third round (after the fix): the other widths and signedness, 32-bit arithmetic asked for
# (narrow="ints": the comparison at 32 bits, which mask 16 leaves alone) or written.
EXPRS3 = ["(x + x) > (-3)", "16 > (x + x)", "(x * 2) > 0", "(x << 1) >= (-3)"]
EXPRS3_NARROW = ["np.int32(x + x) > np.int32(-3)", "np.int32(16) > np.int32(x * 2)",
                 "np.int32(x + x) > np.int32(0)"]  # fmt: skip
EXPRS3_UNSIGNED = ["(x + x) > 3", "16 > (x + x)", "(x * 2) > 5", "(x << 1) >= 7"]


def main3():
    for form_name, form in (("if", IF), ("loop", LOOP)):
        for e in EXPRS3:
            check(f"{form_name} {e:30s} int32 narrow=ints", form.format(e=e), np.int32,
                  small=True, narrow="ints")  # fmt: skip
        for e in EXPRS3_NARROW:
            for dtype in (np.int32, np.int64):
                check(f"{form_name} {e:30s} {np.dtype(dtype).name}", form.format(e=e), dtype)
        for e in EXPRS3_UNSIGNED:
            for dtype in (np.uint32, np.uint64):
                check(f"{form_name} {e:30s} {np.dtype(dtype).name}", form.format(e=e), dtype)


def main():
    for form_name, form in (("loop", LOOP), ("if", IF), ("stored", STORED)):
        for e in EXPRS:
            for dtype in (np.int32, np.int64):
                check(f"{form_name:6s} {e:20s} {np.dtype(dtype).name}", form.format(e=e), dtype)
    import numba_vulkan as nv

    for e, src in [(e, LOOP.format(e=e)) for e in EXPRS[:2]] + [("2792", R2792),
                                                                  ("4444", R4444)]:
        words = check(f"loop {e} (module for edits)", src, np.int32)
        text = spirv(["spirv-dis", "--raw-id"], words, binary_out=False)
        for name, edited in edits(text):
            try:
                w = spirv(["spirv-as", "--target-env", "vulkan1.2"], edited)
                spirv(["spirv-val", "--target-env", "vulkan1.2"], w, binary_out=None)
                check(f"loop {e}: {name}", src, np.int32, w)
            except RuntimeError as err:
                print(f"  loop {e}: {name}: edit failed: {str(err)[:200]}")
    print("device:", nv.get_current_device().name if hasattr(nv, "get_current_device") else "")


if __name__ == "__main__":
    {"2": main2, "3": main3}.get(sys.argv[1] if sys.argv[1:] else "", main)()
