// DivideFloat32InFloat64 and DivideFloat32 (float_division.h).
#include "kir/float_division.h"

#include <cmath>
#include <cstring>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace nvk::kir {

namespace {

using K = ScalarKind;

bool IsCorrectF32Division(const Module& m, const Inst& inst) {
    return inst.op == Op::kDiv && !IsDriverDivision(inst) &&
           m.type(inst.type).kind == Type::Kind::kScalar && m.type(inst.type).scalar == K::kF32;
}

bool EntryOnly(Op op) {
    return op == Op::kVar || op == Op::kParam || op == Op::kBuiltin || op == Op::kArrayVar;
}

// Appends instructions to the block `block` (its instructions are `out`).
struct Writer {
    Module& m;
    BlockId block;
    Loc loc;
    std::vector<Inst>* out;

    ValueId Add(Op op, K k, std::vector<ValueId> operands, uint64_t imm = 0, uint32_t aux = 0) {
        Inst i = m.NewScalarInst(op, k, std::move(operands), block);
        i.imm = imm;
        i.aux = aux;
        i.loc = loc;
        out->push_back(i);
        return i.result;
    }
    ValueId U32(uint32_t v) { return Add(Op::kConst, K::kU32, {}, v); }
    ValueId U64(uint64_t v) { return Add(Op::kConst, K::kU64, {}, v); }
    ValueId F32(float v) {
        uint32_t bits;
        std::memcpy(&bits, &v, 4);
        return Add(Op::kConst, K::kF32, {}, bits);
    }
    ValueId F64(double v) {
        uint64_t bits;
        std::memcpy(&bits, &v, 8);
        return Add(Op::kConst, K::kF64, {}, bits);
    }
    ValueId Bin(Op op, K k, ValueId a, ValueId b) { return Add(op, k, {a, b}); }
    ValueId Cmp(Op op, ValueId a, ValueId b) { return Add(op, K::kBool, {a, b}); }
    ValueId Cast(K k, ValueId a) { return Add(Op::kBitcast, k, {a}); }
    ValueId Conv(K k, ValueId a) { return Add(Op::kConvert, k, {a}); }
    ValueId Fma(K k, ValueId x, ValueId y, ValueId z) {
        return Add(Op::kMath, k, {x, y, z}, static_cast<uint64_t>(MathFn::kFma));
    }
    void Store(ValueId ptr, ValueId v) {
        Inst i;
        i.op = Op::kStore;
        i.operands = {ptr, v};
        i.loc = loc;
        out->push_back(i);
    }
    void Jump(Op op, std::vector<ValueId> operands, BlockId t0, BlockId t1 = kNone) {
        Inst i;
        i.op = op;
        i.operands = std::move(operands);
        i.targets[0] = t0;
        i.targets[1] = t1;
        i.loc = loc;
        out->push_back(i);
    }
};

// a / b of two f32 computed in f64 (rounded once when converted back to f32).
ValueId Float64Quotient(Writer& w, ValueId a, ValueId b) {
    ValueId wide_a = w.Conv(K::kF64, a);
    return w.Add(Op::kDiv, K::kF64, {wide_a, w.Conv(K::kF64, b)});
}

// x*y + z rounded once to f32, from f64 operations (tests only: lavapipe's Fma
// rounds twice). The product of two f32 is exact in f64; the sum is rounded to
// odd (Knuth's two-sum gives its error e; where e != 0 and the sum's last bit is
// even, it moves one ulp toward e), and a float64 rounded to odd, converted to
// f32, is rounded once (53 >= 24 + 2; Boldo and Melquiond). As
// frontend/llvm_ops.fma_f32.
ValueId ExactFma(Writer& w, ValueId x, ValueId y, ValueId z) {
    ValueId xd = w.Conv(K::kF64, x), yd = w.Conv(K::kF64, y), zd = w.Conv(K::kF64, z);
    ValueId p = w.Bin(Op::kMul, K::kF64, xd, yd);
    ValueId s = w.Bin(Op::kAdd, K::kF64, p, zd);
    ValueId bb = w.Bin(Op::kSub, K::kF64, s, p);
    ValueId e = w.Bin(Op::kAdd, K::kF64, w.Bin(Op::kSub, K::kF64, p, w.Bin(Op::kSub, K::kF64, s, bb)),
                      w.Bin(Op::kSub, K::kF64, zd, bb));
    ValueId zero = w.F64(0.0);
    ValueId e_neg = w.Cmp(Op::kLt, e, zero);
    ValueId inexact = w.Bin(Op::kOr, K::kBool, e_neg, w.Cmp(Op::kGt, e, zero));
    ValueId bits = w.Cast(K::kU64, s);
    ValueId even = w.Cmp(Op::kEq, w.Bin(Op::kAnd, K::kU64, bits, w.U64(1)), w.U64(0));
    ValueId same_sign = w.Cmp(Op::kEq, e_neg, w.Cmp(Op::kLt, s, zero));
    ValueId step = w.Add(Op::kSelect, K::kU64, {same_sign, w.U64(1), w.U64(~uint64_t{0})});
    ValueId moved = w.Cast(K::kF64, w.Bin(Op::kAdd, K::kU64, bits, step));
    ValueId odd = w.Add(Op::kSelect, K::kF64, {w.Bin(Op::kAnd, K::kBool, inexact, even), moved, s});
    return w.Conv(K::kF32, odd);
}

// The fused sequence for a / b into `slot` (float_division.h); returns the
// condition for the float64 way (operands outside the safe range).
ValueId FusedQuotient(Writer& w, ValueId a, ValueId b, ValueId slot,
                      const Float32DivisionOptions& o) {
    auto fma = [&](ValueId x, ValueId y, ValueId z) {
        return o.exact_fma ? ExactFma(w, x, y, z) : w.Fma(K::kF32, x, y, z);
    };
    ValueId ua = w.Cast(K::kU32, a), ub = w.Cast(K::kU32, b);
    ValueId one = w.F32(1.0f);
    ValueId y0 = w.Add(Op::kDiv, K::kF32, {one, b}, 0, static_cast<uint32_t>(DivPrecision::kDriver));
    if (o.test_ulps > 0) {  // y0 moved by (ua + ub) % (2N + 1) - N ulps
        ValueId k = w.Bin(Op::kRem, K::kU32, w.Bin(Op::kAdd, K::kU32, ua, ub), w.U32(2 * o.test_ulps + 1));
        ValueId moved = w.Bin(Op::kAdd, K::kU32, w.Cast(K::kU32, y0),
                              w.Bin(Op::kSub, K::kU32, k, w.U32(o.test_ulps)));
        y0 = w.Cast(K::kF32, moved);
    }
    ValueId nb = w.Add(Op::kNeg, K::kF32, {b});
    ValueId e = fma(nb, y0, one);
    ValueId y = fma(e, y0, y0);
    ValueId q0 = w.Bin(Op::kMul, K::kF32, a, y);
    ValueId r0 = fma(nb, q0, a);
    ValueId q1 = fma(r0, y, q0);
    ValueId r1 = fma(nb, q1, a);
    ValueId q = fma(r1, y, q1);
    // The safe range (float_division.h) by float comparisons, q0's magnitude standing for
    // the exponents' difference.
    auto magnitude = [&](ValueId v) {
        return w.Add(Op::kMath, K::kF32, {v}, static_cast<uint64_t>(MathFn::kAbs));
    };
    auto at_least = [&](ValueId v, float lo) { return w.Cmp(Op::kGe, v, w.F32(lo)); };
    auto below = [&](ValueId v, float hi) { return w.Cmp(Op::kLt, v, w.F32(hi)); };
    auto both = [&](ValueId x, ValueId y) { return w.Bin(Op::kAnd, K::kBool, x, y); };
    ValueId mb = magnitude(b), mq = magnitude(q0);
    ValueId b_ok = both(both(at_least(mb, 0x1p-125f), below(mb, 0x1p126f)),
                        w.Cmp(Op::kLt, w.Bin(Op::kAnd, K::kU32, ub, w.U32(0x7fffff)), w.U32(0x7ffe00)));
    ValueId a_zero = w.Cmp(Op::kEq, w.Bin(Op::kAnd, K::kU32, ua, w.U32(0x7fffffffu)), w.U32(0));
    ValueId a_ok = both(at_least(magnitude(a), 0x1p-79f), both(at_least(mq, 0x1p-123f), below(mq, 0x1p124f)));
    ValueId safe = both(b_ok, w.Bin(Op::kOr, K::kBool, a_zero, a_ok));
    // A zero dividend: the sums may lose the sign of q, q0 = a * y has it.
    w.Store(slot, w.Add(Op::kSelect, K::kF32, {a_zero, q0, q}));
    return w.Add(Op::kNot, K::kBool, {safe});
}

// After blocks were split: every use of a value defined in another block that
// is not the entry block reads it again in the using block, from a variable
// stored after its definition; constants and addresses (elemptr, indexptr) are
// computed again there instead. `vars` receives the new variables.
void LegalizeCrossBlockUses(Module& m, std::vector<Inst>* vars) {
    Function& f = m.function;
    const BlockId entry = f.entry().id;
    std::unordered_map<ValueId, Inst> remat;
    for (const Block& b : f.blocks)
        for (const Inst& inst : b.insts)
            if (b.id != entry && (inst.op == Op::kConst || inst.op == Op::kElemPtr ||
                                  inst.op == Op::kIndexPtr))
                remat[inst.result] = inst;
    std::unordered_map<ValueId, ValueId> slots;  // value -> its variable
    for (Block& x : f.blocks) {
        std::unordered_map<ValueId, ValueId> local;  // value -> its copy in x
        std::vector<Inst> out;
        out.reserve(x.insts.size());
        auto resolve = [&](auto& self, ValueId v) -> ValueId {
            const BlockId def = f.values.at(v).block;
            if (def == x.id || def == entry) return v;
            auto seen = local.find(v);
            if (seen != local.end()) return seen->second;
            Inst copy;
            auto r = remat.find(v);
            if (r != remat.end()) {
                copy = r->second;
                for (ValueId& op : copy.operands) op = self(self, op);
            } else {
                auto s = slots.find(v);
                if (s == slots.end()) {
                    Inst var;
                    var.op = Op::kVar;
                    var.type = m.GetPointer(AddressSpace::kFunction, f.values[v].type);
                    var.result = f.NewValue(var.type, entry);
                    vars->push_back(var);
                    s = slots.emplace(v, var.result).first;
                }
                copy = Inst{};
                copy.op = Op::kLoad;
                copy.type = f.values[v].type;
                copy.operands = {s->second};
            }
            copy.result = f.NewValue(f.values[v].type, x.id);
            out.push_back(copy);
            local[v] = copy.result;
            return copy.result;
        };
        for (Inst inst : x.insts) {
            for (ValueId& op : inst.operands) op = resolve(resolve, op);
            out.push_back(std::move(inst));
        }
        x.insts = std::move(out);
    }
    if (slots.empty()) return;
    for (Block& b : f.blocks) {  // each spilled value stored right after its definition
        std::vector<Inst> out;
        out.reserve(b.insts.size());
        for (Inst& inst : b.insts) {
            out.push_back(std::move(inst));
            const Inst& def = out.back();
            auto s = def.result == kNone ? slots.end() : slots.find(def.result);
            if (s == slots.end()) continue;
            Inst store;
            store.op = Op::kStore;
            store.operands = {s->second, def.result};
            store.loc = def.loc;
            out.push_back(store);
        }
        b.insts = std::move(out);
    }
}

}  // namespace

