// Correctly rounded float32 division where the driver's is not.
//
// Vulkan lets OpFDiv on float32 be 2.5 ulp off, and NVIDIA's driver takes that
// freedom (a reciprocal and a multiply): `a / b` on float32 then differs from
// numba.njit's, which is IEEE 754 division rounded once. numba.cuda divides
// correctly rounded by default too (prec_div). The quotient of two float32
// computed in float64 and rounded to float32 is the correctly rounded float32
// quotient (53 >= 2 * 24 + 2: the double rounding is innocuous), and it gives
// IEEE's infinities, NaNs and signed zeros without special cases.
//
// DivideFloat32InFloat64 rewrites every f32 `div` of the module as
// convert(div(convert(a) : f64, convert(b) : f64)) : f32, keeping the result's
// value id. Compile runs it only where asked (CompileOptions::
// divide_f32_in_f64: a device with float64 whose division is not known to be
// correctly rounded, without fastmath); lavapipe's LLVM division is exact.
// A device that flushes float32 subnormals still flushes a subnormal quotient.
//
// DivideFloat32 with `fused_fma` (CompileOptions::fused_fma: the device's
// GLSL.std.450 Fma rounds once, NVIDIA and AMD) computes the same quotient in
// float32 alone where the operands are in a safe range, and takes the float64
// way above only in a branch for the others (NVIDIA's float64 division is a
// long sequence, and its float conversions run at a fraction of the rate):
//
//   y0 = 1/b                  the driver's (`div driver`: Vulkan's 2.5 ulp)
//   e  = fma(-b, y0, 1)       y = fma(e, y0, y0)      (one Newton step)
//   q0 = a*y   r0 = fma(-b, q0, a)   q1 = fma(r0, y, q0)
//              r1 = fma(-b, q1, a)   q  = fma(r1, y, q1)
//
// (NVIDIA's div.rn.f32 is the same sequence after MUFU.RCP.) Why it is correct
// (u = 2^-24, M_b in [1, 2) the mantissa of b, eta = b*y - 1):
//  - y0 within 3 floats of 1/b gives |1 - b*y0| <= 3.5 * 2^-23, so y is 1/b
//    with eta <= M_b * u / 2 from its own rounding plus 2^-42 from the step.
//  - q0 is within 2^-23 |a/b|; q1 = q0 + r0*y has error |a/b - q0| * (eta +
//    rounding of r0) < 2^-45 |a/b| before its rounding: q1 is faithful (one
//    of the two floats around Q = a/b), so r1 = a - b*q1 is exact (the
//    remainder of a faithful quotient is a float, Boldo and Daumas).
//  - q1 + r1*y = Q + (Q - q1) * eta, rounded once. The quotient of two
//    24-bit numbers is never a midpoint between floats, and is at least
//    ulp(Q) * u / M_b away from one (Q - m = ulp-scaled integer / B, B the
//    24-bit integer of b; Markstein's argument for his theorem: Cornea,
//    Harrison and Tang, "Scientific Computing on Itanium-based Systems", and
//    the Handbook of Floating-Point Arithmetic, division by fma). With
//    |Q - q1| <= ulp/2 + dist(Q, m), the error stays below that distance, and
//    q = RN(Q), when eta < (2u/M_b) (1 - 2u/M_b): for y = RN(1/b) (eta <=
//    M_b u/2) with every mantissa (M_b^2 <= 4 - 8u), and for the other neighbour of 1/b (which
//    the step gives where 1/b lies within 2^-42 of a midpoint) when
//    M_b <= 2 - 2^-14. Beyond that it fails: b = 2 - 2^-23 refines even an
//    exact y0 to y = 0.5, and 1/b comes out 1 ulp low. So the safe range
//    leaves the 512 largest mantissas of b to float64.
// tests/fuzz/div32_exhaustive.c checks this on the CPU: every mantissa of b
// with every y0 within 8 ulps, every a where y is not RN(1/b), and random
// pairs over the safe range.
//
// The safe range, on the biased exponents Ea, Eb: Eb in [2, 252] (b normal, in
// [2^-125, 2^126): Vulkan's 2.5 ulp hold and y is normal) with a mantissa below
// 0x7ffe00; and either a = +-0, or Ea >= 48 (the remainders, multiples of
// 2^(ea - 47), are zero or normal: a device that flushes float32 subnormals
// computes the same) with Ea < 255 and Ea - Eb in [-124, 125] (the quotient
// normal, far from overflow). Every step is then a normal float or zero. The
// test is made of float comparisons, cheaper than the exponents' bits (session
// 16 on the H200: Black-Scholes float32 98.7 against 93.8 x10^9 options/s):
// |b| in [2^-125, 2^126), |a| >= 2^-79, and for the exponents' difference
// |q0| in [2^-123, 2^124), q0 = a * y within 2^-22 of a/b, so that
// |a/b| = 2^(Ea - Eb) M_a / M_b with M_a / M_b in (1/2, 2) bounds Ea - Eb to
// [-124, 125]; an overflowed, underflowed or NaN q0 fails it (NaN and inf
// operands too). The test accepts a subset of the range (99 % of random pairs
// that the range holds; tests/fuzz/div32_range_subset.py). A zero dividend gives q = +-0 whose sign the sums may
// lose: q0 = a * y, which has it, is selected.
//
// Divisions marked DivPrecision::kDriver (kir.h) stay as they are: the math
// library's own, which correct the driver's quotient themselves (dd.div's
// Newton steps on the exact remainder) or need only a few good bits (a first
// reciprocal, a correction term far below an ulp of the result). Rewriting
// them would pay for a float64 division (a long sequence on NVIDIA) twice.
//
// DivideByPowersOfTwo, first (compile runs it on every device, fastmath or not): a float
// division by a constant +-2^k, k >= 0 (1, 2, 4, -0.5 is not one: |c| >= 1), whose
// reciprocal is a normal number, becomes a multiplication by that reciprocal. Both
// operations round the same real number x * 2^-k once, so the results are the same, signed
// zeros, infinities and NaNs included; a device that flushes subnormals flushes the
// product where it flushes the quotient (|c| >= 1: a subnormal x gives a subnormal or zero
// quotient either way). `(a + b) / 2` then costs one multiply instead of the correctly
// rounded division below (or the driver's). LLVM makes the same change for numba.njit.
#pragma once

#include <cstdint>

#include "kir/kir.h"
#include "util/status.h"

namespace nvk::kir {

// Returns how many divisions it rewrote.
size_t DivideByPowersOfTwo(Module& m);

// Returns how many divisions it rewrote.
size_t DivideFloat32InFloat64(Module& m);

struct Float32DivisionOptions {
    // The device's Fma rounds once: the float32 sequence in the safe range,
    // float64 in a branch for the rest. Without it, DivideFloat32InFloat64.
    bool fused_fma = false;
    // Tests on lavapipe, whose 1/b is exact and whose Fma rounds twice:
    // test_ulps moves y0 by -N..N ulps (chosen from the operands' bits, so that
    // one run sees every offset), as loose as a driver's may be; exact_fma
    // computes each Fma exactly in float64 (rounded to odd, then to float32).
    uint32_t test_ulps = 0;
    bool exact_fma = false;
};

// The division chosen by `options`; returns how many divisions it rewrote.
// The fused form splits each block at its divisions (the float64 way in a
// block of its own; values that cross the new blocks go through variables,
// as KIR requires outside the entry block).
size_t DivideFloat32(Module& m, const Float32DivisionOptions& options);

}  // namespace nvk::kir
