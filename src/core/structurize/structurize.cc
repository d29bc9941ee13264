// Structurize: CFG form -> structured form (kir.h), the form SPIR-V requires.
//
// SPIR-V wants every conditional branch to name the block where its arms
// join (OpSelectionMerge), every loop to name one merge block and one
// continue target (OpLoopMerge), and control to leave a construct only
// through its merge, a break or continue of the innermost loop, or a return.
// The front end builds an arbitrary reducible CFG from Python source; this
// pass rewrites it, in four steps, each of which keeps the function's
// behaviour:
//
//   1. canonicalize  drop unreachable blocks; `condbr c, t, t` -> `br t`;
//                    copy small return blocks per predecessor, so returns
//                    never create joins.
//   2. loops         (loops.cc) innermost first: one header H, one continue
//                    block C (`br H`) and one fresh merge block M. A loop
//                    whose exits go to several places stores the exit's
//                    number in a selector variable and dispatches after M.
//   3. selections    (selections.cc) per region (the function body outside
//                    loops, each loop body outside its inner loops), which
//                    is a DAG: side entries into an if's arms (short
//                    circuits) are removed by copying small blocks or by a
//                    chain of guarded selections; then every conditional
//                    branch gets a merge: its immediate post-dominator, or a
//                    fresh block when that is taken, is a loop's block, or
//                    does not exist.
//   4. order         dominators first, each construct's blocks together,
//                    continue target then merge block after a loop's body.
//
// Common shapes cost nothing: an `if` guard, if/elif/else, `for` and `while`
// loops with break and continue and returns anywhere need no variables and
// no copies; only loops that exit to several places get a selector, and only
// short circuits whose shared arm is large get guards.
//
// Blocks that contain barriers must never be copied; KIR has no barriers yet
// (when it does, CopyBlock's callers must test for them).
#include "structurize/structurize.h"

#include <unordered_map>
#include <unordered_set>

#include "structurize/cfg.h"
#include "structurize/steps.h"

namespace nvk::structurize {

using kir::BlockId;
using kir::kNone;

namespace {

constexpr size_t kCopyReturnMaxInsts = 8;

}  // namespace

util::Status Canonicalize(kir::Module& m) {
    kir::Function& f = m.function;
    if (f.blocks.empty()) return util::InvalidArgument("structurize: function has no blocks");
    for (kir::Block& b : f.blocks) {
        if (!b.insts.empty()) {
            kir::Inst& t = b.terminator();
            if (t.op == kir::Op::kCondBr && t.targets[0] == t.targets[1]) {
                t.op = kir::Op::kBr;
                t.operands.clear();
                t.targets[1] = kNone;
            }
        }
        b.merge = {};
    }
    // Reachable blocks only.
    {
        Cfg cfg(f);
        std::vector<kir::Block> kept;
        for (uint32_t i = 0; i < f.blocks.size(); ++i)
            if (cfg.dom.Reachable(i)) kept.push_back(std::move(f.blocks[i]));
        f.blocks = std::move(kept);
    }
    for (const kir::Block& b : f.blocks) {
        if (b.insts.empty() || !kir::IsTerminator(b.insts.back().op))
            return util::InvalidArgument("structurize: block " + std::to_string(b.id) +
                                         " has no terminator");
        for (BlockId s : b.Successors())
            if (!f.FindBlock(s))
                return util::InvalidArgument("structurize: branch to missing block " +
                                             std::to_string(s));
    }
    if (!Cfg(f).preds[0].empty())
        return util::InvalidArgument("structurize: the entry block has predecessors");
    // Return blocks reached from inside a loop: one copy per extra
    // predecessor edge, so that a return inside a loop stays inside it.
    Cfg cfg(f);
    size_t n = f.blocks.size();
    auto in_cycle = [&](uint32_t u) {
        std::vector<uint8_t> seen(n, 0);
        std::vector<uint32_t> work(cfg.succs[u].begin(), cfg.succs[u].end());
        while (!work.empty()) {
            uint32_t b = work.back();
            work.pop_back();
            if (b == u) return true;
            if (seen[b]) continue;
            seen[b] = 1;
            for (uint32_t s : cfg.succs[b]) work.push_back(s);
        }
        return false;
    };
    for (uint32_t i = 0; i < n; ++i) {
        bool from_loop = false;
        for (uint32_t p : cfg.preds[i]) from_loop = from_loop || in_cycle(p);
        if (!from_loop) continue;
        if (!f.blocks[i].Successors().empty() || f.blocks[i].insts.size() > kCopyReturnMaxInsts)
            continue;
        BlockId id = f.blocks[i].id;
        bool first = true;
        for (uint32_t p : cfg.preds[i]) {
            BlockId pid = cfg.ids[p];
            for (int slot = 0; slot < 2; ++slot) {
                kir::Inst& t = f.FindBlock(pid)->terminator();
                if (t.targets[slot] != id || (slot == 1 && t.op != kir::Op::kCondBr)) continue;
                if (first) {
                    first = false;
                    continue;
                }
                BlockId copy = CopyBlock(f, id);
                f.FindBlock(pid)->terminator().targets[slot] = copy;
            }
        }
    }
    return util::Status::Ok();
}

void OrderBlocks(kir::Function& f) {
    // A depth-first walk that visits a header's merge block, then its
    // continue target, before its successors; the reverse post-order then
    // puts a construct's body first, its continue target next and its merge
    // last, and every block after its dominators.
    std::unordered_map<BlockId, uint32_t> index;
    for (uint32_t i = 0; i < f.blocks.size(); ++i) index[f.blocks[i].id] = i;
    auto next_of = [&](uint32_t i) {
        std::vector<uint32_t> out;
        const kir::Block& b = f.blocks[i];
        if (b.merge.kind != kir::Merge::Kind::kNone) {
            out.push_back(index.at(b.merge.merge));
            if (b.merge.kind == kir::Merge::Kind::kLoop) out.push_back(index.at(b.merge.cont));
        }
        std::vector<BlockId> succs = b.Successors();
        for (auto it = succs.rbegin(); it != succs.rend(); ++it) out.push_back(index.at(*it));
        return out;
    };
    std::vector<uint32_t> post;
    std::vector<uint8_t> seen(f.blocks.size(), 0);
    std::vector<std::pair<uint32_t, std::vector<uint32_t>>> stack;
    stack.push_back({0, next_of(0)});
    seen[0] = 1;
    std::vector<size_t> cursor{0};
    while (!stack.empty()) {
        auto& [node, next] = stack.back();
        size_t& c = cursor.back();
        if (c < next.size()) {
            uint32_t s = next[c++];
            if (!seen[s]) {
                seen[s] = 1;
                stack.push_back({s, next_of(s)});
                cursor.push_back(0);
            }
        } else {
            post.push_back(node);
            stack.pop_back();
            cursor.pop_back();
        }
    }
    std::vector<kir::Block> ordered;
    for (auto it = post.rbegin(); it != post.rend(); ++it) ordered.push_back(std::move(f.blocks[*it]));
    f.blocks = std::move(ordered);
}

util::Status Structurize(kir::Module& module) {
    if (module.function.structured) return util::Status::Ok();
    NVK_RETURN_IF_ERROR(Canonicalize(module));
    NVK_RETURN_IF_ERROR(NormalizeLoops(module));
    NVK_RETURN_IF_ERROR(StructureSelections(module));
    OrderBlocks(module.function);
    module.function.structured = true;
    return util::Status::Ok();
}

}  // namespace nvk::structurize
