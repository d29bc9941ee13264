"""Long sweep of the float32 division (kir/float_division.h) on the default device, against
NumPy bit for bit: PYTHONPATH=src python3 tests/fuzz/div32_sweep.py --pairs 100000000

Each chunk is div32_cases.hard_pairs (every kind of hard case) with a fresh seed. The
controls are those of test_float32_division.py's variants: "fused" (the device's own Fma and
reciprocal where its Fma rounds once, else each Fma computed exactly in float64) and "loose"
(the reciprocal moved by up to --ulps ulps as well), or "device" (the device's own choice:
on NVIDIA the fused sequence, on lavapipe its exact division). Elements with a float32
subnormal operand or result are left out on a device that flushes them (as in the tests).
Prints one line per --report chunks and a summary; exits 1 on any difference.
"""

import argparse
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "device"))

import numpy as np  # noqa: E402


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--pairs", type=float, default=1e8)
    p.add_argument("--chunk", type=int, default=1 << 21)
    p.add_argument("--variant", choices=("fused", "loose", "device"), default="loose")
    p.add_argument("--ulps", type=int, default=3)
    p.add_argument("--seed", type=int, default=1000)
    p.add_argument("--report", type=int, default=10)
    args = p.parse_args()

    import numba_vulkan as nv
    from div32_cases import hard_pairs, in_safe_range
    from numba_vulkan import launchers

    real = launchers.codegen_controls

    def controls(device):
        c = real(device)
        if args.variant == "device":
            return c
        fused = device is not None and launchers.fused_fma(device.info, "")
        ulps = args.ulps if args.variant == "loose" else 0
        return c._replace(divide_f32_in_f64=True, fused_fma=True,
                          divide_f32_exact_fma=not fused, divide_f32_test_ulps=ulps)

    launchers.codegen_controls = controls

    @nv.jit
    def divide(x, y, out):
        i = nv.global_id(0)
        if i < out.size:
            out[i] = x[i] / y[i]

    import math_support

    device = nv.get_device()
    flushes = math_support.flushes_float32()
    print(f"device {device.info.name}; variant {args.variant} "
          f"({controls(device)}); flushes float32 subnormals: {flushes}", flush=True)
    total = compared = bad = safe_total = 0
    t0 = time.time()
    chunk_no = 0
    while total < args.pairs:
        x, y = hard_pairs(args.chunk, seed=args.seed + chunk_no)
        out = np.empty_like(x)
        divide.forall(x.size)(x, y, out)
        with np.errstate(all="ignore"):
            ref = np.divide(x, y)
        keep = math_support.plain_arith_comparable(x, y, ref)
        o, r = out[keep], ref[keep]
        diff = (o.view(np.uint32) != r.view(np.uint32)) & ~(np.isnan(o) & np.isnan(r))
        safe_total += int(in_safe_range(x, y).sum())
        total += x.size
        compared += int(keep.sum())
        if diff.any():
            bad += int(diff.sum())
            xi, yi = x[keep][diff], y[keep][diff]
            for a, b, g, w in list(zip(xi, yi, o[diff], r[diff]))[:5]:
                print(f"  DIFF {a!r} / {b!r}: device {g!r}, numpy {w!r}", flush=True)
        chunk_no += 1
        if chunk_no % args.report == 0:
            print(f"{total:,} pairs, {compared:,} compared, {bad} differ "
                  f"({time.time() - t0:.0f} s)", flush=True)
    print(f"done: {total:,} pairs ({safe_total / total:.1%} in the fused sequence's safe range), "
          f"{compared:,} compared, {bad} differ, {time.time() - t0:.0f} s")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
