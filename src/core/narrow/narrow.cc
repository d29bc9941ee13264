#include "narrow/narrow.h"

#include <optional>
#include <string>
#include <unordered_map>

#include "kir/printer.h"

namespace nvk::narrow {

using namespace kir;

namespace {

bool Is64Int(ScalarKind k) { return k == ScalarKind::kI64 || k == ScalarKind::kU64; }
ScalarKind Half(ScalarKind k) {
    return k == ScalarKind::kU64 ? ScalarKind::kU32 : ScalarKind::kI32;
}
bool IsIntOrBool(ScalarKind k) { return k == ScalarKind::kBool || IsInteger(k); }

// Ops whose low 32 result bits depend only on the low 32 bits of their operands.
bool LowBitsOp(Op op) {
    switch (op) {
        case Op::kAdd: case Op::kSub: case Op::kMul: case Op::kAnd: case Op::kOr: case Op::kXor:
        case Op::kNeg: case Op::kNot: return true;
        default: return false;
    }
}

// i32 if every range fits it, else u32 if every range fits that.
std::optional<ScalarKind> FitKind(std::initializer_list<Interval> rs) {
    bool i32 = true, u32 = true;
    for (const Interval& r : rs) {
        i32 = i32 && Fits(r, ScalarKind::kI32);
        u32 = u32 && Fits(r, ScalarKind::kU32);
    }
    if (i32) return ScalarKind::kI32;
    if (u32) return ScalarKind::kU32;
    return std::nullopt;
}

void RemoveDeadCode(Function& f, const Module& m);

class Narrower {
  public:
    Narrower(Module& m, const NarrowOptions& o) : m_(m), f_(m.function), opt_(o) {}

    util::Status Run() {
        ranges_ = AnalyzeRanges(m_, opt_.ranges);
        if (!ranges_.complete) return util::Status::Ok();  // prove nothing, change nothing
        size_t n = f_.values.size();
        const_.assign(n, std::nullopt);
        for (const Block& b : f_.blocks)
            for (const Inst& i : b.insts)
                if (i.op == Op::kConst && i.result < n) const_[i.result] = i.imm;
        FindVars();
        LowBits();
        ChooseVarKinds();
        form_.assign(n, kNone);
        wide_.assign(n, true);
        rename_.resize(n);
        for (ValueId v = 0; v < n; ++v) rename_[v] = v;
        for (Block& b : f_.blocks) {
            cur_ = b.id;
            cache_.clear();
            std::vector<Inst> old = std::move(b.insts);
            out_ = &b.insts;
            out_->clear();
            for (const Inst& inst : old) Rewrite(inst);
            if (b.id == f_.entry().id) entry_cache_ = cache_;
        }
        if (!error_.empty())
            return util::Internal("narrow: " + error_ + "\n" + Print(m_));
        RemoveDeadCode(f_, m_);
        return util::Status::Ok();
    }

  private:
    ScalarKind KindOf(ValueId v) const { return m_.type(f_.values.at(v).type).scalar; }
    const Interval& R(ValueId v) const { return ranges_.values.at(v); }
    bool Wide64(ValueId v) const {
        const Type& t = m_.type(f_.values.at(v).type);
        return t.kind == Type::Kind::kScalar && Is64Int(t.scalar);
    }

    // 64-bit integer vars in function memory used only as load/store addresses.
    void FindVars() {
        std::unordered_map<ValueId, bool> ok;
        for (const Inst& i : f_.entry().insts) {
            if (i.op != Op::kVar) continue;
            const Type& pt = m_.type(i.type);
            const Type& el = m_.type(pt.pointee);
            ok[i.result] = pt.space == AddressSpace::kFunction && el.kind == Type::Kind::kScalar &&
                           Is64Int(el.scalar);
        }
        for (const Block& b : f_.blocks)
            for (const Inst& i : b.insts)
                for (size_t p = 0; p < i.operands.size(); ++p)
                    if (!(p == 0 && (i.op == Op::kLoad || i.op == Op::kStore)))
                        ok[i.operands[p]] = false;
        for (auto& [v, good] : ok)
            if (good) vars_[v] = Var{};
        for (const Block& b : f_.blocks)
            for (const Inst& i : b.insts)
                if ((i.op == Op::kLoad || i.op == Op::kStore) && vars_.count(i.operands[0]))
                    (i.op == Op::kLoad ? vars_[i.operands[0]].loads : vars_[i.operands[0]].stores)
                        .push_back(&i);
    }

