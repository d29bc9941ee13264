// A workaround for lavapipe (Mesa's llvmpipe): float zeros it cannot see.
//
// llvmpipe's code generator shortcuts float arithmetic whose operand is the
// constant +0.0, whatever SignedZeroInfNanPreserve says: x + 0 gives x (wrong
// for x = -0.0), 0 - x gives -x, x * 0 and 0 / x give 0 (wrong for x = inf,
// NaN, negative), x / 0 gives an undefined value (0 on Mesa 22) instead of
// inf or NaN. numba.njit computes these by IEEE 754, and so must we.
//
// HideFloatZeros makes every f32/f64 +0.0 the kernel computes with a value no
// compiler can fold: the bits of a hidden u32 parameter "float.zero"
// (kir/abi.h), which the launcher sets to 0, bitcast to f32 (or widened to u64
// and bitcast to f64). It replaces constants +0.0 and conversions and bitcasts
// of constants that give +0.0 (a bool or integer constant converted to float:
// the SPIR-V optimiser would fold those into a constant 0.0). Zeros that only
// the driver's own folding of integer code produces are not covered. A module
// without such zeros is left alone (no parameter is added). Costs one push
// constant load per invocation; Compile runs it only where asked
// (CompileOptions::hide_float_zeros: lavapipe, without fastmath).
#pragma once

#include "kir/kir.h"
#include "util/status.h"

namespace nvk::kir {

inline constexpr const char* kFloatZeroParam = "float.zero";

// Returns how many uses it replaced.
util::Result<size_t> HideFloatZeros(Module& m);

}  // namespace nvk::kir
