// Regions: the acyclic graphs the selection step works on.
//
// After loop normalization every loop is H (merge M, continue C). The loop's
// construct is the SPIR-V one: the blocks H dominates and M does not. A region
// is the function body outside every loop, or one loop's construct outside its
// inner loops. Inside a region an inner loop is one node, a *unit*, entered at
// its header and left through its merge block's branch; the region's own C and
// M are *special* nodes that end paths (continue and break), as do returns.
// With the back edge C -> H left out, a region is a DAG with one entry; a
// virtual exit node X follows every node without successors, so
// post-dominators are defined.
#pragma once

#include <vector>

#include "structurize/cfg.h"
#include "util/status.h"

namespace nvk::structurize {

struct RegionNode {
    enum class Kind { kBlock, kLoop, kSpecial };
    Kind kind = Kind::kBlock;
    kir::BlockId entry = kir::kNone;
    kir::BlockId exit = kir::kNone;  // the block whose terminator leaves the node
};

struct Region {
    std::vector<RegionNode> nodes;  // nodes[0] is the entry
    uint32_t x = 0;                 // the virtual exit: index nodes.size()
    Succs succs;                    // by node index, x included
    DomTree dom, pdom;
    bool loop = false;              // a loop's region: nodes[0] is a loop header

    uint32_t NodeOf(kir::BlockId entry) const;  // kNone if not a node entry
    // Nodes reachable from `from` without passing `stop`, X or a special node.
    std::vector<uint32_t> Reach(uint32_t from, uint32_t stop) const;
    uint32_t Ipdom(uint32_t n) const { return pdom.idom[n]; }
    // Where the paths from n that do not break, continue or return meet: the
    // immediate post-dominator when there is one short of X; otherwise the
    // first node both arms reach (or the larger arm, when the arms are
    // disjoint) such that nothing before it is reachable from it; else X.
    uint32_t Join(uint32_t n) const;
};

// The headers of all loops (kNone first: the function region).
std::vector<kir::BlockId> RegionHeaders(const kir::Function& f);
// Build the region of the loop with this header (kNone: the function region).
util::Result<Region> BuildRegion(const kir::Function& f, kir::BlockId header);

}  // namespace nvk::structurize