    // Is operand p of `i` observed only through its low 32 bits (given low_)?
    bool LowUse(const Inst& i, size_t p) const {
        bool low_result = i.result != kNone && i.result < low_.size() && low_[i.result];
        switch (i.op) {
            case Op::kConvert: {
                ScalarKind to = KindOf(i.result);
                if (IsInteger(to) && BitWidth(to) <= 32) return true;
                return Is64Int(to) && low_result;
            }
            case Op::kBitcast: return Is64Int(KindOf(i.result)) && low_result;
            case Op::kShl: return p == 0 && low_result && R(i.operands[1]).Within({0, 31});
            case Op::kSelect: return p >= 1 && low_result;
            case Op::kStore: {
                auto it = vars_.find(i.operands[0]);
                return p == 1 && it != vars_.end() && it->second.low;
            }
            default: return LowBitsOp(i.op) && Wide64(i.result) && low_result;
        }
    }

    // Optimistic fixpoint: every 64-bit value and variable starts "observed
    // only in its low bits" and loses that on a use that is not.
    void LowBits() {
        low_.assign(f_.values.size(), true);
        for (auto& [v, var] : vars_) var.low = true;
        for (bool changed = true; changed;) {
            changed = false;
            for (const Block& b : f_.blocks) {
                for (const Inst& i : b.insts) {
                    for (size_t p = 0; p < i.operands.size(); ++p) {
                        ValueId v = i.operands[p];
                        if (v < low_.size() && low_[v] && Wide64(v) && !LowUse(i, p)) {
                            low_[v] = false;
                            changed = true;
                        }
                    }
                }
            }
            for (auto& [v, var] : vars_) {
                for (const Inst* load : var.loads) {
                    if (var.low && !low_[load->result]) {
                        var.low = false;
                        changed = true;
                    }
                }
            }
        }
    }

    void ChooseVarKinds() {
        for (auto& [v, var] : vars_) {
            ScalarKind wide = m_.type(m_.type(f_.values[v].type).pointee).scalar;
            Interval stored = Interval::Empty();
            for (const Inst* s : var.stores) stored = Hull(stored, R(s->operands[1]));
            std::optional<ScalarKind> k = FitKind({stored});
            if (!var.stores.empty() && k) {
                var.kind = *k;
                var.exact = true;
            } else if (var.low) {
                var.kind = Half(wide);
            }
        }
    }

    // ------------------------------------------------------------ emitting

    ValueId Emit(Op op, TypeId type, std::vector<ValueId> operands, uint64_t imm = 0,
                 uint32_t aux = 0, ValueId result = kNone) {
        Inst i;
        i.op = op;
        i.type = type;
        i.operands = std::move(operands);
        i.imm = imm;
        i.aux = aux;
        i.loc = loc_;
        if (type != kNone) i.result = result != kNone ? result : f_.NewValue(type, cur_);
        out_->push_back(std::move(i));
        return out_->back().result;
    }
    TypeId T(ScalarKind k) { return m_.GetScalar(k); }

    // The low 32 bits of original value v as kind k (i32 or u32).
    ValueId Get(ValueId v, ScalarKind k) {
        uint64_t key = uint64_t{v} << 1 | (k == ScalarKind::kU32);
        for (auto* c : {&cache_, &entry_cache_}) {
            auto it = c->find(key);
            if (it != c->end()) return it->second;
        }
        ValueId r = kNone;
        ScalarKind from = KindOf(v);
        if (form_[v] != kNone) {
            r = KindOf(form_[v]) == k ? form_[v] : Emit(Op::kBitcast, T(k), {form_[v]});
        } else if (const_[v] && IsIntOrBool(from)) {
            uint32_t low = static_cast<uint32_t>(*const_[v]);
            int64_t signed_low = static_cast<int32_t>(low);  // constants are sign-extended
            uint64_t bits = k == ScalarKind::kI32 ? static_cast<uint64_t>(signed_low) : low;
            r = Emit(Op::kConst, T(k), {}, bits);
        } else if (Is64Int(from)) {
            if (!wide_[v]) Fail("no 64-bit value for %" + std::to_string(v));
            ValueId t = Emit(Op::kConvert, T(Half(from)), {rename_[v]});
            r = Half(from) == k ? t : Emit(Op::kBitcast, T(k), {t});
        } else if (BitWidth(from) == 32 && IsInteger(from)) {
            r = from == k ? rename_[v] : Emit(Op::kBitcast, T(k), {rename_[v]});
        } else {
            r = Emit(Op::kConvert, T(k), {rename_[v]});  // bool, 8 and 16 bits: extend
        }
        cache_[key] = r;
        return r;
    }

