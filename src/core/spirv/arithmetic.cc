// Arithmetic: integer, float and bool operations, comparisons, conversions,
// bitcasts and select.
//
// Semantics kept from KIR (kir.h): integer ops wrap; integer kDiv/kRem
// truncate toward zero (OpSDiv for signed, OpUDiv/OpUMod for unsigned; signed
// 64-bit kDiv from OpUDiv on the magnitudes, SignedFromMagnitudes);
// signed kRem is built from OpUMod on the magnitudes (SignedFromMagnitudes), since
// Vulkan leaves OpSRem and OpSMod undefined for negative operands; float kRem
// is C fmod, which is OpFRem (the result takes the sign of the dividend);
// kShr is arithmetic for signed types. Float comparisons are ordered except
// kNe (OpFUnordNotEqual: true when either side is NaN).
//
// Without fastmath, float arithmetic is decorated NoContraction so that no
// driver fuses a multiply and an add into an FMA (the results must match
// NumPy bit for bit); with fastmath the decoration is left out.
#include "spirv/emitter.h"

namespace nvk::spirv {

namespace {

using kir::Op;
using kir::ScalarKind;

bool IsContractible(spv::Op op) {
    return op == spv::Op::OpFAdd || op == spv::Op::OpFSub || op == spv::Op::OpFMul ||
           op == spv::Op::OpFDiv || op == spv::Op::OpFRem || op == spv::Op::OpFNegate;
}

}  // namespace

// a rem b with the sign of a (C's %), from the unsigned remainder of |a| and |b|
// (`op` OpUMod); with `op` OpUDiv, a / b truncated, negative where the signs differ.
// |INT_MIN| wraps to INT_MIN, whose bits read as unsigned are the right magnitude
// (INT_MIN / -1 never gets here: KIR's division guards it).
Id Emitter::SignedFromMagnitudes(spv::Op op, ScalarKind k, Id a, Id b) {
    Id type = ScalarType(k);
    Id utype = b_.TypeInt(static_cast<uint32_t>(kir::BitWidth(k)), false);
    Id zero = b_.ConstScalar(type, 0);
    Id bool_type = b_.TypeBool();
    // Negations on the unsigned type: wrapping.cc says why.
    auto magnitude = [&](Id v) {
        Id negative = Append(spv::Op::OpSLessThan, bool_type, {v, zero});
        Id bits = Append(spv::Op::OpBitcast, utype, {v});
        Id negated = Append(spv::Op::OpISub, utype, {b_.ConstScalar(utype, 0), bits});
        return Append(spv::Op::OpSelect, utype, {negative, negated, bits});
    };
    Id negative = Append(spv::Op::OpSLessThan, bool_type, {a, zero});
    if (op == spv::Op::OpUDiv) {
        Id b_negative = Append(spv::Op::OpSLessThan, bool_type, {b, zero});
        negative = Append(spv::Op::OpLogicalNotEqual, bool_type, {negative, b_negative});
    }
    Id r = Append(op, utype, {magnitude(a), magnitude(b)});
    Id negated = Append(spv::Op::OpISub, utype, {b_.ConstScalar(utype, 0), r});
    return Append(spv::Op::OpBitcast, type, {Append(spv::Op::OpSelect, utype, {negative, negated, r})});
}

util::Status Emitter::EmitBinary(const kir::Inst& inst) {
    NVK_ASSIGN_OR_RETURN(Id a, Value(inst.operands.at(0)));
    NVK_ASSIGN_OR_RETURN(Id b, Value(inst.operands.at(1)));
    ScalarKind k = KindOf(inst.operands[0]);
    bool is_float = kir::IsFloat(k), is_signed = kir::IsSigned(k);
    spv::Op op = spv::Op::OpNop;
    if (k == ScalarKind::kBool) {
        switch (inst.op) {
            case Op::kAnd: op = spv::Op::OpLogicalAnd; break;
            case Op::kOr: op = spv::Op::OpLogicalOr; break;
            case Op::kXor: op = spv::Op::OpLogicalNotEqual; break;
            default: break;
        }
    } else if (is_float) {
        switch (inst.op) {
            case Op::kAdd: op = spv::Op::OpFAdd; break;
            case Op::kSub: op = spv::Op::OpFSub; break;
            case Op::kMul: op = spv::Op::OpFMul; break;
            case Op::kDiv: op = spv::Op::OpFDiv; break;
            case Op::kRem: op = spv::Op::OpFRem; break;
            default: break;
        }
    } else {
        switch (inst.op) {
            case Op::kAdd: op = spv::Op::OpIAdd; break;
            case Op::kSub: op = spv::Op::OpISub; break;
            case Op::kMul: op = spv::Op::OpIMul; break;
            case Op::kDiv:
                // NVIDIA's 64-bit OpSDiv gave (-1) // uint32(12) = -2 beside the floor
                // correction (type fuzzer seed 4686 on the H200): from the magnitudes there.
                if (is_signed && kir::BitWidth(k) == 64) {
                    Bind(inst, SignedFromMagnitudes(spv::Op::OpUDiv, k, a, b));
                    return util::Status::Ok();
                }
                op = is_signed ? spv::Op::OpSDiv : spv::Op::OpUDiv;
                break;
            case Op::kRem:
                if (is_signed) {
                    Bind(inst, SignedFromMagnitudes(spv::Op::OpUMod, k, a, b));
                    return util::Status::Ok();
                }
                op = spv::Op::OpUMod;
                break;
            case Op::kAnd: op = spv::Op::OpBitwiseAnd; break;
            case Op::kOr: op = spv::Op::OpBitwiseOr; break;
            case Op::kXor: op = spv::Op::OpBitwiseXor; break;
            case Op::kShl: op = spv::Op::OpShiftLeftLogical; break;
            case Op::kShr:
                op = is_signed ? spv::Op::OpShiftRightArithmetic : spv::Op::OpShiftRightLogical;
                break;
            default: break;
        }
    }
    if (op == spv::Op::OpNop) {
        return Error(util::Code::kUnsupported, inst,
                     std::string("not defined on ") + kir::ScalarName(k));
    }
    if (op == spv::Op::OpFDiv) {
        Bind(inst, FloatDivide(k, a, b, kir::IsDriverDivision(inst)));
        return util::Status::Ok();
    }
    // Signed add, sub, mul and shift left wrap on the unsigned type, except
    // in index arithmetic (wrapping.cc).
    if (is_signed && !IndexOnly(inst) &&
        (op == spv::Op::OpIAdd || op == spv::Op::OpISub || op == spv::Op::OpIMul ||
         op == spv::Op::OpShiftLeftLogical)) {
        Bind(inst, WrappingOp(op, k, a, b));
        return util::Status::Ok();
    }
    Id id = Append(op, ScalarType(k), {a, b});
    if (!options_.fastmath && IsContractible(op)) b_.Decorate(id, spv::Decoration::NoContraction);
    Bind(inst, id);
    return util::Status::Ok();
}

util::Status Emitter::EmitUnary(const kir::Inst& inst) {
    NVK_ASSIGN_OR_RETURN(Id a, Value(inst.operands.at(0)));
    ScalarKind k = KindOf(inst.operands[0]);
    spv::Op op = spv::Op::OpNop;
    if (inst.op == Op::kNeg) {
        if (kir::IsFloat(k)) op = spv::Op::OpFNegate;
        if (kir::IsInteger(k)) {  // 0 - x on the unsigned type (wrapping.cc)
            Bind(inst, WrappingNegate(k, a));
            return util::Status::Ok();
        }
    } else if (inst.op == Op::kNot) {
        op = k == ScalarKind::kBool ? spv::Op::OpLogicalNot
             : kir::IsInteger(k)    ? spv::Op::OpNot
                                    : spv::Op::OpNop;
    }
    if (op == spv::Op::OpNop) {
        return Error(util::Code::kUnsupported, inst,
                     std::string("not defined on ") + kir::ScalarName(k));
    }
    Id id = Append(op, ScalarType(k), {a});
    if (!options_.fastmath && IsContractible(op)) b_.Decorate(id, spv::Decoration::NoContraction);
    Bind(inst, id);
    return util::Status::Ok();
}

util::Status Emitter::EmitCompare(const kir::Inst& inst) {
    NVK_ASSIGN_OR_RETURN(Id a, Value(inst.operands.at(0)));
    NVK_ASSIGN_OR_RETURN(Id b, Value(inst.operands.at(1)));
    ScalarKind k = KindOf(inst.operands[0]);
    if (k == ScalarKind::kBool) {
        if (inst.op == Op::kEq || inst.op == Op::kNe) {
            spv::Op op = inst.op == Op::kEq ? spv::Op::OpLogicalEqual : spv::Op::OpLogicalNotEqual;
            Bind(inst, Append(op, b_.TypeBool(), {a, b}));
            return util::Status::Ok();
        }
        // Ordering bools (False < True): compare them as unsigned integers.
        NVK_ASSIGN_OR_RETURN(a, Convert(a, ScalarKind::kBool, ScalarKind::kU32));
        NVK_ASSIGN_OR_RETURN(b, Convert(b, ScalarKind::kBool, ScalarKind::kU32));
        k = ScalarKind::kU32;
    }
    spv::Op op = spv::Op::OpNop;
    if (kir::IsFloat(k)) {
        switch (inst.op) {
            case Op::kEq: op = spv::Op::OpFOrdEqual; break;
            case Op::kNe: op = spv::Op::OpFUnordNotEqual; break;
            case Op::kLt: op = spv::Op::OpFOrdLessThan; break;
            case Op::kLe: op = spv::Op::OpFOrdLessThanEqual; break;
            case Op::kGt: op = spv::Op::OpFOrdGreaterThan; break;
            case Op::kGe: op = spv::Op::OpFOrdGreaterThanEqual; break;
            default: break;
        }
    } else {
        bool s = kir::IsSigned(k);
        switch (inst.op) {
            case Op::kEq: op = spv::Op::OpIEqual; break;
            case Op::kNe: op = spv::Op::OpINotEqual; break;
            case Op::kLt: op = s ? spv::Op::OpSLessThan : spv::Op::OpULessThan; break;
            case Op::kLe: op = s ? spv::Op::OpSLessThanEqual : spv::Op::OpULessThanEqual; break;
            case Op::kGt: op = s ? spv::Op::OpSGreaterThan : spv::Op::OpUGreaterThan; break;
            case Op::kGe:
                op = s ? spv::Op::OpSGreaterThanEqual : spv::Op::OpUGreaterThanEqual;
                break;
            default: break;
        }
    }
    if (op == spv::Op::OpNop) return Error(util::Code::kInternal, inst, "not a comparison");
    Bind(inst, Append(op, b_.TypeBool(), {a, b}));
    return util::Status::Ok();
}

util::Result<Id> Emitter::Convert(Id value, ScalarKind from, ScalarKind to) {
    if (from == to) return value;
    const uint32_t from_width = kir::BitWidth(from), to_width = kir::BitWidth(to);
    Id to_type = ScalarType(to);
    if (from == ScalarKind::kBool) {
        return Append(spv::Op::OpSelect, to_type,
                      {value, b_.ConstScalar(to_type, kir::IsFloat(to) ? OneBits(to) : 1),
                       b_.ConstScalar(to_type, 0)});
    }
    if (to == ScalarKind::kBool) {
        Id zero = b_.ConstScalar(ScalarType(from), 0);
        // Python's bool(x): x != 0, and NaN is true (unordered not-equal).
        spv::Op op = kir::IsFloat(from) ? spv::Op::OpFUnordNotEqual : spv::Op::OpINotEqual;
        return Append(op, to_type, {value, zero});
    }
    if (kir::IsFloat(from) && kir::IsFloat(to)) return Append(spv::Op::OpFConvert, to_type, {value});
    if (kir::IsFloat(from) && to_width == 64) return FloatToInt64(value, from, to);
    if (kir::IsFloat(from)) {  // float -> int truncates toward zero
        spv::Op op = kir::IsSigned(to) ? spv::Op::OpConvertFToS : spv::Op::OpConvertFToU;
        return Append(op, to_type, {value});
    }
    if (kir::IsFloat(to)) {
        spv::Op op = kir::IsSigned(from) ? spv::Op::OpConvertSToF : spv::Op::OpConvertUToF;
        return Append(op, to_type, {value});
    }
    // Integer -> integer: change the width with the source's signedness
    // (sign- or zero-extension; narrowing truncates either way), then
    // reinterpret the bits if the signedness differs.
    bool from_signed = kir::IsSigned(from), to_signed = kir::IsSigned(to);
    if (uint64_t bits = 0; from_width < 64 && b_.IntConstBits(value, &bits)) {
        // A constant: its converted value (SPIRV-Tools folds few 64-bit operations).
        if (from_signed && (bits >> (from_width - 1)) & 1) bits |= ~uint64_t{0} << from_width;
        return b_.ConstScalar(to_type, bits);
    }
    if (from_signed && to_width == 64 && from_width < 64) {
        // Sign extension to 64 bits as zero extension and a shift pair: lavapipe
        // (Mesa 22) compares an OpSConvert result against a constant wrongly
        // (`int64(x) < 0` was false for negative int32 x).
        Id u64 = b_.TypeInt(64, false), i64 = b_.TypeInt(64, true);
        Id unsigned_from = b_.TypeInt(from_width, false);
        Id bits = Append(spv::Op::OpUConvert, u64,
                         {Append(spv::Op::OpBitcast, unsigned_from, {value})});
        Id shift = b_.ConstScalar(u64, 64 - from_width);
        Id high = Append(spv::Op::OpBitcast, i64,
                         {Append(spv::Op::OpShiftLeftLogical, u64, {bits, shift})});
        value = Append(spv::Op::OpShiftRightArithmetic, i64, {high, shift});
        return to_signed ? value : Append(spv::Op::OpBitcast, to_type, {value});
    }
    if (from_width != to_width) {
        Id mid_type = b_.TypeInt(to_width, from_signed);
        value = Append(from_signed ? spv::Op::OpSConvert : spv::Op::OpUConvert, mid_type, {value});
    }
    if (from_signed != to_signed) value = Append(spv::Op::OpBitcast, to_type, {value});
    return value;
}

uint64_t Emitter::OneBits(ScalarKind k) {
    switch (k) {
        case ScalarKind::kF16: return 0x3c00;
        case ScalarKind::kF32: return 0x3f800000;
        case ScalarKind::kF64: return 0x3ff0000000000000;
        default: return 1;
    }
}

util::Status Emitter::EmitConvert(const kir::Inst& inst) {
    NVK_ASSIGN_OR_RETURN(Id a, Value(inst.operands.at(0)));
    const kir::Type& to = m_.type(inst.type);
    if (to.kind == kir::Type::Kind::kCoopMatrix) return ConvertTile(inst);
    if (to.kind != kir::Type::Kind::kScalar) {
        return Error(util::Code::kInternal, inst, "convert to a non-scalar type");
    }
    NVK_ASSIGN_OR_RETURN(Id id, Convert(a, KindOf(inst.operands[0]), to.scalar));
    Bind(inst, id);
    return util::Status::Ok();
}

util::Status Emitter::EmitBitcast(const kir::Inst& inst) {
    NVK_ASSIGN_OR_RETURN(Id a, Value(inst.operands.at(0)));
    const kir::Type& to = m_.type(inst.type);
    ScalarKind from = KindOf(inst.operands[0]);
    if (to.kind != kir::Type::Kind::kScalar || kir::BitWidth(to.scalar) != kir::BitWidth(from) ||
        from == ScalarKind::kBool) {
        return Error(util::Code::kInternal, inst, "bitcast between types of different widths");
    }
    if (from == to.scalar) {
        Bind(inst, a);
        return util::Status::Ok();
    }
    Bind(inst, Append(spv::Op::OpBitcast, ScalarType(to.scalar), {a}));
    return util::Status::Ok();
}

util::Status Emitter::EmitSelect(const kir::Inst& inst) {
    NVK_ASSIGN_OR_RETURN(Id cond, Value(inst.operands.at(0)));
    NVK_ASSIGN_OR_RETURN(Id a, Value(inst.operands.at(1)));
    NVK_ASSIGN_OR_RETURN(Id b, Value(inst.operands.at(2)));
    NVK_ASSIGN_OR_RETURN(Id type, TypeOf(inst.type));
    Bind(inst, Append(spv::Op::OpSelect, type, {cond, a, b}));
    return util::Status::Ok();
}

}  // namespace nvk::spirv
