// Loop normalization: every natural loop gets one header H, one continue block
// C (`br H`, the only back edge) and one merge block M (`br X` or unreachable).
//
//          ┌──────────────┐                 H  (merge M, continue C)
//          ▼              │                 │
//          H ── body ── latches             body ──► C ──► H
//          │    │ │                          │ │
//          x1   x2 x3    (exits)            E1 E2 … (store sel = k) ──► M
//                                                               M ──► dispatch on sel ──► x1 | x2 | x3
//
// Loops are normalized innermost first (smallest natural loop first), and the
// analysis is recomputed after each one, so an inner loop's exit dispatch is an
// ordinary block of the outer loop and its exits become the outer loop's exits.
// An exit to a block that only returns and has no other predecessor (a
// `return` inside the loop) stays inside the loop: SPIR-V allows a return
// anywhere, so it needs no selector.
#include <algorithm>
#include <set>

#include "structurize/cfg.h"
#include "structurize/steps.h"

namespace nvk::structurize {

using kir::BlockId;
using kir::kNone;

namespace {

struct Loop {
    uint32_t header;
    std::vector<uint8_t> body;  // by cfg index
    size_t size = 0;
};

bool IsReturnOnly(const kir::Block& b) { return b.Successors().empty(); }

void Normalize(kir::Module& m, const Cfg& cfg, const Loop& loop) {
    kir::Function& f = m.function;
    BlockId h = cfg.ids[loop.header];
    std::string base = f.FindBlock(h)->name.empty() ? "loop" : f.FindBlock(h)->name;

    // Exit edges (source, target), and back edges.
    std::vector<std::pair<BlockId, BlockId>> exits;
    std::vector<BlockId> targets;
    std::vector<BlockId> latches;
    for (uint32_t u = 0; u < cfg.ids.size(); ++u) {
        if (!loop.body[u]) continue;
        for (uint32_t v : cfg.succs[u]) {
            if (v == loop.header) {
                latches.push_back(cfg.ids[u]);
            } else if (!loop.body[v]) {
                const kir::Block& vb = *f.FindBlock(cfg.ids[v]);
                if (IsReturnOnly(vb) && cfg.preds[v].size() == 1) continue;  // a return inside
                exits.push_back({cfg.ids[u], cfg.ids[v]});
                if (std::find(targets.begin(), targets.end(), cfg.ids[v]) == targets.end())
                    targets.push_back(cfg.ids[v]);
            }
        }
    }
    // A break with code (`if c: emit(x); break`) is a block whose only
    // predecessors are in the loop and whose only successor is another exit
    // target: it joins the loop, so the loop keeps a single exit target.
    for (size_t k = 0; k < targets.size(); ++k) {
        uint32_t vi = cfg.Index(targets[k]);
        const kir::Block& vb = *f.FindBlock(targets[k]);
        std::vector<BlockId> succ = vb.Successors();
        if (succ.size() != 1 || succ[0] == targets[k]) continue;
        if (std::find(targets.begin(), targets.end(), succ[0]) == targets.end()) continue;
        bool inside = true;
        for (uint32_t p : cfg.preds[vi]) inside = inside && loop.body[p];
        if (!inside) continue;
        BlockId v = targets[k];
        for (auto& e : exits)
            if (e.second == v) e = {v, succ[0]};  // the edge now leaves from v
        targets.erase(targets.begin() + k);
        --k;
    }
    std::sort(exits.begin(), exits.end());
    exits.erase(std::unique(exits.begin(), exits.end()), exits.end());

    BlockId merge = NewBlock(f, base + ".merge");
    BlockId cont = NewBlock(f, base + ".cont");
    if (targets.empty()) {
        SetUnreachable(f, merge);
    } else if (targets.size() == 1) {
        for (auto [u, v] : exits) Retarget(f, u, v, merge);
        SetBr(f, merge, targets[0]);
    } else {
        kir::ValueId sel = NewSelectorVar(m);
        for (auto [u, v] : exits) {
            if (u == h) {
                // The header's own exit goes straight to M (so the header
                // keeps the `enter or leave` shape); its number is stored on
                // entry to every iteration, and any other exit overwrites it.
                int64_t k = std::find(targets.begin(), targets.end(), v) - targets.begin();
                AppendStoreConst(m, h, sel, k);
                kir::Block* hb = f.FindBlock(h);
                std::rotate(hb->insts.begin(), hb->insts.end() - 3, hb->insts.end() - 1);
                Retarget(f, u, v, merge);
                continue;
            }
            BlockId e = NewBlock(f, base + ".exit");
            int64_t k = std::find(targets.begin(), targets.end(), v) - targets.begin();
            AppendStoreConst(m, e, sel, k);
            SetBr(f, e, merge);
            Retarget(f, u, v, e);
        }
        // M: br D1; Dk: condbr (sel == k), target k, D(k+1); the last test
        // chooses between the last two targets.
        BlockId d = NewBlock(f, base + ".dispatch");
        SetBr(f, merge, d);
        for (size_t k = 0; k + 1 < targets.size(); ++k) {
            BlockId next = k + 2 == targets.size() ? targets.back()
                                                   : NewBlock(f, base + ".dispatch");
            SetDispatch(m, d, sel, static_cast<int64_t>(k), targets[k], next);
            d = next;
        }
    }
    for (BlockId u : latches) Retarget(f, u, h, cont);
    SetBr(f, cont, h);

    // The header's own branch must be "enter the body or leave": anything else
    // moves into a new block after the header.
    kir::Block* hb = f.FindBlock(h);
    kir::Inst& t = hb->terminator();
    if (t.op == kir::Op::kCondBr) {
        BlockId a = t.targets[0], b = t.targets[1];
        bool ok = (a == merge) != (b == merge);
        BlockId other = a == merge ? b : a;
        if (other == cont || other == merge || other == h) ok = false;
        if (ok) {
            uint32_t oi = cfg.Index(other);
            ok = oi != kNone && loop.body[oi];
        }
        if (!ok) {
            BlockId h2 = NewBlock(f, base + ".head");
            hb = f.FindBlock(h);
            kir::Block* b2 = f.FindBlock(h2);
            b2->insts = std::move(hb->insts);
            hb->insts.clear();
            for (const kir::Inst& inst : b2->insts)
                if (inst.result != kNone) f.values[inst.result].block = h2;
            SetBr(f, h, h2);
        }
    }
    f.FindBlock(h)->merge = {kir::Merge::Kind::kLoop, merge, cont};
}

}  // namespace

util::Status NormalizeLoops(kir::Module& m) {
    kir::Function& f = m.function;
    for (size_t round = 0;; ++round) {
        if (round > 100000) return util::Internal("structurize: loop normalization diverged");
        Cfg cfg(f);
        size_t n = cfg.ids.size();
        std::vector<std::vector<uint32_t>> back(n);  // header -> latches
        for (uint32_t u = 0; u < n; ++u) {
            if (!cfg.dom.Reachable(u)) continue;
            for (uint32_t v : cfg.succs[u]) {
                if (cfg.dom.Dominates(v, u)) {
                    back[v].push_back(u);
                } else if (cfg.dom.rpo_pos[v] <= cfg.dom.rpo_pos[u]) {
                    return util::Unsupported("irreducible control flow (a loop with two entries)");
                }
            }
        }
        Loop best{kNone, {}, 0};
        for (uint32_t h = 0; h < n; ++h) {
            if (back[h].empty()) continue;
            if (f.blocks[h].merge.kind == kir::Merge::Kind::kLoop) continue;
            Loop loop{h, std::vector<uint8_t>(n, 0), 1};
            loop.body[h] = 1;
            std::vector<uint32_t> work = back[h];
            while (!work.empty()) {
                uint32_t b = work.back();
                work.pop_back();
                if (loop.body[b]) continue;
                loop.body[b] = 1;
                ++loop.size;
                for (uint32_t p : cfg.preds[b])
                    if (cfg.dom.Reachable(p)) work.push_back(p);
            }
            if (best.header == kNone || loop.size < best.size) best = std::move(loop);
        }
        if (best.header == kNone) return util::Status::Ok();
        Normalize(m, cfg, best);
    }
}

}  // namespace nvk::structurize
