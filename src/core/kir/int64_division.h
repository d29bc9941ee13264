// 64-bit integer division without the driver's: a workaround for NVIDIA.
//
// NVIDIA's Vulkan compiler (H200, driver 580) gives wrong answers in kernels
// that divide 64-bit integers, in values that do not depend on the division:
// the typed fuzzer's seeds 95 and 1060 (benchmarks/experiments/
// s9_nvidia_bisect.py) computed `(s_u8 >= s_i16)` and `True & a_i64[i]`
// wrongly beside an OpUDiv or OpUMod on 64-bit operands, with the optimiser
// on or off and with every mask of kir/int_ranges.h; without the division, or
// with it folded to a constant, both were right. The hardware has no 64-bit
// divider, so the driver calls a routine of its own for these, and the
// values live across that call are what go wrong.
//
// DivideInt64InFloat64 replaces every 64-bit integer kDiv and kRem with
// straight-line code of additions, multiplications, conversions and selects,
// and one float32 division (the driver's reciprocal, one instruction on NVIDIA):
// no routine call. With y the reciprocal of f64(d) refined by two Newton steps
// in float64 (relative error about 2^-50), the unsigned quotient of n by d
// (1 <= d < 2^62) is
//   q0 = trunc(f64(n) * y), clamped to 2^64 - 1;  r0 = n - q0 * d
// so |q0 - n/d| <= 2^-48 n/d + 1 and |r0| <= 2^16 + d < 2^63: r0 read as signed
// is the true remainder of q0. Then
//   c = trunc(f64(r0) * y);  q1 = q0 + c;  r1 = r0 - c * d
// gives |r1| < d (1 + 2^-32), which two steps of `q -= 1, r += d` while
// r < 0 and two of `q += 1, r -= d` while r >= d bring into [0, d). For
// d >= 2^62 the quotient is at most 3: three conditional subtractions give it.
// The bounds hold for a reciprocal up to 2^-33 off (n y^2 < 1/2), far worse
// than two Newton steps leave. Signed kDiv and kRem divide the magnitudes (negated on the
// unsigned type, so -2^63 is its own magnitude) and give the quotient the
// operands' sign and the remainder the dividend's, truncating as kir.h says.
// A divisor of 0 gives some value (KIR leaves it undefined; the front end
// never divides by 0).
//
// Compile runs it where asked (CompileOptions::emulate_int64_division, on
// NVIDIA: launchers.emulate_int64_division).
#pragma once

#include "kir/kir.h"

namespace nvk::kir {

// Returns how many divisions and remainders it replaced.
size_t DivideInt64InFloat64(Module& m);

}  // namespace nvk::kir
