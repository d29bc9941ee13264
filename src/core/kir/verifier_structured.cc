// The verifier's control-flow half: reducibility for both forms, and SPIR-V's
// structured control-flow rules for a structured function.
//
// Constructs follow the SPIR-V definitions, computed from the structural
// dominator tree (dominators.h: merge annotations count as edges):
//
//   selection construct of header H (merge M):  blocks H dominates, less those
//                                               M dominates
//   loop construct of header H (merge M, continue C):
//                                               blocks H dominates, less those
//                                               M or C dominates
//   continue construct of H:                    blocks C dominates, less those
//                                               M dominates
//
//        H ──▶ body ... ──▶ C ... back-edge block ──▶ H      (loop)
//        │                                      └──▶ M
//        └──────────────────────────────────────────▶ M
//
// With the constructs known, every edge of the reachable graph is classified:
// a back edge (its target dominates its source) must go to a loop header from
// that loop's continue construct; any other edge may enter a construct only at
// its entry (header, or C for a continue construct) and may leave one only for
// its merge block, the innermost loop's merge (break) or continue target
// (continue), or, from a loop construct, its own continue target. Blocks that
// even merge edges do not reach are outside every construct and their edges
// are not classified. A ret may not stand inside a loop or continue construct:
// drivers expect a loop to be left through its merge block (structurize.cc).
#include <string>
#include <unordered_map>
#include <vector>

#include "kir/dominators.h"
#include "kir/verifier_state.h"

namespace nvk::kir::verifier_internal {
namespace {

struct Construct {
    enum class Kind { kSelection, kLoop, kContinue } kind;
    BlockId header = kNone;  // the block with the merge annotation
    BlockId entry = kNone;   // the only block edges may enter by: header, or C for kContinue
    BlockId merge = kNone;
    BlockId cont = kNone;    // loops and continue constructs
    uint32_t depth = 0;      // dominator-tree depth of `entry`
    std::vector<bool> in;    // by block position

    std::string Describe() const {
        const char* k = kind == Kind::kSelection ? "selection"
                        : kind == Kind::kLoop    ? "loop"
                                                 : "continue";
        return std::string("the ") + k + " construct of " + BlockRefText(header);
    }
    bool IsLoopish() const { return kind != Kind::kSelection; }
};

class StructuredChecker {
  public:
    // `dom` is the ordinary dominator tree (for the block order rule); the
    // construct rules use structural dominance, as SPIR-V defines them.
    StructuredChecker(const Module& m, const DomTree& dom)
        : m_(m), f_(m.function), plain_(dom), dom_(StructuredDominators(m.function)) {}

    util::Status Run() {
        NVK_RETURN_IF_ERROR(CheckOrder());
        NVK_RETURN_IF_ERROR(CheckHeaders());
        BuildConstructs();
        for (uint32_t bp = 0; bp < f_.blocks.size(); ++bp) {
            if (!dom_.Contains(f_.blocks[bp].id)) continue;
            NVK_RETURN_IF_ERROR(CheckEdges(bp));
        }
        return util::Status::Ok();
    }

  private:
    uint32_t Pos(BlockId b) const { return f_.BlockIndex(b); }
    util::Status FailEdge(uint32_t bp, const std::string& msg) const {
        return Fail(m_, AtInst(bp, f_.blocks[bp].insts.size() - 1), msg);
    }

    // Blocks come after their dominators (SPIR-V's block order rule).
    util::Status CheckOrder() const {
        for (uint32_t bp = 1; bp < f_.blocks.size(); ++bp) {
            BlockId idom = plain_.Idom(f_.blocks[bp].id);
            if (idom != kNone && Pos(idom) > bp)
                return Fail(m_, AtBlock(bp), "comes before its dominator " + BlockRefText(idom));
        }
        return util::Status::Ok();
    }

    util::Status CheckHeaders() {
        std::unordered_map<BlockId, BlockId> merge_of;  // merge block -> header
        for (uint32_t bp = 0; bp < f_.blocks.size(); ++bp) {
            const Block& b = f_.blocks[bp];
            const Merge& mg = b.merge;
            if (mg.kind == Merge::Kind::kNone) continue;
            Op term = b.terminator().op;
            if (mg.kind == Merge::Kind::kSelection && term != Op::kCondBr)
                return Fail(m_, AtBlock(bp), "a selection header must end in condbr");
            if (mg.kind == Merge::Kind::kLoop && term != Op::kBr && term != Op::kCondBr)
                return Fail(m_, AtBlock(bp), "a loop header must end in br or condbr");
            if (mg.merge == b.id) return Fail(m_, AtBlock(bp), "a header cannot be its own merge");
            auto [it, fresh] = merge_of.emplace(mg.merge, b.id);
            if (!fresh)
                return Fail(m_, AtBlock(bp), BlockRefText(mg.merge) +
                                                 " is already the merge block of " +
                                                 BlockRefText(it->second));
            if (mg.kind == Merge::Kind::kLoop && mg.cont == mg.merge)
                return Fail(m_, AtBlock(bp), "merge block and continue target must differ");
            if (!dom_.Contains(b.id)) continue;
            if (dom_.Contains(mg.merge) && !dom_.StrictlyDominates(b.id, mg.merge))
                return Fail(m_, AtBlock(bp), "does not dominate its merge block " +
                                                 BlockRefText(mg.merge));
            if (mg.kind == Merge::Kind::kLoop && dom_.Contains(mg.cont) &&
                !dom_.Dominates(b.id, mg.cont))
                return Fail(m_, AtBlock(bp), "does not dominate its continue target " +
                                                 BlockRefText(mg.cont));
        }
        return util::Status::Ok();
    }

