// UnrollCountedLoops (see unroll.h for what and why).
//
// KIR keeps Python variables in local variables, so a loop's induction
// variable, step and bound are found by following each value of the loop
// block back through the loads and stores of that block to an expression over
// "the value of variable v when the iteration began", entry-block values and
// constants (Expr). Two expressions that are equal as trees compute the same
// value; an expression that reads no variable the block stores is the same in
// every iteration and can be computed again in a new block.
#include "unroll/unroll.h"

#include <map>
#include <set>
#include <string>
#include <vector>

namespace nvk::unroll {

namespace {

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

bool IsPure(Op op) {
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

// The block that takes the loop back to `b`: `b` itself, or a block holding only
// `br b` whose one predecessor is `b` (Numba's CFG under Python 3.12).
BlockId BackEdge(const kir::Function& f, const Block& b, BlockId target) {
    if (target == b.id) return target;
    const Block* latch = f.FindBlock(target);
    if (latch == nullptr || latch->insts.size() != 1 || latch->insts[0].op != Op::kBr ||
        latch->insts[0].targets[0] != b.id)
        return kir::kNone;
    for (const Block& other : f.blocks) {
        if (other.id == b.id) continue;
        for (BlockId s : other.Successors())
            if (s == target) return kir::kNone;
    }
    return target;
}

bool IsZero(const Expr& e) {
    return e.kind == Expr::Kind::kInst && e.inst->op == Op::kConst && e.inst->imm == 0;
}

// Expression k as lhs < rhs (a `lt`, or a `gt` with its operands swapped).
bool LessThan(const Resolver& r, int k, int* lhs, int* rhs) {
    const Expr& e = r.at(k);
    if (e.kind != Expr::Kind::kInst) return false;
    if (e.inst->op == Op::kLt) {
        *lhs = e.kids[0], *rhs = e.kids[1];
        return true;
    }
    if (e.inst->op == Op::kGt) {
        *lhs = e.kids[1], *rhs = e.kids[0];
        return true;
    }
    return false;
}

// The loop's test as lhs < rhs, where step > 0. A range loop whose step is known only
// at run time tests (step > 0 and i < stop) or (step < 0 and i > stop) (frontend/
// loops.py): `i < stop` where step > 0, which the guard requires; *sign_step is then that
// step, which must be the loop's own.
bool Test(const Resolver& r, int k, int* lhs, int* rhs, int* sign_step) {
    if (LessThan(r, k, lhs, rhs)) return true;
    const Expr& e = r.at(k);
    if (e.kind != Expr::Kind::kInst || e.inst->op != Op::kOr) return false;
    const Expr& up = r.at(e.kids[0]);
    const Expr& down = r.at(e.kids[1]);
    if (up.kind != Expr::Kind::kInst || up.inst->op != Op::kAnd || down.kind != Expr::Kind::kInst ||
        down.inst->op != Op::kAnd)
        return false;
    const Expr& positive = r.at(up.kids[0]);  // step > 0
    const Expr& negative = r.at(down.kids[0]);  // step < 0: false where step > 0
    if (positive.kind != Expr::Kind::kInst || positive.inst->op != Op::kGt ||
        !IsZero(r.at(positive.kids[1])) || negative.kind != Expr::Kind::kInst ||
        negative.inst->op != Op::kLt || !IsZero(r.at(negative.kids[1])) ||
        !r.Equal(positive.kids[0], negative.kids[0]))
        return false;
    // The other sign's test must be the mirror of this one (i > stop): the latch
    // evaluates the whole test again (with a negative step after the original body).
    int down_lhs, down_rhs;
    if (!LessThan(r, up.kids[1], lhs, rhs) || !LessThan(r, down.kids[1], &down_lhs, &down_rhs) ||
        !r.Equal(down_lhs, *rhs) || !r.Equal(down_rhs, *lhs))
        return false;
    *sign_step = positive.kids[0];
    return true;
}

// Whether `cond` is the range loop's wrap test (frontend/loops.py): `test and wrapped`,
// the loop's own test and, on `add` (i + step), `add < i` or, for a step known only at
// run time, `(add < i) != (step < 0)`; false wherever step > 0 and i + step does not
// wrap.
bool WrapTest(const Resolver& r, int cond, int test, int add, int i) {
    const Expr& both = r.at(cond);
    if (both.kind != Expr::Kind::kInst || both.inst->op != Op::kAnd || !r.Equal(both.kids[0], test))
        return false;
    cond = both.kids[1];
    int lhs, rhs;
    if (LessThan(r, cond, &lhs, &rhs)) return r.Equal(lhs, add) && r.Equal(rhs, i);
    const Expr& e = r.at(cond);
    if (e.kind != Expr::Kind::kInst || e.inst->op != Op::kNe) return false;
    const Expr& sum = r.at(add);
    if (sum.kind != Expr::Kind::kInst || sum.inst->op != Op::kAdd) return false;
    int step = r.Equal(sum.kids[0], i) ? sum.kids[1] : sum.kids[0];
    const Expr& negative = r.at(e.kids[1]);  // step < 0: false where step > 0
    return negative.kind == Expr::Kind::kInst && negative.inst->op == Op::kLt &&
           IsZero(r.at(negative.kids[1])) && r.Equal(negative.kids[0], step) &&
           LessThan(r, e.kids[0], &lhs, &rhs) && r.Equal(lhs, add) && r.Equal(rhs, i);
}

// The test is on i + step (Numba's rotated `while i < n: ...; i += s`) or on i itself
// before the block advances it (a rotated range loop: RotateRangeLoops); either way i is
// stored exactly once in the block, with i + step, or with `bound` where i is valid and
// i + step wraps (the range loop's `select(valid and wrapped, stop, i + step)`, which the
// unrolled copies, run only where i + step stays below bound, compute as i + step; the
// latch's i - step then still tests as i did).
bool Match(const kir::Module& m, const Block& b, Resolver& r, Counted* out) {
    const Inst& term = b.terminator();
    if (term.op != Op::kCondBr) return false;
    BlockId back = BackEdge(m.function, b, term.targets[0]);
    if (back == kir::kNone || term.targets[1] == b.id || term.targets[1] == back) return false;
    out->back = back;
    int lhs, rhs, sign_step = -1;
    if (!Test(r, r.Resolve(term.operands[0]), &lhs, &rhs, &sign_step)) return false;
    // The variable and the value stored into it (i + step).
    ValueId var = kir::kNone;
    int next = -1;
    if (r.at(lhs).kind == Expr::Kind::kStart) {
        var = r.at(lhs).value;
        for (const Inst& inst : b.insts)
            if (inst.op == Op::kStore && inst.operands[0] == var)
                next = r.Resolve(inst.operands[1]);
    } else {
        next = lhs;
    }
    if (next < 0) return false;
    int sum = next;
    const Expr& stored = r.at(next);
    if (var != kir::kNone && stored.kind == Expr::Kind::kInst && stored.inst->op == Op::kSelect &&
        r.Equal(stored.kids[1], rhs) &&
        WrapTest(r, stored.kids[0], r.Resolve(term.operands[0]), stored.kids[2], lhs))
        sum = stored.kids[2];
    const Expr& add = r.at(sum);
    if (add.kind != Expr::Kind::kInst || add.inst->op != Op::kAdd) return false;
    kir::ScalarKind k = m.type(add.inst->type).scalar;
    if (m.type(add.inst->type).kind != kir::Type::Kind::kScalar ||
        (k != kir::ScalarKind::kI32 && k != kir::ScalarKind::kI64))
        return false;
    for (int side = 0; side < 2; ++side) {
        const Expr& start = r.at(add.kids[side]);
        if (start.kind != Expr::Kind::kStart || (var != kir::kNone && start.value != var)) continue;
        int step = add.kids[1 - side];
        if (!r.Invariant(step) || !r.Invariant(rhs)) return false;
        if (sign_step >= 0 && !r.Equal(sign_step, step)) return false;
        int stores = 0;
        bool same = false;
        for (const Inst& inst : b.insts) {
            if (inst.op != Op::kStore || inst.operands[0] != start.value) continue;
            ++stores;
            same = r.Equal(r.Resolve(inst.operands[1]), next);
        }
        if (stores != 1 || !same) return false;
        if (sum != next) {
            for (const Inst& inst : b.insts)
                if (inst.op == Op::kStore && inst.operands[0] == start.value)
                    out->select = inst.operands[1];
            for (const Inst& inst : b.insts)
                if (inst.result == out->select && inst.op == Op::kSelect) out->sum = inst.operands[2];
            if (out->sum == kir::kNone) out->select = kir::kNone;  // not in the block: keep it
        }
        out->var = start.value;
        out->type = add.inst->type;
        out->step = step;
        out->bound = rhs;
        out->test = r.Resolve(term.operands[0]);
        out->tested = lhs;
        out->tests_start = var != kir::kNone;
        return true;
    }
    return false;
}

constexpr int64_t kInt32Limit = int64_t{1} << 31;
constexpr int64_t kWindow = int64_t{1} << 28;  // room above the copies' i below 2^31

// Appends instructions to one new block.
class Writer {
  public:
    Writer(kir::Module& m, Resolver& r, BlockId block, kir::Loc loc)
        : m_(m), r_(r), block_(block), loc_(loc) {}

    std::vector<Inst> insts;

    ValueId Add(Op op, kir::TypeId type, std::vector<ValueId> operands, uint64_t imm = 0) {
        Inst inst;
        inst.op = op;
        inst.type = type;
        inst.operands = std::move(operands);
        inst.imm = imm;
        inst.loc = loc_;
        inst.result = m_.function.NewValue(type, block_);
        insts.push_back(inst);
        return inst.result;
    }

    // The value of an invariant expression (or of i + step, or i), computed in this block.
    ValueId Value(int k) {
        auto memo = memo_.find(k);
        if (memo != memo_.end()) return memo->second;
        const Expr& e = r_.at(k);
        ValueId v = kir::kNone;
        if (e.kind == Expr::Kind::kValue) {
            v = e.value;
        } else if (e.kind == Expr::Kind::kStart) {
            v = Add(Op::kLoad, m_.type(m_.function.values[e.value].type).pointee, {e.value});
        } else {
            std::vector<ValueId> operands;
            for (int kid : e.kids) operands.push_back(Value(kid));
            Inst inst = *e.inst;
            inst.operands = std::move(operands);
            inst.result = m_.function.NewValue(inst.type, block_);
            inst.loc = loc_;
            insts.push_back(inst);
            v = inst.result;
        }
        return memo_[k] = v;
    }

    // step > 0, step and bound small enough, i inside a window, and
    // i < bound - (factor - 1) * step. The window (kWindow) and the cap on the
    // step are not needed for the results (which are the original loop's either
    // way) but let the interval analysis of the narrowing pass prove that every
    // copy's i (i0 + k * step, k <= factor) fits int32: then the copies' index
    // math is 32-bit and Numba's negative-index test (i < 0) folds away. Arrays
    // index with int32 offsets anyway, so only grid strides of 2^28 / factor
    // elements or more fall back to the original loop.
    ValueId Guard(const Counted& c, int factor) {
        kir::TypeId t = c.type;
        kir::TypeId boolean = m_.GetScalar(kir::ScalarKind::kBool);
        int width = kir::BitWidth(m_.type(t).scalar);
        int64_t quarter = int64_t{1} << (width - 2);  // bound > -quarter
        ValueId step = Value(c.step);
        ValueId bound = Value(c.bound);
        ValueId i = Add(Op::kLoad, t, {c.var});
        auto constant = [&](int64_t x) { return Add(Op::kConst, t, {}, static_cast<uint64_t>(x)); };
        auto all = [&](ValueId a, ValueId b) { return Add(Op::kAnd, boolean, {a, b}); };
        ValueId positive = Add(Op::kGt, boolean, {step, constant(0)});
        ValueId small = Add(Op::kLt, boolean, {step, constant(kWindow / factor)});
        ValueId above = Add(Op::kGt, boolean, {bound, constant(-quarter)});
        ValueId window = Add(Op::kLt, boolean, {i, constant(kInt32Limit - kWindow)});
        if (width == 64)
            window = all(Add(Op::kGe, boolean, {i, constant(-kInt32Limit)}), window);
        ValueId span = Add(Op::kMul, t, {step, constant(factor - 1)});
        ValueId last = Add(Op::kSub, t, {bound, span});
        ValueId room = Add(Op::kLt, boolean, {i, last});
        return all(all(positive, small), all(above, all(window, room)));
    }

    // Value(k) gives v from now on.
    void Seed(int k, ValueId v) { memo_[k] = v; }

    void Jump(BlockId target) {
        Inst inst;
        inst.op = Op::kBr;
        inst.targets[0] = target;
        inst.loc = loc_;
        insts.push_back(inst);
    }

    void Branch(ValueId cond, BlockId yes, BlockId no) {
        Inst inst;
        inst.op = Op::kCondBr;
        inst.operands = {cond};
        inst.targets[0] = yes;
        inst.targets[1] = no;
        inst.loc = loc_;
        insts.push_back(inst);
    }

  private:
    kir::Module& m_;
    Resolver& r_;
    BlockId block_;
    kir::Loc loc_;
    std::map<int, ValueId> memo_;
};

// Appends a copy of `body` (without its terminator) to `out`, with new values; returns
// the new value of each of body's values. Given `select` and `sum`, the copy of `select`
// is `sum`'s (the wrap test of a range loop's cursor, false in the unrolled copies).
std::map<ValueId, ValueId> CopyBody(kir::Function& f, const std::vector<Inst>& body,
                                    BlockId block, std::vector<Inst>& out,
                                    ValueId select = kir::kNone, ValueId sum = kir::kNone) {
    std::map<ValueId, ValueId> renamed;
    for (size_t k = 0; k + 1 < body.size(); ++k) {
        Inst inst = body[k];
        if (select != kir::kNone && inst.result == select) {
            auto it = renamed.find(sum);
            renamed[select] = it != renamed.end() ? it->second : sum;
            continue;
        }
        for (ValueId& operand : inst.operands) {
            auto it = renamed.find(operand);
            if (it != renamed.end()) operand = it->second;
        }
        if (inst.result != kir::kNone) {
            ValueId fresh = f.NewValue(inst.type, block);
            renamed[inst.result] = fresh;
            inst.result = fresh;
        }
        out.push_back(std::move(inst));
    }
    return renamed;
}

bool Eligible(const Block& b, const UnrollOptions& options) {
    if (b.insts.size() > options.max_body_insts) return false;
    for (const Inst& inst : b.insts)
        if (inst.op == Op::kBarrier || inst.op == Op::kSubgroup ||
            IsCoopOp(inst.op))
            return false;
    return true;
}

// Edges into block `id` (a conditional branch with both targets there counts twice).
int Predecessors(const kir::Function& f, BlockId id) {
    int n = 0;
    for (const Block& b : f.blocks)
        for (BlockId s : b.Successors()) n += s == id;
    return n;
}

// Whether a block only loads and stores local variables and computes pure values.
bool OnlyLocals(const Block& b, const std::set<ValueId>& vars) {
    for (size_t k = 0; k + 1 < b.insts.size(); ++k) {
        const Inst& inst = b.insts[k];
        if (inst.op == Op::kLoad || inst.op == Op::kStore) {
            if (!vars.count(inst.operands[0])) return false;
        } else if (!IsPure(inst.op)) {
            return false;
        }
    }
    return true;
}

// Numba's `for i in range(...)`: a header H that tests the cursor and advances it
// (frontend/loops.py), then a body block B that goes back to H (directly, or through
// an empty latch under Python 3.12). Where B is straight-line code and the loop is
// not one whose trip count the front end knew (the driver unrolls those itself), B
// becomes B followed by a copy of H, going back to itself on the copy's test, and H
// stays in front as the first iteration's test: one block, in the shape Match
// unrolls. Done only where Match then accepts the block (the unrolling matches it again).
void RotateRangeLoops(kir::Module& m, const std::set<ValueId>& vars,
                      const UnrollOptions& options) {
    kir::Function& f = m.function;
    for (size_t hi = 1; hi < f.blocks.size(); ++hi) {
        const Block& h = f.blocks[hi];
        const Inst& test = h.terminator();
        if (test.op != Op::kCondBr || test.targets[0] == h.id || test.targets[1] == h.id ||
            test.targets[0] == test.targets[1] || options.static_headers.count(h.name) ||
            !OnlyLocals(h, vars))
            continue;
        Block* body = f.FindBlock(test.targets[0]);
        if (body == nullptr || body->id == f.entry().id || Predecessors(f, body->id) != 1 ||
            body->terminator().op != Op::kBr)
            continue;
        Block* latch = nullptr;  // Python 3.12's empty block between the body and H
        if (body->terminator().targets[0] != h.id) {
            latch = f.FindBlock(body->terminator().targets[0]);
            if (latch == nullptr || latch->insts.size() != 1 || latch->insts[0].op != Op::kBr ||
                latch->insts[0].targets[0] != h.id || Predecessors(f, latch->id) != 1)
                continue;
        }
        // The rotated block, first with H's own values (unique in it) to ask Match.
        Block view = *body;
        view.insts.pop_back();
        view.insts.insert(view.insts.end(), h.insts.begin(), h.insts.end() - 1);
        Inst branch = test;
        branch.targets[0] = latch ? latch->id : body->id;
        view.insts.push_back(branch);
        if (!Eligible(view, options)) continue;
        if (latch) latch->insts[0].targets[0] = body->id;
        Resolver r(f, view, vars);
        Counted c;
        if (!Match(m, view, r, &c)) {
            if (latch) latch->insts[0].targets[0] = h.id;
            continue;
        }
        std::vector<Inst> insts(body->insts.begin(), body->insts.end() - 1);
        const std::vector<Inst> header = h.insts;  // h may move as `insts` is built: copied
        std::map<ValueId, ValueId> renamed = CopyBody(f, header, body->id, insts);
        branch.operands[0] = renamed.at(branch.operands[0]);
        insts.push_back(branch);
        f.FindBlock(test.targets[0])->insts = std::move(insts);
    }
}

}  // namespace

util::Result<int> UnrollCountedLoops(kir::Module& m, const UnrollOptions& options) {
    if (options.factor < 2) return 0;
    if (options.factor > 8) return util::InvalidArgument("unroll factor above 8");
    kir::Function& f = m.function;
    if (f.structured) return util::Internal("UnrollCountedLoops runs on the CFG form");
    std::set<ValueId> vars;
    for (const Inst& inst : f.entry().insts)
        if (inst.op == Op::kVar) vars.insert(inst.result);

    RotateRangeLoops(m, vars, options);
    int unrolled = 0;
    const size_t original = f.blocks.size();
    for (size_t bi = 1; bi < original; ++bi) {
        if (!Eligible(f.blocks[bi], options)) continue;
        const std::vector<Inst> body = f.blocks[bi].insts;  // copied: blocks grow below
        const BlockId loop = f.blocks[bi].id;
        const std::string name = f.blocks[bi].name;
        const BlockId exit = body.back().targets[1];
        Block view = f.blocks[bi];
        Resolver r(f, view, vars);
        Counted c;
        if (!Match(m, view, r, &c)) continue;

        const kir::Loc loc = body.back().loc;
        const BlockId head_id = f.NextBlockId(), unrolled_id = head_id + 1, latch_id = head_id + 2;
        // Every edge into the loop now enters the new header.
        for (Block& b : f.blocks) {
            if (b.id == loop) continue;
            Inst& t = b.terminator();
            for (BlockId& target : t.targets)
                if (target == loop) target = head_id;
        }
        Writer head(m, r, head_id, loc);
        head.Branch(head.Guard(c, options.factor), unrolled_id, loop);
        Writer copies(m, r, unrolled_id, loc);
        for (int k = 0; k < options.factor; ++k)
            CopyBody(f, body, unrolled_id, copies.insts, c.select, c.sum);
        copies.Jump(latch_id);
        // The original block runs one iteration, then joins the copies at the latch,
        // which tests as the block's own test did: on i + step, which i now is, or on
        // the i before the last advance: i - step (which gives that i back even where
        // the advance wrapped).
        {
            Block& one = f.blocks[bi];
            Inst jump;
            jump.op = Op::kBr;
            jump.targets[0] = latch_id;
            jump.loc = loc;
            one.insts.back() = jump;
        }
        Writer latch(m, r, latch_id, loc);
        ValueId i = latch.Add(Op::kLoad, c.type, {c.var});
        latch.Seed(c.tested, c.tests_start ? latch.Add(Op::kSub, c.type, {i, latch.Value(c.step)})
                                           : i);
        ValueId more = latch.Value(c.test);
        // An empty latch block stays the way back (its `br` now enters the new header).
        latch.Branch(more, c.back == loop ? head_id : c.back, exit);

        const char* suffixes[] = {".unroll_head", ".unrolled", ".unroll_latch"};
        Writer* writers[] = {&head, &copies, &latch};
        for (int k = 0; k < 3; ++k) {
            Block nb;
            nb.id = head_id + k;
            nb.name = name.empty() ? "" : name + suffixes[k];
            nb.insts = std::move(writers[k]->insts);
            f.blocks.push_back(std::move(nb));
        }
        ++unrolled;
    }
    return unrolled;
}

}  // namespace nvk::unroll
