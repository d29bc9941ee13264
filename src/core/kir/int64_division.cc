// DivideInt64InFloat64 (int64_division.h).
#include "kir/int64_division.h"

#include <cstdint>
#include <unordered_map>
#include <utility>
#include <vector>

namespace nvk::kir {

namespace {

// Appends instructions to `out` in block `block`, at the location of the one they replace.
class Emit {
  public:
    Emit(Module& m, BlockId block, Loc loc, std::vector<Inst>& out)
        : m_(m), block_(block), loc_(loc), out_(out) {}

    ValueId Op2(Op op, ScalarKind k, ValueId a, ValueId b) { return Add(op, k, {a, b}); }
    ValueId Op1(Op op, ScalarKind k, ValueId a) { return Add(op, k, {a}); }
    ValueId Select(ScalarKind k, ValueId c, ValueId a, ValueId b) {
        return Add(Op::kSelect, k, {c, a, b});
    }
    ValueId Cmp(Op op, ValueId a, ValueId b) { return Add(op, ScalarKind::kBool, {a, b}); }
    ValueId Const(ScalarKind k, uint64_t bits) {
        Inst c = m_.NewScalarInst(Op::kConst, k, {}, block_);
        c.imm = bits;
        return Push(std::move(c));
    }
    // 1 / x for a float64 x in [1, 2^64], to about 2^-50: the driver's float32 reciprocal
    // (a single instruction on NVIDIA), then two Newton steps y += y (1 - x y) in float64.
    // No float64 division: NVIDIA's is a routine call, which is what corrupts other values.
    ValueId Reciprocal(ValueId x) {
        constexpr ScalarKind f = ScalarKind::kF64, f32 = ScalarKind::kF32;
        Inst d = m_.NewScalarInst(Op::kDiv, f32, {Const(f32, 0x3F800000u), Op1(Op::kConvert, f32, x)},
                                  block_);
        d.aux = static_cast<uint32_t>(DivPrecision::kDriver);
        ValueId y = Op1(Op::kConvert, f, Push(std::move(d)));
        const ValueId one = Const(f, 0x3FF0000000000000ull);
        for (int step = 0; step < 2; ++step) {
            const ValueId e = Op2(Op::kSub, f, one, Op2(Op::kMul, f, x, y));
            y = Op2(Op::kAdd, f, y, Op2(Op::kMul, f, y, e));
        }
        return y;
    }

    // (quotient, remainder) of the u64 values n and d (int64_division.h).
    std::pair<ValueId, ValueId> UnsignedDivide(ValueId n, ValueId d) {
        constexpr ScalarKind u = ScalarKind::kU64, i = ScalarKind::kI64, f = ScalarKind::kF64;
        const ValueId zero = Const(u, 0), one = Const(u, 1);
        // d >= 2^62: the quotient is 0 to 3.
        ValueId big_n = n, big_q = zero;
        for (int step = 0; step < 3; ++step) {
            const ValueId fits = Cmp(Op::kGe, big_n, d);
            big_q = Op2(Op::kAdd, u, big_q, Select(u, fits, one, zero));
            big_n = Select(u, fits, Op2(Op::kSub, u, big_n, d), big_n);
        }
        // d < 2^62: two float64 estimates, then at most two steps each way.
        const ValueId inverse = Reciprocal(Op1(Op::kConvert, f, d));
        const ValueId estimate = Op2(Op::kMul, f, Op1(Op::kConvert, f, n), inverse);
        const ValueId too_big = Cmp(Op::kGe, estimate, Const(f, 0x43F0000000000000ull));  // 2^64
        ValueId q = Select(u, too_big, Const(u, UINT64_MAX), Op1(Op::kConvert, u, estimate));
        ValueId r = Op2(Op::kSub, u, n, Op2(Op::kMul, u, q, d));
        const ValueId r_signed = Op1(Op::kBitcast, i, r);
        const ValueId c = Op1(Op::kBitcast, u,
                              Op1(Op::kConvert, i, Op2(Op::kMul, f, Op1(Op::kConvert, f, r_signed), inverse)));
        q = Op2(Op::kAdd, u, q, c);
        r = Op2(Op::kSub, u, r, Op2(Op::kMul, u, c, d));
        const ValueId i_zero = Const(i, 0), d_signed = Op1(Op::kBitcast, i, d);
        for (int step = 0; step < 2; ++step) {
            const ValueId low = Cmp(Op::kLt, Op1(Op::kBitcast, i, r), i_zero);
            q = Select(u, low, Op2(Op::kSub, u, q, one), q);
            r = Select(u, low, Op2(Op::kAdd, u, r, d), r);
        }
        for (int step = 0; step < 2; ++step) {
            const ValueId high = Cmp(Op::kGe, Op1(Op::kBitcast, i, r), d_signed);
            q = Select(u, high, Op2(Op::kAdd, u, q, one), q);
            r = Select(u, high, Op2(Op::kSub, u, r, d), r);
        }
        const ValueId large = Cmp(Op::kGe, d, Const(u, uint64_t{1} << 62));
        return {Select(u, large, big_q, q), Select(u, large, big_n, r)};
    }

