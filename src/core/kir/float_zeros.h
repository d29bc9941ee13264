// A workaround for lavapipe (Mesa's llvmpipe): float zeros it cannot see.
//
// llvmpipe's code generator shortcuts float arithmetic whose operand is the
// constant +0.0, whatever SignedZeroInfNanPreserve says: x + 0 gives x (wrong
// for x = -0.0), 0 - x gives -x, x * 0 and 0 / x give 0 (wrong for x = inf,
// NaN, negative), x / 0 gives an undefined value (0 on Mesa 22) instead of
// inf or NaN. numba.njit computes these by IEEE 754, and so must we.
//
// HideFloatZeros makes every f32/f64 +0.0 the kernel computes with a value no
// compiler can fold, using the bits of a hidden u32 parameter "float.zero"
// (kir/abi.h) that the launcher sets to 0:
//   - constants -0.0 (llvmpipe folds `1.0 if c else -0.0` into a conversion
//     of c, losing the sign) become those bits with the sign bit or-ed in;
//   - constants +0.0, and conversions and bitcasts of constants that give +0.0
//     (a bool or integer constant converted to float, which the SPIR-V
//     optimiser would fold into a constant 0.0), become those bits bitcast to
//     f32 (or widened to u64 and bitcast to f64);
//   - every other conversion of an integer or bool to a float becomes
//     bitcast(bitcast(v) | bits): the same value, since the optimiser or the
//     driver may still prove the integer constant (min(u, False), 2**63 & u32,
//     a comparison decided by ranges) and fold the conversion into 0.0.
// Zeros that float arithmetic on nonzero constants produces are not covered.
// A module with neither is left alone (no parameter is added). Costs one push
// constant load per invocation and an integer `or` per conversion; Compile runs
// it only where asked (CompileOptions::hide_float_zeros: lavapipe, without
// fastmath).
#pragma once

#include "kir/kir.h"
#include "util/status.h"

namespace nvk::kir {

inline constexpr const char* kFloatZeroParam = "float.zero";

// Returns how many uses it replaced.
util::Result<size_t> HideFloatZeros(Module& m);

}  // namespace nvk::kir