namespace {

// The value of `v` as a double where it is a constant, or a conversion of one, of a float or
// integer kind (integers as converted exactly); nullopt otherwise.
std::optional<double> ConstantValue(const Module& m,
                                    const std::unordered_map<ValueId, const Inst*>& defs,
                                    ValueId v) {
    auto it = defs.find(v);
    if (it == defs.end()) return std::nullopt;
    const Inst& inst = *it->second;
    const Type& t = m.type(inst.type);
    if (t.kind != Type::Kind::kScalar) return std::nullopt;
    if (inst.op == Op::kConvert) {  // kept only where the conversion is exact
        std::optional<double> from = ConstantValue(m, defs, inst.operands.at(0));
        if (!from) return std::nullopt;
        if (t.scalar == K::kF64) return from;
        if (t.scalar == K::kF32) {
            return static_cast<double>(static_cast<float>(*from)) == *from ? from : std::nullopt;
        }
        if (!IsInteger(t.scalar) || std::trunc(*from) != *from) return std::nullopt;
        const int bits = BitWidth(t.scalar);
        const double lo = IsSigned(t.scalar) ? -std::ldexp(1.0, bits - 1) : 0.0;
        const double hi = std::ldexp(1.0, IsSigned(t.scalar) ? bits - 1 : bits);
        return *from >= lo && *from < hi ? from : std::nullopt;
    }
    if (inst.op != Op::kConst) return std::nullopt;
    switch (t.scalar) {
        case K::kF32: {
            float f;
            const uint32_t bits = static_cast<uint32_t>(inst.imm);
            std::memcpy(&f, &bits, 4);
            return f;
        }
        case K::kF64: {
            double d;
            std::memcpy(&d, &inst.imm, 8);
            return d;
        }
        case K::kI8: case K::kI16: case K::kI32: case K::kI64:
            return static_cast<double>(static_cast<int64_t>(inst.imm));
        case K::kU8: case K::kU16: case K::kU32: case K::kU64:
            return static_cast<double>(inst.imm);
        default: return std::nullopt;
    }
}

// 1 / c where c is +-2^k with k >= 0 and both are normal numbers of `k` (f32 or f64).
std::optional<double> ExactReciprocal(double c, K kind) {
    if (kind != K::kF32 && kind != K::kF64) return std::nullopt;
    int exponent = 0;
    const double mantissa = std::frexp(c, &exponent);  // c = mantissa * 2^exponent
    if (!std::isfinite(c) || std::fabs(mantissa) != 0.5 || exponent < 1) return std::nullopt;
    const int k = exponent - 1;  // |c| = 2^k
    const int max_exponent = kind == K::kF32 ? 127 : 1023;  // 2^-k normal down to 2^-126 / -1022
    if (k > max_exponent - 1) return std::nullopt;
    return std::ldexp(mantissa > 0 ? 1.0 : -1.0, -k);
}

}  // namespace

