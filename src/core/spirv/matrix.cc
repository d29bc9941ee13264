// Cooperative matrices: kCoopMatrix types and the kCoop* ops as SPV_KHR_cooperative_matrix
// (OpTypeCooperativeMatrixKHR of subgroup scope, OpCooperativeMatrixLoadKHR, StoreKHR,
// MulAddKHR, LengthKHR). A module with tiles uses the Vulkan memory model, which the
// extension requires of shaders (emit.cc, sync.cc).
//
// Loads and stores through a PhysicalStorageBuffer pointer carry the Aligned memory
// operand with the element's size, as every such access does here (memory.cc). A fill
// is an OpCompositeConstruct of the one value. Element access (a kIndexPtr into a tile
// variable) is memory.cc's OpAccessChain.
#include "kir/abi.h"
#include "spirv/emitter.h"

namespace nvk::spirv {

bool Emitter::UsesTiles() const {
    for (const kir::Type& t : m_.types)
        if (t.kind == kir::Type::Kind::kCoopMatrix) return true;
    return false;
}

util::Status Emitter::EmitCoop(const kir::Inst& inst) {
    using kir::Op;
    auto layout = [&]() {
        return b_.ConstU32(inst.aux == static_cast<uint32_t>(kir::MatrixLayout::kColumnMajor)
                               ? static_cast<uint32_t>(spv::CooperativeMatrixLayout::ColumnMajorKHR)
                               : static_cast<uint32_t>(spv::CooperativeMatrixLayout::RowMajorKHR));
    };
    auto access = [&](const kir::Type& ptr, std::vector<Id>& operands) {
        kir::ScalarKind k = m_.type(ptr.pointee).scalar;
        if (ptr.space != kir::AddressSpace::kGlobal) return;
        RequestStorageWidth(k);
        operands.push_back(kAligned);
        operands.push_back(kir::MemoryBytes(k));
    };
    switch (inst.op) {
        case Op::kCoopFill: {
            NVK_ASSIGN_OR_RETURN(Id tile, TypeOf(inst.type));
            NVK_ASSIGN_OR_RETURN(Id v, Value(inst.operands.at(0)));
            Bind(inst, Append(spv::Op::OpCompositeConstruct, tile, {v}));
            return util::Status::Ok();
        }
        case Op::kCoopLoad: {
            NVK_ASSIGN_OR_RETURN(Id tile, TypeOf(inst.type));
            NVK_ASSIGN_OR_RETURN(Id ptr, Value(inst.operands.at(0)));
            NVK_ASSIGN_OR_RETURN(Id stride, Value(inst.operands.at(1)));
            std::vector<Id> operands = {ptr, layout(), stride};
            access(KirType(inst.operands[0]), operands);
            Bind(inst, Append(spv::Op::OpCooperativeMatrixLoadKHR, tile, operands));
            return util::Status::Ok();
        }
        case Op::kCoopStore: {
            NVK_ASSIGN_OR_RETURN(Id ptr, Value(inst.operands.at(0)));
            NVK_ASSIGN_OR_RETURN(Id value, Value(inst.operands.at(1)));
            NVK_ASSIGN_OR_RETURN(Id stride, Value(inst.operands.at(2)));
            std::vector<uint32_t> words = {ptr, value, layout(), stride};
            access(KirType(inst.operands[0]), words);
            code().Add(spv::Op::OpCooperativeMatrixStoreKHR, words);
            return util::Status::Ok();
        }
        case Op::kCoopMulAdd: {
            NVK_ASSIGN_OR_RETURN(Id tile, TypeOf(inst.type));
            std::vector<Id> operands;
            for (kir::ValueId v : inst.operands) {
                NVK_ASSIGN_OR_RETURN(Id id, Value(v));
                operands.push_back(id);
            }
            uint32_t signs = 0;  // SPIR-V's CooperativeMatrixOperands bits
            if (inst.aux & kir::kMatrixSignedA)
                signs |= static_cast<uint32_t>(spv::CooperativeMatrixOperandsMask::MatrixASignedComponentsKHR);
            if (inst.aux & kir::kMatrixSignedB)
                signs |= static_cast<uint32_t>(spv::CooperativeMatrixOperandsMask::MatrixBSignedComponentsKHR);
            if (inst.aux & kir::kMatrixSignedC)
                signs |= static_cast<uint32_t>(spv::CooperativeMatrixOperandsMask::MatrixCSignedComponentsKHR);
            if (inst.aux & kir::kMatrixSignedResult)
                signs |= static_cast<uint32_t>(
                    spv::CooperativeMatrixOperandsMask::MatrixResultSignedComponentsKHR);
            if (signs) operands.push_back(signs);
            Bind(inst, Append(spv::Op::OpCooperativeMatrixMulAddKHR, tile, operands));
            return util::Status::Ok();
        }
        case Op::kCoopLength: {
            NVK_ASSIGN_OR_RETURN(Id tile, TypeOf(static_cast<kir::TypeId>(inst.imm)));
            Bind(inst, Append(spv::Op::OpCooperativeMatrixLengthKHR, b_.TypeInt(32, false), {tile}));
            return util::Status::Ok();
        }
        default: break;
    }
    return Error(util::Code::kInternal, inst, "not a cooperative-matrix op");
}

util::Status Emitter::ConvertTile(const kir::Inst& inst) {
    NVK_ASSIGN_OR_RETURN(Id a, Value(inst.operands.at(0)));
    NVK_ASSIGN_OR_RETURN(Id tile, TypeOf(inst.type));
    kir::ScalarKind from = KirType(inst.operands[0]).scalar, to = m_.type(inst.type).scalar;
    if (from == to) {
        Bind(inst, a);
        return util::Status::Ok();
    }
    spv::Op op;
    if (kir::IsFloat(from) && kir::IsFloat(to)) op = spv::Op::OpFConvert;
    else if (kir::IsFloat(from)) op = kir::IsSigned(to) ? spv::Op::OpConvertFToS : spv::Op::OpConvertFToU;
    else if (kir::IsFloat(to)) op = kir::IsSigned(from) ? spv::Op::OpConvertSToF : spv::Op::OpConvertUToF;
    else if (kir::BitWidth(from) == kir::BitWidth(to)) op = spv::Op::OpBitcast;
    else op = kir::IsSigned(from) ? spv::Op::OpSConvert : spv::Op::OpUConvert;
    Bind(inst, Append(op, tile, {a}));
    return util::Status::Ok();
}

}  // namespace nvk::spirv
