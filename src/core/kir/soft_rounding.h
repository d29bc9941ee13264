// Float rounding to integers from the bits, for drivers whose Floor, Ceil or
// Trunc are wrong.
//
// Vulkan requires GLSL.std.450 Floor, Ceil and Trunc to be exact, and most
// drivers' are. lavapipe (Mesa 22) on a CPU without AVX-512 is not: its
// float64 vectors are 512 bits wide there, wider than the CPU's rounding
// instructions, and it falls back to a conversion through a 64-bit integer
// that keeps |x| >= 2^31 with a fraction unchanged (trunc(1e10 + 0.25)) and
// loses the sign of results in (-1, 0] (trunc(-0.5) = +0.0). The driver
// self-test (numba_vulkan/runtime/selftest.py) finds it, and kernels for that
// device are compiled with this pass.
//
// SoftRounding replaces each kMath Floor, Ceil and Trunc of the chosen float
// widths with integer operations on the value's bits, in place (no blocks):
//   trunc(x): with E the biased exponent, |x| < 1 (E < bias) gives x's sign
//             bit alone (±0); |x| >= 2^mantissa (integers, inf, NaN) stays x;
//             otherwise the (bias + mantissa - E) fraction bits are cleared.
//   floor(x) = t - 1 where x < t, else t (t = trunc(x); exact: |t| < 2^mantissa
//             where x < t); ceil(x) = t + 1 where x > t, else t. Signed zeros
//             and NaN come out as IEEE 754 says (floor(-0.0) = -0.0,
//             ceil(-0.5) = -0.0).
// It relies on integer shifts, ands, compares and selects, and on float
// compares and additions, which the self-test checks too.
#pragma once

#include "kir/kir.h"

namespace nvk::kir {

// Which float widths SoftRounding rewrites (a mask).
enum SoftRoundingWidths : unsigned {
    kSoftRoundingF32 = 1,
    kSoftRoundingF64 = 2,
};

// Returns how many Floor, Ceil and Trunc it replaced.
size_t SoftRounding(Module& m, unsigned widths);

}  // namespace nvk::kir
