#include "narrow/ranges.h"

#include <set>
#include <unordered_map>
#include <utility>

#include "kir/dominators.h"

namespace nvk::narrow {

using namespace kir;

namespace {

constexpr int kWidenAfter = 3;  // visits of a loop header before widening
constexpr int kMaxDepth = 8;    // how far a condition is traced back

using State = std::vector<Interval>;  // by tracked-variable slot
using Facts = std::unordered_map<ValueId, Interval>;

class Analysis {
  public:
    Analysis(const Module& m, const RangeOptions& o) : m_(m), f_(m.function), opt_(o) {}

    Ranges Run() {
        Index();
        std::vector<BlockId> rpo = ReversePostOrder(f_);
        std::unordered_map<BlockId, uint32_t> rpo_index;
        for (uint32_t i = 0; i < rpo.size(); ++i) rpo_index[rpo[i]] = i;
        std::vector<bool> header(f_.blocks.size(), false);
        for (BlockId u : rpo)
            for (BlockId s : f_.blocks[f_.BlockIndex(u)].Successors())
                if (rpo_index.count(s) && rpo_index[s] <= rpo_index[u])
                    header[f_.BlockIndex(s)] = true;

        in_.assign(f_.blocks.size(), {});
        State init;
        for (ValueId var : vars_) init.push_back(KindRange(Pointee(var)));
        in_[0] = {true, init, 0};
        std::set<uint32_t> work{0};  // RPO positions: loops settle inside out
        // Widening bounds the work; this cap only guards against a bug in it.
        size_t budget = 10000 + 1000 * f_.blocks.size();
        while (!work.empty()) {
            if (budget-- == 0) return Ranges{};  // complete = false: nothing is claimed
            BlockId id = rpo[*work.begin()];
            work.erase(work.begin());
            uint32_t bi = f_.BlockIndex(id);
            const Block& b = f_.blocks[bi];
            bool dead = false;
            State end = Eval(b, in_[bi].state, nullptr, vals_, &dead);
            const Inst& t = b.terminator();
            auto propagate = [&](BlockId s, const State& out) {
                uint32_t si = f_.BlockIndex(s);
                if (si == kNone) return;
                In& in = in_[si];
                State next = out;
                if (in.reached) {
                    next = Join(in.state, out);
                    if (header[si] && ++in.visits > kWidenAfter) next = Widen(in.state, next);
                    if (next == in.state) return;
                }
                in.reached = true;
                in.state = std::move(next);
                work.insert(rpo_index[s]);
            };
            if (dead) continue;
            if (t.op == Op::kBr) propagate(t.targets[0], end);
            if (t.op == Op::kCondBr) {
                for (int edge = 0; edge < 2; ++edge) {
                    bool truth = edge == 0;
                    Interval c = vals_[t.operands[0]];
                    if (!c.Contains(truth ? 1 : 0)) continue;  // this edge is never taken
                    Facts facts;
                    Derive(b, t.operands[0], truth, facts, 0);
                    if (facts.empty()) {
                        propagate(t.targets[edge], end);
                        continue;
                    }
                    scratch_ = vals_;
                    bool infeasible = false;
                    State out = Eval(b, in_[bi].state, &facts, scratch_, &infeasible);
                    if (!infeasible) propagate(t.targets[edge], out);
                }
            }
        }
        Ranges r;
        r.complete = true;
        r.values = vals_;
        for (const In& in : in_) r.reached.push_back(in.reached);
        return r;
    }

  private:
    struct In {
        bool reached = false;
        State state;
        int visits = 0;
    };

    ScalarKind KindOf(ValueId v) const { return m_.type(f_.values.at(v).type).scalar; }
    ScalarKind Pointee(ValueId ptr) const {
        return m_.type(m_.type(f_.values.at(ptr).type).pointee).scalar;
    }
    bool Tracked(ScalarKind k) const { return k == ScalarKind::kBool || IsInteger(k); }

    // Definitions, and the variables the analysis follows: function-space
    // vars of integer or bool type whose address is used only to load and store.
    void Index() {
        def_.assign(f_.values.size(), nullptr);
        def_pos_.assign(f_.values.size(), 0);
        vals_.assign(f_.values.size(), Interval::Empty());
        std::unordered_map<ValueId, bool> ok;
        for (const Block& b : f_.blocks) {
            for (uint32_t i = 0; i < b.insts.size(); ++i) {
                const Inst& inst = b.insts[i];
                if (inst.result != kNone && inst.result < def_.size()) {
                    def_[inst.result] = &inst;
                    def_pos_[inst.result] = i;
                }
                if (inst.op == Op::kVar) {
                    const Type& pt = m_.type(inst.type);
                    const Type& el = m_.type(pt.pointee);
                    ok[inst.result] = pt.space == AddressSpace::kFunction &&
                                      el.kind == Type::Kind::kScalar && Tracked(el.scalar);
                }
                for (size_t p = 0; p < inst.operands.size(); ++p) {
                    bool address_use =
                        p == 0 && (inst.op == Op::kLoad || inst.op == Op::kStore);
                    if (!address_use) ok[inst.operands[p]] = false;
                }
            }
        }
        for (const Inst& inst : f_.entry().insts) {
            if (inst.op == Op::kVar && ok[inst.result]) {
                slot_[inst.result] = static_cast<uint32_t>(vars_.size());
                vars_.push_back(inst.result);
            }
        }
    }

