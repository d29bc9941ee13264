"""Session 9: which part of type-fuzz seeds 95 and 1060 the H200 gets wrong.

Session 8's experiment (s8_nvidia_small_ints.py) reproduced both on the H200
with NUMBA_VULKAN_HIDE_INT_RANGES 0 and 7, while every isolated suspect
passed. Here each failing program is varied one piece at a time, with the
SPIRV-Tools optimiser on and off (BENCHES=bisect: per HIDE_INT_RANGES 0 / 7 /
15 and NUMBA_VULKAN_INT64=1), and a second set (--calls, BENCHES=calls) puts
other operations beside seed 1060's first output. Every output is compared
with numba.njit on the same inputs; one line per variant and setting. With
--spirv DIR the SPIR-V of each failing variant is written there.

What the H200 answered (results/h200_2026-12-01_s9_bisect.txt):
- The optimiser, integer narrowing and the int_ranges masks change nothing.
- Seed 1060's `(a_i8[i] if a_i8[i] else s_b) * (True & a_i64[i])` is wrong
  beside a float64 division, a float64 sqrt or a 64-bit integer remainder in
  another statement, and right beside a 64-bit multiply, abs or conversion;
  still wrong with int32 data and no bool; right without the `if`.
- Seed 95 is wrong with uint8/int16 scalars beside a 64-bit division, right
  with the same values as int32 scalars.
- Emulating the 64-bit division (first with float64 divisions, then with none:
  a float32 reciprocal and Newton steps, exact against C on 80,000 operand
  pairs) left both seeds failing: the driver's division routine is not the
  cause, and that pass was removed. Both remain open as NVIDIA compiler bugs.
"""

import argparse
import os
import re
import warnings

os.environ.setdefault("NUMBA_VULKAN_CACHE", "0")

import numba  # noqa: E402
import numpy as np  # noqa: E402

import numba_vulkan as nv  # noqa: E402
from numba_vulkan import _core  # noqa: E402

N = 64
rng = np.random.default_rng(95)


def ints(dtype):
    info = np.iinfo(dtype)
    v = rng.integers(info.min, info.max, N, dtype=dtype, endpoint=True)
    v[:4] = [info.min, info.min + 1, 0, info.max]
    return v


def arguments():
    a_u64 = ints(np.uint64)
    a_u64[a_u64 == 0] = 1
    a_u64[4:6] = [7218962556608428057, 9223372036854775807]
    a_i32 = ints(np.int32)
    a_i32[4:6] = 0
    a_i8 = ints(np.int8)
    return {"a_i8w": a_i8.astype(np.int32), "a_u8": ints(np.uint8), "a_i8": a_i8, "a_i16": ints(np.int16),
            "a_i32": a_i32, "a_i64": ints(np.int64), "a_u64": a_u64,
            "a_f64": rng.standard_normal(N) * 10, "a_f64b": rng.standard_normal(N) + 5,
            "a_s16": np.full(N, -32767, np.int16), "a_s8": np.full(N, 8, np.uint8),
            "s_u8": np.uint8(8), "s_i16": np.int16(-32767), "s_b": False,
            "s_w8": np.int32(8), "s_w16": np.int32(-32767)}


# Seed 95: out = (a_i32 == ((not a_u64) & (a_i32 if a_i32 else s_i16))) & ((s_u8 // a_u64) ^ (s_u8 >= s_i16))
L95 = "(a_i32[i] == ((not a_u64[i]) & (a_i32[i] if a_i32[i] else s_i16)))"
R95 = "((s_u8 // a_u64[i]) ^ (s_u8 >= s_i16))"
P95 = {
    "95 original": f"out0[i] = {L95} & {R95}",
    "95 compare in int32": f"out0[i] = {L95} & ((s_u8 // a_u64[i]) ^ (np.int32(s_u8) >= np.int32(s_i16)))",
    "95 s_i16 from an array": f"out0[i] = {L95} & ((s_u8 // a_u64[i]) ^ (s_u8 >= a_s16[i]))",
    "95 s_u8 from an array": f"out0[i] = {L95} & ((a_s8[i] // a_u64[i]) ^ (a_s8[i] >= s_i16))",
    "95 compare alone in a local": f"c = s_u8 >= s_i16\n        out0[i] = {L95} & ((s_u8 // a_u64[i]) ^ c)",
    "95 compare stored too": f"out1[i] = s_u8 >= s_i16\n        out0[i] = {L95} & {R95}",
    "95 without the division": f"out0[i] = {L95} & (np.uint64(s_u8) ^ (s_u8 >= s_i16))",
    "95 division by 1": f"out0[i] = {L95} & ((s_u8 // np.uint64(1)) ^ (s_u8 >= s_i16))",
    "95 left: a_i32 == 0": f"out0[i] = (a_i32[i] == 0) & {R95}",
    "95 left without the if": f"out0[i] = (a_i32[i] == ((not a_u64[i]) & s_i16)) & {R95}",
    "95 left without not": f"out0[i] = (a_i32[i] == (a_u64[i] & (a_i32[i] if a_i32[i] else s_i16))) & {R95}",
    "95 right alone": f"out0[i] = {R95}",
    "95 right & 1": f"out0[i] = {R95} & 1",
}
# Seed 1060: out0 wrong (a_i8 where a_i64 is even) only beside out1.
O1 = ("out1[i] = ((max(a_i32[i], a_i32[i]) % a_i64[i]) if min((a_i8[i] >= 0.5), a_i64[i])"
      " else (np.uint64(a_i8[i]) ^ np.uint16(s_b)))")
