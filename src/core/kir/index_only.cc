// IndexOnlyValues (index_only.h): an optimistic fixed point over the uses.
#include "kir/index_only.h"

#include <utility>

namespace nvk::kir {

namespace {

bool IsIndexArithmetic(Op op) {
    return op == Op::kAdd || op == Op::kSub || op == Op::kMul || op == Op::kShl ||
           op == Op::kConvert;
}

}  // namespace

std::vector<bool> IndexOnlyValues(const Module& m) {
    const Function& f = m.function;
    std::vector<bool> index_only(f.values.size(), false);
    // Every use of every value: (instruction, operand position).
    std::vector<std::vector<std::pair<const Inst*, size_t>>> uses(f.values.size());
    std::vector<const Inst*> candidates;
    auto is_integer = [&](ValueId v) {
        const Type& t = m.type(f.values[v].type);
        return t.kind == Type::Kind::kScalar && IsInteger(t.scalar);
    };
    for (const Block& b : f.blocks)
        for (const Inst& inst : b.insts) {
            for (size_t i = 0; i < inst.operands.size(); ++i)
                if (inst.operands[i] < uses.size()) uses[inst.operands[i]].push_back({&inst, i});
            if (inst.result != kNone && inst.result < f.values.size() &&
                IsIndexArithmetic(inst.op) && is_integer(inst.result)) {
                index_only[inst.result] = true;  // optimistic: refined below
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

}  // namespace nvk::kir
