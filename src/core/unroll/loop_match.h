// Recognising a counted loop block for UnrollCountedLoops (unroll.h): its values
// followed back to expressions (Expr, Resolver) and the induction variable, step,
// bound and test found among them (Match).
//
// KIR keeps Python variables in local variables, so a loop's induction
// variable, step and bound are found by following each value of the loop
// block back through the loads and stores of that block to an expression over
// "the value of variable v when the iteration began", entry-block values and
// constants (Expr). Two expressions that are equal as trees compute the same
// value; an expression that reads no variable the block stores is the same in
// every iteration and can be computed again in a new block.
#pragma once

#include <map>
#include <set>
#include <vector>

#include "kir/kir.h"

namespace nvk::unroll {

using kir::Block;
using kir::BlockId;
using kir::Inst;
using kir::Op;
using kir::ValueId;

struct Expr {
    enum class Kind { kOpaque, kValue, kStart, kInst };
    Kind kind = Kind::kOpaque;
    ValueId value = kir::kNone;  // kValue: an entry-block value; kStart: the variable
    const Inst* inst = nullptr;  // kInst: the pure instruction it recomputes
    std::vector<int> kids;       // kInst: the operands' expressions
};

inline bool IsPure(Op op) {
    switch (op) {
        case Op::kConst: case Op::kAdd: case Op::kSub: case Op::kMul: case Op::kDiv: case Op::kRem:
        case Op::kNeg: case Op::kAnd: case Op::kOr: case Op::kXor: case Op::kNot: case Op::kShl:
        case Op::kShr: case Op::kEq: case Op::kNe: case Op::kLt: case Op::kLe: case Op::kGt:
        case Op::kGe: case Op::kConvert: case Op::kBitcast: case Op::kSelect: case Op::kMath:
            return true;
        default: return false;
    }
}

// The expressions of one loop block's values.
class Resolver {
  public:
    Resolver(const kir::Function& f, const Block& b, const std::set<ValueId>& vars)
        : f_(f), b_(b), vars_(vars) {
        std::map<ValueId, ValueId> last_store;  // variable -> value most recently stored in b
        for (size_t k = 0; k < b.insts.size(); ++k) {
            const Inst& inst = b.insts[k];
            if (inst.result != kir::kNone) def_[inst.result] = k;
            if (inst.op == Op::kLoad) {
                auto it = last_store.find(inst.operands[0]);
                if (it != last_store.end()) forwarded_[k] = it->second;
            } else if (inst.op == Op::kStore && vars_.count(inst.operands[0])) {
                last_store[inst.operands[0]] = inst.operands[1];
                stored_.insert(inst.operands[0]);
            }
        }
    }

    int Resolve(ValueId v) {
        auto memo = memo_.find(v);
        if (memo != memo_.end()) return memo->second;
        Expr e;
        auto def = def_.find(v);
        if (def == def_.end()) {
            if (v < f_.values.size() && f_.values[v].block == f_.entry().id) {
                e.kind = Expr::Kind::kValue;
                e.value = v;
            }
        } else {
            const Inst& inst = b_.insts[def->second];
            if (inst.op == Op::kLoad && vars_.count(inst.operands[0])) {
                auto fwd = forwarded_.find(def->second);
                if (fwd != forwarded_.end()) return memo_[v] = Resolve(fwd->second);
                e.kind = Expr::Kind::kStart;
                e.value = inst.operands[0];
            } else if (IsPure(inst.op)) {
                e.kind = Expr::Kind::kInst;
                e.inst = &inst;
                for (ValueId operand : inst.operands) e.kids.push_back(Resolve(operand));
            }
        }
        exprs_.push_back(std::move(e));
        return memo_[v] = static_cast<int>(exprs_.size() - 1);
    }

    const Expr& at(int k) const { return exprs_[k]; }
    const std::set<ValueId>& stored() const { return stored_; }

    // The same in every iteration: reads only variables the block does not store.
    bool Invariant(int k) const {
        const Expr& e = exprs_[k];
        switch (e.kind) {
            case Expr::Kind::kOpaque: return false;
            case Expr::Kind::kValue: return true;
            case Expr::Kind::kStart: return !stored_.count(e.value);
            case Expr::Kind::kInst:
                for (int kid : e.kids)
                    if (!Invariant(kid)) return false;
                return true;
        }
        return false;
    }

    bool Equal(int a, int b) const {
        if (a == b) return true;
        const Expr& x = exprs_[a];
        const Expr& y = exprs_[b];
        if (x.kind != y.kind || x.kind == Expr::Kind::kOpaque) return false;
        if (x.kind != Expr::Kind::kInst) return x.value == y.value;
        if (x.inst->op != y.inst->op || x.inst->type != y.inst->type ||
            x.inst->imm != y.inst->imm || x.inst->aux != y.inst->aux ||
            x.kids.size() != y.kids.size())
            return false;
        for (size_t k = 0; k < x.kids.size(); ++k)
            if (!Equal(x.kids[k], y.kids[k])) return false;
        return true;
    }

  private:
    const kir::Function& f_;
    const Block& b_;
    const std::set<ValueId>& vars_;
    std::map<ValueId, size_t> def_;
    std::map<size_t, ValueId> forwarded_;  // load index -> the value an earlier store put there
    std::set<ValueId> stored_;
    std::map<ValueId, int> memo_;
    std::vector<Expr> exprs_;
};

// What a loop block must have for the unrolling: a test that is `i < bound` while
// step > 0, with i += step.
struct Counted {
    BlockId back = kir::kNone;  // where the loop goes on: the block itself, or an empty latch
    ValueId var = kir::kNone;  // i
    kir::TypeId type = kir::kNone;
    int step = -1;
    int bound = -1;
    int test = -1;            // the block's test
    int tested = -1;          // what it compares with bound: i + step, or i
    bool tests_start = false;  // the test reads i before the block advances it
    // The range loop's `select(valid and wrapped, stop, i + step)` stored into i, and its
    // i + step: the unrolled copies (which run only where no i + step wraps) store the sum.
    ValueId select = kir::kNone;
    ValueId sum = kir::kNone;
};

// Whether block `b` is a counted loop (`i < bound` while step > 0, i += step, in one of
// the forms loop_match.cc describes); fills `out` if so.
bool Match(const kir::Module& m, const Block& b, Resolver& r, Counted* out);

}  // namespace nvk::unroll
