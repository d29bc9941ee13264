"""Session 20 probe: where do NVIDIA's wrong control-flow fuzz results come from?

    python3 benchmarks/experiments/s20_nvidia_cf.py all DIR SEEDS    # on the GPU

`micro` first runs one-line kernels of the expression the failing seeds share (MICRO).

SEEDS are control-flow fuzz seeds (tests/fuzz/gen.py), comma-separated. `make DIR SEEDS`
compiles each seed's program for the current device, once as usual and once without
SPIRV-Tools' optimiser, and writes variants of the modules: the unoptimised module through
spirv-opt with our recipe, the recipe less one pass, the recipe's prefixes, and the
default, unoptimised and recipe modules with each sign extension to 64 bits (the
emitter's zero extension and shift pair, spirv/arithmetic.cc) as one OpSConvert. `run DIR`
runs every variant in place of the kernel's own module, one process per seed (a wrong loop
exit may never end), and prints which give CPython's results. `all` does both; the modules
must be made on the device that runs them (the parameter block differs by driver).
"""

import json
import os
import re
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(HERE)), "tests", "fuzz"))
from gen import _load as load  # noqa: E402  (a program's function from its source)

# Our recipe (src/core/spirv/tools.cc), as spirv-opt flags.
RECIPE = ["--eliminate-local-single-block", "--eliminate-local-single-store",
          "--scalar-replacement=100", "--convert-local-access-chains", "--ssa-rewrite", "--ccp",
          "--simplify-instructions", "--eliminate-dead-branches", "--if-conversion",
          "--eliminate-dead-code-aggressive", "--merge-blocks",
          "--redundancy-elimination"]  # fmt: skip
TARGET = "--target-env=vulkan1.2"


def slug(name):
    return re.sub(r"[^a-z0-9]+", "_", name).strip("_")


def sconvert(text):
    """The module text with each `sra(bitcast(shl(uconvert(v), k)), k)` to 64 bits as
    `sconvert(v)` (the shift pair's instructions stay, unused)."""
    defs = {}
    for line in text.splitlines():
        m = re.match(r"\s*(%\S+) = (Op\w+) (%\S+)((?: \S+)*)$", line)
        if m:
            defs[m.group(1)] = (m.group(2), m.group(3), m.group(4).split())
    out = []
    for line in text.splitlines():
        m = re.match(r"(\s*)(%\S+) = OpShiftRightArithmetic (%\S+) (%\S+) (%\S+)$", line)
        if m:
            indent, result, rtype, value, shift = m.groups()
            cast = defs.get(value)
            shl = cast and cast[0] == "OpBitcast" and defs.get(cast[2][0])
            shl_ok = shl and shl[0] == "OpShiftLeftLogical" and shl[2][1] == shift
            ext = shl_ok and defs.get(shl[2][0])
            if ext and ext[0] == "OpUConvert":
                line = f"{indent}{result} = OpSConvert {rtype} {ext[2][0]}"
        out.append(line)
    return "\n".join(out) + "\n"


def make(directory, seeds):
    import dataclasses

    import gen
    import numba_vulkan as nv
    import numba_vulkan.codegen as cg
    import numba_vulkan.dispatcher as d

    os.makedirs(directory, exist_ok=True)
    captured = []
    init = cg.CompiledKernel.__init__

    def capture(self, *a, **k):
        init(self, *a, **k)
        captured.append(self.words.copy())

    cg.CompiledKernel.__init__ = capture
    options = d.Dispatcher._compile_options
    index = []
    for seed in [int(s) for s in seeds.split(",")]:
        program = gen.generate(seed)
        xs = gen.inputs(seed, 64)
        f = load(program.python_src, "fuzz_py", {})
        want = np.array([f(int(x)) for x in xs], dtype=np.int64)
        modules = {}
        for name, optimize in (("default", True), ("unoptimised", False)):
            d.Dispatcher._compile_options = lambda self, o=optimize: dataclasses.replace(
                options(self), optimize=o)
            k = nv.jit(load(program.kernel_src, "fuzz_kernel", {"nv": nv}))
            k.forall(xs.size)(xs, np.full((xs.size, 3), -77777, np.int32))
            modules[name] = captured[-1]
        d.Dispatcher._compile_options = options
        files = {}

        def path(name, ext=".spv"):  # the variant's file; listed in the index
            files[name] = f"s{seed}_{slug(name)}.spv"
            return os.path.join(directory, f"s{seed}_{slug(name)}{ext}")

        for name, words in modules.items():
            words.tofile(path(name))
        runs = [("recipe", RECIPE)]
        runs += [(f"without {p}", [q for q in RECIPE if q != p]) for p in RECIPE]
        runs += [(f"first {n}", RECIPE[:n]) for n in range(1, len(RECIPE))]
        for name, passes in runs:
            subprocess.run(["spirv-opt", TARGET, *passes, path("unoptimised"), "-o", path(name)],
                           check=True)  # fmt: skip
        for name in ("default", "unoptimised", "recipe"):
            text = subprocess.run(["spirv-dis", path(name)], check=True, capture_output=True,
                                  text=True).stdout  # fmt: skip
            variant = name + " sconvert"
            open(path(variant, ".spvasm"), "w").write(sconvert(text))
            subprocess.run(["spirv-as", TARGET, path(variant, ".spvasm"), "-o", path(variant)],
                           check=True)  # fmt: skip
            subprocess.run(["spirv-val", "--target-env", "vulkan1.2", path(variant)], check=True)
        index.append({"seed": seed, "kernel": program.kernel_src, "inputs": xs.tolist(),
                      "want": want.tolist(), "variants": files})  # fmt: skip
    json.dump(index, open(os.path.join(directory, "index.json"), "w"))
    print(f"{len(index)} programs, {sum(len(p['variants']) for p in index)} modules in {directory}")


