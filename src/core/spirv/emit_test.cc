// Emitter tests on hand-made structured KIR: the kernel shapes (guarded
// element-wise code, loops with break/continue, parameter buffers, builtins).
// Every module goes through Validate, Optimize and Validate (EmitChecked).
#include "spirv/emit.h"

#include <gtest/gtest.h>

#include "kir/builder.h"
#include "spirv/check_test_util.h"
#include "spirv/emit_test_util.h"

namespace nvk::spirv {
namespace {

using kir::AddressSpace;
using kir::Builtin;
using kir::Op;
using kir::ScalarKind;
using testing::EmitChecked;

// y[i] = a * x[i] + y[i] for i < n: params, element pointers, an if guard.
kir::Module Saxpy() {
    kir::Module m;
    uint32_t p_n = m.AddParam("n", ScalarKind::kU32);
    uint32_t p_a = m.AddParam("a", ScalarKind::kF32);
    uint32_t p_x = m.AddParam("x", ScalarKind::kU64);
    uint32_t p_y = m.AddParam("y", ScalarKind::kU64);
    kir::Builder b(m);
    kir::BlockId entry = b.CreateBlock("entry");
    kir::BlockId body = b.CreateBlock("body");
    kir::BlockId done = b.CreateBlock("done");
    kir::TypeId f32 = b.Scalar(ScalarKind::kF32);
    b.SetBlock(entry);
    kir::ValueId i = b.BuiltinId(Builtin::kGlobalId, 0);
    kir::ValueId n = b.Param(p_n);
    kir::ValueId a = b.Param(p_a);
    kir::ValueId x = b.Param(p_x);
    kir::ValueId y = b.Param(p_y);
    b.CondBr(b.Compare(Op::kLt, i, n), body, done);
    m.function.FindBlock(entry)->merge = {kir::Merge::Kind::kSelection, done};
    b.SetBlock(body);
    kir::ValueId xi = b.Load(b.ElemPtr(f32, x, i));
    kir::ValueId py = b.ElemPtr(f32, y, i);
    kir::ValueId yi = b.Load(py);
    b.Store(py, b.Binary(Op::kAdd, b.Binary(Op::kMul, a, xi), yi));
    b.Br(done);
    b.SetBlock(done);
    b.Ret();
    return m;
}

TEST(Emit, SaxpyModuleLayout) {
    auto e = EmitChecked(Saxpy());
    EXPECT_EQ(CheckPatterns(e.text, R"(
        CHECK: OpCapability Shader
        CHECK: OpCapability Int64
        CHECK: OpCapability PhysicalStorageBufferAddresses
        CHECK: OpMemoryModel PhysicalStorageBuffer64 GLSL450
        CHECK: OpEntryPoint GLCompute %main "main" %params %global_id
        CHECK: OpExecutionMode %main LocalSize 1 1 1
        CHECK: OpDecorate %local_size_x SpecId 0
        CHECK: OpDecorate %local_size_y SpecId 1
        CHECK: OpDecorate %local_size_z SpecId 2
        CHECK: OpDecorate %workgroup_size BuiltIn WorkgroupSize
        CHECK: OpDecorate %Params Block
        CHECK: OpMemberDecorate %Params 0 Offset 0
        CHECK: OpMemberDecorate %Params 1 Offset 4
        CHECK: OpMemberDecorate %Params 2 Offset 8
        CHECK: OpMemberDecorate %Params 3 Offset 16
        CHECK: OpDecorate %global_id BuiltIn GlobalInvocationId
        CHECK: %local_size_x = OpSpecConstant %uint 1
        CHECK: %workgroup_size = OpSpecConstantComposite %v3uint %local_size_x %local_size_y %local_size_z
        CHECK: %params = OpVariable %_ptr_PushConstant_Params PushConstant
    )"), "");
}

TEST(Emit, SaxpyBody) {
    auto e = EmitChecked(Saxpy());
    EXPECT_EQ(CheckPatterns(e.text, R"(
        CHECK: %entry = OpLabel
        CHECK: %[[gid:\w+]] = OpLoad %v3uint %global_id
        CHECK: %[[i:\w+]] = OpCompositeExtract %uint %[[gid]] 0
        CHECK: %[[a_ptr:\w+]] = OpAccessChain %_ptr_PushConstant_float %params %uint_1
        CHECK: %[[a:\w+]] = OpLoad %float %[[a_ptr]]
        CHECK: %[[x_ptr:\w+]] = OpAccessChain %_ptr_PushConstant_ulong %params %uint_2
        CHECK: %[[x:\w+]] = OpLoad %ulong %[[x_ptr]]
        CHECK: %[[cond:\w+]] = OpULessThan %bool %[[i]]
        CHECK: OpSelectionMerge %done None
        CHECK-NEXT: OpBranchConditional %[[cond]] %body %done
        CHECK: %body = OpLabel
        CHECK: %[[i64:\w+]] = OpUConvert %ulong %[[i]]
        CHECK: %[[off:\w+]] = OpIMul %ulong %[[i64]] %ulong_4
        CHECK: %[[addr:\w+]] = OpIAdd %ulong %[[x]] %[[off]]
        CHECK: %[[px:\w+]] = OpConvertUToPtr %_ptr_PhysicalStorageBuffer_float %[[addr]]
        CHECK: %[[xi:\w+]] = OpLoad %float %[[px]] Aligned 4
        CHECK: %[[py:\w+]] = OpConvertUToPtr %_ptr_PhysicalStorageBuffer_float
        CHECK: %[[yi:\w+]] = OpLoad %float %[[py]] Aligned 4
        CHECK: %[[ax:\w+]] = OpFMul %float %[[a]] %[[xi]]
        CHECK: %[[r:\w+]] = OpFAdd %float %[[ax]] %[[yi]]
        CHECK: OpStore %[[py]] %[[r]] Aligned 4
        CHECK: OpBranch %done
        CHECK: %done = OpLabel
        CHECK-NEXT: OpReturn
    )"), "");
}

TEST(Emit, NoContractionWithoutFastmath) {
    auto e = EmitChecked(Saxpy());
    EXPECT_EQ(CheckPatterns(e.text, R"(
        CHECK: OpDecorate %[[m:\w+]] NoContraction
        CHECK: OpDecorate %[[s:\w+]] NoContraction
        CHECK: %[[m]] = OpFMul
        CHECK: %[[s]] = OpFAdd
    )"), "");
    // The optimiser keeps the multiply and the add apart.
    EXPECT_EQ(CheckPatterns(e.optimized_text, "CHECK: OpFMul\nCHECK: OpFAdd"), "");
    EXPECT_EQ(CheckPatterns(e.optimized_text, "CHECK: OpMemoryModel\nCHECK-NOT: Fma"), "");

    EmitOptions fast;
    fast.fastmath = true;
    auto f = EmitChecked(Saxpy(), fast);
    EXPECT_EQ(CheckPatterns(f.text, "CHECK: OpMemoryModel\nCHECK-NOT: NoContraction"), "");
}

TEST(Emit, SignedZeroInfNanPreserveAtTheWidthsInUse) {
    EmitOptions options;
    options.preserve_float_widths = {16, 32, 64};
    auto e = EmitChecked(Saxpy(), options);  // computes in f32 only
    EXPECT_EQ(CheckPatterns(e.text, R"(
        CHECK: OpCapability SignedZeroInfNanPreserve
        CHECK: OpEntryPoint GLCompute %[[main:\w+]] "main"
        CHECK: OpExecutionMode %[[main]] SignedZeroInfNanPreserve 32
        CHECK-NOT: SignedZeroInfNanPreserve 64
    )"), "");
    // Not requested for a device that cannot keep them, nor with fastmath.
    auto plain = EmitChecked(Saxpy());
    EXPECT_EQ(CheckPatterns(plain.text, "CHECK: OpMemoryModel\nCHECK-NOT: SignedZeroInfNanPreserve"), "");
    options.fastmath = true;
    auto fast = EmitChecked(Saxpy(), options);
    EXPECT_EQ(CheckPatterns(fast.text, "CHECK: OpMemoryModel\nCHECK-NOT: SignedZeroInfNanPreserve"), "");
}

TEST(Emit, ParamsInBuffer) {
    EmitOptions options;
    options.params_in_buffer = true;
    auto e = EmitChecked(Saxpy(), options);
    EXPECT_EQ(CheckPatterns(e.text, R"(
        CHECK: OpDecorate %Params Block
        CHECK: OpMemberDecorate %Params 3 Offset 16
        CHECK: OpDecorate %ParamAddress Block
        CHECK: OpMemberDecorate %ParamAddress 0 Offset 0
        CHECK: %params = OpVariable %_ptr_PushConstant_ParamAddress PushConstant
        CHECK: %entry = OpLabel
        CHECK: %[[ap:\w+]] = OpAccessChain %_ptr_PushConstant_ulong %params %uint_0
        CHECK: %[[addr:\w+]] = OpLoad %ulong %[[ap]]
        CHECK: %[[base:\w+]] = OpConvertUToPtr %_ptr_PhysicalStorageBuffer_Params %[[addr]]
        CHECK: %[[np:\w+]] = OpAccessChain %_ptr_PhysicalStorageBuffer_uint %[[base]] %uint_0
        CHECK: OpLoad %uint %[[np]] Aligned 4
        CHECK: %[[ap2:\w+]] = OpAccessChain %_ptr_PhysicalStorageBuffer_float %[[base]] %uint_1
        CHECK: OpLoad %float %[[ap2]] Aligned 4
        CHECK: %[[xp:\w+]] = OpAccessChain %_ptr_PhysicalStorageBuffer_ulong %[[base]] %uint_2
        CHECK: OpLoad %ulong %[[xp]] Aligned 8
        CHECK-NOT: OpConvertUToPtr %_ptr_PhysicalStorageBuffer_Params
        CHECK: OpSelectionMerge
    )"), "");
}

// for i in range(n): if i == 7: break; if i & 1: continue; y[i] = float(i)
kir::Module LoopWithBreakAndContinue() {
    kir::Module m;
    uint32_t p_n = m.AddParam("n", ScalarKind::kI32);
    uint32_t p_y = m.AddParam("y", ScalarKind::kU64);
    kir::Builder b(m);
    kir::TypeId i32 = b.Scalar(ScalarKind::kI32);
    kir::TypeId f32 = b.Scalar(ScalarKind::kF32);
    kir::BlockId entry = b.CreateBlock("entry");
    kir::BlockId header = b.CreateBlock("header");
    kir::BlockId body = b.CreateBlock("body");
    kir::BlockId brk = b.CreateBlock("brk");
    kir::BlockId after = b.CreateBlock("after");
    kir::BlockId work = b.CreateBlock("work");
    kir::BlockId latch = b.CreateBlock("latch");
    kir::BlockId exit = b.CreateBlock("exit");
    b.SetBlock(entry);
    kir::ValueId var_i = b.Var(i32);
    kir::ValueId n = b.Param(p_n);
    kir::ValueId y = b.Param(p_y);
    b.Store(var_i, b.ConstInt(i32, 0));
    b.Br(header);

    b.SetBlock(header);
    b.CondBr(b.Compare(Op::kLt, b.Load(var_i), n), body, exit);
    m.function.FindBlock(header)->merge = {kir::Merge::Kind::kLoop, exit, latch};

    b.SetBlock(body);
    b.CondBr(b.Compare(Op::kEq, b.Load(var_i), b.ConstInt(i32, 7)), brk, after);
    m.function.FindBlock(body)->merge = {kir::Merge::Kind::kSelection, after};

    b.SetBlock(brk);
    b.Br(exit);

    b.SetBlock(after);
    kir::ValueId iv = b.Load(var_i);
    kir::ValueId odd = b.Compare(Op::kNe, b.Binary(Op::kAnd, iv, b.ConstInt(i32, 1)),
                                 b.ConstInt(i32, 0));
    b.CondBr(odd, latch, work);

    b.SetBlock(work);
    kir::ValueId iw = b.Load(var_i);
    kir::ValueId fv = b.Convert(f32, iw);
    b.Store(b.ElemPtr(f32, y, iw), fv);
    b.Br(latch);

    b.SetBlock(latch);
    b.Store(var_i, b.Binary(Op::kAdd, b.Load(var_i), b.ConstInt(i32, 1)));
    b.Br(header);

    b.SetBlock(exit);
    b.Ret();
    return m;
}

TEST(Emit, LoopWithBreakAndContinue) {
    auto e = EmitChecked(LoopWithBreakAndContinue());
    EXPECT_EQ(CheckPatterns(e.text, R"(
        CHECK: %entry = OpLabel
        CHECK-NEXT: %[[i:\w+]] = OpVariable %_ptr_Function_int Function
        CHECK: OpStore %[[i]] %int_0
        CHECK: OpBranch %header
        CHECK: %header = OpLabel
        CHECK: OpLoopMerge %exit %latch None
        CHECK-NEXT: OpBranchConditional %{{.*}} %body %exit
        CHECK: %body = OpLabel
        CHECK: OpSelectionMerge %after None
        CHECK-NEXT: OpBranchConditional %[[c:\w+]] %brk %after
        CHECK: %brk = OpLabel
        CHECK-NEXT: OpBranch %exit
        CHECK: %after = OpLabel
        CHECK: OpBranchConditional %[[odd:\w+]] %latch %work
        CHECK: %work = OpLabel
        CHECK: OpConvertSToF %float
        CHECK: %[[idx:\w+]] = OpSConvert %long
        CHECK-NEXT: OpBitcast %ulong %[[idx]]
        CHECK: %latch = OpLabel
        CHECK: OpIAdd %uint
        CHECK: OpBranch %header
        CHECK: %exit = OpLabel
        CHECK-NEXT: OpReturn
    )"), "");
    // The optimiser rewrites the loop variable into a phi.
    EXPECT_EQ(CheckPatterns(e.optimized_text, "CHECK: %header = OpLabel\nCHECK-NEXT: OpPhi %int %int_0 %entry"), "")
        << e.optimized_text;
    EXPECT_EQ(CheckPatterns(e.optimized_text, "CHECK: OpLabel\nCHECK-NOT: OpVariable"), "");
}

TEST(Emit, Builtins) {
    kir::Module m;
    uint32_t p_out = m.AddParam("out", ScalarKind::kU64);
    kir::Builder b(m);
    kir::TypeId u32 = b.Scalar(ScalarKind::kU32);
    b.CreateBlock("entry");
    kir::ValueId out = b.Param(p_out);
    Builtin all[] = {Builtin::kGlobalId, Builtin::kLocalId, Builtin::kGroupId,
                     Builtin::kLocalSize, Builtin::kNumGroups};
    uint32_t slot = 0;
    for (Builtin builtin : all) {
        for (uint32_t axis = 0; axis < 3; ++axis) {
            b.Store(b.ElemPtr(u32, out, b.ConstInt(u32, slot++)), b.BuiltinId(builtin, axis));
        }
    }
    b.Ret();
    auto e = EmitChecked(std::move(m));
    EXPECT_EQ(CheckPatterns(e.text, R"(
        CHECK: OpEntryPoint GLCompute %main "main" %params %global_id %local_id %group_id %num_groups
        CHECK: OpDecorate %global_id BuiltIn GlobalInvocationId
        CHECK: OpDecorate %local_id BuiltIn LocalInvocationId
        CHECK: OpDecorate %group_id BuiltIn WorkgroupId
        CHECK: OpDecorate %num_groups BuiltIn NumWorkgroups
        CHECK: %entry = OpLabel
        CHECK: OpCompositeExtract %uint %workgroup_size 0
        CHECK: OpCompositeExtract %uint %workgroup_size 2
        CHECK: %[[ng:\w+]] = OpLoad %v3uint %num_groups
        CHECK-NEXT: OpCompositeExtract %uint %[[ng]] 0
    )"), "");
}

TEST(Emit, BoolParamAndBoolArray) {
    kir::Module m;
    uint32_t p_flag = m.AddParam("flag", ScalarKind::kBool);
    uint32_t p_out = m.AddParam("out", ScalarKind::kU64);
    kir::Builder b(m);
    kir::TypeId t_bool = b.Scalar(ScalarKind::kBool);
    kir::TypeId u32 = b.Scalar(ScalarKind::kU32);
    b.CreateBlock("entry");
    kir::ValueId flag = b.Param(p_flag);
    kir::ValueId out = b.Param(p_out);
    kir::ValueId p0 = b.ElemPtr(t_bool, out, b.ConstInt(u32, 0));
    kir::ValueId old = b.Load(p0);
    b.Store(p0, b.Binary(Op::kXor, old, flag));
    b.Ret();
    auto e = EmitChecked(std::move(m));
    EXPECT_EQ(CheckPatterns(e.text, R"(
        CHECK: %[[raw:\w+]] = OpLoad %uint
        CHECK-NEXT: %[[flag:\w+]] = OpINotEqual %bool %[[raw]] %uint_0
        CHECK: %[[p:\w+]] = OpConvertUToPtr %_ptr_PhysicalStorageBuffer_uint
        CHECK: %[[old_raw:\w+]] = OpLoad %uint %[[p]] Aligned 4
        CHECK: %[[old:\w+]] = OpINotEqual %bool %[[old_raw]] %uint_0
        CHECK: %[[x:\w+]] = OpLogicalNotEqual %bool %[[old]] %[[flag]]
        CHECK: %[[w:\w+]] = OpSelect %uint %[[x]] %uint_1 %uint_0
        CHECK: OpStore %[[p]] %[[w]] Aligned 4
    )"), "");
}

TEST(Emit, RejectsCfgForm) {
    kir::Module m = Saxpy();
    auto r = Emit(m, {});
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), util::Code::kInternal);
    EXPECT_NE(r.status().message().find("structurize"), std::string::npos);
}

TEST(Emit, MissingMergeIsCaughtByTheValidator) {
    kir::Module m = Saxpy();
    m.function.structured = true;
    m.function.entry().merge = {};
    auto r = Emit(m, {});
    ASSERT_TRUE(r.ok()) << r.status().message();
    util::Status s = Validate(*r);
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.code(), util::Code::kCodegen);
    EXPECT_NE(s.message().find("--- disassembly ---"), std::string::npos);
    EXPECT_NE(s.message().find("OpBranchConditional"), std::string::npos);
}

}  // namespace
}  // namespace nvk::spirv
