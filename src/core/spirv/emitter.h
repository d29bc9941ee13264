// Emitter: the state shared by the files of the SPIR-V emitter (private to spirv/).
//
// emit.cc drives it: module setup, the entry function, and a walk over the
// blocks in `function.blocks` order (the structured form guarantees that this
// order puts every block after its dominators, as SPIR-V requires). Each
// instruction is dispatched to the file of its concern:
//
//   memory.cc        parameters, builtins, variables, arrays, loads, stores, element pointers
//   sync.cc          atomics and barriers
//   subgroup.cc      subgroup builtins and OpGroupNonUniform* operations
//   arithmetic.cc    integer/float/bool arithmetic, comparisons, conversions, select
//   extended.cc      kMath through GLSL.std.450 and the core OpIsNan/OpIsInf
//   wrapping.cc      signed arithmetic on unsigned types, float32 division and
//                    float -> 64-bit integer forms that NVIDIA's compiler keeps exact
//   matrix.cc        cooperative matrices (tiles: SPV_KHR_cooperative_matrix)
//   control_flow.cc  merge instructions and terminators
//
// Mapping of KIR types: bool -> OpTypeBool, iN -> OpTypeInt N 1, uN -> OpTypeInt
// N 0, fN -> OpTypeFloat N; pointer<function, T> -> Function, pointer<global, T>
// -> PhysicalStorageBuffer, pointer<workgroup, T> -> Workgroup. A bool has no
// size in memory, so global memory (and the parameter block) store it as a u32.
#pragma once

#include <vector>

#include "kir/kir.h"
#include "spirv/emit.h"
#include "spirv/module_builder.h"
#include "util/status.h"

namespace nvk::spirv {

// The memory operand of loads and stores that name their alignment.
inline constexpr uint32_t kAligned = static_cast<uint32_t>(spv::MemoryAccessMask::Aligned);

class Emitter {
  public:
    Emitter(const kir::Module& module, const EmitOptions& options)
        : m_(module), options_(options) {}

    util::Result<std::vector<uint32_t>> Run();

  private:
    // emit.cc
    void SetUpModule();
    util::Status EmitBlock(const kir::Block& block, bool is_entry);
    util::Status EmitInst(const kir::Inst& inst);

    // memory.cc
    util::Status EmitParam(const kir::Inst& inst);
    util::Status EmitBuiltin(const kir::Inst& inst);
    util::Status EmitVar(const kir::Inst& inst);
    util::Status EmitLoad(const kir::Inst& inst);
    util::Status EmitStore(const kir::Inst& inst);
    util::Status EmitElemPtr(const kir::Inst& inst);
    util::Status EmitArrayVar(const kir::Inst& inst);
    util::Status EmitIndexPtr(const kir::Inst& inst);
    // The capability an 8- or 16-bit access to device memory needs (none for the others).
    void RequestStorageWidth(kir::ScalarKind k);

    // sync.cc
    util::Status EmitAtomic(const kir::Inst& inst);
    util::Status EmitBarrier(const kir::Inst& inst);
    uint32_t BarrierSemantics();  // of syncthreads: see sync.cc

    // subgroup.cc
    util::Status EmitSubgroup(const kir::Inst& inst);
    void DeclareParamBlock();

    // arithmetic.cc
    util::Status EmitBinary(const kir::Inst& inst);
    util::Status EmitUnary(const kir::Inst& inst);
    util::Status EmitCompare(const kir::Inst& inst);
    util::Status EmitConvert(const kir::Inst& inst);
    util::Status EmitBitcast(const kir::Inst& inst);
    util::Status EmitSelect(const kir::Inst& inst);
    // A value of kind `from` converted to kind `to` (all pairs).
    util::Result<Id> Convert(Id value, kir::ScalarKind from, kir::ScalarKind to);
    static uint64_t OneBits(kir::ScalarKind k);  // the bits of 1 (1.0 for floats)

    // extended.cc
    util::Status EmitMath(const kir::Inst& inst);

    // wrapping.cc: integer arithmetic that wraps on every driver; float32
    // division and float -> 64-bit integer conversion in driver-proof forms.
    void ComputeIndexOnly();                   // fills index_only_
    bool IndexOnly(const kir::Inst& inst) const;  // result used only to index memory
    Id UnsignedType(kir::ScalarKind k);
    Id WrappingOp(spv::Op op, kir::ScalarKind k, Id a, Id b);  // on the unsigned type
    Id WrappingNegate(kir::ScalarKind k, Id a);
    Id WrappingAbs(kir::ScalarKind k, Id a);  // of a signed integer; |MIN| is MIN
    Id FloatDivide(kir::ScalarKind k, Id a, Id b, bool driver);
    util::Result<Id> FloatToInt64(Id value, kir::ScalarKind from, kir::ScalarKind to);

    // matrix.cc: cooperative matrices (kCoopMatrix values and the kCoop* ops)
    util::Status EmitCoop(const kir::Inst& inst);
    util::Status ConvertTile(const kir::Inst& inst);  // kConvert between tile types
    bool UsesTiles() const;  // the module has tile types: the Vulkan memory model

    // control_flow.cc
    util::Status EmitTerminator(const kir::Block& block);

    // Helpers (emit.cc).
    Id ScalarType(kir::ScalarKind k);
    // The type a scalar has in memory: bool becomes u32, the rest are unchanged.
    Id MemoryType(kir::ScalarKind k);
    util::Result<Id> TypeOf(kir::TypeId type);
    kir::ScalarKind KindOf(kir::ValueId v) const;
    const kir::Type& KirType(kir::ValueId v) const { return m_.type(m_.function.values[v].type); }
    util::Result<Id> Value(kir::ValueId v) const;  // the SPIR-V id of a KIR value
    void Bind(const kir::Inst& inst, Id id) { values_[inst.result] = id; }
    // Append `op result_type result operands...` to the function; returns the new id.
    Id SignedFromMagnitudes(spv::Op op, kir::ScalarKind k, Id a, Id b);
    void RequestFloatPreservation();
    Id Append(spv::Op op, Id result_type, std::initializer_list<Id> operands);
    Id Append(spv::Op op, Id result_type, const std::vector<Id>& operands);
    // An error naming the instruction (its op and KIR location).
    util::Status Error(util::Code code, const kir::Inst& inst, const std::string& what) const;

    const kir::Module& m_;
    EmitOptions options_;
    ModuleBuilder b_;
    InstList& code() { return b_.functions(); }

    std::vector<Id> values_;  // KIR value -> SPIR-V id (0: not emitted yet)
    std::vector<Id> labels_;  // KIR block id -> label id
    std::vector<bool> index_only_;  // KIR value -> used only as a memory index (wrapping.cc)
    uint32_t barrier_semantics_ = 0;  // computed at the first barrier

    // Lazily created module-scope objects.
    Id push_var_ = 0;           // the push-constant block variable
    Id push_struct_ = 0;        // its struct type
    Id param_struct_ = 0;       // params_in_buffer: the struct at the buffer address
    Id param_base_ = 0;         // params_in_buffer: the pointer to it (entry block)
    Id workgroup_size_ = 0;     // the WorkgroupSize spec-constant composite
    Id builtin_vars_[5] = {};   // kir::Builtin -> Input variable (kLocalSize unused)
    Id dynamic_shared_length_ = 0;  // the spec constant sizing dynamic shared memory
    Id subgroup_vars_[4] = {};      // SubgroupSize, SubgroupLocalInvocationId, SubgroupId,
                                    // NumSubgroups Input variables
};

}  // namespace nvk::spirv