def run(directory):
    from concurrent.futures import ThreadPoolExecutor

    index = json.load(open(os.path.join(directory, "index.json")))

    def one_seed(seed):
        cmd = [sys.executable, "-u", __file__, "seed", directory, str(seed)]
        try:
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=90)
            return r.stdout + ("" if r.returncode == 0 else r.stderr[-400:])
        except subprocess.TimeoutExpired as e:
            return (e.stdout.decode() if e.stdout else "") + "  ... HANG (killed after 90 s)\n"

    with ThreadPoolExecutor(len(index)) as pool:
        for text in pool.map(one_seed, [p["seed"] for p in index]):
            print(text, flush=True)


def seed(directory, seed):
    """Every variant of one seed, in this process."""
    import numba_vulkan as nv
    import numba_vulkan.codegen as cg

    index = json.load(open(os.path.join(directory, "index.json")))
    (p,) = [p for p in index if p["seed"] == int(seed)]
    print(f"# seed {seed}", flush=True)
    swap = {}
    init = cg.CompiledKernel.__init__

    def swapped(self, *a, **k):
        init(self, *a, **k)
        swap["seen"] = self.words.copy()
        self.words = swap["words"]

    cg.CompiledKernel.__init__ = swapped
    xs = np.array(p["inputs"], np.int32)
    want = np.array(p["want"], np.int64)
    for name, file in p["variants"].items():
        swap["words"] = np.fromfile(os.path.join(directory, file), dtype=np.uint32)
        k = nv.jit(load(p["kernel"], "fuzz_kernel", {"nv": nv}))
        out = np.full((xs.size, 3), -77777, np.int32)
        k.forall(xs.size)(xs, out)
        bad = np.flatnonzero((out.astype(np.int64) != want).any(axis=1))
        note = ""
        if name == "default" and not np.array_equal(swap["seen"], swap["words"]):
            note = " (NOT the words compiled here)"
        shown = "; ".join(f"x={xs[i]}: {out[i].tolist()} want {want[i].tolist()}" for i in bad[:3])
        print(f"  {name:50s} {'ok' if bad.size == 0 else f'WRONG {bad.size}: {shown}'}{note}",
              flush=True)  # fmt: skip


def run_all(directory, seeds):
    micro()
    make(directory, seeds)
    run(directory)


# All nine seeds NVIDIA got wrong have `(x + x)` (365 of 5000 seeds do); in seed 4444,
# `(16 > (x + x)) or ...` went false for x = -2 and -6, where its left term alone is true.
MICRO = ["16 > (x + x)", "(x + x) < 16", "16 > (x * 2)", "16 > (x + y)", "x + x", "(x + x) // 3",
         "-13 <= (x + x)", "1 <= (x + x)",
         "(1 if 16 > (x + x) else 0) + (1 if c <= 0 else 0)"]  # fmt: skip


def micro():
    """Each of MICRO as a kernel of its own, over x in -12..12 and the int32 extremes, against
    CPython (y is a second load of the same value, c = abs(x) % 7)."""
    import numba_vulkan as nv

    xs = np.array(list(range(-12, 13)) + [2**31 - 1, -(2**31), 2**30, -(2**30)], np.int32)
    for expr in MICRO:
        src = (f"def k(inp, again, out):\n    i = nv.global_id(0)\n    if i < inp.size:\n"
               f"        x = inp[i]\n        y = again[i]\n        c = abs(x) % 7\n"
               f"        out[i] = {expr}\n")  # fmt: skip
        k = nv.jit(load(src, "k", {"nv": nv}))
        out = np.zeros(xs.size, np.int64)
        k.forall(xs.size)(xs, xs.copy(), out)
        want = np.array([int(eval(expr, {"x": int(x), "y": int(x), "c": abs(int(x)) % 7}))
                         for x in xs])  # fmt: skip
        bad = np.flatnonzero(out != want)
        shown = "; ".join(f"x={xs[i]}: {out[i]} want {want[i]}" for i in bad[:4])
        print(f"  {expr:45s} {'ok' if bad.size == 0 else f'WRONG {bad.size}: {shown}'}", flush=True)


if __name__ == "__main__":
    modes = {"make": make, "run": run, "seed": seed, "all": run_all, "micro": micro}
    modes[sys.argv[1]](*sys.argv[2:])