size_t DivideByPowersOfTwo(Module& m) {
    // One walk: the constants and conversions a divisor may be, and the float divisions
    // (most kernels have none, and leave here)
    std::unordered_map<ValueId, const Inst*> defs;
    std::vector<const Inst*> divisions;
    for (const Block& b : m.function.blocks) {
        for (const Inst& inst : b.insts) {
            if (inst.op == Op::kConst || inst.op == Op::kConvert) {
                defs[inst.result] = &inst;
            } else if (inst.op == Op::kDiv && m.type(inst.type).kind == Type::Kind::kScalar &&
                       IsFloat(m.type(inst.type).scalar)) {
                divisions.push_back(&inst);
            }
        }
    }
    // Decide first, then rewrite: adding instructions moves what these point to.
    std::vector<std::pair<ValueId, double>> rewrites;  // the division's result, 1 / c
    for (const Inst* inst : divisions) {
        std::optional<double> c = ConstantValue(m, defs, inst->operands.at(1));
        std::optional<double> r = c ? ExactReciprocal(*c, m.type(inst->type).scalar) : std::nullopt;
        if (r) rewrites.emplace_back(inst->result, *r);
    }
    if (rewrites.empty()) return 0;
    std::unordered_map<ValueId, double> reciprocal(rewrites.begin(), rewrites.end());
    for (Block& b : m.function.blocks) {
        std::vector<Inst> out;
        out.reserve(b.insts.size());
        for (Inst inst : b.insts) {
            auto it = inst.op == Op::kDiv ? reciprocal.find(inst.result) : reciprocal.end();
            if (it != reciprocal.end()) {
                Writer w{m, b.id, inst.loc, &out};
                const K kind = m.type(inst.type).scalar;
                const ValueId r = kind == K::kF32 ? w.F32(static_cast<float>(it->second))
                                                  : w.F64(it->second);
                inst.op = Op::kMul;  // under the division's id: its uses are unchanged
                inst.aux = 0;
                inst.operands = {inst.operands.at(0), r};
            }
            out.push_back(std::move(inst));
        }
        b.insts = std::move(out);
    }
    return rewrites.size();
}

