// The structurizer's steps (structurize.cc runs them in order) and its
// structured-form checker.
#pragma once

#include "kir/kir.h"
#include "util/status.h"

namespace nvk::structurize {

// Drop unreachable blocks, turn `condbr c, t, t` into `br t`, and give every
// small return block one copy per predecessor.
util::Status Canonicalize(kir::Module& module);
// Give every natural loop one header, one continue block and one merge block.
util::Status NormalizeLoops(kir::Module& module);
// Make each acyclic region nest properly and give every selection a merge.
util::Status StructureSelections(kir::Module& module);
// Order blocks so that dominators come first and every construct is contiguous.
void OrderBlocks(kir::Function& function);

// Check the structured-form rules of kir.h (SPIR-V 2.11, conservatively):
// every conditional branch has a merge annotation; merge blocks and continue
// targets are unique; headers dominate their merges; back edges come only from
// a loop's continue target; a branch leaving a construct goes to its merge, or
// breaks/continues the innermost loop; blocks are in dominator order.
util::Status CheckStructured(const kir::Module& module);

}  // namespace nvk::structurize
