// Atomics and barriers.
//
// Atomics are relaxed (memory semantics None), as CUDA's atomicAdd & co.: they
// order nothing but themselves; barriers and fences order the rest. Their
// scope is the memory they act on: Device for global memory (other
// workgroups see them), Workgroup for shared memory. 64-bit integer atomics
// need Int64Atomics (DeviceInfo.int64_atomics); a float addition needs
// SPV_EXT_shader_atomic_float_add (DeviceInfo.float32_atomic_add for f32).
// The front end asks for a float add only where the device has it and builds
// every other float atomic from kCas on the bits.
//
// Barriers. syncthreads is OpControlBarrier with Workgroup execution and
// memory scope and AcquireRelease semantics over workgroup and device
// (Uniform = StorageBuffer and PhysicalStorageBuffer) memory, so writes to
// shared and to global memory before it are visible to the workgroup after
// it, as CUDA's __syncthreads guarantees. The fences are OpMemoryBarrier with
// the same semantics at Workgroup and Device scope. The subgroup barrier
// (syncwarp) is OpControlBarrier at Subgroup scope, which Vulkan allows in
// non-uniform control flow (the active invocations wait for each other, as
// GLSL's subgroupBarrier).
//
// A kernel that writes no global memory (stores or atomics) in any block from
// which a barrier can be reached has nothing in global memory for its
// barriers to make visible: there they order workgroup memory only. NVIDIA
// fences global memory at every barrier with Uniform semantics, which cost
// the 16x16 tiled matmul 10% (6153 against 6829 GFLOP/s on the H200).
#include "spirv/emitter.h"

#include <map>

