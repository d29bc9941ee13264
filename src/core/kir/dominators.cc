#include "kir/dominators.h"

#include <algorithm>

namespace nvk::kir {
namespace {

using Adjacency = std::unordered_map<BlockId, std::vector<BlockId>>;

const std::vector<BlockId>& Edges(const Adjacency& adj, BlockId b) {
    static const std::vector<BlockId> kEmpty;
    auto it = adj.find(b);
    return it == adj.end() ? kEmpty : it->second;
}

// Post-order of the nodes reachable from root, iteratively (deep graphs must
// not overflow the stack).
std::vector<BlockId> PostOrder(BlockId root, const Adjacency& succs) {
    std::vector<BlockId> order;
    std::unordered_map<BlockId, bool> seen;
    std::vector<std::pair<BlockId, size_t>> stack{{root, 0}};
    seen[root] = true;
    while (!stack.empty()) {
        auto& [node, next] = stack.back();
        const std::vector<BlockId>& out = Edges(succs, node);
        if (next < out.size()) {
            BlockId s = out[next++];
            if (!seen[s]) {
                seen[s] = true;
                stack.push_back({s, 0});
            }
        } else {
            order.push_back(node);
            stack.pop_back();
        }
    }
    return order;
}

// Cooper-Harvey-Kennedy over the graph (succs for the order, preds for the meet).
DomTree Build(BlockId root, const Adjacency& succs, const Adjacency& preds) {
    DomTree t;
    t.rpo = PostOrder(root, succs);
    std::reverse(t.rpo.begin(), t.rpo.end());
    for (uint32_t i = 0; i < t.rpo.size(); ++i) t.rpo_index[t.rpo[i]] = i;

    // idom as rpo indices; kNone = not yet known.
    std::vector<uint32_t> idom(t.rpo.size(), kNone);
    idom[0] = 0;
    auto intersect = [&](uint32_t a, uint32_t b) {
        while (a != b) {
            while (a > b) a = idom[a];
            while (b > a) b = idom[b];
        }
        return a;
    };
    for (bool changed = true; changed;) {
        changed = false;
        for (uint32_t i = 1; i < t.rpo.size(); ++i) {
            uint32_t best = kNone;
            for (BlockId p : Edges(preds, t.rpo[i])) {
                auto it = t.rpo_index.find(p);
                if (it == t.rpo_index.end() || idom[it->second] == kNone) continue;
                best = best == kNone ? it->second : intersect(it->second, best);
            }
            if (best != idom[i]) {
                idom[i] = best;
                changed = true;
            }
        }
    }
    for (uint32_t i = 0; i < t.rpo.size(); ++i) {
        BlockId b = t.rpo[i];
        t.idom[b] = i == 0 ? kNone : t.rpo[idom[i]];
        t.children[b];
        if (i != 0) t.children[t.rpo[idom[i]]].push_back(b);
    }
    // Pre/post numbering of the tree: a dominates b iff a's interval holds b's.
    uint32_t clock = 0;
    std::vector<std::pair<BlockId, size_t>> stack{{root, 0}};
    t.pre[root] = clock++;
    while (!stack.empty()) {
        auto& [node, next] = stack.back();
        const std::vector<BlockId>& kids = t.children[node];
        if (next < kids.size()) {
            BlockId k = kids[next++];
            t.pre[k] = clock++;
            stack.push_back({k, 0});
        } else {
            t.post_num[node] = clock++;
            stack.pop_back();
        }
    }
    return t;
}

}  // namespace

BlockId DomTree::Idom(BlockId b) const {
    auto it = idom.find(b);
    return it == idom.end() ? kNone : it->second;
}

bool DomTree::Dominates(BlockId a, BlockId b) const {
    auto pa = pre.find(a), pb = pre.find(b);
    if (pa == pre.end() || pb == pre.end()) return false;
    return pa->second <= pb->second && post_num.at(b) <= post_num.at(a);
}

const std::vector<BlockId>& DomTree::Children(BlockId b) const { return Edges(children, b); }

uint32_t DomTree::RpoIndex(BlockId b) const {
    auto it = rpo_index.find(b);
    return it == rpo_index.end() ? kNone : it->second;
}

std::unordered_map<BlockId, std::vector<BlockId>> Predecessors(const Function& function) {
    Adjacency preds;
    for (const Block& b : function.blocks) preds[b.id];
    for (const Block& b : function.blocks)
        for (BlockId s : b.Successors())
            if (function.FindBlock(s)) preds[s].push_back(b.id);
    return preds;
}

std::unordered_map<BlockId, std::unordered_set<BlockId>> NaturalLoops(const Function& function,
                                                                      const DomTree& dom) {
    const Adjacency preds = Predecessors(function);
    std::unordered_map<BlockId, std::unordered_set<BlockId>> loops;
    for (BlockId u : dom.rpo) {
        for (BlockId h : function.FindBlock(u)->Successors()) {
            if (!dom.Dominates(h, u)) continue;
            std::unordered_set<BlockId>& body = loops[h];
            body.insert(h);
            std::vector<BlockId> work = {u};
            while (!work.empty()) {
                const BlockId b = work.back();
                work.pop_back();
                if (!body.insert(b).second) continue;
                for (BlockId p : preds.at(b))
                    if (dom.Contains(p)) work.push_back(p);
            }
        }
    }
    return loops;
}

static Adjacency Successors(const Function& function) {
    Adjacency succs;
    for (const Block& b : function.blocks) {
        std::vector<BlockId>& out = succs[b.id];
        for (BlockId s : b.Successors())
            if (function.FindBlock(s)) out.push_back(s);
    }
    return succs;
}

DomTree Dominators(const Function& function) {
    if (function.blocks.empty()) return {};
    return Build(function.entry().id, Successors(function), Predecessors(function));
}

DomTree StructuredDominators(const Function& function) {
    if (function.blocks.empty()) return {};
    Adjacency succs = Successors(function);
    Adjacency preds = Predecessors(function);
    for (const Block& b : function.blocks) {
        if (b.merge.kind == Merge::Kind::kNone) continue;
        for (BlockId extra : {b.merge.merge, b.merge.cont}) {
            if (extra == kNone || !function.FindBlock(extra)) continue;
            succs[b.id].push_back(extra);
            preds[extra].push_back(b.id);
        }
    }
    return Build(function.entry().id, succs, preds);
}

DomTree PostDominators(const Function& function) {
    // Reversed graph: edges run from a block to its predecessors, and from the
    // virtual exit to every block that leaves the function.
    Adjacency rev_succs = Predecessors(function);
    Adjacency rev_preds = Successors(function);
    std::vector<BlockId>& exits = rev_succs[kVirtualExit];
    for (const Block& b : function.blocks) {
        if (b.insts.empty()) continue;
        Op op = b.terminator().op;
        if (op == Op::kRet || op == Op::kUnreachable) {
            exits.push_back(b.id);
            rev_preds[b.id].push_back(kVirtualExit);
        }
    }
    return Build(kVirtualExit, rev_succs, rev_preds);
}

std::vector<BlockId> ReversePostOrder(const Function& function) {
    if (function.blocks.empty()) return {};
    std::vector<BlockId> order = PostOrder(function.entry().id, Successors(function));
    std::reverse(order.begin(), order.end());
    return order;
}

}  // namespace nvk::kir