    void Fail(const std::string& why) {
        if (error_.empty()) error_ = why;
    }

    // The original instruction, operands renamed; its 64-bit operands must exist.
    void Keep(Inst inst) {
        for (ValueId& o : inst.operands) {
            if (Wide64(o) && !wide_[o]) Fail("%" + std::to_string(o) + " is needed at 64 bits");
            o = rename_[o];
        }
        out_->push_back(std::move(inst));
    }

    // r is computed as n (kind i32/u32); where needed, r is n extended.
    void Exact(const Inst& inst, ValueId n) {
        form_[inst.result] = n;
        Emit(Op::kConvert, inst.type, {n}, 0, 0, inst.result);
    }
    void LowOnly(const Inst& inst, ValueId n) {
        form_[inst.result] = n;
        wide_[inst.result] = false;
    }

    void Rewrite(const Inst& inst) {
        loc_ = inst.loc;
        const std::vector<ValueId>& o = inst.operands;
        bool k64 = inst.result != kNone && Wide64(inst.result);
        ScalarKind k = k64 ? KindOf(inst.result) : ScalarKind::kBool;
        if (Decided(inst)) return;
        switch (inst.op) {
            case Op::kAdd: case Op::kSub: case Op::kMul: case Op::kDiv: case Op::kRem:
            case Op::kAnd: case Op::kOr: case Op::kXor: case Op::kShl: case Op::kShr:
            case Op::kNeg: case Op::kNot: {
                if (!k64) break;
                bool unary = o.size() == 1, shift = inst.op == Op::kShl || inst.op == Op::kShr;
                bool count_ok = shift && R(o[1]).Within({0, 31});
                std::optional<ScalarKind> fit =
                    shift ? (count_ok ? FitKind({R(inst.result), R(o[0])}) : std::nullopt)
                    : unary ? FitKind({R(inst.result), R(o[0])})
                            : FitKind({R(inst.result), R(o[0]), R(o[1])});
                // x & m with 0 <= m < 2^32: the high half is zero whatever x is,
                // and the low half needs only x's low bits.
                if (!fit && inst.op == Op::kAnd &&
                    (Fits(R(o[0]), ScalarKind::kU32) || Fits(R(o[1]), ScalarKind::kU32)))
                    fit = FitKind({R(inst.result)});
                // Signed overflow of div and rem (INT_MIN / -1) is undefined in SPIR-V.
                if (fit && *fit == ScalarKind::kI32 &&
                    (inst.op == Op::kDiv || inst.op == Op::kRem) &&
                    R(o[0]).Contains(-(Int{1} << 31)) && R(o[1]).Contains(-1))
                    fit = std::nullopt;
                if (fit) return Exact(inst, Arith(inst, *fit));
                if (low_[inst.result] && (LowBitsOp(inst.op) || (inst.op == Op::kShl && count_ok)))
                    return LowOnly(inst, Arith(inst, Half(k)));
                break;
            }
            case Op::kEq: case Op::kNe: case Op::kLt: case Op::kLe: case Op::kGt: case Op::kGe: {
                if (!Wide64(o[0])) break;
                if (auto fit = FitKind({R(o[0]), R(o[1])})) {
                    Emit(inst.op, inst.type, {Get(o[0], *fit), Get(o[1], *fit)}, 0, 0, inst.result);
                    return;
                }
                break;
            }
            case Op::kSelect: {
                if (!k64) break;
                if (auto fit = FitKind({R(o[1]), R(o[2])}))
                    return Exact(inst, Emit(Op::kSelect, T(*fit),
                                            {rename_[o[0]], Get(o[1], *fit), Get(o[2], *fit)}));
                if (low_[inst.result]) {
                    ScalarKind h = Half(k);
                    return LowOnly(inst, Emit(Op::kSelect, T(h),
                                              {rename_[o[0]], Get(o[1], h), Get(o[2], h)}));
                }
                break;
            }
            case Op::kMath: {
                auto fn = static_cast<MathFn>(inst.imm);
                if (!k64 || (fn != MathFn::kMin && fn != MathFn::kMax && fn != MathFn::kAbs)) break;
                std::optional<ScalarKind> fit =
                    o.size() == 1 ? FitKind({R(inst.result), R(o[0])})
                                  : FitKind({R(inst.result), R(o[0]), R(o[1])});
                if (!fit) break;
                std::vector<ValueId> args;
                for (ValueId a : o) args.push_back(Get(a, *fit));
                return Exact(inst, Emit(Op::kMath, T(*fit), args, inst.imm));
            }
            case Op::kConvert: case Op::kBitcast:
                if (RewriteConvert(inst)) return;
                break;
            case Op::kVar: {
                auto it = vars_.find(inst.result);
                if (it == vars_.end() || !it->second.kind) break;
                Inst copy = inst;
                copy.type = m_.GetPointer(AddressSpace::kFunction, T(*it->second.kind));
                f_.values[inst.result].type = copy.type;
                out_->push_back(copy);
                return;
            }
            case Op::kLoad: {
                auto it = vars_.find(o[0]);
                if (it == vars_.end() || !it->second.kind) break;
                ValueId n = Emit(Op::kLoad, T(*it->second.kind), {o[0]});
                return it->second.exact ? Exact(inst, n) : LowOnly(inst, n);
            }
            case Op::kStore: {
                auto it = vars_.find(o[0]);
                if (it == vars_.end() || !it->second.kind) break;
                Emit(Op::kStore, kNone, {o[0], Get(o[1], *it->second.kind)});
                return;
            }
            case Op::kElemPtr: {
                if (!Wide64(o[1])) break;
                if (auto fit = FitKind({R(o[1])})) {
                    Emit(Op::kElemPtr, inst.type, {rename_[o[0]], Get(o[1], *fit)}, 0, 0,
                         inst.result);
                    return;
                }
                break;
            }
            default: break;
        }
        Keep(inst);
    }

