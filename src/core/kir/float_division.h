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
// Divisions marked DivPrecision::kDriver (kir.h) stay as they are: the math
// library's own, which correct the driver's quotient themselves (dd.div's
// Newton steps on the exact remainder) or need only a few good bits (a first
// reciprocal, a correction term far below an ulp of the result). Rewriting
// them would pay for a float64 division (a long sequence on NVIDIA) twice.
#pragma once

#include "kir/kir.h"
#include "util/status.h"

namespace nvk::kir {

// Returns how many divisions it rewrote.
size_t DivideFloat32InFloat64(Module& m);

}  // namespace nvk::kir