    int Slot(ValueId ptr) const {
        auto it = slot_.find(ptr);
        return it == slot_.end() ? -1 : static_cast<int>(it->second);
    }

    State Join(const State& a, const State& b) const {
        State r(a.size());
        for (size_t i = 0; i < a.size(); ++i) r[i] = Hull(a[i], b[i]);
        return r;
    }

    // Widening to thresholds: a bound that moved jumps to the next bound that
    // matters for narrowing, so loops settle in a few visits.
    State Widen(const State& old, const State& next) const {
        State r = next;
        for (size_t i = 0; i < r.size(); ++i) {
            if (old[i].empty() || next[i].empty()) continue;
            Interval full = KindRange(Pointee(vars_[i]));
            const Int ts[] = {-Pow2(63), -Pow2(31), -1, 0, Pow2(31) - 1, Pow2(32) - 1,
                              Pow2(63) - 1, Pow2(64) - 1};
            if (next[i].lo < old[i].lo) {
                Int lo = full.lo;
                for (Int t : ts)
                    if (t <= next[i].lo && t > lo) lo = t;
                r[i].lo = lo;
            }
            if (next[i].hi > old[i].hi) {
                Int hi = full.hi;
                for (Int t : ts)
                    if (t >= next[i].hi && t < hi) hi = t;
                r[i].hi = hi;
            }
        }
        return r;
    }

    // Range of value v while evaluating `b` into `out`.
    Interval R(const Block& b, const std::vector<Interval>& out, ValueId v) const {
        return f_.values.at(v).block == b.id ? out[v] : vals_[v];
    }

    // Evaluate block b from state st, writing its values' ranges into `out`.
    // With facts (the known truth of a branch condition), values are met with
    // them; an empty meet means the edge cannot be taken (*infeasible).
    State Eval(const Block& b, State st, const Facts* facts, std::vector<Interval>& out,
               bool* infeasible) {
        for (const Inst& inst : b.insts) {
            auto opr = [&](int i) { return R(b, out, inst.operands.at(i)); };
            auto opk = [&](int i) { return KindOf(inst.operands.at(i)); };
            if (inst.op == Op::kStore) {
                int s = Slot(inst.operands[0]);
                if (s >= 0) st[s] = opr(1);
                continue;
            }
            if (inst.result == kNone) continue;
            const Type& rt = m_.type(inst.type);
            if (rt.kind != Type::Kind::kScalar || !Tracked(rt.scalar)) continue;
            ScalarKind k = rt.scalar;
            Interval r = KindRange(k);
            switch (inst.op) {
                case Op::kConst: r = Interval::Point(ConstValue(k, inst.imm)); break;
                case Op::kParam: r = ParamRange(static_cast<uint32_t>(inst.imm), k); break;
                case Op::kBuiltin:
                    r = BuiltinRange(static_cast<Builtin>(inst.imm), inst.aux, opt_);
                    break;
                case Op::kLoad: {
                    int s = Slot(inst.operands[0]);
                    if (s >= 0) r = st[s];
                    break;
                }
                case Op::kAdd: case Op::kSub: case Op::kMul: case Op::kDiv: case Op::kRem:
                case Op::kAnd: case Op::kOr: case Op::kXor: case Op::kShl: case Op::kShr:
                    r = Arith(inst.op, k, opr(0), opr(1));
                    break;
                case Op::kNeg: case Op::kNot:
                    r = Arith(inst.op, k, opr(0), Interval::Empty());
                    break;
                case Op::kEq: case Op::kNe: case Op::kLt: case Op::kLe: case Op::kGt:
                case Op::kGe:
                    r = {0, 1};
                    if (Tracked(opk(0))) {
                        Interval a = opr(0), c = opr(1);
                        if (a.empty() || c.empty()) r = Interval::Empty();
                        else if (RefineLeft(inst.op, a, c).empty()) r = Interval::Point(0);
                        else if (RefineLeft(InvertCompare(inst.op), a, c).empty())
                            r = Interval::Point(1);
                        else r = AgainstSum(b, out, inst);
                    }
                    break;
                case Op::kConvert: case Op::kBitcast:
                    r = ConvertRange(inst.op, opk(0), k, Tracked(opk(0)) ? opr(0) : Interval{});
                    break;
                case Op::kSelect: {
                    Interval c = opr(0);
                    r = Interval::Empty();
                    if (c.Contains(1)) r = Hull(r, opr(1));
                    if (c.Contains(0)) r = Hull(r, opr(2));
                    break;
                }
                case Op::kMath:
                    if (IsInteger(k))
                        r = MathRange(static_cast<MathFn>(inst.imm), k, opr(0),
                                      inst.operands.size() > 1 ? opr(1) : Interval{});
                    break;
                default: break;
            }
            if (facts) {
                auto it = facts->find(inst.result);
                if (it != facts->end()) {
                    r = Meet(r, it->second);
                    if (r.empty()) {
                        *infeasible = true;
                        return st;
                    }
                }
            }
            if (inst.op == Op::kLoad) {
                int s = Slot(inst.operands[0]);
                if (s >= 0) st[s] = r;  // the variable holds what was just read
            }
            out[inst.result] = r;
        }
        return st;
    }