namespace nvk::spirv {

namespace {

constexpr uint32_t kSemantics =
    static_cast<uint32_t>(spv::MemorySemanticsMask::AcquireRelease) |
    static_cast<uint32_t>(spv::MemorySemanticsMask::WorkgroupMemory) |
    static_cast<uint32_t>(spv::MemorySemanticsMask::UniformMemory);

bool IsWorkgroupBarrier(const kir::Inst& inst) {
    return inst.op == kir::Op::kBarrier &&
           static_cast<kir::BarrierKind>(inst.imm) == kir::BarrierKind::kWorkgroup;
}

bool IsGlobalWrite(const kir::Module& m, const kir::Inst& inst) {
    if (inst.op != kir::Op::kStore && inst.op != kir::Op::kAtomic) return false;
    kir::ValueId ptr = inst.operands.at(0);
    return ptr >= m.function.values.size() ||
           m.type(m.function.values[ptr].type).space == kir::AddressSpace::kGlobal;
}

// Whether some global store or atomic can run before a workgroup barrier: one
// in a block from which a path of one edge or more leads to a barrier, or one
// before a barrier in its own block.
bool GlobalWritesReachBarriers(const kir::Module& m) {
    const kir::Function& f = m.function;
    std::map<kir::BlockId, std::vector<kir::BlockId>> preds;
    std::vector<kir::BlockId> work;
    for (const kir::Block& b : f.blocks) {
        for (kir::BlockId s : b.Successors()) preds[s].push_back(b.id);
        for (const kir::Inst& inst : b.insts)
            if (IsWorkgroupBarrier(inst)) {
                work.push_back(b.id);
                break;
            }
    }
    std::map<kir::BlockId, bool> reaches;  // a barrier lies one edge or more ahead
    for (size_t k = 0; k < work.size(); ++k)
        for (kir::BlockId p : preds[work[k]])
            if (!reaches[p]) {
                reaches[p] = true;
                work.push_back(p);
            }
    for (const kir::Block& b : f.blocks) {
        bool before = reaches[b.id];
        size_t last_barrier = 0;
        for (size_t k = 0; k < b.insts.size(); ++k)
            if (IsWorkgroupBarrier(b.insts[k])) last_barrier = k + 1;
        for (size_t k = 0; k < b.insts.size(); ++k)
            if ((before || k < last_barrier) && IsGlobalWrite(m, b.insts[k])) return true;
    }
    return false;
}

}  // namespace

uint32_t Emitter::BarrierSemantics() {
    if (barrier_semantics_ == 0) {
        barrier_semantics_ = GlobalWritesReachBarriers(m_)
                                 ? kSemantics
                                 : kSemantics & ~static_cast<uint32_t>(
                                                    spv::MemorySemanticsMask::UniformMemory);
        // Under the Vulkan memory model (modules with tiles) writes become visible to
        // the other invocations only through availability and visibility operations.
        if (UsesTiles())
            barrier_semantics_ |= static_cast<uint32_t>(spv::MemorySemanticsMask::MakeAvailable) |
                                  static_cast<uint32_t>(spv::MemorySemanticsMask::MakeVisible);
    }
    return barrier_semantics_;
}

util::Status Emitter::EmitAtomic(const kir::Inst& inst) {
    using kir::AtomicOp;
    NVK_ASSIGN_OR_RETURN(Id ptr, Value(inst.operands.at(0)));
    const kir::Type& ptr_type = KirType(inst.operands[0]);
    kir::ScalarKind k = m_.type(ptr_type.pointee).scalar;
    bool global = ptr_type.space == kir::AddressSpace::kGlobal;
    Id scope = b_.ConstU32(static_cast<uint32_t>(global ? spv::Scope::Device : spv::Scope::Workgroup));
    Id relaxed = b_.ConstU32(0);
    Id type = ScalarType(k);
    auto op = static_cast<AtomicOp>(inst.imm);
    if (kir::IsFloat(k)) {
        if (op != AtomicOp::kAdd) return Error(util::Code::kInternal, inst, "float atomics add only");
        b_.AddExtension("SPV_EXT_shader_atomic_float_add");
        b_.AddCapability(kir::BitWidth(k) == 64 ? spv::Capability::AtomicFloat64AddEXT
                                                : spv::Capability::AtomicFloat32AddEXT);
        NVK_ASSIGN_OR_RETURN(Id value, Value(inst.operands.at(1)));
        Bind(inst, Append(spv::Op::OpAtomicFAddEXT, type, {ptr, scope, relaxed, value}));
        return util::Status::Ok();
    }
    if (kir::BitWidth(k) == 64) b_.AddCapability(spv::Capability::Int64Atomics);
    if (op == AtomicOp::kCas) {
        NVK_ASSIGN_OR_RETURN(Id expected, Value(inst.operands.at(1)));
        NVK_ASSIGN_OR_RETURN(Id value, Value(inst.operands.at(2)));
        Bind(inst, Append(spv::Op::OpAtomicCompareExchange, type,
                          {ptr, scope, relaxed, relaxed, value, expected}));
        return util::Status::Ok();
    }
    bool is_signed = kir::IsSigned(k);
    spv::Op spv_op;
    switch (op) {
        case AtomicOp::kAdd: spv_op = spv::Op::OpAtomicIAdd; break;
        case AtomicOp::kSub: spv_op = spv::Op::OpAtomicISub; break;
        case AtomicOp::kMin: spv_op = is_signed ? spv::Op::OpAtomicSMin : spv::Op::OpAtomicUMin; break;
        case AtomicOp::kMax: spv_op = is_signed ? spv::Op::OpAtomicSMax : spv::Op::OpAtomicUMax; break;
        case AtomicOp::kAnd: spv_op = spv::Op::OpAtomicAnd; break;
        case AtomicOp::kOr: spv_op = spv::Op::OpAtomicOr; break;
        case AtomicOp::kXor: spv_op = spv::Op::OpAtomicXor; break;
        case AtomicOp::kExch: spv_op = spv::Op::OpAtomicExchange; break;
        default: return Error(util::Code::kInternal, inst, "unknown atomic op");
    }
    NVK_ASSIGN_OR_RETURN(Id value, Value(inst.operands.at(1)));
    Bind(inst, Append(spv_op, type, {ptr, scope, relaxed, value}));
    return util::Status::Ok();
}

util::Status Emitter::EmitBarrier(const kir::Inst& inst) {
    uint32_t fence = kSemantics;
    if (UsesTiles())  // the Vulkan memory model: see BarrierSemantics
        fence |= static_cast<uint32_t>(spv::MemorySemanticsMask::MakeAvailable) |
                 static_cast<uint32_t>(spv::MemorySemanticsMask::MakeVisible);
    Id semantics = b_.ConstU32(fence);
    Id workgroup = b_.ConstU32(static_cast<uint32_t>(spv::Scope::Workgroup));
    switch (static_cast<kir::BarrierKind>(inst.imm)) {
        case kir::BarrierKind::kWorkgroup:
            code().Add(spv::Op::OpControlBarrier,
                       {workgroup, workgroup, b_.ConstU32(BarrierSemantics())});
            return util::Status::Ok();
        case kir::BarrierKind::kFenceWorkgroup:
            code().Add(spv::Op::OpMemoryBarrier, {workgroup, semantics});
            return util::Status::Ok();
        case kir::BarrierKind::kFenceDevice:
            code().Add(spv::Op::OpMemoryBarrier,
                       {b_.ConstU32(static_cast<uint32_t>(spv::Scope::Device)), semantics});
            return util::Status::Ok();
        case kir::BarrierKind::kSubgroup: {
            // Vulkan defines it in non-uniform control flow: the active invocations wait.
            Id subgroup = b_.ConstU32(static_cast<uint32_t>(spv::Scope::Subgroup));
            code().Add(spv::Op::OpControlBarrier, {subgroup, subgroup, semantics});
            return util::Status::Ok();
        }
    }
    return Error(util::Code::kInternal, inst, "unknown barrier");
}

}  // namespace nvk::spirv
