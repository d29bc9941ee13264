"""What the H200 gets wrong in type-fuzz seeds 95 and 1060 (session 8: prepared, not yet run).

Seeds 95 and 1060 of tests/fuzz/run_typefuzz.py differ from numba.njit on the
H200 with every NUMBA_VULKAN_HIDE_INT_RANGES mask (session 7,
results/h200_2026-12-01_s7_typefuzz.txt); lavapipe agrees with njit.

- Seed 95: `(s2 >= s0)` with s2 a uint8 and s0 an int16 scalar (8 and -32767)
  came out False (njit: True). The front end compares them as int16 after
  widening s2 (`uconvert u8 -> i16; sge i16`), so 16-bit signed compares, the
  16-bit conversions of scalar parameters and `u8 -> i16` widening are the
  suspects; each has a kernel here, in scalar and array forms, and in 32 bits
  for comparison.
- Seed 1060: `(a_i8[i] if a_i8[i] else s0) * (True & a_i64[i])` gave a_i8[i]
  where a_i64[i] is even (njit: 0), only inside the whole program (the
  expression alone passes): the whole kernel is here, and without each of its
  other outputs.

Every kernel is checked against numba.njit on the same inputs; one line each:
"ok", or how many elements differ and the first one. Run from the repository
root with the package installed, for each mask:

    for m in 0 7; do NUMBA_VULKAN_HIDE_INT_RANGES=$m python3 benchmarks/experiments/s8_nvidia_small_ints.py; done
"""

import os
import warnings

os.environ.setdefault("NUMBA_VULKAN_CACHE", "0")

import numba  # noqa: E402
import numpy as np  # noqa: E402

import numba_vulkan as nv  # noqa: E402

N = 64
rng = np.random.default_rng(95)


def ints(dtype, n=N):
    info = np.iinfo(dtype)
    v = rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True)
    v[:4] = [info.min, info.min + 1, 0, info.max][: len(v[:4])]
    return v


# (name, source body with `out[i] = ...`, argument names) -- arguments come from ARGS.
CASES = [
    ("cmp u8 >= i16, scalars", "out[i] = s_u8 >= s_i16"),
    ("cmp u8 >= i16, arrays", "out[i] = a_u8[i] >= a_i16[i]"),
    ("cmp u8 >= i16 array/scalar", "out[i] = a_u8[i] >= s_i16"),
    ("cmp i16 < 0, scalar", "out[i] = s_i16 < 0"),
    ("cmp i16 < i16, arrays", "out[i] = a_i16[i] < a_i16b[i]"),
    ("cmp i8 < i8, arrays", "out[i] = a_i8[i] < a_i8b[i]"),
    ("cmp u8 >= i8, arrays", "out[i] = a_u8[i] >= a_i8[i]"),
    ("cmp u16 >= i32, arrays (32-bit)", "out[i] = a_u16[i] >= a_i32[i]"),
    ("i16 scalar widened", "out[i] = np.int64(s_i16)"),
    ("i16 scalar to uint64", "out[i] = np.uint64(s_i16)"),
    ("u8 scalar widened", "out[i] = np.int64(s_u8)"),
    ("abs(u8) >= uint64(i16)", "out[i] = abs(s_u8) >= np.uint64(s_i16)"),
    ("i16 + i16 arrays", "out[i] = a_i16[i] + a_i16b[i]"),
    ("i8 * i8 arrays", "out[i] = a_i8[i] * a_i8b[i]"),
    ("i16 // i16 arrays", "out[i] = a_i16[i] // (a_i16b[i] | np.int16(1))"),
    ("seed 95 minimised",
     "out[i] = ((a_i32[i] == ((not a_u64[i]) & (a_i32[i] if a_i32[i] else s_i16)))"
     " & ((s_u8 // a_u64[i]) ^ (s_u8 >= s_i16)))"),
    ("seed 95 out1",
     "out[i] = ((a_i32[i] == ((not a_u64[i]) & (a_i32[i] if a_i32[i] else s_i16)))"
     " & (np.int64((s_u8 // a_u64[i])) ^ (abs(s_u8) >= np.uint64(s_i16))))"),
    ("seed 1060 out0 alone", "out[i] = ((a_i8[i] if a_i8[i] else s_b) * (True & a_i64[i]))"),
    ("True & i64", "out[i] = True & a_i64[i]"),
]

