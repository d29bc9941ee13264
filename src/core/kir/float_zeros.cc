// HideFloatZeros (float_zeros.h): constant float zeros become the bits of a
// hidden parameter the launcher sets to 0.
#include "kir/float_zeros.h"

#include <unordered_map>
#include <unordered_set>
#include <vector>

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
    // The values that are +0.0 or -0.0 at compile time: their kinds and signs.
    // -0.0 too: llvmpipe folds `1.0 if c else -0.0` into a conversion of c,
    // which gives +0.0 (typefuzz seed 4662), as if -0.0 were 0.0.
    struct Zero {
        ScalarKind kind;
        bool negative;
    };
    std::unordered_map<ValueId, Zero> zeros;
    auto negative_zero_bits = [](ScalarKind k) {
        return k == ScalarKind::kF64 ? uint64_t{1} << 63 : uint64_t{1} << 31;
    };
    for (const Block& b : f.blocks) {
        for (const Inst& inst : b.insts) {
            ScalarKind k;
            if (inst.result == kNone || !float_kind(inst.type, &k)) continue;
            if (inst.op == Op::kConst) {
                if (inst.imm == 0) zeros[inst.result] = {k, false};
                if (inst.imm == negative_zero_bits(k)) zeros[inst.result] = {k, true};
            } else if ((inst.op == Op::kConvert || inst.op == Op::kBitcast) &&
                       consts.count(inst.operands[0])) {
                const Inst& c = *consts[inst.operands[0]];
                if (ConvertsToPositiveZero(m.type(c.type).scalar, c.imm, inst.op == Op::kBitcast))
                    zeros[inst.result] = {k, false};
            }
        }
    }
    // Conversions of integer and bool values to floats: the optimiser or the
    // driver may still prove the integer constant (min(u, False), 2**63 & u32,
    // a decided comparison) and fold the conversion into a constant 0.0.
    std::unordered_set<ValueId> converted;
    for (const Block& b : f.blocks)
        for (const Inst& inst : b.insts) {
            ScalarKind k;
            if (inst.op != Op::kConvert || !float_kind(inst.type, &k)) continue;
            if (IsFloat(m.type(f.values[inst.operands[0]].type).scalar)) continue;
            if (!consts.count(inst.operands[0])) converted.insert(inst.result);
        }

    // Which widths need the hidden zero? Only then add the parameter.
    bool used[2] = {false, false};      // f32, f64
    bool used_neg[2] = {false, false};  // -0.0 of f32, f64
    for (const Block& b : f.blocks)
        for (const Inst& inst : b.insts)
            for (ValueId v : inst.operands) {
                auto it = zeros.find(v);
                if (it == zeros.end()) continue;
                const bool wide = it->second.kind == ScalarKind::kF64;
                used[wide] = true;
                if (it->second.negative) used_neg[wide] = true;
            }
    for (ValueId v : converted) used[m.type(f.values[v].type).scalar == ScalarKind::kF64] = true;
    if (!used[0] && !used[1]) return size_t{0};

    const uint32_t param = AddHiddenParam(m, kFloatZeroParam, ScalarKind::kU32);
    Block& entry = f.entry();
    std::vector<Inst> head;
    auto add = [&](Op op, ScalarKind k, std::vector<ValueId> operands) {
        head.push_back(m.NewScalarInst(op, k, std::move(operands), entry.id));
        return head.back().result;
    };
    ValueId bits[2] = {add(Op::kParam, ScalarKind::kU32, {}), kNone};
    head.back().imm = param;
    ValueId zero[2] = {kNone, kNone};
    if (used[0]) zero[0] = add(Op::kBitcast, ScalarKind::kF32, {bits[0]});
    if (used[1]) {
        bits[1] = add(Op::kConvert, ScalarKind::kU64, {bits[0]});
        zero[1] = add(Op::kBitcast, ScalarKind::kF64, {bits[1]});
    }
    // -0.0: the hidden bits with the sign bit set.
    ValueId negative_zero[2] = {kNone, kNone};
    for (int wide = 0; wide < 2; ++wide) {
        if (!used_neg[wide]) continue;
        const ScalarKind uk = wide ? ScalarKind::kU64 : ScalarKind::kU32;
        const ScalarKind fk = wide ? ScalarKind::kF64 : ScalarKind::kF32;
        ValueId sign = add(Op::kConst, uk, {});
        head.back().imm = negative_zero_bits(fk);
        negative_zero[wide] = add(Op::kBitcast, fk, {add(Op::kOr, uk, {bits[wide], sign})});
    }
    // Each converted value v becomes bitcast(bitcast(v) | bits): the same value,
    // which no compiler can fold, right after its conversion.
    std::unordered_map<ValueId, ValueId> renamed;
    std::unordered_set<ValueId> own;  // the first step of each disguise keeps its operand
    for (Block& b : f.blocks) {
        for (size_t i = 0; i < b.insts.size(); ++i) {
            const Inst conv = b.insts[i];
            if (conv.op != Op::kConvert || conv.result == kNone) continue;
            if (!converted.count(conv.result)) continue;
            const bool wide = m.type(conv.type).scalar == ScalarKind::kF64;
            const ScalarKind uk = wide ? ScalarKind::kU64 : ScalarKind::kU32;
            Inst as_int = m.NewScalarInst(Op::kBitcast, uk, {conv.result}, b.id);
            Inst ored = m.NewScalarInst(Op::kOr, uk, {as_int.result, bits[wide]}, b.id);
            Inst back = m.NewScalarInst(Op::kBitcast, wide ? ScalarKind::kF64 : ScalarKind::kF32,
                             {ored.result}, b.id);
            for (Inst* n : {&as_int, &ored, &back}) n->loc = conv.loc;
            renamed[conv.result] = back.result;
            own.insert(as_int.result);
            b.insts.insert(b.insts.begin() + static_cast<std::ptrdiff_t>(i) + 1,
                           {as_int, ored, back});
            i += 3;
        }
    }
    size_t replaced = 0;
    for (Block& b : f.blocks)
        for (Inst& inst : b.insts) {
            if (own.count(inst.result)) continue;
            for (ValueId& v : inst.operands) {
                if (auto it = zeros.find(v); it != zeros.end()) {
                    const bool wide = it->second.kind == ScalarKind::kF64;
                    v = it->second.negative ? negative_zero[wide] : zero[wide];
                    ++replaced;
                } else if (auto r = renamed.find(v); r != renamed.end()) {
                    v = r->second;
                    ++replaced;
                }
            }
        }
    entry.insts.insert(entry.insts.begin(), head.begin(), head.end());
    return replaced;
}

}  // namespace nvk::kir
