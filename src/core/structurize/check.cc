// CheckStructured: the structured-form rules, checked on the CFG (see steps.h).
#include <algorithm>
#include <set>
#include <string>

#include "structurize/cfg.h"
#include "structurize/steps.h"

namespace nvk::structurize {

using kir::BlockId;
using kir::kNone;

util::Status CheckStructured(const kir::Module& m) {
    const kir::Function& f = m.function;
    Cfg cfg(f);
    size_t n = cfg.ids.size();
    auto name = [&](uint32_t i) { return "block " + std::to_string(cfg.ids[i]); };
    auto fail = [&](const std::string& msg) { return util::Internal("structured form: " + msg); };

    // Merge annotations.
    std::set<uint32_t> merges, conts;
    struct Construct {
        uint32_t header, merge, cont;  // cont kNone for selections
        std::vector<uint8_t> in;
        size_t size = 0;
    };
    std::vector<Construct> constructs;
    for (uint32_t i = 0; i < n; ++i) {
        const kir::Block& b = f.blocks[i];
        const kir::Inst& t = b.terminator();
        if (t.op == kir::Op::kCondBr && b.merge.kind == kir::Merge::Kind::kNone)
            return fail(name(i) + " branches conditionally without a merge");
        if (b.merge.kind == kir::Merge::Kind::kNone) continue;
        if (b.merge.kind == kir::Merge::Kind::kSelection && t.op != kir::Op::kCondBr)
            return fail(name(i) + " is a selection header without a conditional branch");
        uint32_t mi = cfg.Index(b.merge.merge);
        if (mi == kNone) return fail(name(i) + " names a missing merge block");
        if (!merges.insert(mi).second) return fail(name(mi) + " is the merge of two headers");
        uint32_t ci = kNone;
        if (b.merge.kind == kir::Merge::Kind::kLoop) {
            ci = cfg.Index(b.merge.cont);
            if (ci == kNone) return fail(name(i) + " names a missing continue target");
            if (!conts.insert(ci).second) return fail(name(ci) + " continues two loops");
            if (ci == mi) return fail(name(i) + ": merge and continue target are one block");
        }
        if (!cfg.dom.Reachable(i)) return fail(name(i) + " is an unreachable header");
        if (cfg.dom.Reachable(mi) && !cfg.dom.Dominates(i, mi))
            return fail(name(i) + " does not dominate its merge " + name(mi));
        if (ci != kNone && cfg.dom.Reachable(ci) && !cfg.dom.Dominates(i, ci))
            return fail(name(i) + " does not dominate its continue target " + name(ci));
        Construct c{i, mi, ci, std::vector<uint8_t>(n, 0)};
        for (uint32_t b2 = 0; b2 < n; ++b2) {
            if (!cfg.dom.Dominates(i, b2)) continue;
            if (cfg.dom.Reachable(mi) && cfg.dom.Dominates(mi, b2)) continue;
            c.in[b2] = 1;
            ++c.size;
        }
        if (ci != kNone && !c.in[ci]) {
            c.in[ci] = 1;
            ++c.size;
        }
        constructs.push_back(std::move(c));
    }
    // As in SPIR-V 1.6: a selection construct excludes the blocks that its
    // innermost enclosing loop reaches through its merge or continue target
    // (`if c: break` inside a loop does not own the code after the loop).
    for (Construct& c : constructs) {
        if (c.cont != kNone) continue;
        const Construct* loop = nullptr;
        for (const Construct& l : constructs)
            if (l.cont != kNone && l.header != c.header && l.in[c.header] &&
                (!loop || l.size < loop->size))
                loop = &l;
        if (!loop) continue;
        for (uint32_t b2 = 0; b2 < n; ++b2) {
            if (!c.in[b2]) continue;
            if ((cfg.dom.Reachable(loop->merge) && cfg.dom.Dominates(loop->merge, b2)) ||
                (cfg.dom.Reachable(loop->cont) && cfg.dom.Dominates(loop->cont, b2))) {
                c.in[b2] = 0;
                --c.size;
            }
        }
    }
    for (uint32_t mi : merges)
        if (conts.count(mi)) return fail(name(mi) + " is both a merge and a continue target");

    // Order: every reachable block after its immediate dominator.
    for (uint32_t i = 1; i < n; ++i)
        if (cfg.dom.Reachable(i) && cfg.dom.idom[i] > i)
            return fail(name(i) + " comes before its dominator " + name(cfg.dom.idom[i]));

    // The innermost loop construct of a block.
    auto innermost_loop = [&](uint32_t b) -> const Construct* {
        const Construct* best = nullptr;
        for (const Construct& c : constructs)
            if (c.cont != kNone && c.in[b] && (!best || c.size < best->size)) best = &c;
        return best;
    };
    for (uint32_t u = 0; u < n; ++u) {
        if (!cfg.dom.Reachable(u)) continue;
        const Construct* loop = innermost_loop(u);
        for (uint32_t v : cfg.succs[u]) {
            // Back edges only from a loop's continue target to its header.
            if (cfg.dom.Dominates(v, u)) {
                const kir::Block& hb = f.blocks[v];
                if (hb.merge.kind != kir::Merge::Kind::kLoop || cfg.Index(hb.merge.cont) != u)
                    return fail("back edge " + name(u) + " -> " + name(v) +
                                " is not from the loop's continue target");
                continue;
            }
            for (const Construct& c : constructs) {
                if (!c.in[u] || c.in[v]) continue;
                if (v == c.merge) continue;
                if (loop && (v == loop->merge || v == loop->cont)) continue;
                return fail("edge " + name(u) + " -> " + name(v) + " leaves the construct of " +
                            name(c.header) + " (merge " + name(c.merge) + ")");
            }
        }
    }
    return util::Status::Ok();
}

}  // namespace nvk::structurize
