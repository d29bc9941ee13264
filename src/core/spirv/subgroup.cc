// Subgroup operations: SPIR-V 1.3's OpGroupNonUniform* at Subgroup scope.
//
// Each kir::SubgroupOp maps onto one instruction (ballot words: the ballot and
// an OpCompositeExtract) and the capability class that DeviceInfo reports
// (subgroup_basic, _vote, _arithmetic, _ballot, _shuffle, _shuffle_relative),
// so Device.check_support names what a device lacks. The four ids are the
// Input builtins SubgroupSize, SubgroupLocalInvocationId, SubgroupId and
// NumSubgroups (u32 scalars).
#include "spirv/emitter.h"

namespace nvk::spirv {

util::Status Emitter::EmitSubgroup(const kir::Inst& inst) {
    using kir::SubgroupOp;
    using spv::Capability;
    using spv::Op;
    auto s = static_cast<SubgroupOp>(inst.imm);
    b_.AddCapability(Capability::GroupNonUniform);
    Id u32 = b_.TypeInt(32, false);
    Id scope = b_.ConstU32(static_cast<uint32_t>(spv::Scope::Subgroup));
    if (s <= SubgroupOp::kCount) {
        static const spv::BuiltIn kBuiltins[4] = {
            spv::BuiltIn::SubgroupSize, spv::BuiltIn::SubgroupLocalInvocationId,
            spv::BuiltIn::SubgroupId, spv::BuiltIn::NumSubgroups};
        static const char* kNames[4] = {"subgroup_size", "subgroup_lane", "subgroup_id",
                                        "num_subgroups"};
        int k = static_cast<int>(s);
        Id& var = subgroup_vars_[k];
        if (var == 0) {
            var = b_.GlobalVariable(b_.TypePointer(spv::StorageClass::Input, u32),
                                    spv::StorageClass::Input);
            b_.Decorate(var, spv::Decoration::BuiltIn, {static_cast<uint32_t>(kBuiltins[k])});
            b_.Name(var, kNames[k]);
        }
        Bind(inst, Append(Op::OpLoad, u32, {var}));
        return util::Status::Ok();
    }
    NVK_ASSIGN_OR_RETURN(Id type, TypeOf(inst.type));
    if (s == SubgroupOp::kElect) {
        Bind(inst, Append(Op::OpGroupNonUniformElect, type, {scope}));
        return util::Status::Ok();
    }
    NVK_ASSIGN_OR_RETURN(Id v, Value(inst.operands.at(0)));
    Id lane = 0;
    if (inst.operands.size() > 1) {
        NVK_ASSIGN_OR_RETURN(lane, Value(inst.operands[1]));
    }
    kir::ScalarKind k = KindOf(inst.operands[0]);
    bool is_float = kir::IsFloat(k), is_signed = kir::IsSigned(k);
    Op op;
    switch (s) {
        case SubgroupOp::kSum: case SubgroupOp::kProd: case SubgroupOp::kMin:
        case SubgroupOp::kMax: {
            b_.AddCapability(Capability::GroupNonUniformArithmetic);
            if (s == SubgroupOp::kSum) op = is_float ? Op::OpGroupNonUniformFAdd
                                                     : Op::OpGroupNonUniformIAdd;
            else if (s == SubgroupOp::kProd) op = is_float ? Op::OpGroupNonUniformFMul
                                                           : Op::OpGroupNonUniformIMul;
            else if (s == SubgroupOp::kMin) op = is_float ? Op::OpGroupNonUniformFMin
                                                 : is_signed ? Op::OpGroupNonUniformSMin
                                                             : Op::OpGroupNonUniformUMin;
            else op = is_float ? Op::OpGroupNonUniformFMax
                      : is_signed ? Op::OpGroupNonUniformSMax : Op::OpGroupNonUniformUMax;
            static const spv::GroupOperation kGroupOps[3] = {
                spv::GroupOperation::Reduce, spv::GroupOperation::InclusiveScan,
                spv::GroupOperation::ExclusiveScan};
            Bind(inst, Append(op, type, {scope, static_cast<uint32_t>(kGroupOps[inst.aux]), v}));
            return util::Status::Ok();
        }
        case SubgroupOp::kAny: case SubgroupOp::kAll:
            b_.AddCapability(Capability::GroupNonUniformVote);
            op = s == SubgroupOp::kAny ? Op::OpGroupNonUniformAny : Op::OpGroupNonUniformAll;
            Bind(inst, Append(op, type, {scope, v}));
            return util::Status::Ok();
        case SubgroupOp::kBallot: case SubgroupOp::kBallotCount: {
            b_.AddCapability(Capability::GroupNonUniformBallot);
            Id ballot = Append(Op::OpGroupNonUniformBallot, b_.TypeVector(u32, 4), {scope, v});
            if (s == SubgroupOp::kBallot) {
                Bind(inst, Append(Op::OpCompositeExtract, u32, {ballot, inst.aux & 3}));
            } else {
                Bind(inst, Append(Op::OpGroupNonUniformBallotBitCount, u32,
                                  {scope, static_cast<uint32_t>(spv::GroupOperation::Reduce),
                                   ballot}));
            }
            return util::Status::Ok();
        }
        case SubgroupOp::kPartition: {
            b_.AddCapability(Capability::GroupNonUniformPartitionedNV);
            b_.AddExtension("SPV_NV_shader_subgroup_partitioned");
            Id lanes = Append(Op::OpGroupNonUniformPartitionNV, b_.TypeVector(u32, 4), {v});
            Bind(inst, Append(Op::OpCompositeExtract, u32, {lanes, inst.aux & 3}));
            return util::Status::Ok();
        }
        case SubgroupOp::kBroadcast:
            b_.AddCapability(Capability::GroupNonUniformBallot);
            Bind(inst, Append(Op::OpGroupNonUniformBroadcast, type, {scope, v, lane}));
            return util::Status::Ok();
        case SubgroupOp::kBroadcastFirst:
            b_.AddCapability(Capability::GroupNonUniformBallot);
            Bind(inst, Append(Op::OpGroupNonUniformBroadcastFirst, type, {scope, v}));
            return util::Status::Ok();
        case SubgroupOp::kShuffle: case SubgroupOp::kShuffleXor:
            b_.AddCapability(Capability::GroupNonUniformShuffle);
            op = s == SubgroupOp::kShuffle ? Op::OpGroupNonUniformShuffle
                                           : Op::OpGroupNonUniformShuffleXor;
            Bind(inst, Append(op, type, {scope, v, lane}));
            return util::Status::Ok();
        case SubgroupOp::kShuffleUp: case SubgroupOp::kShuffleDown:
            b_.AddCapability(Capability::GroupNonUniformShuffleRelative);
            op = s == SubgroupOp::kShuffleUp ? Op::OpGroupNonUniformShuffleUp
                                             : Op::OpGroupNonUniformShuffleDown;
            Bind(inst, Append(op, type, {scope, v, lane}));
            return util::Status::Ok();
        default: break;
    }
    return Error(util::Code::kInternal, inst, "unknown subgroup op");
}

}  // namespace nvk::spirv