  private:
    ValueId Add(Op op, ScalarKind k, std::vector<ValueId> operands) {
        return Push(m_.NewScalarInst(op, k, std::move(operands), block_));
    }
    ValueId Push(Inst inst) {
        inst.loc = loc_;
        out_.push_back(std::move(inst));
        return out_.back().result;
    }

    Module& m_;
    BlockId block_;
    Loc loc_;
    std::vector<Inst>& out_;
};

}  // namespace

size_t DivideInt64InFloat64(Module& m) {
    Function& f = m.function;
    const TypeId i64 = m.GetScalar(ScalarKind::kI64);
    const TypeId u64 = m.GetScalar(ScalarKind::kU64);
    size_t replaced = 0;
    std::unordered_map<ValueId, ValueId> renamed;  // an unsigned result: the value replacing it
    for (Block& b : f.blocks) {
        std::vector<Inst> out;
        out.reserve(b.insts.size());
        for (Inst& inst : b.insts) {
            const bool division = inst.op == Op::kDiv || inst.op == Op::kRem;
            if (!division || (inst.type != i64 && inst.type != u64)) {
                out.push_back(std::move(inst));
                continue;
            }
            constexpr ScalarKind u = ScalarKind::kU64;
            Emit e(m, b.id, inst.loc, out);
            const bool is_signed = inst.type == i64;
            ValueId n = inst.operands.at(0), d = inst.operands.at(1);
            ValueId n_negative = kNone, sign_differs = kNone;
            if (is_signed) {
                const ValueId zero = e.Const(ScalarKind::kI64, 0), u_zero = e.Const(u, 0);
                auto magnitude = [&](ValueId v, ValueId negative) {
                    const ValueId bits = e.Op1(Op::kBitcast, u, v);
                    return e.Select(u, negative, e.Op2(Op::kSub, u, u_zero, bits), bits);
                };
                n_negative = e.Cmp(Op::kLt, n, zero);
                const ValueId d_negative = e.Cmp(Op::kLt, d, zero);
                sign_differs = e.Op2(Op::kXor, ScalarKind::kBool, n_negative, d_negative);
                n = magnitude(n, n_negative);
                d = magnitude(d, d_negative);
            }
            auto [q, r] = e.UnsignedDivide(n, d);
            ValueId v = inst.op == Op::kDiv ? q : r;
            if (is_signed) {
                const ValueId negate = inst.op == Op::kDiv ? sign_differs : n_negative;
                v = e.Select(u, negate, e.Op2(Op::kSub, u, e.Const(u, 0), v), v);
            }
            if (is_signed) {  // the result under the old id, so that its uses are unchanged
                inst.op = Op::kBitcast;
                inst.operands = {v};
                out.push_back(std::move(inst));
            } else {
                renamed[inst.result] = v;
            }
            ++replaced;
        }
        b.insts = std::move(out);
    }
    for (Block& b : f.blocks)
        for (Inst& inst : b.insts)
            for (ValueId& v : inst.operands)
                if (auto it = renamed.find(v); it != renamed.end()) v = it->second;
    return replaced;
}

}  // namespace nvk::kir