    void BuildConstructs() {
        std::unordered_map<BlockId, uint32_t> depth;
        for (BlockId b : dom_.rpo) {
            BlockId idom = dom_.Idom(b);
            depth[b] = idom == kNone ? 0 : depth[idom] + 1;
        }
        auto make = [&](Construct::Kind kind, const Block& h, BlockId entry) {
            Construct c;
            c.kind = kind;
            c.header = h.id;
            c.entry = entry;
            c.merge = h.merge.merge;
            c.cont = h.merge.cont;
            c.depth = depth[entry];
            c.in.assign(f_.blocks.size(), false);
            bool cont_reachable = c.cont != kNone && dom_.Contains(c.cont);
            for (uint32_t bp = 0; bp < f_.blocks.size(); ++bp) {
                BlockId b = f_.blocks[bp].id;
                if (!dom_.Dominates(entry, b) || dom_.Dominates(c.merge, b)) continue;
                if (kind == Construct::Kind::kLoop && cont_reachable && dom_.Dominates(c.cont, b))
                    continue;
                c.in[bp] = true;
            }
            constructs_.push_back(std::move(c));
        };
        for (const Block& b : f_.blocks) {
            if (b.merge.kind == Merge::Kind::kNone || !dom_.Contains(b.id)) continue;
            if (b.merge.kind == Merge::Kind::kSelection) {
                make(Construct::Kind::kSelection, b, b.id);
            } else {
                make(Construct::Kind::kLoop, b, b.id);
                if (dom_.Contains(b.merge.cont)) make(Construct::Kind::kContinue, b, b.merge.cont);
            }
        }
    }

    // The innermost loop or continue construct holding block position bp.
    const Construct* InnermostLoop(uint32_t bp) const {
        const Construct* best = nullptr;
        for (const Construct& c : constructs_) {
            if (!c.IsLoopish() || !c.in[bp]) continue;
            bool deeper = !best || c.depth > best->depth ||
                          (c.depth == best->depth && c.kind == Construct::Kind::kLoop);
            if (deeper) best = &c;
        }
        return best;
    }

    util::Status CheckEdges(uint32_t bp) {
        const Block& b = f_.blocks[bp];
        const Inst& term = b.terminator();
        const Construct* loop = InnermostLoop(bp);
        if (term.op == Op::kRet && loop)
            return FailEdge(bp, "ret inside " + loop->Describe() +
                                    ": a loop must be left through its merge block");
        if (term.op == Op::kCondBr && b.merge.kind == Merge::Kind::kNone) {
            bool ok = false;
            for (BlockId t : b.Successors())
                ok |= loop && (t == loop->merge || t == loop->cont || t == loop->header);
            if (!ok)
                return FailEdge(bp, "condbr without a merge annotation must break from, continue "
                                    "or close its innermost loop");
        }
        for (BlockId s : b.Successors()) {
            uint32_t sp = Pos(s);
            if (dom_.Dominates(s, b.id)) {
                NVK_RETURN_IF_ERROR(CheckBackEdge(bp, s));
                continue;
            }
            for (const Construct& c : constructs_) {
                if (c.in[sp] && !c.in[bp] && s != c.entry)
                    return FailEdge(bp, "the edge to " + BlockRefText(s) + " enters " +
                                            c.Describe() + " other than at " +
                                            BlockRefText(c.entry));
                if (!c.in[bp] || c.in[sp]) continue;
                bool ok = s == c.merge || (c.kind == Construct::Kind::kLoop && s == c.cont);
                if (c.kind == Construct::Kind::kSelection && loop)
                    ok |= s == loop->merge || s == loop->cont;
                if (!ok)
                    return FailEdge(bp, "the edge to " + BlockRefText(s) + " leaves " +
                                            c.Describe() + " for a block other than its merge " +
                                            BlockRefText(c.merge) +
                                            (loop ? " or the innermost loop's merge or continue"
                                                  : ""));
            }
        }
        return util::Status::Ok();
    }

    util::Status CheckBackEdge(uint32_t bp, BlockId header) {
        const Block* h = f_.FindBlock(header);
        BlockId from = f_.blocks[bp].id;
        if (h->merge.kind != Merge::Kind::kLoop)
            return FailEdge(bp, "back edge to " + BlockRefText(header) + ", which is not a loop header");
        if (!dom_.Dominates(h->merge.cont, from))
            return FailEdge(bp, "back edge to " + BlockRefText(header) +
                                    " from outside its continue construct (continue target " +
                                    BlockRefText(h->merge.cont) + ")");
        if (++back_edges_[header] > 1)
            return FailEdge(bp, "second back edge to the loop header " + BlockRefText(header));
        return util::Status::Ok();
    }

    const Module& m_;
    const Function& f_;
    const DomTree& plain_;
    DomTree dom_;
    std::vector<Construct> constructs_;
    std::unordered_map<BlockId, int> back_edges_;
};

}  // namespace

util::Status VerifyControlFlow(const Module& m) {
    const Function& f = m.function;
    DomTree dom = Dominators(f);
    // Reducible: in reverse post-order, an edge that goes backwards (or to
    // itself) must be a back edge, i.e. go to a block that dominates its source.
    for (uint32_t bp = 0; bp < f.blocks.size(); ++bp) {
        const Block& b = f.blocks[bp];
        if (!dom.Contains(b.id)) continue;
        for (BlockId s : b.Successors()) {
            if (dom.RpoIndex(s) <= dom.RpoIndex(b.id) && !dom.Dominates(s, b.id))
                return Fail(m, AtInst(bp, b.insts.size() - 1),
                            "irreducible control flow: the edge to " + BlockRefText(s) +
                                " enters a loop other than through its header");
        }
    }
    if (!f.structured) return util::Status::Ok();
    return StructuredChecker(m, dom).Run();
}

}  // namespace nvk::kir::verifier_internal