# Seed 1060 whole (three outputs), and without out1 / out2.
WHOLE_1060 = """
def k(a_i64, a_i8, a_f64, a_i32, s_b, out0, out1, out2):
    i = nv.global_id(0)
    if i < out0.size:
        out0[i] = ((a_i8[i] if a_i8[i] else s_b) * (True & a_i64[i]))
{more}
"""
MORE_1060 = {
    "out1": "        out1[i] = ((max(a_i32[i], a_i32[i]) % a_i64[i]) if min((a_i8[i] >= 0.5), a_i64[i])"
            " else (np.uint64(a_i8[i]) ^ np.uint16(s_b)))",
    "out2": "        out2[i] = np.int16((a_i64[i] <= a_i32[i]))",
}


def arguments():
    a_u64 = ints(np.uint64)
    a_u64[a_u64 == 0] = 1
    a_u64[4:6] = [7218962556608428057, 9223372036854775807]  # seed 95's failing elements
    a_i32 = ints(np.int32)
    a_i32[4:6] = 0
    return {
        "a_u8": ints(np.uint8), "a_i8": ints(np.int8), "a_i8b": ints(np.int8),
        "a_i16": ints(np.int16), "a_i16b": ints(np.int16), "a_u16": ints(np.uint16),
        "a_i32": a_i32, "a_i64": ints(np.int64), "a_u64": a_u64,
        "a_f64": rng.standard_normal(N) * 10,
        "s_u8": np.uint8(8), "s_i16": np.int16(-32767), "s_b": False,
    }


def run_case(name, body, args):
    used = [a for a in args if a in body.split("out[i] =")[1] or f"{a}[" in body]
    src = (f"def k({', '.join(used)}, out):\n    i = nv.global_id(0)\n"
           f"    if i < out.size:\n        {body}\n")
    ns = {"nv": nv, "np": np}
    exec(src, ns)  # noqa: S102
    values = [args[a] for a in used]
    expr = body.split("=", 1)[1]
    # The element type njit gives the expression: evaluate it once on the CPU.
    probe = numba.njit(eval(f"lambda {', '.join(used)}, i: {expr}"))  # noqa: S307
    dtype = np.asarray(probe(*values, 0)).dtype
    want = np.zeros(N, dtype)
    got = np.zeros(N, dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cpu_src = src.replace("nv.global_id(0)", "j").replace("def k(", "def k(j, ")
        cns = {"np": np}
        exec(cpu_src, cns)  # noqa: S102
        cpu = numba.njit(cns["k"])
        for j in range(N):
            cpu(j, *values, want)
        nv.jit(ns["k"])[1, N](*values, got)
    report(name, want, got)


def report(name, want, got):
    bad = np.flatnonzero([w.tobytes() != g.tobytes() for w, g in zip(want, got)])
    if len(bad) == 0:
        print(f"ok      {name}")
    else:
        j = bad[0]
        print(f"WRONG   {name}: {len(bad)} of {len(want)} differ; [{j}] njit {want[j]!r} device {got[j]!r}")


def run_1060(args):
    names = ["a_i64", "a_i8", "a_f64", "a_i32", "s_b"]
    for label, keep in (("whole", ("out1", "out2")), ("without out1", ("out2",)),
                        ("without out2", ("out1",)), ("out0 only", ())):
        src = WHOLE_1060.format(more="\n".join(MORE_1060[m] for m in keep))
        ns = {"nv": nv, "np": np}
        exec(src, ns)  # noqa: S102
        cns = {"np": np}
        exec(src.replace("nv.global_id(0)", "j").replace("def k(", "def k(j, "), cns)  # noqa: S102
        cpu = numba.njit(cns["k"])
        values = [args[a] for a in names]
        want = [np.zeros(N, np.int64), np.zeros(N, np.float64), np.zeros(N, np.int16)]
        got = [np.zeros_like(w) for w in want]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for j in range(N):
                cpu(j, *values, *want)
            nv.jit(ns["k"])[1, N](*values, *got)
        report(f"seed 1060 {label}, out0", want[0], got[0])


def main():
    print(f"device: {nv.get_device().info.name}; NUMBA_VULKAN_HIDE_INT_RANGES="
          f"{os.environ.get('NUMBA_VULKAN_HIDE_INT_RANGES', '(default)')}")
    args = arguments()
    for name, body in CASES:
        try:
            run_case(name, body, args)
        except Exception as e:  # noqa: BLE001
            print(f"ERROR   {name}: {type(e).__name__}: {str(e).splitlines()[0][:150]}")
    run_1060(args)


if __name__ == "__main__":
    main()
