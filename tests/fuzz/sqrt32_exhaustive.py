"""Every float32 in [1, 4) through the fused float32 sqrt (frontend/mathlib/roots.py,
_sqrt_fused) simulated in NumPy, from a driver InverseSqrt that is correctly rounded or off by
up to 64 ulp: the one correction step must leave s within one ulp of sqrt(x), and
the rounding decision must then give NumPy's sqrt bit for bit. Scaling x by 4^j scales every
step exactly, so [1, 4) covers the path's whole range (2^-60 to 2^60). About 30 s.

    python3 tests/fuzz/sqrt32_exhaustive.py

The simulation's Fma is a float64 product and sum rounded to float32: exact for the
residuals (they cancel to a few bits), at most a double rounding in the correction step,
far below the step's margin. tests/nodevice/test_math_fused_paths.py runs the library's
own KIR (std::fma) on a sample of the same operands.
"""

import sys

import numpy as np

F32 = np.float32


def fma(a, b, c):
    return (a.astype(np.float64) * b.astype(np.float64) + c.astype(np.float64)).astype(F32)


def sqrt_fused32(x, y):
    """roots._sqrt_fused (float32)'s steps from y, the driver's 1/sqrt(x)."""
    s0 = (x * y).astype(F32)
    s = fma(fma(-s0, s0, x), (y * F32(0.5)).astype(F32), s0)
    r = fma(-s, s, x)
    c = (s.view(np.int32) + np.where(r > 0, 1, -1).astype(np.int32)).view(F32)
    rc = fma(-c, c, x)
    return s, np.where(np.abs(rc) < np.abs(r), c, s)


def main():
    x = np.arange(0x3F800000, 0x40800000, dtype=np.uint32).view(F32)
    exact = np.sqrt(x.astype(np.float64))
    ref = exact.astype(F32)
    y_rounded = (1.0 / exact).astype(F32)
    failed = 0
    for off in (0, 1, -1, 2, -2, 8, -8, 64, -64):
        y = (y_rounded.view(np.int32) + np.int32(off)).view(F32)
        s, out = sqrt_fused32(x, y)
        far = np.abs(s.view(np.int32).astype(np.int64) - ref.view(np.int32)).max()
        wrong = int((out != ref).sum())
        failed += wrong + int(far > 1)
        print(f"InverseSqrt {off:+3d} ulp: step within {far} ulp, {wrong} of {x.size} wrong")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
