// The driver of the emitter: module setup, the entry function, the block walk
// and the per-instruction dispatch. See emitter.h for the map of the files.
#include "spirv/emit.h"

#include "spirv/emitter.h"

namespace nvk::spirv {

util::Result<std::vector<uint32_t>> Emit(const kir::Module& module, const EmitOptions& options) {
    Emitter emitter(module, options);
    return emitter.Run();
}

util::Result<std::vector<uint32_t>> Emitter::Run() {
    const kir::Function& f = m_.function;
    if (!f.structured) {
        return util::Internal("spirv emit: the function is in CFG form; structurize it first");
    }
    if (f.blocks.empty()) return util::Internal("spirv emit: the function has no blocks");

    SetUpModule();

    values_.assign(f.values.size(), 0);
    ComputeIndexOnly();
    labels_.assign(f.NextBlockId(), 0);
    for (const kir::Block& block : f.blocks) {
        labels_[block.id] = b_.NewId();
        b_.Name(labels_[block.id], block.name);
    }

    Id void_type = b_.TypeVoid();
    Id fn_type = b_.TypeFunction(void_type);
    Id fn = b_.NewId();
    b_.Name(fn, "main");
    b_.SetEntryPoint(fn, "main");
    code().Add(spv::Op::OpFunction,
               {void_type, fn, static_cast<uint32_t>(spv::FunctionControlMask::MaskNone), fn_type});
    for (size_t i = 0; i < f.blocks.size(); ++i) {
        NVK_RETURN_IF_ERROR(EmitBlock(f.blocks[i], i == 0));
    }
    code().Add(spv::Op::OpFunctionEnd, {});
    if (!options_.fastmath) RequestFloatPreservation();
    // PhysicalStorageBuffer64 addressing: array elements are reached through
    // 64-bit buffer device addresses (ARCHITECTURE.md, decision 3). Cooperative
    // matrices require the Vulkan memory model (SPV_KHR_cooperative_matrix).
    if (UsesTiles()) {
        b_.AddCapability(spv::Capability::VulkanMemoryModel);
        b_.AddCapability(spv::Capability::VulkanMemoryModelDeviceScope);
        return b_.Finish(spv::AddressingModel::PhysicalStorageBuffer64, spv::MemoryModel::Vulkan);
    }
    return b_.Finish(spv::AddressingModel::PhysicalStorageBuffer64, spv::MemoryModel::GLSL450);
}

void Emitter::RequestFloatPreservation() {
    auto used = [&](uint32_t width) {
        for (const kir::Type& t : m_.types)
            // bf16 values are only moved (kir.h): float controls do not concern them
            if (t.kind == kir::Type::Kind::kScalar && kir::IsFloat(t.scalar) &&
                t.scalar != kir::ScalarKind::kBF16 &&
                static_cast<uint32_t>(kir::BitWidth(t.scalar)) == width)
                return true;
        return false;
    };
    for (uint32_t width : options_.preserve_float_widths) {
        if (!used(width)) continue;
        b_.AddCapability(spv::Capability::SignedZeroInfNanPreserve);
        b_.AddExecutionMode(spv::ExecutionMode::SignedZeroInfNanPreserve, {width});
    }
    for (uint32_t width : options_.denorm_preserve_widths) {
        if (!used(width)) continue;
        b_.AddCapability(spv::Capability::DenormPreserve);
        b_.AddExecutionMode(spv::ExecutionMode::DenormPreserve, {width});
    }
}

void Emitter::SetUpModule() {
    b_.AddCapability(spv::Capability::Shader);
    b_.AddCapability(spv::Capability::PhysicalStorageBufferAddresses);

    // The workgroup size: three specialization constants (SpecId 0, 1, 2,
    // default 1) composed into the WorkgroupSize builtin, which overrides the
    // LocalSize execution mode, so the pipeline picks the local size.
    Id u32 = b_.TypeInt(32, false);
    Id x = b_.SpecConstU32(1, 0);
    Id y = b_.SpecConstU32(1, 1);
    Id z = b_.SpecConstU32(1, 2);
    b_.Name(x, "local_size_x");
    b_.Name(y, "local_size_y");
    b_.Name(z, "local_size_z");
    workgroup_size_ = b_.SpecConstComposite(b_.TypeVector(u32, 3), {x, y, z});
    b_.Decorate(workgroup_size_, spv::Decoration::BuiltIn,
                {static_cast<uint32_t>(spv::BuiltIn::WorkgroupSize)});
    b_.Name(workgroup_size_, "workgroup_size");

    if (!m_.params.empty()) DeclareParamBlock();
}

util::Status Emitter::EmitBlock(const kir::Block& block, bool is_entry) {
    if (block.insts.empty() || !kir::IsTerminator(block.insts.back().op)) {
        return util::Internal("spirv emit: block '" + block.name + "' has no terminator");
    }
    code().Add(spv::Op::OpLabel, {labels_[block.id]});
    // SPIR-V wants every Function variable at the very top of the entry block.
    if (is_entry) {
        for (const kir::Inst& inst : block.insts) {
            if (inst.op == kir::Op::kVar) NVK_RETURN_IF_ERROR(EmitVar(inst));
            if (inst.op == kir::Op::kArrayVar) NVK_RETURN_IF_ERROR(EmitArrayVar(inst));
        }
    }
    for (size_t i = 0; i + 1 < block.insts.size(); ++i) {
        const kir::Inst& inst = block.insts[i];
        if (inst.op == kir::Op::kVar || inst.op == kir::Op::kArrayVar) {
            if (!is_entry) return Error(util::Code::kInternal, inst, "var outside the entry block");
            continue;
        }
        NVK_RETURN_IF_ERROR(EmitInst(inst));
    }
    return EmitTerminator(block);
}

util::Status Emitter::EmitInst(const kir::Inst& inst) {
    using kir::Op;
    switch (inst.op) {
        case Op::kConst: {
            NVK_ASSIGN_OR_RETURN(Id type, TypeOf(inst.type));
            Bind(inst, b_.ConstScalar(type, inst.imm));
            return util::Status::Ok();
        }
        case Op::kParam: return EmitParam(inst);
        case Op::kBuiltin: return EmitBuiltin(inst);
        case Op::kVar: return EmitVar(inst);
        case Op::kLoad: return EmitLoad(inst);
        case Op::kStore: return EmitStore(inst);
        case Op::kElemPtr: return EmitElemPtr(inst);
        case Op::kAdd: case Op::kSub: case Op::kMul: case Op::kDiv: case Op::kRem:
        case Op::kAnd: case Op::kOr: case Op::kXor: case Op::kShl: case Op::kShr:
            return EmitBinary(inst);
        case Op::kNeg: case Op::kNot: return EmitUnary(inst);
        case Op::kEq: case Op::kNe: case Op::kLt: case Op::kLe: case Op::kGt: case Op::kGe:
            return EmitCompare(inst);
        case Op::kConvert: return EmitConvert(inst);
        case Op::kBitcast: return EmitBitcast(inst);
        case Op::kSelect: return EmitSelect(inst);
        case Op::kMath: return EmitMath(inst);
        case Op::kArrayVar: return EmitArrayVar(inst);
        case Op::kIndexPtr: return EmitIndexPtr(inst);
        case Op::kAtomic: return EmitAtomic(inst);
        case Op::kBarrier: return EmitBarrier(inst);
        case Op::kSubgroup: return EmitSubgroup(inst);
        case Op::kCoopFill: case Op::kCoopLoad: case Op::kCoopStore: case Op::kCoopMulAdd:
        case Op::kCoopLength: return EmitCoop(inst);
        case Op::kBr: case Op::kCondBr: case Op::kRet: case Op::kUnreachable:
            return Error(util::Code::kInternal, inst, "terminator in the middle of a block");
    }
    return Error(util::Code::kInternal, inst, "unknown instruction");
}

// ---------------------------------------------------------------- helpers

Id Emitter::ScalarType(kir::ScalarKind k) {
    if (k == kir::ScalarKind::kBool) return b_.TypeBool();
    if (k == kir::ScalarKind::kBF16) return b_.TypeBFloat16();
    uint32_t width = static_cast<uint32_t>(kir::BitWidth(k));
    if (kir::IsFloat(k)) return b_.TypeFloat(width);
    return b_.TypeInt(width, kir::IsSigned(k));
}

Id Emitter::MemoryType(kir::ScalarKind k) {
    return k == kir::ScalarKind::kBool ? b_.TypeInt(32, false) : ScalarType(k);
}

util::Result<Id> Emitter::TypeOf(kir::TypeId type) {
    const kir::Type& t = m_.type(type);
    switch (t.kind) {
        case kir::Type::Kind::kVoid: return b_.TypeVoid();
        case kir::Type::Kind::kScalar: return ScalarType(t.scalar);
        case kir::Type::Kind::kCoopMatrix:
            return b_.TypeCooperativeMatrix(ScalarType(t.scalar), t.rows, t.cols,
                                            static_cast<uint32_t>(t.use));
        case kir::Type::Kind::kPointer: {
            const kir::Type& pointee = m_.type(t.pointee);
            if (pointee.kind == kir::Type::Kind::kCoopMatrix && t.space == kir::AddressSpace::kFunction) {
                NVK_ASSIGN_OR_RETURN(Id tile, TypeOf(t.pointee));
                return b_.TypePointer(spv::StorageClass::Function, tile);
            }
            if (pointee.kind != kir::Type::Kind::kScalar) {
                return util::Unsupported("spirv emit: pointer to a non-scalar type");
            }
            switch (t.space) {
                case kir::AddressSpace::kFunction:
                    return b_.TypePointer(spv::StorageClass::Function, ScalarType(pointee.scalar));
                case kir::AddressSpace::kGlobal:
                    return b_.TypePointer(spv::StorageClass::PhysicalStorageBuffer,
                                          MemoryType(pointee.scalar));
                case kir::AddressSpace::kWorkgroup:
                    return b_.TypePointer(spv::StorageClass::Workgroup, ScalarType(pointee.scalar));
            }
        }
    }
    return util::Internal("spirv emit: unknown type");
}

kir::ScalarKind Emitter::KindOf(kir::ValueId v) const { return KirType(v).scalar; }

util::Result<Id> Emitter::Value(kir::ValueId v) const {
    if (v >= values_.size() || values_[v] == 0) {
        return util::Internal("spirv emit: value %" + std::to_string(v) +
                              " is used before its definition");
    }
    return values_[v];
}

Id Emitter::Append(spv::Op op, Id result_type, std::initializer_list<Id> operands) {
    return Append(op, result_type, std::vector<Id>(operands));
}

Id Emitter::Append(spv::Op op, Id result_type, const std::vector<Id>& operands) {
    Id id = b_.NewId();
    std::vector<uint32_t> words = {result_type, id};
    words.insert(words.end(), operands.begin(), operands.end());
    code().Add(op, words);
    return id;
}

util::Status Emitter::Error(util::Code code, const kir::Inst& inst, const std::string& what) const {
    std::string where;
    if (inst.loc.file != kir::kNone && inst.loc.file < m_.files.size()) {
        where = " (" + m_.files[inst.loc.file] + ":" + std::to_string(inst.loc.line) + ")";
    }
    return {code, std::string("spirv emit: ") + kir::OpName(inst.op) + where + ": " + what};
}

}  // namespace nvk::spirv