    // Comparisons whose outcome the ranges decide become constants, and
    // selects on them their chosen operand: this removes the front end's
    // negative-index wrapping (idx < 0 ? idx + extent : idx) of ids and loop
    // counters, which are never negative.
    bool Decided(const Inst& inst) {
        bool cmp = inst.op == Op::kEq || inst.op == Op::kNe || inst.op == Op::kLt ||
                   inst.op == Op::kLe || inst.op == Op::kGt || inst.op == Op::kGe;
        if (cmp && IsIntOrBool(KindOf(inst.operands[0]))) {
            const Interval& r = R(inst.result);
            if (r.empty() || r.lo != r.hi) return false;
            Emit(Op::kConst, inst.type, {}, static_cast<uint64_t>(r.lo), 0, inst.result);
            return true;
        }
        if (inst.op == Op::kSelect) {
            const Interval& c = R(inst.operands[0]);
            if (c.empty() || c.lo != c.hi) return false;
            ValueId chosen = inst.operands[c.lo ? 1 : 2], r = inst.result;
            rename_[r] = rename_[chosen];
            form_[r] = form_[chosen];
            wide_[r] = wide_[chosen];
            const_[r] = const_[chosen];
            return true;
        }
        return false;
    }

    ValueId Arith(const Inst& inst, ScalarKind k) {
        std::vector<ValueId> args;
        for (ValueId a : inst.operands) args.push_back(Get(a, k));
        return Emit(inst.op, T(k), args);
    }

    // Conversions to, from and between 64-bit integers. False: keep as is.
    bool RewriteConvert(const Inst& inst) {
        ValueId a = inst.operands[0];
        ScalarKind from = KindOf(a), to = KindOf(inst.result);
        if (Is64Int(from) && Is64Int(to)) {  // same low bits
            form_[inst.result] = form_[a];
            if (!wide_[a]) {
                wide_[inst.result] = false;
                if (form_[a] == kNone) Fail("no value for %" + std::to_string(a));
                return true;
            }
            return false;
        }
        if (inst.op != Op::kConvert) return false;
        if (Is64Int(to) && IsIntOrBool(from)) {  // extension: the operand is the narrow value
            bool sign = IsSigned(from) || from == ScalarKind::kBool;
            if (BitWidth(from) == 32) form_[inst.result] = rename_[a];
            else form_[inst.result] =
                Emit(Op::kConvert, T(sign ? ScalarKind::kI32 : ScalarKind::kU32), {rename_[a]});
            return false;
        }
        if (!Is64Int(from)) return false;
        if (IsInteger(to) && BitWidth(to) == 32) {  // truncation: the low bits themselves
            rename_[inst.result] = Get(a, to);
            return true;
        }
        if (IsInteger(to) && BitWidth(to) < 32) {
            Emit(Op::kConvert, inst.type, {Get(a, Half(from))}, 0, 0, inst.result);
            return true;
        }
        if (auto fit = FitKind({R(a)})) {  // to float or bool: the same number
            Emit(Op::kConvert, inst.type, {Get(a, *fit)}, 0, 0, inst.result);
            return true;
        }
        return false;
    }

