// The structurizer's structured-form checker (check.cc).
#pragma once

#include "kir/kir.h"
#include "util/status.h"

namespace nvk::structurize {

// Check the structured-form rules of kir.h (SPIR-V 2.11, conservatively):
// every conditional branch has a merge annotation; merge blocks and continue
// targets are unique; headers dominate their merges; back edges come only from
// a loop's continue target; a branch leaving a construct goes to its merge, or
// breaks/continues the innermost loop; blocks are in dominator order.
util::Status CheckStructured(const kir::Module& module);

}  // namespace nvk::structurize
