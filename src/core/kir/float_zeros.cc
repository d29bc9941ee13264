// HideFloatZeros (float_zeros.h): constant float zeros become the bits of a
// hidden parameter the launcher sets to 0.
#include "kir/float_zeros.h"

#include <cstring>
#include <unordered_map>

#include "kir/abi.h"

namespace nvk::kir {

namespace {

// Whether a constant of kind `from` with bits `imm`, converted (or bitcast)
// to a float kind, is +0.0.
bool ConvertsToPositiveZero(ScalarKind from, uint64_t imm, bool bitcast) {
    if (bitcast) return imm == 0;     // the bit pattern of +0.0
    if (!IsFloat(from)) return imm == 0;  // false, or an integer 0
    return false;  // a float constant: +0.0 itself is replaced where it is used
}

}  // namespace

util::Result<size_t> HideFloatZeros(Module& m) {
    Function& f = m.function;
    // Constants anywhere (the front end puts them in the block that uses them).
    std::unordered_map<ValueId, const Inst*> consts;
    for (const Block& b : f.blocks)
        for (const Inst& inst : b.insts)
            if (inst.op == Op::kConst) consts[inst.result] = &inst;
    auto float_kind = [&](TypeId t, ScalarKind* out) {
        const Type& ty = m.type(t);
        if (ty.kind != Type::Kind::kScalar) return false;
        *out = ty.scalar;
        return ty.scalar == ScalarKind::kF32 || ty.scalar == ScalarKind::kF64;
    };
    // The values that are +0.0 at compile time, and their kinds.
    std::unordered_map<ValueId, ScalarKind> zeros;
    for (const Block& b : f.blocks) {
        for (const Inst& inst : b.insts) {
            ScalarKind k;
            if (inst.result == kNone || !float_kind(inst.type, &k)) continue;
            if (inst.op == Op::kConst) {
                if (inst.imm == 0) zeros[inst.result] = k;
            } else if ((inst.op == Op::kConvert || inst.op == Op::kBitcast) &&
                       consts.count(inst.operands[0])) {
                const Inst& c = *consts[inst.operands[0]];
                if (ConvertsToPositiveZero(m.type(c.type).scalar, c.imm, inst.op == Op::kBitcast))
                    zeros[inst.result] = k;
            }
        }
    }
    if (zeros.empty()) return size_t{0};

    // Does any instruction use one? Only then add the parameter.
    bool used[2] = {false, false};  // f32, f64
    for (const Block& b : f.blocks)
        for (const Inst& inst : b.insts)
            for (ValueId v : inst.operands) {
                auto it = zeros.find(v);
                if (it != zeros.end()) used[it->second == ScalarKind::kF64] = true;
            }
    if (!used[0] && !used[1]) return size_t{0};

    const uint32_t param = AddHiddenParam(m, kFloatZeroParam, ScalarKind::kU32);
    Block& entry = f.entry();
    std::vector<Inst> head;
    auto add = [&](Op op, ScalarKind k, std::vector<ValueId> operands, uint64_t imm = 0) {
        Inst inst;
        inst.op = op;
        inst.type = m.GetScalar(k);
        inst.result = f.NewValue(inst.type, entry.id);
        inst.operands = std::move(operands);
        inst.imm = imm;
        head.push_back(inst);
        return inst.result;
    };
    ValueId bits = add(Op::kParam, ScalarKind::kU32, {}, param);
    ValueId zero[2] = {kNone, kNone};
    if (used[0]) zero[0] = add(Op::kBitcast, ScalarKind::kF32, {bits});
    if (used[1]) {
        ValueId wide = add(Op::kConvert, ScalarKind::kU64, {bits});
        zero[1] = add(Op::kBitcast, ScalarKind::kF64, {wide});
    }
    size_t replaced = 0;
    for (Block& b : f.blocks)
        for (Inst& inst : b.insts)
            for (ValueId& v : inst.operands) {
                auto it = zeros.find(v);
                if (it == zeros.end()) continue;
                v = zero[it->second == ScalarKind::kF64];
                ++replaced;
            }
    entry.insts.insert(entry.insts.begin(), head.begin(), head.end());
    return replaced;
}

}  // namespace nvk::kir