    struct Var {
        std::vector<const Inst*> loads, stores;
        bool low = false;
        std::optional<ScalarKind> kind;  // the new kind, if retyped
        bool exact = false;              // every stored value fits `kind`
    };

    Module& m_;
    Function& f_;
    const NarrowOptions& opt_;
    Ranges ranges_;
    std::vector<std::optional<uint64_t>> const_;  // the bits of each constant
    std::unordered_map<ValueId, Var> vars_;  // pointers into the original blocks: analysis only
    std::vector<bool> low_;
    std::vector<ValueId> form_;    // original value -> its low 32 bits (i32/u32), if computed
    std::vector<bool> wide_;       // false: the 64-bit value no longer exists
    std::vector<ValueId> rename_;  // original value -> the value that replaces it
    std::unordered_map<uint64_t, ValueId> cache_, entry_cache_;
    std::vector<Inst>* out_ = nullptr;
    BlockId cur_ = kNone;
    Loc loc_;
    std::string error_;
};

// Removes instructions with results nobody uses and no effect: arithmetic,
// conversions, comparisons, selects, constants, loads of local variables.
// Atomics write memory whether or not their old value is used: never removed.
void RemoveDeadCode(Function& f, const Module& m) {
    for (bool changed = true; changed;) {
        changed = false;
        std::vector<uint32_t> uses(f.values.size(), 0);
        for (const Block& b : f.blocks)
            for (const Inst& i : b.insts)
                for (ValueId o : i.operands) ++uses.at(o);
        for (Block& b : f.blocks) {
            std::vector<Inst> kept;
            for (Inst& i : b.insts) {
                bool pure = i.result != kNone && i.op != Op::kVar && i.op != Op::kParam &&
                            i.op != Op::kBuiltin && i.op != Op::kAtomic;
                if (i.op == Op::kLoad)
                    pure = m.type(f.values.at(i.operands[0]).type).space == AddressSpace::kFunction;
                if (pure && uses[i.result] == 0) {
                    changed = true;
                    continue;
                }
                kept.push_back(std::move(i));
            }
            b.insts = std::move(kept);
        }
    }
}

}  // namespace

util::Status NarrowIntegers(Module& module, const NarrowOptions& options) {
    return Narrower(module, options).Run();
}

size_t CountWideIntOps(const Module& m) {
    const Function& f = m.function;
    auto wide = [&](ValueId v) {
        const Type& t = m.type(f.values.at(v).type);
        return t.kind == Type::Kind::kScalar && Is64Int(t.scalar);
    };
    size_t n = 0;
    for (const Block& b : f.blocks) {
        for (const Inst& i : b.insts) {
            if (i.op == Op::kConst || i.op == Op::kParam || i.op == Op::kVar ||
                i.op == Op::kConvert || i.op == Op::kBitcast)
                continue;
            bool w = i.result != kNone && wide(i.result);
            for (size_t p = 0; p < i.operands.size(); ++p) {
                bool address = (i.op == Op::kElemPtr || i.op == Op::kLoad || i.op == Op::kStore) &&
                               p == 0;
                w = w || (!address && wide(i.operands[p]));
            }
            if (i.op == Op::kLoad || i.op == Op::kStore) {  // a 64-bit local variable
                const Type& pt = m.type(f.values.at(i.operands[0]).type);
                bool local = pt.space == AddressSpace::kFunction;
                w = w || (local && Is64Int(m.type(pt.pointee).scalar));
            }
            n += w;
        }
    }
    return n;
}

std::vector<RangeOptions::ParamRange> ExtentParamRanges(const Module& m) {
    std::vector<RangeOptions::ParamRange> out;
    for (uint32_t i = 0; i < m.params.size(); ++i) {
        const std::string& name = m.params[i].name;
        size_t at = name.rfind(".shape[");
        if (at == std::string::npos || name.back() != ']') continue;
        Interval k = KindRange(m.type(m.params[i].type).scalar);
        if (k.empty()) continue;
        out.push_back({i, 0, k.hi});
    }
    return out;
}

}  // namespace nvk::narrow
