// Dominators: dominator and post-dominator trees of a KIR function, and the
// orders the verifier and the structurizer walk blocks in.
//
// A block A dominates B when every path from the entry to B passes through A;
// A post-dominates B when every path from B to a function exit passes through
// A. Both trees are computed with the iterative algorithm of Cooper, Harvey
// and Kennedy ("A Simple, Fast Dominance Algorithm"): number the blocks in
// reverse post-order, then repeatedly set each block's immediate dominator to
// the nearest common ancestor of its already-processed predecessors until
// nothing changes. For the small graphs of kernels this converges in two or
// three sweeps and beats Lengauer-Tarjan on simplicity.
//
// The post-dominator tree runs the same algorithm on the reversed graph with a
// virtual exit node (kVirtualExit) as its root: every block that ends in Ret or
// Unreachable is a predecessor of it in the reversed graph. Blocks that cannot
// reach an exit (the body of a loop that never ends) are not in that tree.
//
// Blocks not reachable from the root are absent from a tree: Contains() is
// false, Idom() is kNone, and Dominates() is false for them in either position.
#pragma once

#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "kir/kir.h"

namespace nvk::kir {

// The root of the post-dominator tree: a node after every exit block.
inline constexpr BlockId kVirtualExit = kNone - 1;

struct DomTree {
    // The reachable nodes in reverse post-order of the (forward or reversed)
    // graph, root first. For Dominators() this is a topological order of the
    // forward edges that ignores back edges: a good order to emit blocks in.
    std::vector<BlockId> rpo;
    // Immediate dominator of each reachable node; the root maps to kNone.
    std::unordered_map<BlockId, BlockId> idom;

    BlockId root() const { return rpo.empty() ? kNone : rpo.front(); }
    bool Contains(BlockId b) const { return idom.count(b) != 0; }
    BlockId Idom(BlockId b) const;  // kNone for the root and for absent nodes
    // Reflexive: Dominates(a, a) is true for every contained a.
    bool Dominates(BlockId a, BlockId b) const;
    bool StrictlyDominates(BlockId a, BlockId b) const { return a != b && Dominates(a, b); }
    // Children in the tree, in rpo order.
    const std::vector<BlockId>& Children(BlockId b) const;
    // Position of b in rpo, or kNone.
    uint32_t RpoIndex(BlockId b) const;

    // Filled by the builders below; Dominates() is O(1) through them.
    std::unordered_map<BlockId, uint32_t> pre, post_num, rpo_index;
    std::unordered_map<BlockId, std::vector<BlockId>> children;
};

// Dominator tree rooted at the entry block (function.blocks.front()).
DomTree Dominators(const Function& function);
// Post-dominator tree rooted at kVirtualExit.
DomTree PostDominators(const Function& function);
// SPIR-V's "structural" dominance: the dominator tree of the graph in which
// every header also has edges to its merge block and continue target, as if
// the merge annotations were branches. A block after a selection whose arms
// all return (an otherwise unreachable merge) is then reachable, and a
// continue target reached from inside a selection is not dominated by it.
DomTree StructuredDominators(const Function& function);

// Predecessors of every block (targets that name no block are ignored). A
// block that branches twice to the same target appears twice.
std::unordered_map<BlockId, std::vector<BlockId>> Predecessors(const Function& function);
// The natural loop of each loop header (a block some edge from a block it dominates
// goes back to): the header and the blocks that reach such a back edge without passing
// through the header. `dom` is Dominators(function).
std::unordered_map<BlockId, std::unordered_set<BlockId>> NaturalLoops(const Function& function,
                                                                      const DomTree& dom);
// Blocks reachable from the entry, in reverse post-order (same as Dominators().rpo).
std::vector<BlockId> ReversePostOrder(const Function& function);

}  // namespace nvk::kir
