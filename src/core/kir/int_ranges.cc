// HideIntegerRanges (int_ranges.h): signed values NVIDIA's compiler must not
// reason about are xored with a hidden zero.
#include "kir/int_ranges.h"

#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "kir/abi.h"
#include "kir/index_only.h"

namespace nvk::kir {

namespace {

bool IsSignedInt(ScalarKind k) { return IsInteger(k) && IsSigned(k); }

}  // namespace

util::Result<size_t> HideIntegerRanges(Module& m, unsigned what) {
    Function& f = m.function;
    auto kind_of = [&](ValueId v) {
        const Type& t = m.type(f.values[v].type);
        return t.kind == Type::Kind::kScalar ? t.scalar : ScalarKind::kBool;
    };
    auto is_widening = [&](const Inst& inst) {
        if (inst.op != Op::kConvert || inst.result == kNone) return false;
        const ScalarKind from = kind_of(inst.operands[0]), to = kind_of(inst.result);
        return IsSignedInt(from) && IsInteger(to) && to != ScalarKind::kBool &&
               BitWidth(to) > BitWidth(from);
    };
    auto is_other_widening = [&](const Inst& inst) {
        if (inst.op != Op::kConvert || inst.result == kNone) return false;
        const ScalarKind from = kind_of(inst.operands[0]), to = kind_of(inst.result);
        if (!IsInteger(to) || to == ScalarKind::kBool) return false;
        return from == ScalarKind::kBool ||
               (IsInteger(from) && !IsSigned(from) && BitWidth(to) > BitWidth(from));
    };
    // Definitions of values, to see what a negation negates.
    std::unordered_map<ValueId, const Inst*> defs;
    for (const Block& b : f.blocks)
        for (const Inst& inst : b.insts)
            if (inst.result != kNone) defs[inst.result] = &inst;
    auto is_constant = [&](ValueId v) {
        auto it = defs.find(v);
        return it != defs.end() && it->second->op == Op::kConst;
    };
    // The values stored to each function variable (the front end keeps locals in
    // variables; SPIR-V's optimiser makes them SSA values after this pass).
    std::unordered_map<ValueId, std::vector<ValueId>> stored;
    for (const Block& b : f.blocks)
        for (const Inst& inst : b.insts)
            if (inst.op == Op::kStore) stored[inst.operands[0]].push_back(inst.operands[1]);
    // The instruction whose value v carries, seen through conversions, bitcasts and
    // loads of a variable stored once (a load before the store would read an undefined
    // value anyway); null where that is not known.
    auto origin = [&](ValueId v) -> const Inst* {
        for (int depth = 0; depth < 16; ++depth) {
            auto it = defs.find(v);
            if (it == defs.end()) return nullptr;
            const Inst& d = *it->second;
            if (d.op == Op::kLoad) {
                auto var = defs.find(d.operands[0]);
                auto s = stored.find(d.operands[0]);
                if (var == defs.end() || var->second->op != Op::kVar || s == stored.end() ||
                    s->second.size() != 1)
                    return nullptr;
                v = s->second.front();
                continue;
            }
            if (d.op != Op::kConvert && d.op != Op::kBitcast) return &d;
            v = d.operands[0];
        }
        return nullptr;
    };
    // A constant, or conversions of one (the narrowing pass writes a narrowed constant
    // as a conversion of the original).
    auto is_constant_valued = [&](ValueId v) {
        const Inst* d = origin(v);
        return d != nullptr && d->op == Op::kConst;
    };
    // A bool made an integer (a conversion, or a select between two constants, as the
    // front end writes True + x): its negation and abs cannot overflow, and hiding
    // them made NVIDIA's compiler answer wrongly (fuzz seeds 3430 and 4441: `-a_b[i]`).
    auto from_bool = [&](ValueId v) {
        auto it = defs.find(v);
        if (it == defs.end()) return false;
        const Inst& d = *it->second;
        if (d.op == Op::kConvert) return kind_of(d.operands[0]) == ScalarKind::kBool;
        return d.op == Op::kSelect && is_constant(d.operands[1]) && is_constant(d.operands[2]);
    };
    // Arithmetic whose comparisons with constants NVIDIA rewrites (int_ranges.h).
    auto is_arithmetic = [&](ValueId v) {
        const Inst* d = origin(v);
        return d != nullptr &&
               (d->op == Op::kAdd || d->op == Op::kSub || d->op == Op::kMul || d->op == Op::kShl);
    };
    // The operand (0 or 1) of a comparison to hide, or -1 (kHideCompareConstants).
    auto compare_constant = [&](const Inst& inst) {
        const bool ordered = inst.op == Op::kLt || inst.op == Op::kLe || inst.op == Op::kGt ||
                             inst.op == Op::kGe;
        if (!ordered) return -1;
        const ScalarKind k = kind_of(inst.operands[0]);
        if (!IsInteger(k) || BitWidth(k) != 64) return -1;
        for (int side = 0; side < 2; ++side)
            if (is_constant_valued(inst.operands[side]) && is_arithmetic(inst.operands[1 - side]))
                return side;
        return -1;
    };
    auto is_neg_abs = [&](const Inst& inst) {
        if (inst.result == kNone || !IsSignedInt(kind_of(inst.result))) return false;
        const bool neg_abs =
            inst.op == Op::kNeg ||
            (inst.op == Op::kMath && static_cast<MathFn>(inst.imm) == MathFn::kAbs);
        return neg_abs && !from_bool(inst.operands[0]);
    };
    const std::vector<bool> index_only = IndexOnlyValues(m);

    // What to hide: (instruction's result, hide its input `operand`, hide its output).
    struct Site {
        bool input = false, output = false;
        int operand = 0;
    };
    std::unordered_map<ValueId, Site> sites;
    for (const Block& b : f.blocks)
        for (const Inst& inst : b.insts) {
            // At every width: a module with 8- or 16-bit values declares the Int8 or
            // Int16 capability (spirv/module_builder.cc), so an xor there is valid.
            if ((what & kHideNegAbs) && is_neg_abs(inst)) sites[inst.result].output = true;
            // A widened constant is a constant of the wider type, which is never hidden:
            // hiding it only kept the driver from folding it (the tiled matmul's
            // `i * TPB` became a 64-bit multiply by an unknown).
            if (is_widening(inst) && !index_only[inst.result] &&
                !is_constant_valued(inst.operands[0])) {
                if (what & kHideWidenInputs) sites[inst.result].input = true;
                if (what & kHideWidenOutputs) sites[inst.result].output = true;
            }
            if ((what & kHideOtherWidenings) && is_other_widening(inst) &&
                !index_only[inst.result] && !is_constant_valued(inst.operands[0]))
                sites[inst.result].output = true;
            if (what & kHideCompareConstants) {
                if (const int side = compare_constant(inst); side >= 0)
                    sites[inst.result] = Site{.input = true, .operand = side};
            }
        }
    if (sites.empty()) return size_t{0};

    const uint32_t param = AddHiddenParam(m, kIntZeroParam, ScalarKind::kU64);
    Block& entry = f.entry();
    std::vector<Inst> head;
    head.push_back(m.NewScalarInst(Op::kParam, ScalarKind::kU64, {}, entry.id));
    head.back().imm = param;
    const ValueId bits = head.back().result;
    std::unordered_map<ScalarKind, ValueId> zeros;  // the hidden zero of each kind
    auto zero = [&](ScalarKind k) {
        if (k == ScalarKind::kU64) return bits;
        auto it = zeros.find(k);
        if (it != zeros.end()) return it->second;
        const Op op = BitWidth(k) == 64 ? Op::kBitcast : Op::kConvert;
        head.push_back(m.NewScalarInst(op, k, {bits}, entry.id));
        return zeros[k] = head.back().result;
    };

    std::unordered_map<ValueId, ValueId> renamed;  // a hidden output: its xor
    size_t hidden = 0;
    for (Block& b : f.blocks) {
        std::vector<Inst> out;
        out.reserve(b.insts.size());
        for (Inst& inst : b.insts) {
            auto it = inst.result == kNone ? sites.end() : sites.find(inst.result);
            if (it == sites.end()) {
                out.push_back(std::move(inst));
                continue;
            }
            if (it->second.input) {
                ValueId& operand = inst.operands[it->second.operand];
                const ScalarKind k = kind_of(operand);
                Inst x = m.NewScalarInst(Op::kXor, k, {operand, zero(k)}, b.id);
                x.loc = inst.loc;
                operand = x.result;
                out.push_back(std::move(x));
                ++hidden;
            }
            const ValueId result = inst.result;
            const ScalarKind k = kind_of(result);
            const Loc loc = inst.loc;
            out.push_back(std::move(inst));
            if (it->second.output) {
                Inst x = m.NewScalarInst(Op::kXor, k, {result, zero(k)}, b.id);
                x.loc = loc;
                renamed[result] = x.result;
                out.push_back(std::move(x));
                ++hidden;
            }
        }
        b.insts = std::move(out);
    }
    // Every other use of a hidden output reads its xor.
    std::unordered_set<ValueId> xors;
    for (const auto& [from, to] : renamed) xors.insert(to);
    for (Block& b : f.blocks)
        for (Inst& inst : b.insts) {
            if (inst.result != kNone && xors.count(inst.result)) continue;
            for (ValueId& v : inst.operands)
                if (auto r = renamed.find(v); r != renamed.end()) v = r->second;
        }
    entry.insts.insert(entry.insts.begin(), head.begin(), head.end());
    return hidden;
}

}  // namespace nvk::kir