    // The mathematical range of x + y (add) or x - y, before any wrap.
    static Interval Exact(bool add, const Interval& x, const Interval& y) {
        return add ? Interval::Of(x.lo + y.lo, x.hi + y.hi)
                   : Interval::Of(x.lo - y.hi, x.hi - y.lo);
    }

    // x + y (or x - y) compared with x, either way round, where the sum cannot
    // wrap: y's sign decides it when the ranges alone do not. This is the range
    // loop's wrap test (frontend/loops.py: cursor + step < cursor), decided once
    // the cursor and the step are bounded. [0, 1] where not decided.
    Interval AgainstSum(const Block& b, const std::vector<Interval>& out,
                        const Inst& cmp) const {
        for (int side = 0; side < 2; ++side) {
            ValueId s = cmp.operands[side], t = cmp.operands[1 - side];
            const Inst* d = s < def_.size() ? def_[s] : nullptr;
            if (!d || (d->op != Op::kAdd && d->op != Op::kSub)) continue;
            const bool add = d->op == Op::kAdd;
            ValueId x = d->operands[0], y = d->operands[1];
            if (add && y == t) std::swap(x, y);
            ScalarKind k = KindOf(s);
            if (x != t || !IsInteger(k) || KindOf(y) != k) continue;
            Interval rx = R(b, out, x), ry = R(b, out, y);
            if (rx.empty() || ry.empty() || !Fits(Exact(add, rx, ry), k)) continue;  // may wrap
            // s = x + e exactly (e = y, or -y): s op x  <=>  e op 0
            Interval e = add ? ry : Interval::Of(-ry.hi, -ry.lo), zero = Interval::Point(0);
            Op op = side == 0 ? cmp.op : SwapCompare(cmp.op);
            if (RefineLeft(op, e, zero).empty()) return Interval::Point(0);
            if (RefineLeft(InvertCompare(op), e, zero).empty()) return Interval::Point(1);
        }
        return {0, 1};
    }

    const Inst* DefIn(const Block& b, ValueId v) const {
        if (v >= def_.size() || !def_[v] || f_.values[v].block != b.id) return nullptr;
        return def_[v];
    }

    void Fact(const Block& b, ValueId v, Interval r, Facts& facts, int depth) {
        auto it = facts.find(v);
        facts[v] = it == facts.end() ? r : Meet(it->second, r);
        const Inst* d = DefIn(b, v);
        // A widening conversion keeps the value: the fact holds for its operand.
        if (d && d->op == Op::kConvert && depth < kMaxDepth) {
            ScalarKind from = KindOf(d->operands[0]), to = KindOf(v);
            if (Tracked(from) && KindRange(from).Within(KindRange(to)))
                Fact(b, d->operands[0], Meet(r, KindRange(from)), facts, depth + 1);
        }
        // A sum or difference that cannot wrap is exact: the fact holds, shifted, for
        // each operand (x - y < z tells that x < z + y: the latch of an unrolled range
        // loop tests the cursor less a step, unroll/unroll.cc).
        if (d && (d->op == Op::kAdd || d->op == Op::kSub) && depth < kMaxDepth && !r.empty()) {
            ScalarKind k = KindOf(v);
            ValueId x = d->operands[0], y = d->operands[1];
            if (!IsInteger(k) || KindOf(x) != k || KindOf(y) != k) return;
            Interval rx = R(b, vals_, x), ry = R(b, vals_, y);
            if (rx.empty() || ry.empty()) return;
            const bool add = d->op == Op::kAdd;
            if (!Fits(Exact(add, rx, ry), k)) return;  // it may wrap: nothing follows
            Interval fx = add ? Interval::Of(r.lo - ry.hi, r.hi - ry.lo)   // x = v - y
                              : Interval::Of(r.lo + ry.lo, r.hi + ry.hi);  // x = v + y
            Interval fy = add ? Interval::Of(r.lo - rx.hi, r.hi - rx.lo)   // y = v - x
                              : Interval::Of(rx.lo - r.hi, rx.hi - r.lo);  // y = x - v
            Fact(b, x, Meet(Meet(fx, rx), KindRange(k)), facts, depth + 1);
            Fact(b, y, Meet(Meet(fy, ry), KindRange(k)), facts, depth + 1);
        }
    }

