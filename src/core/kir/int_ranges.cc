// HideIntegerRanges (int_ranges.h): signed values NVIDIA's compiler must not
// reason about are xored with a hidden zero.
#include "kir/int_ranges.h"

#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "kir/abi.h"

namespace nvk::kir {

namespace {

bool IsSignedInt(ScalarKind k) { return IsInteger(k) && IsSigned(k); }

// Arithmetic through which a value can still be only an index (as the emitter's
// spirv/wrapping.cc IndexOnly).
bool IsIndexArithmetic(Op op) {
    return op == Op::kAdd || op == Op::kSub || op == Op::kMul || op == Op::kShl ||
           op == Op::kConvert;
}

// The values computed only to index memory: each use is an elemptr/indexptr
// index or index arithmetic whose result is itself such a value.
std::vector<bool> IndexOnlyValues(const Function& f) {
    std::vector<std::vector<std::pair<const Inst*, size_t>>> uses(f.values.size());
    std::vector<const Inst*> candidates;
    std::vector<bool> index_only(f.values.size(), false);
    for (const Block& b : f.blocks)
        for (const Inst& inst : b.insts) {
            for (size_t i = 0; i < inst.operands.size(); ++i)
                if (inst.operands[i] < uses.size()) uses[inst.operands[i]].push_back({&inst, i});
            if (inst.result != kNone && inst.result < f.values.size() &&
                IsIndexArithmetic(inst.op)) {
                index_only[inst.result] = true;  // optimistic, refined below
                candidates.push_back(&inst);
            }
        }
    auto index_use = [&](const Inst* user, size_t pos) {
        if ((user->op == Op::kElemPtr || user->op == Op::kIndexPtr) && pos == 1) return true;
        return user->result != kNone && user->result < index_only.size() &&
               index_only[user->result];
    };
    for (bool changed = true; changed;) {
        changed = false;
        for (const Inst* inst : candidates) {
            if (!index_only[inst->result]) continue;
            const auto& u = uses[inst->result];
            bool only = !u.empty();
            for (const auto& [user, pos] : u) only = only && index_use(user, pos);
            if (!only) {
                index_only[inst->result] = false;
                changed = true;
            }
        }
    }
    return index_only;
}

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
    auto is_neg_abs = [&](const Inst& inst) {
        if (inst.result == kNone || !IsSignedInt(kind_of(inst.result))) return false;
        return inst.op == Op::kNeg ||
               (inst.op == Op::kMath && static_cast<MathFn>(inst.imm) == MathFn::kAbs);
    };
    const std::vector<bool> index_only = IndexOnlyValues(f);

    // What to hide: (instruction's result, hide its input, hide its output).
    struct Site {
        bool input = false, output = false;
    };
    std::unordered_map<ValueId, Site> sites;
    for (const Block& b : f.blocks)
        for (const Inst& inst : b.insts) {
            // At every width: a module with 8- or 16-bit values declares the Int8 or
            // Int16 capability (spirv/module_builder.cc), so an xor there is valid.
            if ((what & kHideNegAbs) && is_neg_abs(inst)) sites[inst.result].output = true;
            if (is_widening(inst) && !index_only[inst.result]) {
                if (what & kHideWidenInputs) sites[inst.result].input = true;
                if (what & kHideWidenOutputs) sites[inst.result].output = true;
            }
            if ((what & kHideOtherWidenings) && is_other_widening(inst) &&
                !index_only[inst.result])
                sites[inst.result].output = true;
        }
    if (sites.empty()) return size_t{0};

    const uint32_t param = AddHiddenParam(m, kIntZeroParam, ScalarKind::kU64);
    Block& entry = f.entry();
    std::vector<Inst> head;
    auto make = [&](Op op, ScalarKind k, std::vector<ValueId> operands, BlockId block) {
        Inst inst;
        inst.op = op;
        inst.type = m.GetScalar(k);
        inst.result = f.NewValue(inst.type, block);
        inst.operands = std::move(operands);
        return inst;
    };
    head.push_back(make(Op::kParam, ScalarKind::kU64, {}, entry.id));
    head.back().imm = param;
    const ValueId bits = head.back().result;
    std::unordered_map<ScalarKind, ValueId> zeros;  // the hidden zero of each kind
    auto zero = [&](ScalarKind k) {
        if (k == ScalarKind::kU64) return bits;
        auto it = zeros.find(k);
        if (it != zeros.end()) return it->second;
        head.push_back(make(BitWidth(k) == 64 ? Op::kBitcast : Op::kConvert, k, {bits}, entry.id));
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
                const ScalarKind k = kind_of(inst.operands[0]);
                Inst x = make(Op::kXor, k, {inst.operands[0], zero(k)}, b.id);
                x.loc = inst.loc;
                inst.operands[0] = x.result;
                out.push_back(std::move(x));
                ++hidden;
            }
            const ValueId result = inst.result;
            const ScalarKind k = kind_of(result);
            const Loc loc = inst.loc;
            out.push_back(std::move(inst));
            if (it->second.output) {
                Inst x = make(Op::kXor, k, {result, zero(k)}, b.id);
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
