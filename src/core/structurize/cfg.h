// Graph helpers shared by the structurizer's steps and its checker: dominator
// trees of small index graphs, a CFG view of a KIR function, and the edits
// the steps make (new blocks, retargeted branches, copied blocks).
#pragma once

#include <string>
#include <unordered_map>
#include <vector>

#include "kir/kir.h"

namespace nvk::structurize {

using Succs = std::vector<std::vector<uint32_t>>;

// Dominators of a graph given as successor lists, from `entry`.
struct DomTree {
    std::vector<uint32_t> idom;     // kir::kNone for unreachable nodes; idom[entry] == entry
    std::vector<uint32_t> rpo;      // reachable nodes in reverse post-order
    std::vector<uint32_t> rpo_pos;  // position in rpo, kNone if unreachable

    bool Reachable(uint32_t n) const { return rpo_pos[n] != kir::kNone; }
    bool Dominates(uint32_t a, uint32_t b) const;  // reflexive; false if either is unreachable
};
DomTree ComputeDominators(const Succs& succs, uint32_t entry);
// The same tree on the reversed graph: post-dominators, with `exit` as root.
DomTree ComputePostDominators(const Succs& succs, uint32_t exit);

// A snapshot of the function's CFG, by position in function.blocks.
struct Cfg {
    explicit Cfg(const kir::Function& f);
    uint32_t Index(kir::BlockId id) const;  // kNone if missing
    std::vector<kir::BlockId> ids;
    std::unordered_map<kir::BlockId, uint32_t> index;
    Succs succs, preds;
    DomTree dom;
};

// Edits. NewBlock appends an empty block and returns its id.
kir::BlockId NewBlock(kir::Function& f, const std::string& name);
// Replace every branch target `from` of the block's terminator by `to`.
void Retarget(kir::Function& f, kir::BlockId block, kir::BlockId from, kir::BlockId to);
// Copy a block (fresh value ids for its own values); returns the copy's id.
kir::BlockId CopyBlock(kir::Function& f, kir::BlockId block);
// Terminator builders for blocks made by the structurizer.
void SetBr(kir::Function& f, kir::BlockId block, kir::BlockId target);
void SetUnreachable(kir::Function& f, kir::BlockId block);
// Append `store <var>, <i32 const value>` before the block's terminator (or at its end).
void AppendStoreConst(kir::Module& m, kir::BlockId block, kir::ValueId var, int64_t value);
// Append `%c = eq (load var), value; condbr %c, if_true, if_false` to an empty block.
void SetDispatch(kir::Module& m, kir::BlockId block, kir::ValueId var, int64_t value,
                 kir::BlockId if_true, kir::BlockId if_false);
// A new i32 local variable in the entry block.
kir::ValueId NewSelectorVar(kir::Module& m);

}  // namespace nvk::structurize
