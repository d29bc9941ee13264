// Verify: check the invariants of kir.h (and, for a structured function, the
// structured-form rules) before a pass or the emitter relies on them.
//
// What is checked (docs/kir.md lists it for contributors):
//   module     pointer types point at a valid, non-void type; parameters are
//              scalars at offsets aligned to their size that do not overlap.
//   blocks     at least one; ids unique; non-empty names unique; each block
//              ends in its only terminator; branch targets and merge
//              annotations name existing blocks; the entry has no predecessors.
//   values     defined once, ValueInfo agrees with the defining instruction;
//              the use rules of kir.h (entry values anywhere after their
//              definition, others only later in their own block); Var, Param
//              and Builtin only in the entry block.
//   types      every op's operand count and types (same-type arithmetic,
//              comparisons giving bool, condbr on bool, load/store through
//              pointers of the right pointee, elemptr on a u64 base with an
//              integer index, ...).
//   CFG        reducible: every retreating edge goes to a block that
//              dominates its source. Unreachable blocks are allowed in both
//              forms (the front end leaves some behind after `return`, and
//              SPIR-V accepts them); they are checked locally but take no
//              part in the dominance rules.
//   structured (function.structured only) SPIR-V's structured control flow:
//              blocks ordered dominators first; headers end in the right
//              branch; merge blocks unique and strictly dominated by their
//              header; back edges only to loop headers, at most one per
//              loop, from a block its continue target dominates; a condbr
//              without a merge annotation must be a break, continue or back
//              edge of its innermost loop; an edge entering a construct goes
//              to its header (its continue target for a continue construct),
//              and an edge leaving one goes to its merge or to the innermost
//              loop's merge or continue target; no ret inside a loop.
#pragma once

#include "kir/kir.h"
#include "util/status.h"

namespace nvk::kir {

// The first problem found, as kInternal. The message names the problem and
// shows the printed KIR with the offending line marked:
//
//   kir verifier: %5 = add %3, %4 : i32: operand types differ (i32, f32)
//        1 | func main {
//        ...
//   >    6 |   %5 = add %3, %4 : i32
//          |   ^~~~~~~~~~~~~~~~~~~~~
util::Status Verify(const Module& module);

}  // namespace nvk::kir