size_t DivideFloat32InFloat64(Module& m) {
    size_t rewritten = 0;
    for (Block& b : m.function.blocks) {
        std::vector<Inst> out;
        out.reserve(b.insts.size());
        for (Inst inst : b.insts) {
            if (!IsCorrectF32Division(m, inst)) {
                out.push_back(std::move(inst));
                continue;
            }
            Writer w{m, b.id, inst.loc, &out};
            ValueId q = Float64Quotient(w, inst.operands.at(0), inst.operands.at(1));
            inst.op = Op::kConvert;  // the quotient rounded once to f32, under the old id
            inst.operands = {q};
            out.push_back(std::move(inst));
            ++rewritten;
        }
        b.insts = std::move(out);
    }
    return rewritten;
}

size_t DivideFloat32(Module& m, const Float32DivisionOptions& o) {
    if (!o.fused_fma) return DivideFloat32InFloat64(m);
    Function& f = m.function;
    const TypeId f32 = m.GetScalar(K::kF32);
    const TypeId f32_var = m.GetPointer(AddressSpace::kFunction, f32);
    const BlockId entry_id = f.entry().id;
    std::vector<Inst> vars;  // new variables, for the entry block
    std::vector<Block> blocks;
    size_t rewritten = 0;
    BlockId next_id = f.NextBlockId();
    for (Block& original : f.blocks) {
        bool any = false;
        for (const Inst& inst : original.insts) any |= IsCorrectF32Division(m, inst);
        if (!any) {
            blocks.push_back(std::move(original));
            continue;
        }
        std::vector<Inst> insts = std::move(original.insts);
        if (original.id == entry_id) {  // what must stay in the entry block goes first
            std::vector<Inst> first, rest;
            for (Inst& inst : insts) (EntryOnly(inst.op) ? first : rest).push_back(std::move(inst));
            insts = std::move(first);
            for (Inst& inst : rest) insts.push_back(std::move(inst));
        }
        const std::string base = original.name.empty() ? "b" + std::to_string(original.id) : original.name;
        Block current;
        current.id = original.id;
        current.name = original.name;
        for (Inst& inst : insts) {
            if (!IsCorrectF32Division(m, inst)) {
                if (inst.result != kNone) f.values[inst.result].block = current.id;
                current.insts.push_back(std::move(inst));
                continue;
            }
            Inst var;
            var.op = Op::kVar;
            var.type = f32_var;
            var.result = f.NewValue(f32_var, entry_id);
            vars.push_back(var);
            const ValueId slot = var.result;
            const ValueId a = inst.operands.at(0), b = inst.operands.at(1);
            Block rare, done;
            rare.id = next_id++;
            done.id = next_id++;
            rare.name = base + ".div" + std::to_string(rewritten) + ".rare";
            done.name = base + ".div" + std::to_string(rewritten) + ".done";
            Writer w{m, current.id, inst.loc, &current.insts};
            ValueId cond = FusedQuotient(w, a, b, slot, o);
            w.Jump(Op::kCondBr, {cond}, rare.id, done.id);
            // The float64 way (a and b are read there again: LegalizeCrossBlockUses).
            Writer r{m, rare.id, inst.loc, &rare.insts};
            r.Store(slot, r.Conv(K::kF32, Float64Quotient(r, a, b)));
            r.Jump(Op::kBr, {}, done.id);
            // The quotient, under the division's id, heads the rest of the block.
            inst.op = Op::kLoad;
            inst.operands = {slot};
            inst.aux = 0;
            f.values[inst.result].block = done.id;
            done.insts.push_back(std::move(inst));
            blocks.push_back(std::move(current));
            blocks.push_back(std::move(rare));
            current = std::move(done);
            ++rewritten;
        }
        blocks.push_back(std::move(current));
    }
    f.blocks = std::move(blocks);
    if (rewritten == 0) return 0;
    LegalizeCrossBlockUses(m, &vars);
    Block& entry = f.entry();
    entry.insts.insert(entry.insts.begin(), vars.begin(), vars.end());
    return rewritten;
}

}  // namespace nvk::kir
