#include "structurize/tree.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "kir/dominators.h"

namespace nvk::structurize {

using kir::BlockId;

namespace {

class TreeBuilder {
  public:
    explicit TreeBuilder(const kir::Function& f) : f_(f), dom_(kir::Dominators(f)) {}

    util::Status Analyse() {
        for (BlockId b : dom_.rpo) {
            for (BlockId s : f_.FindBlock(b)->Successors()) {
                if (dom_.Dominates(s, b)) {
                    back_sources_[s].push_back(b);
                } else if (dom_.RpoIndex(s) <= dom_.RpoIndex(b)) {
                    return util::Unsupported(
                        "irreducible control flow (a loop with two entries) cannot be structured");
                } else {
                    ++forward_in_[s];
                }
            }
        }
        loops_ = kir::NaturalLoops(f_, dom_);
        // Loop exits that the header dominates directly (a `while` loop's exit, taken
        // from the header): treated as joins even with one entering edge, so that the
        // code after the loop is placed after the loop construct (its merge), not
        // nested inside the loop's body. A barrier after a loop must not sit in the
        // loop construct, where invocations leaving at different iterations reach it
        // divergently (lavapipe then loses atomic updates made before the barrier).
        // Only in functions with a barrier: the wrapping `block` shares the loop, and
        // a `continue` dispatched out of a nested construct then fails validation
        // (control-flow fuzz seed 56), a limitation of Lower still to fix; kernels
        // without barriers keep the shape they always had.
        bool has_barrier = false;
        for (const kir::Block& b : f_.blocks)
            for (const kir::Inst& i : b.insts) has_barrier |= i.op == kir::Op::kBarrier;
        if (!has_barrier) return util::Status::Ok();
        for (auto& [header, body] : loops_)
            for (BlockId b : body)
                for (BlockId s : f_.FindBlock(b)->Successors())
                    if (!body.count(s) && dom_.Contains(s) && dom_.idom.at(s) == header)
                        loop_exits_.insert(s);
        return util::Status::Ok();
    }

    Seq DoTree(BlockId x) {
        std::vector<BlockId> joins;
        for (BlockId c : dom_.Children(x))
            if (IsJoin(c)) joins.push_back(c);
        // Children() is in reverse post-order: the first is innermost.
        Seq out;
        if (!IsLoopHeader(x)) {
            out.push_back(Code(x));
            Wrap(joins, Term(x), out);
            return out;
        }
        std::vector<BlockId> inside, outside;
        for (BlockId j : joins) (loops_[x].count(j) ? inside : outside).push_back(j);
        Stmt loop;
        loop.kind = Stmt::Kind::kLoop;
        loop.label = LoopLabel(x);
        loop.body.push_back(Code(x));
        Wrap(inside, Term(x), loop.body);
        Seq inner;
        inner.push_back(std::move(loop));
        Wrap(outside, std::move(inner), out);
        return out;
    }

  private:
    bool IsJoin(BlockId b) const {
        auto it = forward_in_.find(b);
        return (it != forward_in_.end() && it->second >= 2) || loop_exits_.count(b) != 0;
    }
    bool IsLoopHeader(BlockId b) const { return back_sources_.count(b) != 0; }

    // Append `block_{j1} { ... block_{jn} { inner } code(jn) ... } code(j1)` to out,
    // joins given innermost first.
    void Wrap(const std::vector<BlockId>& joins, Seq inner, Seq& out) {
        Seq seq = std::move(inner);
        for (BlockId j : joins) {
            Stmt block;
            block.kind = Stmt::Kind::kBlock;
            block.label = BlockLabel(j);
            block.body = std::move(seq);
            seq.clear();
            seq.push_back(std::move(block));
            Seq rest = DoTree(j);
            for (Stmt& s : rest) seq.push_back(std::move(s));
        }
        for (Stmt& s : seq) out.push_back(std::move(s));
    }

