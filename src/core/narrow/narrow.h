// NarrowIntegers: compute 64-bit integer operations in 32 bits where that
// provably gives the same results (see docs/narrowing.md).
//
// The front end gives every value the width Numba's typing gives it, so index
// math, loop counters and ids are i64. GPUs do 64-bit integer math at half
// speed or worse. This pass rewrites, in CFG form, before structurizing:
//
//   exact   an i64/u64 add sub mul div rem neg and or xor not shl shr, min max
//           abs, select, comparison, conversion to float or bool, or elemptr
//           index whose operands' and result's ranges (narrow/ranges.h) all
//           fit i32 (else all fit u32) is computed in that kind; where the wide
//           value is still needed it is the sign (zero) extension of the
//           narrow one. Shift counts must be proven in [0, 31].
//   low     a value only ever observed through truncation to 32 bits or less
//           (convert to i32/u32/i16/..., or through add sub mul and or xor not
//           neg, shl by a count proven < 32, select, i64<->u64 conversions and
//           variables whose every load is observed that way) is computed in
//           32 bits whatever its range: the low bits of those ops depend only
//           on the low bits of their operands. No wide value exists then; the
//           pass fails with kInternal if one would still be needed.
//   vars    a 64-bit local variable whose every stored value fits i32 (u32)
//           becomes an i32 (u32) variable; one whose every load is observed
//           only through truncation becomes a 32-bit variable of its sign.
//
// Nothing is narrowed that the ranges do not prove: a u32-ranged value and a
// negative one have no common 32-bit kind, so their comparison stays 64-bit.
// Dead pure instructions are removed at the end.
#pragma once

#include <cstddef>

#include "kir/kir.h"
#include "narrow/ranges.h"
#include "util/status.h"

namespace nvk::narrow {

struct NarrowOptions {
    RangeOptions ranges;
};

util::Status NarrowIntegers(kir::Module& module, const NarrowOptions& options);

// Instructions that compute on or move 64-bit integers: arithmetic,
// comparisons, selects, math, elemptr indices, loads and stores with an i64/u64
// result or operand, and loads and stores of 64-bit local variables.
// Conversions (truncation is free, an extension one op) and the u64 address
// of elemptr are not counted.
size_t CountWideIntOps(const kir::Module& module);

// The ranges the front end's parameter names promise: array extents
// ("NAME.shape[k]") are never negative. Used by compile.cc.
std::vector<RangeOptions::ParamRange> ExtentParamRanges(const kir::Module& module);

}  // namespace nvk::narrow
