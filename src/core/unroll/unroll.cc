// UnrollCountedLoops (see unroll.h for what and why); the loops it takes are found by
// loop_match.h.
#include "unroll/unroll.h"

#include <map>
#include <set>
#include <string>
#include <vector>

#include "unroll/loop_match.h"

namespace nvk::unroll {

namespace {

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
