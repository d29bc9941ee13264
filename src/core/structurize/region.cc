#include "structurize/region.h"

#include <algorithm>

namespace nvk::structurize {

using kir::BlockId;
using kir::kNone;

uint32_t Region::NodeOf(BlockId entry) const {
    for (uint32_t i = 0; i < nodes.size(); ++i)
        if (nodes[i].entry == entry) return i;
    return kNone;
}

std::vector<uint32_t> Region::Reach(uint32_t from, uint32_t stop) const {
    std::vector<uint8_t> seen(nodes.size() + 1, 0);
    std::vector<uint32_t> out, work{from};
    seen[from] = 1;
    while (!work.empty()) {
        uint32_t n = work.back();
        work.pop_back();
        out.push_back(n);
        for (uint32_t s : succs[n]) {
            if (seen[s] || s == stop || s == x || nodes[s].kind == RegionNode::Kind::kSpecial)
                continue;
            seen[s] = 1;
            work.push_back(s);
        }
    }
    return out;
}

uint32_t Region::Join(uint32_t b) const {
    uint32_t p = Ipdom(b);
    if (p != x) return p;
    std::vector<uint32_t> arms;
    for (uint32_t s : succs[b])
        if (s != x && nodes[s].kind != RegionNode::Kind::kSpecial) arms.push_back(s);
    if (arms.empty()) return x;
    if (arms.size() == 1) return arms[0];
    auto valid = [&](uint32_t n) {
        std::vector<uint8_t> before(nodes.size() + 1, 0);
        for (uint32_t r : Reach(b, n)) before[r] = 1;
        for (uint32_t r : Reach(n, x))
            if (before[r]) return false;
        return true;
    };
    std::vector<uint8_t> in0(nodes.size() + 1, 0);
    std::vector<uint32_t> r0 = Reach(arms[0], x), r1 = Reach(arms[1], x);
    for (uint32_t r : r0) in0[r] = 1;
    std::vector<uint32_t> both;
    for (uint32_t r : r1)
        if (in0[r]) both.push_back(r);
    std::sort(both.begin(), both.end(),
              [&](uint32_t a, uint32_t c) { return dom.rpo_pos[a] < dom.rpo_pos[c]; });
    for (uint32_t n : both)
        if (valid(n)) return n;
    if (both.empty()) {
        uint32_t big = r0.size() >= r1.size() ? arms[0] : arms[1];
        if (valid(big)) return big;
    }
    return x;
}

std::vector<BlockId> RegionHeaders(const kir::Function& f) {
    std::vector<BlockId> out{kNone};
    for (const kir::Block& b : f.blocks)
        if (b.merge.kind == kir::Merge::Kind::kLoop) out.push_back(b.id);
    return out;
}

util::Result<Region> BuildRegion(const kir::Function& f, BlockId header) {
    Cfg cfg(f);
    size_t n = cfg.ids.size();
    // Loop constructs and the innermost loop (owner) of every reachable block.
    struct LoopC {
        uint32_t h, m, c;
        std::vector<uint8_t> in;
        size_t size = 0;
    };
    std::vector<LoopC> loops;
    for (uint32_t i = 0; i < n; ++i) {
        const kir::Merge& mg = f.blocks[i].merge;
        if (mg.kind != kir::Merge::Kind::kLoop || !cfg.dom.Reachable(i)) continue;
        LoopC l{i, cfg.Index(mg.merge), cfg.Index(mg.cont), std::vector<uint8_t>(n, 0)};
        for (uint32_t b = 0; b < n; ++b) {
            if (!cfg.dom.Dominates(i, b)) continue;
            if (cfg.dom.Reachable(l.m) && cfg.dom.Dominates(l.m, b)) continue;
            l.in[b] = 1;
        }
        l.in[l.c] = 1;
        for (uint8_t v : l.in) l.size += v;
        loops.push_back(std::move(l));
    }
    auto owner_of = [&](uint32_t b, int skip) {
        int best = -1;
        for (int li = 0; li < static_cast<int>(loops.size()); ++li) {
            if (li == skip || !loops[li].in[b]) continue;
            if (best < 0 || loops[li].size < loops[best].size) best = li;
        }
        return best;
    };
    int self = -1;
    for (int li = 0; li < static_cast<int>(loops.size()); ++li)
        if (cfg.ids[loops[li].h] == header) self = li;
    if (header != kNone && self < 0) return util::Internal("structurize: lost loop header");

    Region r;
    r.loop = self >= 0;
    auto add = [&](RegionNode::Kind k, uint32_t entry, uint32_t exit) {
        r.nodes.push_back({k, cfg.ids[entry], cfg.ids[exit]});
    };
    if (self >= 0) add(RegionNode::Kind::kBlock, loops[self].h, loops[self].h);
    else add(RegionNode::Kind::kBlock, 0, 0);
    std::vector<uint8_t> child_merge(n, 0);
    for (int li = 0; li < static_cast<int>(loops.size()); ++li) {
        if (li == self) continue;
        if (owner_of(loops[li].h, li) != self) continue;
        add(RegionNode::Kind::kLoop, loops[li].h, loops[li].m);
        child_merge[loops[li].m] = 1;
    }
    for (uint32_t b = 0; b < n; ++b) {
        if (!cfg.dom.Reachable(b) || b == 0 || child_merge[b]) continue;
        if (self >= 0 && (b == loops[self].h || b == loops[self].c)) continue;
        if (owner_of(b, -1) != self) continue;
        add(RegionNode::Kind::kBlock, b, b);
    }
    if (self >= 0) {
        add(RegionNode::Kind::kSpecial, loops[self].c, loops[self].c);
        add(RegionNode::Kind::kSpecial, loops[self].m, loops[self].m);
    }
    r.x = static_cast<uint32_t>(r.nodes.size());
    r.succs.resize(r.nodes.size() + 1);
    for (uint32_t i = 0; i < r.nodes.size(); ++i) {
        const RegionNode& node = r.nodes[i];
        if (node.kind == RegionNode::Kind::kSpecial) {
            r.succs[i].push_back(r.x);
            continue;
        }
        std::vector<BlockId> targets = f.FindBlock(node.exit)->Successors();
        if (targets.empty()) r.succs[i].push_back(r.x);
        for (BlockId t : targets) {
            uint32_t s = r.NodeOf(t);
            if (s == kNone || s == 0)
                return util::Internal("structurize: edge " + std::to_string(node.exit) + " -> " +
                                      std::to_string(t) + " leaves its region");
            if (std::find(r.succs[i].begin(), r.succs[i].end(), s) == r.succs[i].end())
                r.succs[i].push_back(s);
        }
    }
    r.dom = ComputeDominators(r.succs, 0);
    r.pdom = ComputePostDominators(r.succs, r.x);
    return r;
}

}  // namespace nvk::structurize
