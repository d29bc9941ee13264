// Selections: make every acyclic region nest properly, then give every
// conditional branch a merge block of its own.
//
// A conditional branch b nests properly when every node on the paths from b
// to its immediate post-dominator p (not counting breaks, continues and
// returns) is dominated by b: the region b..p has one entry. Structured
// programs without short circuits always do. A node y that breaks this (a
// "side entry", as in `if a and b: X else: Y`, where Y is reached from both
// tests) is fixed in one of two ways, first y in topological order first:
//
//   copy     y is a small block: its predecessors inside b..p get their own
//            copy of y. Copies may make y's successors side entries in turn;
//            they are fixed by later rounds (bounded by a budget).
//   guard    otherwise: let d = idom(y) and q = ipdom(d). The nodes L that y
//            reaches before q move behind d's paths as a chain of guarded
//            selections, one per node, in topological order:
//
//              (paths of d) ─► G1: if sel == 1 { L1 } ─► G2: if sel == 2 { L2 } ─► … ─► q
//
//            every edge from d's paths into L or q stores the target's number
//            in a fresh selector variable (0 for q) and jumps to G1; an edge
//            from Li to Lj or q stores j (or 0) and jumps to G(i+1).
//
// Once every branch nests, merges are assigned outermost first: b's merge is
// p, unless p is X (every path breaks, continues or returns: a fresh
// unreachable merge), a loop's continue or merge block, a loop header, or
// already the merge of an enclosing header; then a fresh block F (`br p`)
// takes the edges from b..p into p and becomes b's merge.
#include <algorithm>
#include <set>

#include "structurize/region.h"
#include "structurize/steps.h"

