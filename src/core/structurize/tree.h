// The statement tree: a CFG in CFG form, read as nested statements.
//
// BuildTree reads a reducible CFG as a tree of statements in the style of
// WebAssembly: `block L { ... }` (a `br L` inside jumps to just after the
// block), `loop L { ... }` (a `br L` inside jumps back to its start; falling
// off the end of its body leaves it), `if c { ... } else { ... }`, straight-line
// code of one CFG block, `br L`, `ret`, `unreachable`. Every CFG block appears
// exactly once, so the translation never copies code.
//
// The construction follows the dominator tree (N. Ramsey, "Beyond Relooper:
// recursive translation of unstructured control flow to structured control
// flow", ICFP 2022):
//   - a block with two or more forward in-edges (a join) is placed right after
//     a `block` statement that encloses every branch to it; that statement is
//     opened inside its immediate dominator, joins with higher reverse
//     post-order numbers outermost;
//   - a block with one forward in-edge is placed inline where its only
//     predecessor branches to it;
//   - a loop header opens a `loop` statement around its own code, the joins of
//     its loop inside and the joins outside the loop (its exits) outside, so
//     that a loop exit becomes a `block` wrapped around the `loop`.
// Simplify then removes every `block` whose branches are all in tail position
// (nothing runs between the branch and the end of the block): those are
// ordinary if/else joins, which fall through without a construct of their own.
#pragma once

#include <vector>

#include "kir/kir.h"
#include "util/status.h"

namespace nvk::structurize {

struct Stmt;
using Seq = std::vector<Stmt>;

struct Stmt {
    enum class Kind { kCode, kIf, kBlock, kLoop, kBr, kRet, kUnreachable };
    Kind kind = Kind::kCode;
    kir::BlockId block = kir::kNone;  // kCode: whose instructions; kIf: whose condition
    kir::ValueId cond = kir::kNone;   // kIf
    int label = -1;                   // kBlock, kLoop: its own label; kBr: the target
    Seq body;                         // kBlock, kLoop: the body; kIf: the true arm
    Seq orelse;                       // kIf: the false arm
};

// Labels: a `block` ending before CFG block b has label 2*b; a `loop` headed by
// b has label 2*b + 1.
inline int BlockLabel(kir::BlockId b) { return static_cast<int>(2 * b); }
inline int LoopLabel(kir::BlockId b) { return static_cast<int>(2 * b + 1); }

// Fails with kUnsupported on an irreducible CFG. Unreachable blocks are left out.
util::Result<Seq> BuildTree(const kir::Function& function);

// Remove the `block` statements that every branch leaves in tail position.
void Simplify(Seq& seq);

}  // namespace nvk::structurize
