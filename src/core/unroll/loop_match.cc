// Recognising a counted loop block (loop_match.h).
#include "unroll/loop_match.h"

namespace nvk::unroll {

namespace {

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

}  // namespace

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

}  // namespace nvk::unroll