O0 = "out0[i] = ((a_i8[i] if a_i8[i] else s_b) * (True & a_i64[i]))"
P1060 = {
    "1060 original": f"{O0}\n        {O1}",
    "1060 and swapped": f"out0[i] = ((a_i8[i] if a_i8[i] else s_b) * (a_i64[i] & True))\n        {O1}",
    "1060 and with 1": f"out0[i] = ((a_i8[i] if a_i8[i] else s_b) * (a_i64[i] & 1))\n        {O1}",
    "1060 no if": f"out0[i] = (a_i8[i] * (True & a_i64[i]))\n        {O1}",
    "1060 int32 if": f"out0[i] = ((np.int32(a_i8[i]) if a_i8[i] else np.int32(s_b)) * (True & a_i64[i]))\n        {O1}",
    "1060 the and alone": f"out0[i] = (True & a_i64[i])\n        {O1}",
    "1060 out1 first": f"{O1}\n        {O0}",
    "1060 out1: a_i64 % a_i64": f"{O0}\n        out1[i] = (a_i64[i] % a_i64[i]) if min((a_i8[i] >= 0.5), a_i64[i]) else 0.0",
    "1060 out1: max % a_i64 only": f"{O0}\n        out1[i] = (max(a_i32[i], a_i32[i]) % a_i64[i]) if a_i64[i] else 0.0",
    "1060 out1: a_i32 % a_i64 only": f"{O0}\n        out1[i] = (a_i32[i] % a_i64[i]) if a_i64[i] else 0.0",
    "1060 out1: the condition only": f"{O0}\n        out1[i] = min((a_i8[i] >= 0.5), a_i64[i])",
    "1060 out1: the else only": f"{O0}\n        out1[i] = (np.uint64(a_i8[i]) ^ np.uint16(s_b))",
    "1060 out1: if, no else": f"{O0}\n        out1[i] = (a_i32[i] % a_i64[i]) if min((a_i8[i] >= 0.5), a_i64[i]) else 0.0",
}
# Other operations beside seed 1060's out0 (those NVIDIA's compiler may call a routine for, and
# others), and seed 95 with its scalars small or int32.
PCALLS = {
    "1060 beside: f64 division": f"{O0}\n        out1[i] = a_f64[i] / a_f64b[i]",
    "1060 beside: f64 / constant": f"{O0}\n        out1[i] = a_f64[i] / 3.0",
    "1060 beside: f32 division": f"{O0}\n        out1[i] = np.float32(a_f64[i]) / np.float32(a_f64b[i])",
    "1060 beside: f64 sqrt": f"{O0}\n        out1[i] = np.sqrt(abs(a_f64[i]))",
    "1060 beside: i64 mul": f"{O0}\n        out1[i] = (a_i32[i] * a_i64[i]) if a_i64[i] else 0.0",
    "1060 beside: zero guard": f"{O0}\n        out1[i] = a_i64[i] if a_i64[i] else 1",
    "1060 beside: abs": f"{O0}\n        out1[i] = abs(a_i64[i])",
    "1060 beside: i64 to f64": f"{O0}\n        out1[i] = np.float64(a_i64[i]) * 0.5",
    "1060 beside: f64 to i64": f"{O0}\n        out1[i] = np.int64(a_f64[i] * 1e6)",
    "1060 i8 data as int32, f64 division beside":
        "out0[i] = ((a_i8w[i] if a_i8w[i] else s_b) * (True & a_i64[i]))\n        out1[i] = a_f64[i] / 3.0",
    "1060 no bool, f64 division beside":
        "out0[i] = ((a_i8[i] if a_i8[i] else 0) * (1 & a_i64[i]))\n        out1[i] = a_f64[i] / 3.0",
    "1060 i8 data as int32, no bool, f64 division beside":
        "out0[i] = ((a_i8w[i] if a_i8w[i] else 0) * (1 & a_i64[i]))\n        out1[i] = a_f64[i] / 3.0",
    "1060 i8 times and, f64 division beside":
        "out0[i] = a_i8[i] * (1 & a_i64[i])\n        out1[i] = a_f64[i] / 3.0",
    "1060 i8 times i64, f64 division beside": "out0[i] = a_i8[i] * a_i64[i]\n        out1[i] = a_f64[i] / 3.0",
    "1060 i8 copied, f64 division beside": "out0[i] = a_i8[i]\n        out1[i] = a_f64[i] / 3.0",
    "1060 and copied, f64 division beside": "out0[i] = 1 & a_i64[i]\n        out1[i] = a_f64[i] / 3.0",
    "95 scalars as int32, driver u64 division":
        f"out0[i] = (a_i32[i] == 0) & ((s_w8 // a_u64[i]) ^ (s_w8 >= s_w16))",
    "95 small scalars, driver u64 division":
        f"out0[i] = (a_i32[i] == 0) & ((s_u8 // a_u64[i]) ^ (s_u8 >= s_i16))",
    "95 small scalars, f64 division": f"out0[i] = {L95} & (np.int64(a_f64[i] / 3.0 > 0) ^ (s_u8 >= s_i16))",
    "95 with mul": f"out0[i] = {L95} & ((s_u8 * a_u64[i]) ^ (s_u8 >= s_i16))",
    "95 with f64 division, no left": f"out0[i] = (np.int64(a_f64[i] / 3.0 > 0) ^ (s_u8 >= s_i16)) & 1",
}
OUT_DTYPES = (np.int64, np.float64)


