// Memory: the parameter block, builtins, function variables, loads, stores and
// element pointers.
//
// Parameters. The block is a Block-decorated struct with one member per
// kir::ParamDecl (member i = parameter i, Offset = its byte offset). By
// default it is the push-constant block. With params_in_buffer, the push
// constants hold only a u64 device address, and the parameter struct lives at
// that address in PhysicalStorageBuffer memory: the address is loaded once,
// turned into a pointer (OpConvertUToPtr), and each parameter is an Aligned
// load through an access chain. Parameters are loaded where their kParam
// instruction sits, which is always the entry block.
//
// Local and shared arrays. kArrayVar is an OpVariable of an OpTypeArray: in
// the Function storage class at the top of the entry block (with the scalar
// variables), or in Workgroup at module scope. A workgroup array of imm 0
// elements is the kernel's dynamic shared memory: its length is the
// specialization constant SpecId 3 (default 1), which the runtime sets at
// pipeline creation from the launch's shared-memory bytes. kIndexPtr is an
// OpAccessChain into the array.
//
// Arrays. kElemPtr(base, index) computes base + index * sizeof(T) in 64-bit
// integer math (a signed index is sign-extended, an unsigned one
// zero-extended) and converts the sum to a PhysicalStorageBuffer pointer.
// Every access through such a pointer carries the Aligned memory operand with
// alignment sizeof(T), which Vulkan requires for PhysicalStorageBuffer.
#include "kir/abi.h"
#include "spirv/emitter.h"