    // What `cond == truth` tells about the values of block b.
    void Derive(const Block& b, ValueId cond, bool truth, Facts& facts, int depth) {
        const Inst* d = DefIn(b, cond);
        if (!d || depth > kMaxDepth) return;
        switch (d->op) {
            case Op::kLoad: {
                // The value most recently stored to this bool variable in this block.
                if (Slot(d->operands[0]) < 0) return;
                for (uint32_t i = def_pos_[cond]; i-- > 0;) {
                    const Inst& s = b.insts[i];
                    if (s.op == Op::kStore && s.operands[0] == d->operands[0]) {
                        Derive(b, s.operands[1], truth, facts, depth + 1);
                        return;
                    }
                }
                return;
            }
            case Op::kNot: Derive(b, d->operands[0], !truth, facts, depth + 1); return;
            case Op::kAnd: case Op::kOr: {
                if (KindOf(cond) != ScalarKind::kBool) return;
                // and == true, or == false: both operands are known. and ==
                // false, or == true: the operand that is not known to be
                // true (false) decides it.
                bool both = (d->op == Op::kAnd) == truth;
                ValueId x = d->operands[0], y = d->operands[1];
                Interval neutral = Interval::Point(d->op == Op::kAnd ? 1 : 0);
                if (both || R(b, vals_, y) == neutral) Derive(b, x, truth, facts, depth + 1);
                if (both || R(b, vals_, x) == neutral) Derive(b, y, truth, facts, depth + 1);
                return;
            }
            case Op::kEq: case Op::kNe: case Op::kLt: case Op::kLe: case Op::kGt: case Op::kGe: {
                ValueId a = d->operands[0], c = d->operands[1];
                if (!Tracked(KindOf(a)) || KindOf(a) == ScalarKind::kBool) return;
                Op op = truth ? d->op : InvertCompare(d->op);
                Interval ra = R(b, vals_, a), rc = R(b, vals_, c);
                Fact(b, a, RefineLeft(op, ra, rc), facts, depth);
                Fact(b, c, RefineLeft(SwapCompare(op), rc, ra), facts, depth);
                return;
            }
            default: return;
        }
    }

    Interval ParamRange(uint32_t index, ScalarKind k) const {
        for (const RangeOptions::ParamRange& p : opt_.params)
            if (p.index == index) return Meet(KindRange(k), Interval::Of(p.lo, p.hi));
        return KindRange(k);
    }

    const Module& m_;
    const Function& f_;
    const RangeOptions& opt_;
    std::vector<const Inst*> def_;
    std::vector<uint32_t> def_pos_;
    std::vector<ValueId> vars_;  // tracked variables, by slot
    std::unordered_map<ValueId, uint32_t> slot_;
    std::vector<In> in_;
    std::vector<Interval> vals_, scratch_;
};

}  // namespace

Interval BuiltinRange(Builtin b, uint32_t axis, const RangeOptions& o) {
    Int u32max = Pow2(32) - 1;
    if (axis > 2) return {0, u32max};
    Int local = o.max_local_size[axis], groups = o.max_groups[axis];
    bool local_known = o.max_local_size[axis] != UINT32_MAX;
    bool groups_known = o.max_groups[axis] != UINT32_MAX;
    switch (b) {
        case Builtin::kLocalId: return {0, local_known ? local - 1 : u32max};
        case Builtin::kLocalSize: return {1, local_known ? local : u32max};
        case Builtin::kGroupId: return {0, groups_known ? groups - 1 : u32max};
        case Builtin::kNumGroups: return {1, groups_known ? groups : u32max};
        case Builtin::kGlobalId:
            if (!local_known || !groups_known) return {0, u32max};
            return {0, std::min(u32max, local * groups - 1)};
    }
    return {0, u32max};
}

Ranges AnalyzeRanges(const Module& module, const RangeOptions& options) {
    return Analysis(module, options).Run();
}

}  // namespace nvk::narrow