    Stmt Code(BlockId x) const {
        Stmt s;
        s.kind = Stmt::Kind::kCode;
        s.block = x;
        return s;
    }

    Seq Term(BlockId x) {
        const kir::Inst& t = f_.FindBlock(x)->terminator();
        Seq out;
        switch (t.op) {
            case kir::Op::kBr: return Branch(x, t.targets[0]);
            case kir::Op::kCondBr: {
                Stmt s;
                s.kind = Stmt::Kind::kIf;
                s.block = x;
                s.cond = t.operands.at(0);
                s.body = Branch(x, t.targets[0]);
                s.orelse = Branch(x, t.targets[1]);
                out.push_back(std::move(s));
                return out;
            }
            case kir::Op::kRet: out.push_back(Simple(Stmt::Kind::kRet)); return out;
            default: out.push_back(Simple(Stmt::Kind::kUnreachable)); return out;
        }
    }

    Seq Branch(BlockId from, BlockId to) {
        Seq out;
        if (dom_.Dominates(to, from)) {
            out.push_back(Br(LoopLabel(to)));
        } else if (IsJoin(to)) {
            out.push_back(Br(BlockLabel(to)));
        } else {
            return DoTree(to);
        }
        return out;
    }

    static Stmt Simple(Stmt::Kind k) {
        Stmt s;
        s.kind = k;
        return s;
    }
    static Stmt Br(int label) {
        Stmt s;
        s.kind = Stmt::Kind::kBr;
        s.label = label;
        return s;
    }

    const kir::Function& f_;
    kir::DomTree dom_;
    std::unordered_map<BlockId, int> forward_in_;
    std::unordered_map<BlockId, std::vector<BlockId>> back_sources_;
    std::unordered_map<BlockId, std::unordered_set<BlockId>> loops_;
    std::unordered_set<BlockId> loop_exits_;
};

// Whether every `br label` in seq is in tail position, given whether seq itself is.
// Falling off the end of a `block` or a `loop` body continues after it, so tail
// position passes through both.
bool AllBranchesInTail(const Seq& seq, int label, bool tail) {
    for (size_t i = 0; i < seq.size(); ++i) {
        const Stmt& s = seq[i];
        bool t = tail && i + 1 == seq.size();
        switch (s.kind) {
            case Stmt::Kind::kIf:
                if (!AllBranchesInTail(s.body, label, t) || !AllBranchesInTail(s.orelse, label, t))
                    return false;
                break;
            case Stmt::Kind::kBlock:
            case Stmt::Kind::kLoop:
                if (!AllBranchesInTail(s.body, label, t)) return false;
                break;
            case Stmt::Kind::kBr:
                if (s.label == label && !t) return false;
                break;
            default: break;
        }
    }
    return true;
}

void RemoveBranches(Seq& seq, int label) {
    seq.erase(std::remove_if(seq.begin(), seq.end(),
                             [&](const Stmt& s) {
                                 return s.kind == Stmt::Kind::kBr && s.label == label;
                             }),
              seq.end());
    for (Stmt& s : seq) {
        RemoveBranches(s.body, label);
        RemoveBranches(s.orelse, label);
    }
}

}  // namespace

util::Result<Seq> BuildTree(const kir::Function& function) {
    TreeBuilder builder(function);
    NVK_RETURN_IF_ERROR(builder.Analyse());
    return builder.DoTree(function.entry().id);
}

void Simplify(Seq& seq) {
    Seq out;
    for (Stmt& s : seq) {
        Simplify(s.body);
        Simplify(s.orelse);
        if (s.kind == Stmt::Kind::kBlock && AllBranchesInTail(s.body, s.label, true)) {
            RemoveBranches(s.body, s.label);
            for (Stmt& inner : s.body) out.push_back(std::move(inner));
        } else {
            out.push_back(std::move(s));
        }
    }
    seq = std::move(out);
}

}  // namespace nvk::structurize