namespace nvk::spirv {

void Emitter::DeclareParamBlock() {
    std::vector<Id> members;
    bool small8 = false, small16 = false;
    for (const kir::ParamDecl& p : m_.params) {
        kir::ScalarKind k = m_.type(p.type).scalar;
        members.push_back(MemoryType(k));
        small8 |= kir::BitWidth(k) == 8;
        small16 |= kir::BitWidth(k) == 16;
    }
    Id params = b_.TypeStruct(members);
    b_.Decorate(params, spv::Decoration::Block);
    b_.Name(params, "Params");
    for (uint32_t i = 0; i < m_.params.size(); ++i) {
        b_.MemberDecorate(params, i, spv::Decoration::Offset, {m_.params[i].offset});
        b_.MemberName(params, i, m_.params[i].name);
    }

    if (!options_.params_in_buffer) {
        if (small8) b_.AddCapability(spv::Capability::StoragePushConstant8);
        if (small16) b_.AddCapability(spv::Capability::StoragePushConstant16);
        push_struct_ = params;
    } else {
        if (small8) b_.AddCapability(spv::Capability::StorageBuffer8BitAccess);
        if (small16) b_.AddCapability(spv::Capability::StorageBuffer16BitAccess);
        param_struct_ = params;
        push_struct_ = b_.TypeStruct({b_.TypeInt(64, false)});
        b_.Decorate(push_struct_, spv::Decoration::Block);
        b_.MemberDecorate(push_struct_, 0, spv::Decoration::Offset, {0});
        b_.Name(push_struct_, "ParamAddress");
        b_.MemberName(push_struct_, 0, "address");
    }
    push_var_ = b_.GlobalVariable(b_.TypePointer(spv::StorageClass::PushConstant, push_struct_),
                                  spv::StorageClass::PushConstant);
    b_.Name(push_var_, "params");
}

util::Status Emitter::EmitParam(const kir::Inst& inst) {
    if (inst.imm >= m_.params.size()) return Error(util::Code::kInternal, inst, "bad param index");
    uint32_t index = static_cast<uint32_t>(inst.imm);
    kir::ScalarKind k = m_.type(m_.params[index].type).scalar;
    Id mem_type = MemoryType(k);
    Id value;
    if (!options_.params_in_buffer) {
        Id ptr = Append(spv::Op::OpAccessChain,
                        b_.TypePointer(spv::StorageClass::PushConstant, mem_type),
                        {push_var_, b_.ConstU32(index)});
        value = Append(spv::Op::OpLoad, mem_type, {ptr});
    } else {
        if (param_base_ == 0) {
            Id u64 = b_.TypeInt(64, false);
            Id address_ptr =
                Append(spv::Op::OpAccessChain, b_.TypePointer(spv::StorageClass::PushConstant, u64),
                       {push_var_, b_.ConstU32(0)});
            Id address = Append(spv::Op::OpLoad, u64, {address_ptr});
            param_base_ = Append(
                spv::Op::OpConvertUToPtr,
                b_.TypePointer(spv::StorageClass::PhysicalStorageBuffer, param_struct_), {address});
        }
        Id ptr = Append(spv::Op::OpAccessChain,
                        b_.TypePointer(spv::StorageClass::PhysicalStorageBuffer, mem_type),
                        {param_base_, b_.ConstU32(index)});
        value = Append(spv::Op::OpLoad, mem_type, {ptr, kAligned, kir::MemoryBytes(k)});
    }
    // Bools travel as u32 (the front end should never declare one; be lenient).
    if (k == kir::ScalarKind::kBool) {
        value = Append(spv::Op::OpINotEqual, b_.TypeBool(), {value, b_.ConstU32(0)});
    }
    Bind(inst, value);
    return util::Status::Ok();
}

util::Status Emitter::EmitBuiltin(const kir::Inst& inst) {
    if (inst.aux > 2) return Error(util::Code::kInternal, inst, "builtin axis out of range");
    Id u32 = b_.TypeInt(32, false);
    auto builtin = static_cast<kir::Builtin>(inst.imm);
    if (builtin == kir::Builtin::kLocalSize) {
        Bind(inst, Append(spv::Op::OpCompositeExtract, u32, {workgroup_size_, inst.aux}));
        return util::Status::Ok();
    }
    spv::BuiltIn spv_builtin;
    const char* name;
    switch (builtin) {
        case kir::Builtin::kGlobalId:
            spv_builtin = spv::BuiltIn::GlobalInvocationId, name = "global_id";
            break;
        case kir::Builtin::kLocalId:
            spv_builtin = spv::BuiltIn::LocalInvocationId, name = "local_id";
            break;
        case kir::Builtin::kGroupId:
            spv_builtin = spv::BuiltIn::WorkgroupId, name = "group_id";
            break;
        case kir::Builtin::kNumGroups:
            spv_builtin = spv::BuiltIn::NumWorkgroups, name = "num_groups";
            break;
        default: return Error(util::Code::kInternal, inst, "unknown builtin");
    }
    Id uvec3 = b_.TypeVector(u32, 3);
    Id& var = builtin_vars_[static_cast<int>(builtin)];
    if (var == 0) {
        var = b_.GlobalVariable(b_.TypePointer(spv::StorageClass::Input, uvec3),
                                spv::StorageClass::Input);
        b_.Decorate(var, spv::Decoration::BuiltIn, {static_cast<uint32_t>(spv_builtin)});
        b_.Name(var, name);
    }
    Id vec = Append(spv::Op::OpLoad, uvec3, {var});
    Bind(inst, Append(spv::Op::OpCompositeExtract, u32, {vec, inst.aux}));
    return util::Status::Ok();
}

util::Status Emitter::EmitVar(const kir::Inst& inst) {
    if (m_.type(inst.type).space != kir::AddressSpace::kFunction) {
        return Error(util::Code::kUnsupported, inst, "only function-local variables are supported");
    }
    NVK_ASSIGN_OR_RETURN(Id ptr_type, TypeOf(inst.type));
    Bind(inst, Append(spv::Op::OpVariable, ptr_type,
                      {static_cast<uint32_t>(spv::StorageClass::Function)}));
    return util::Status::Ok();
}

util::Status Emitter::EmitArrayVar(const kir::Inst& inst) {
    const kir::Type& ptr = m_.type(inst.type);
    Id element = ScalarType(m_.type(ptr.pointee).scalar);
    Id length;
    if (inst.imm == 0) {
        if (dynamic_shared_length_ == 0) {
            dynamic_shared_length_ = b_.SpecConstU32(1, kDynamicSharedSpecId);
            b_.Name(dynamic_shared_length_, "dynamic_shared_length");
        }
        length = dynamic_shared_length_;
    } else {
        if (inst.imm > UINT32_MAX) return Error(util::Code::kUnsupported, inst, "array too large");
        length = b_.ConstU32(static_cast<uint32_t>(inst.imm));
    }
    Id array = b_.TypeArray(element, length);
    if (ptr.space == kir::AddressSpace::kWorkgroup) {
        Id var = b_.GlobalVariable(b_.TypePointer(spv::StorageClass::Workgroup, array),
                                   spv::StorageClass::Workgroup);
        b_.Name(var, "shared");
        Bind(inst, var);
    } else {
        Bind(inst, Append(spv::Op::OpVariable, b_.TypePointer(spv::StorageClass::Function, array),
                          {static_cast<uint32_t>(spv::StorageClass::Function)}));
    }
    return util::Status::Ok();
}

util::Status Emitter::EmitIndexPtr(const kir::Inst& inst) {
    NVK_ASSIGN_OR_RETURN(Id base, Value(inst.operands.at(0)));
    NVK_ASSIGN_OR_RETURN(Id index, Value(inst.operands.at(1)));
    NVK_ASSIGN_OR_RETURN(Id ptr_type, TypeOf(inst.type));
    Bind(inst, Append(spv::Op::OpAccessChain, ptr_type, {base, index}));
    return util::Status::Ok();
}

namespace {
bool IsGlobal(const kir::Type& ptr) { return ptr.space == kir::AddressSpace::kGlobal; }
}  // namespace

void Emitter::RequestStorageWidth(kir::ScalarKind k) {
    if (kir::BitWidth(k) == 8) b_.AddCapability(spv::Capability::StorageBuffer8BitAccess);
    if (kir::BitWidth(k) == 16) b_.AddCapability(spv::Capability::StorageBuffer16BitAccess);
}

util::Status Emitter::EmitLoad(const kir::Inst& inst) {
    NVK_ASSIGN_OR_RETURN(Id ptr, Value(inst.operands.at(0)));
    const kir::Type& ptr_type = KirType(inst.operands[0]);
    kir::ScalarKind k = m_.type(ptr_type.pointee).scalar;
    if (m_.type(ptr_type.pointee).kind == kir::Type::Kind::kCoopMatrix) {  // a tile variable
        NVK_ASSIGN_OR_RETURN(Id tile, TypeOf(ptr_type.pointee));
        Bind(inst, Append(spv::Op::OpLoad, tile, {ptr}));
        return util::Status::Ok();
    }
    if (!IsGlobal(ptr_type)) {
        Bind(inst, Append(spv::Op::OpLoad, ScalarType(k), {ptr}));
        return util::Status::Ok();
    }
    RequestStorageWidth(k);
    Id value = Append(spv::Op::OpLoad, MemoryType(k), {ptr, kAligned, kir::MemoryBytes(k)});
    if (k == kir::ScalarKind::kBool) {
        value = Append(spv::Op::OpINotEqual, b_.TypeBool(), {value, b_.ConstU32(0)});
    }
    Bind(inst, value);
    return util::Status::Ok();
}

util::Status Emitter::EmitStore(const kir::Inst& inst) {
    NVK_ASSIGN_OR_RETURN(Id ptr, Value(inst.operands.at(0)));
    NVK_ASSIGN_OR_RETURN(Id value, Value(inst.operands.at(1)));
    const kir::Type& ptr_type = KirType(inst.operands[0]);
    kir::ScalarKind k = m_.type(ptr_type.pointee).scalar;
    if (!IsGlobal(ptr_type)) {
        code().Add(spv::Op::OpStore, {ptr, value});
        return util::Status::Ok();
    }
    RequestStorageWidth(k);
    if (k == kir::ScalarKind::kBool) {
        Id u32 = b_.TypeInt(32, false);
        value = Append(spv::Op::OpSelect, u32, {value, b_.ConstU32(1), b_.ConstU32(0)});
    }
    code().Add(spv::Op::OpStore, {ptr, value, kAligned, kir::MemoryBytes(k)});
    return util::Status::Ok();
}

util::Status Emitter::EmitElemPtr(const kir::Inst& inst) {
    NVK_ASSIGN_OR_RETURN(Id base, Value(inst.operands.at(0)));
    NVK_ASSIGN_OR_RETURN(Id index, Value(inst.operands.at(1)));
    kir::ScalarKind base_kind = KindOf(inst.operands[0]);
    kir::ScalarKind index_kind = KindOf(inst.operands[1]);
    if (kir::BitWidth(base_kind) != 64 || !kir::IsInteger(base_kind)) {
        return Error(util::Code::kInternal, inst, "the base address must be a 64-bit integer");
    }
    if (!kir::IsInteger(index_kind)) {
        return Error(util::Code::kInternal, inst, "the index must be an integer");
    }
    Id u64 = b_.TypeInt(64, false);
    if (kir::IsSigned(base_kind)) base = Append(spv::Op::OpBitcast, u64, {base});

    // The index as a u64: sign-extended when signed, zero-extended when not.
    Id index64 = index;
    if (kir::BitWidth(index_kind) < 64) {
        if (kir::IsSigned(index_kind)) {
            Id i64 = b_.TypeInt(64, true);
            index64 = Append(spv::Op::OpBitcast, u64, {Append(spv::Op::OpSConvert, i64, {index})});
        } else {
            index64 = Append(spv::Op::OpUConvert, u64, {index});
        }
    } else if (kir::IsSigned(index_kind)) {
        index64 = Append(spv::Op::OpBitcast, u64, {index});
    }

    kir::ScalarKind elem = m_.type(m_.type(inst.type).pointee).scalar;
    uint32_t size = kir::MemoryBytes(elem);
    Id offset = size == 1 ? index64 : Append(spv::Op::OpIMul, u64, {index64, b_.ConstU64(size)});
    Id address = Append(spv::Op::OpIAdd, u64, {base, offset});
    NVK_ASSIGN_OR_RETURN(Id ptr_type, TypeOf(inst.type));
    Bind(inst, Append(spv::Op::OpConvertUToPtr, ptr_type, {address}));
    return util::Status::Ok();
}

}  // namespace nvk::spirv