def run_both(body, args):
    """The kernel `body` over the arguments it names, on numba.njit (element by element) and on
    the device: (source, kernel, values, want, got, indices of differing elements per output)."""
    names = [a for a in args if re.search(rf"\b{a}\b", body)]
    src = (f"def k({', '.join(names)}, out0, out1):\n    i = nv.global_id(0)\n"
           f"    if i < out0.size:\n        {body}\n")
    ns = {"nv": nv, "np": np}
    exec(src, ns)  # noqa: S102
    cns = {"np": np}
    exec(src.replace("nv.global_id(0)", "j").replace("def k(", "def k(j, "), cns)  # noqa: S102
    values = [args[a] for a in names]
    want = [np.zeros(N, d) for d in OUT_DTYPES]
    got = [np.zeros(N, d) for d in OUT_DTYPES]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cpu = numba.njit(cns["k"])
        for j in range(N):
            cpu(j, *values, *want)
        kernel = nv.jit(ns["k"])
        kernel[1, N](*values, *got)
    bad = [np.flatnonzero([w.tobytes() != g.tobytes() for w, g in zip(ww, gg)])
           for ww, gg in zip(want, got)]
    return src, kernel, values, want, got, bad


def run(name, body, args, options, spirv_dir):
    src, kernel, values, want, got, bad = run_both(body, args)
    label = f"{name} [{'opt' if options.get('optimize', True) else 'no opt'}]"
    if not any(len(b) for b in bad):
        print(f"ok      {label}")
        return
    k = 0 if len(bad[0]) else 1
    j = bad[k][0]
    print(f"WRONG   {label}: out{k} {len(bad[k])} of {N} differ; [{j}] njit {want[k][j]!r} device {got[k][j]!r}")
    if spirv_dir:
        os.makedirs(spirv_dir, exist_ok=True)
        tag = "".join(c if c.isalnum() else "_" for c in label)
        with open(os.path.join(spirv_dir, f"{tag}.spvasm"), "w") as f:
            f.write(src + "\n" + kernel.inspect_spirv(*values, *got))


def run_each(programs, args, options, spirv_dir):
    """run() for every (name, body) of `programs`, an exception reported as a line."""
    for name, body in programs.items():
        try:
            run(name, body, args, options, spirv_dir)
        except Exception as e:  # noqa: BLE001
            print(f"ERROR   {name}: {type(e).__name__}: {str(e).splitlines()[0][:150]}")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--spirv")
    p.add_argument("--calls", action="store_true", help="only the PCALLS variants, optimised")
    args_ = p.parse_args()
    env = {k: v for k, v in os.environ.items() if k in ("NUMBA_VULKAN_HIDE_INT_RANGES", "NUMBA_VULKAN_INT64")}
    print(f"device: {nv.get_device().info.name}; {env}", flush=True)
    args = arguments()
    compile_ = _core.compile
    if args_.calls:
        run_each(PCALLS, args, {}, args_.spirv)
        return
    for options in ({}, {"optimize": False}):
        # The optimiser is not a user option: _core.compile is wrapped for the second round.
        _core.compile = lambda module, **kw: compile_(module, **{**kw, **options})  # noqa: B023
        run_each({**P95, **P1060}, args, options, args_.spirv)


if __name__ == "__main__":
    main()
