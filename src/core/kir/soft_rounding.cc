// SoftRounding (soft_rounding.h): Floor, Ceil and Trunc from the bits.
#include "kir/soft_rounding.h"

#include <bit>
#include <vector>

namespace nvk::kir {

namespace {

struct Layout {
    ScalarKind uint_kind;
    uint64_t mantissa_bits, bias, exponent_mask, sign_bit, one;  // one: 1.0's bits
};

Layout LayoutOf(ScalarKind k) {
    if (k == ScalarKind::kF64)
        return {ScalarKind::kU64, 52, 1023, 0x7ff, uint64_t{1} << 63, std::bit_cast<uint64_t>(1.0)};
    return {ScalarKind::kU32, 23, 127, 0xff, uint64_t{1} << 31, std::bit_cast<uint32_t>(1.0f)};
}

// The instructions computing `math` (a Floor, Ceil or Trunc of kind `k`) from
// the bits; the last one defines math.result.
std::vector<Inst> Expand(Module& m, const Inst& math, ScalarKind k, BlockId block) {
    const Layout l = LayoutOf(k);
    const ScalarKind u = l.uint_kind;
    std::vector<Inst> out;
    auto add = [&](Op op, ScalarKind kind, std::vector<ValueId> operands) {
        out.push_back(m.NewScalarInst(op, kind, std::move(operands), block));
        out.back().loc = math.loc;
        return out.back().result;
    };
    auto constant = [&](ScalarKind kind, uint64_t bits) {
        ValueId v = add(Op::kConst, kind, {});
        out.back().imm = bits;
        return v;
    };
    const ValueId x = math.operands[0];
    const ValueId bits = add(Op::kBitcast, u, {x});
    const ValueId exponent = add(Op::kAnd, u, {add(Op::kShr, u, {bits, constant(u, l.mantissa_bits)}),
                                               constant(u, l.exponent_mask)});
    const ValueId below_one = add(Op::kLt, ScalarKind::kBool, {exponent, constant(u, l.bias)});
    const ValueId integral =
        add(Op::kGe, ScalarKind::kBool, {exponent, constant(u, l.bias + l.mantissa_bits)});
    // Fraction bits to clear, kept below the width where unused.
    const ValueId zero = constant(u, 0);
    ValueId shift = add(Op::kSub, u, {constant(u, l.bias + l.mantissa_bits), exponent});
    shift = add(Op::kSelect, u, {add(Op::kOr, ScalarKind::kBool, {below_one, integral}), zero, shift});
    const ValueId fraction =
        add(Op::kSub, u, {add(Op::kShl, u, {constant(u, 1), shift}), constant(u, 1)});
    const ValueId kept = add(Op::kAnd, u, {bits, add(Op::kNot, u, {fraction})});
    const ValueId sign = add(Op::kAnd, u, {bits, constant(u, l.sign_bit)});
    const ValueId trunc_bits = add(Op::kSelect, u, {below_one, sign, kept});
    const MathFn fn = static_cast<MathFn>(math.imm);
    if (fn == MathFn::kTrunc) {
        add(Op::kBitcast, k, {trunc_bits});
    } else {
        const ValueId t = add(Op::kBitcast, k, {trunc_bits});
        const bool floor = fn == MathFn::kFloor;
        const ValueId past = add(floor ? Op::kLt : Op::kGt, ScalarKind::kBool, {x, t});
        const ValueId stepped = add(floor ? Op::kSub : Op::kAdd, k, {t, constant(k, l.one)});
        add(Op::kSelect, k, {past, stepped, t});
    }
    // The last instruction takes over the replaced one's result.
    // (its fresh id is the newest value: given back).
    m.function.values.pop_back();
    out.back().result = math.result;
    return out;
}

}  // namespace

size_t SoftRounding(Module& m, unsigned widths) {
    size_t replaced = 0;
    for (Block& b : m.function.blocks) {
        for (size_t i = 0; i < b.insts.size(); ++i) {
            const Inst inst = b.insts[i];
            if (inst.op != Op::kMath || inst.result == kNone) continue;
            const MathFn fn = static_cast<MathFn>(inst.imm);
            if (fn != MathFn::kFloor && fn != MathFn::kCeil && fn != MathFn::kTrunc) continue;
            const ScalarKind k = m.type(inst.type).scalar;
            const bool wanted = (k == ScalarKind::kF32 && (widths & kSoftRoundingF32)) ||
                                (k == ScalarKind::kF64 && (widths & kSoftRoundingF64));
            if (!wanted) continue;
            std::vector<Inst> expansion = Expand(m, inst, k, b.id);
            b.insts.erase(b.insts.begin() + static_cast<std::ptrdiff_t>(i));
            b.insts.insert(b.insts.begin() + static_cast<std::ptrdiff_t>(i), expansion.begin(),
                           expansion.end());
            i += expansion.size() - 1;
            ++replaced;
        }
    }
    return replaced;
}

}  // namespace nvk::kir
