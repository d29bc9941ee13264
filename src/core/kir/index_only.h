// Which integer values are computed only to index memory.
//
// A value is index-only when every use of it is the index operand of an
// elemptr or indexptr, or index arithmetic (add, sub, mul, shl, convert) whose
// result is itself index-only. Its arithmetic overflows only where the access
// would be out of bounds whatever the arithmetic, so a pass or the emitter may
// treat it as non-overflowing (spirv/wrapping.cc keeps it signed, so that the
// driver folds a 32-bit index's widening into the address; kir/int_ranges.h
// leaves its widenings visible for the same reason).
#pragma once

#include <vector>

#include "kir/kir.h"

namespace nvk::kir {

// Indexed by ValueId: true for the index-only values of `m`'s function.
std::vector<bool> IndexOnlyValues(const Module& m);

}  // namespace nvk::kir