namespace nvk::structurize {

using kir::BlockId;
using kir::kNone;
using Kind = RegionNode::Kind;

namespace {

constexpr size_t kCopyMaxInsts = 12;  // blocks up to this size are copied, not guarded

struct State {
    kir::Module& m;
    kir::Function& f;
    size_t copy_budget;
    std::set<BlockId> claimed;  // blocks that are already a merge or continue target
};

bool IsCondBr(const kir::Function& f, const RegionNode& n) {
    return n.kind == Kind::kBlock && f.FindBlock(n.exit)->terminator().op == kir::Op::kCondBr;
}

// Redirect every branch from the nodes `from` to node `to` (an entry block) to `repl`.
void Redirect(kir::Function& f, const Region& r, const std::vector<uint32_t>& from, uint32_t to,
              BlockId repl) {
    for (uint32_t u : from)
        if (r.nodes[u].kind != Kind::kSpecial) Retarget(f, r.nodes[u].exit, r.nodes[to].entry, repl);
}

void Guard(State& s, const Region& r, uint32_t y) {
    kir::Function& f = s.f;
    uint32_t d = r.dom.idom[y];
    uint32_t q = r.Join(d);
    std::vector<uint32_t> lset = r.Reach(y, q);
    std::sort(lset.begin(), lset.end(),
              [&](uint32_t a, uint32_t b) { return r.dom.rpo_pos[a] < r.dom.rpo_pos[b]; });
    std::vector<int> pos(r.nodes.size() + 1, -1);
    for (size_t i = 0; i < lset.size(); ++i) pos[lset[i]] = static_cast<int>(i);
    std::vector<uint32_t> dpaths = r.Reach(d, q);

    kir::ValueId sel = NewSelectorVar(s.m);
    std::vector<BlockId> g(lset.size() + 1);
    for (BlockId& b : g) b = NewBlock(f, "guard");
    for (uint32_t u : dpaths) {
        if (r.nodes[u].kind == Kind::kSpecial) continue;
        BlockId next = pos[u] < 0 ? g[0] : g[pos[u] + 1];
        for (uint32_t t : r.succs[u]) {
            if (t == r.x || (pos[t] < 0 && t != q)) continue;
            BlockId e = NewBlock(f, "to");
            AppendStoreConst(s.m, e, sel, t == q ? 0 : pos[t] + 1);
            SetBr(f, e, next);
            Retarget(f, r.nodes[u].exit, r.nodes[t].entry, e);
        }
    }
    for (size_t i = 0; i < lset.size(); ++i)
        SetDispatch(s.m, g[i], sel, static_cast<int64_t>(i + 1), r.nodes[lset[i]].entry, g[i + 1]);
    if (q == r.x) SetUnreachable(f, g.back());
    else SetBr(f, g.back(), r.nodes[q].entry);
}

// One fix or one merge; returns false when the region is finished.
util::Result<bool> Step(State& s, const Region& r) {
    kir::Function& f = s.f;
    // 1. The first side entry in topological order.
    uint32_t bad = kNone;
    std::vector<uint32_t> bad_reach;
    for (uint32_t b : r.dom.rpo) {
        if (b == r.x || (b == 0 && r.loop) || !IsCondBr(f, r.nodes[b])) continue;
        std::vector<uint32_t> reach = r.Reach(b, r.Join(b));
        for (uint32_t y : reach) {
            if (r.dom.Dominates(b, y)) continue;
            if (bad == kNone || r.dom.rpo_pos[y] < r.dom.rpo_pos[bad]) {
                bad = y;
                bad_reach = reach;
            }
        }
    }
    if (bad != kNone) {
        // Merges chosen before this fix may no longer hold: choose them again.
        for (const RegionNode& n : r.nodes) {
            kir::Block* nb = f.FindBlock(n.entry);
            if (n.kind != Kind::kBlock || nb->merge.kind != kir::Merge::Kind::kSelection) continue;
            s.claimed.erase(nb->merge.merge);
            nb->merge = {};
        }
        const RegionNode& y = r.nodes[bad];
        size_t size = y.kind == Kind::kBlock ? f.FindBlock(y.entry)->insts.size() : kNone;
        if (size <= kCopyMaxInsts && size <= s.copy_budget) {
            s.copy_budget -= size;
            BlockId copy = CopyBlock(f, y.entry);
            for (uint32_t u : bad_reach)
                for (uint32_t t : r.succs[u])
                    if (t == bad) Retarget(f, r.nodes[u].exit, y.entry, copy);
        } else {
            Guard(s, r, bad);
        }
        return true;
    }
    // 2. Merges, outermost first.
    for (uint32_t b : r.dom.rpo) {
        if (b == r.x || (b == 0 && r.loop) || !IsCondBr(f, r.nodes[b])) continue;
        kir::Block* hb = f.FindBlock(r.nodes[b].entry);
        if (hb->merge.kind != kir::Merge::Kind::kNone) continue;
        uint32_t p = r.Join(b);
        if (p == r.x) {
            BlockId merge = NewBlock(f, "never");
            SetUnreachable(f, merge);
            f.FindBlock(r.nodes[b].entry)->merge = {kir::Merge::Kind::kSelection, merge, kNone};
            s.claimed.insert(merge);
            return true;
        }
        const RegionNode& pn = r.nodes[p];
        if (pn.kind != Kind::kBlock || s.claimed.count(pn.entry)) {
            BlockId merge = NewBlock(f, "merge");
            Redirect(f, r, r.Reach(b, p), p, merge);
            SetBr(f, merge, pn.entry);
            f.FindBlock(r.nodes[b].entry)->merge = {kir::Merge::Kind::kSelection, merge, kNone};
            s.claimed.insert(merge);
            return true;
        }
        hb->merge = {kir::Merge::Kind::kSelection, pn.entry, kNone};
        s.claimed.insert(pn.entry);
        // No edit to the graph: continue with the next header on this analysis.
    }
    return false;
}

}  // namespace

util::Status StructureSelections(kir::Module& m) {
    kir::Function& f = m.function;
    size_t insts = 0;
    for (const kir::Block& b : f.blocks) insts += b.insts.size();
    State s{m, f, insts + 64, {}};
    for (const kir::Block& b : f.blocks) {
        if (b.merge.kind != kir::Merge::Kind::kLoop) continue;
        s.claimed.insert(b.merge.merge);
        s.claimed.insert(b.merge.cont);
    }
    // Copies and guards can cascade on adversarial short circuits; fail
    // loudly instead of growing without bound.
    size_t block_limit = 32 * f.blocks.size() + 512;
    for (BlockId header : RegionHeaders(f)) {
        for (size_t round = 0;; ++round) {
            if (round > 5000 || f.blocks.size() > block_limit)
                return util::Internal("structurize: selections diverged (code growth limit)");
            NVK_ASSIGN_OR_RETURN(Region r, BuildRegion(f, header));
            NVK_ASSIGN_OR_RETURN(bool more, Step(s, r));
            if (!more) break;
        }
    }
    return util::Status::Ok();
}

}  // namespace nvk::structurize
