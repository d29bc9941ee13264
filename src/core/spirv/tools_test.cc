// SPIRV-Tools glue: validation and optimisation failures are errors with
// useful messages, the optimiser keeps buffer-address code valid, and the
// capability names a device check relies on are read from the module.
#include "spirv/tools.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "kir/builder.h"
#include "spirv/check_test_util.h"
#include "spirv/emit_test_util.h"

namespace nvk::spirv {
namespace {

using kir::Op;
using kir::ScalarKind;

// out[i] = in[i] * 2 (ScalarKind `k`) for one element, no control flow.
kir::Module Scale(ScalarKind k) {
    kir::Module m;
    uint32_t p_in = m.AddParam("in", ScalarKind::kU64);
    uint32_t p_out = m.AddParam("out", ScalarKind::kU64);
    kir::Builder b(m);
    b.CreateBlock("entry");
    kir::TypeId t = b.Scalar(k);
    kir::ValueId i = b.BuiltinId(kir::Builtin::kGlobalId, 0);
    kir::ValueId v = b.Load(b.ElemPtr(t, b.Param(p_in), i));
    kir::ValueId two = kir::IsFloat(k) ? b.ConstFloat(t, 2.0) : b.ConstInt(t, 2);
    b.Store(b.ElemPtr(t, b.Param(p_out), i), b.Binary(Op::kMul, v, two));
    b.Ret();
    return m;
}

TEST(Tools, ValidateRejectsGarbage) {
    util::Status s = Validate({0x07230203u, 0x00010500u, 0, 10, 0, 0xdeadbeef});
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.code(), util::Code::kCodegen);
    EXPECT_NE(s.message().find("SPIR-V validation failed"), std::string::npos) << s.message();
}

TEST(Tools, OptimizeRejectsGarbage) {
    auto r = Optimize({0x07230203u, 0x00010500u, 0, 10, 0, 0xdeadbeef});
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), util::Code::kCodegen);
}

TEST(Tools, DisassembleUsesFriendlyNamesAndSaysWhenItCannot) {
    auto e = testing::EmitChecked(Scale(ScalarKind::kF32));
    EXPECT_NE(e.text.find("%main = OpFunction"), std::string::npos) << e.text;
    EXPECT_NE(Disassemble({1, 2, 3}).find("cannot be disassembled"), std::string::npos);
}

TEST(Tools, OptimizerKeepsAlignedBufferAccesses) {
    auto e = testing::EmitChecked(Scale(ScalarKind::kF64));
    EXPECT_EQ(CheckPatterns(e.optimized_text, R"(
        CHECK: OpMemoryModel PhysicalStorageBuffer64 GLSL450
        CHECK: %[[p:\w+]] = OpConvertUToPtr %_ptr_PhysicalStorageBuffer_double
        CHECK: %[[v:\w+]] = OpLoad %double %[[p]] Aligned 8
        CHECK: %[[r:\w+]] = OpFMul %double %[[v]] %double_2
        CHECK: %[[q:\w+]] = OpConvertUToPtr %_ptr_PhysicalStorageBuffer_double
        CHECK: OpStore %[[q]] %[[r]] Aligned 8
    )"), "");
}

TEST(Tools, OptimizerFoldsConstants) {
    kir::Module m;
    uint32_t p_out = m.AddParam("out", ScalarKind::kU64);
    kir::Builder b(m);
    b.CreateBlock("entry");
    kir::TypeId i32 = b.Scalar(ScalarKind::kI32);
    kir::ValueId v = b.Binary(Op::kMul, b.ConstInt(i32, 6), b.ConstInt(i32, 7));
    b.Store(b.ElemPtr(i32, b.Param(p_out), b.ConstInt(i32, 0)), v);
    b.Ret();
    auto e = testing::EmitChecked(std::move(m));
    EXPECT_EQ(CheckPatterns(e.text, "CHECK: OpIMul %uint"), "");
    EXPECT_EQ(CheckPatterns(e.optimized_text, "CHECK: OpStore %{{\\w+}} %int_42 Aligned 4"), "");
}

TEST(Tools, CapabilityNames) {
    auto f32 = testing::EmitChecked(Scale(ScalarKind::kF32));
    EXPECT_EQ(CapabilityNames(f32.optimized), std::vector<std::string>{"int64"});
    auto f64 = testing::EmitChecked(Scale(ScalarKind::kF64));
    auto names = CapabilityNames(f64.words);
    EXPECT_NE(std::find(names.begin(), names.end(), "float64"), names.end());
    auto i8 = testing::EmitChecked(Scale(ScalarKind::kI8));
    names = CapabilityNames(i8.words);
    EXPECT_NE(std::find(names.begin(), names.end(), "int8"), names.end());
    EXPECT_NE(std::find(names.begin(), names.end(), "storage8"), names.end());
    auto f16 = testing::EmitChecked(Scale(ScalarKind::kF16));
    names = CapabilityNames(f16.words);
    EXPECT_NE(std::find(names.begin(), names.end(), "float16"), names.end());
    EXPECT_NE(std::find(names.begin(), names.end(), "storage16"), names.end());
}

TEST(Tools, SmallPushConstantsDeclareTheirCapability) {
    kir::Module m;
    uint32_t p_k = m.AddParam("k", ScalarKind::kI16);
    uint32_t p_out = m.AddParam("out", ScalarKind::kU64);
    kir::Builder b(m);
    b.CreateBlock("entry");
    kir::TypeId i16 = b.Scalar(ScalarKind::kI16);
    kir::ValueId k = b.Param(p_k);
    b.Store(b.ElemPtr(i16, b.Param(p_out), b.ConstInt(i16, 0)), k);
    b.Ret();
    auto e = testing::EmitChecked(std::move(m));
    auto names = CapabilityNames(e.words);
    EXPECT_NE(std::find(names.begin(), names.end(), "push_constant16"), names.end());
}

}  // namespace
}  // namespace nvk::spirv

namespace nvk::spirv {
namespace {

TEST(Tools, SmallParamsInABufferUseStorageCapabilities) {
    kir::Module m;
    uint32_t p_k = m.AddParam("k", ScalarKind::kU8);
    uint32_t p_flag = m.AddParam("flag", ScalarKind::kBool);
    uint32_t p_out = m.AddParam("out", ScalarKind::kU64);
    kir::Builder b(m);
    b.CreateBlock("entry");
    kir::TypeId u8 = b.Scalar(ScalarKind::kU8);
    kir::ValueId k = b.Param(p_k);
    kir::ValueId v = b.Select(b.Param(p_flag), k, b.ConstInt(u8, 0));
    b.Store(b.ElemPtr(u8, b.Param(p_out), b.ConstInt(u8, 0)), v);
    b.Ret();
    EmitOptions options;
    options.params_in_buffer = true;
    auto e = testing::EmitChecked(std::move(m), options);
    EXPECT_EQ(CheckPatterns(e.text, R"(
        CHECK: OpMemberDecorate %Params 0 Offset 0
        CHECK: OpMemberDecorate %Params 1 Offset 4
        CHECK: %[[base:\w+]] = OpConvertUToPtr %_ptr_PhysicalStorageBuffer_Params
        CHECK: OpAccessChain %_ptr_PhysicalStorageBuffer_uchar %[[base]] %uint_0
        CHECK: OpLoad %uchar %{{\w+}} Aligned 1
        CHECK: %[[f:\w+]] = OpLoad %uint %{{\w+}} Aligned 4
        CHECK-NEXT: OpINotEqual %bool %[[f]] %uint_0
    )"), "");
    auto names = CapabilityNames(e.words);
    EXPECT_NE(std::find(names.begin(), names.end(), "storage8"), names.end());
    EXPECT_EQ(std::find(names.begin(), names.end(), "push_constant8"), names.end());
}

}  // namespace
}  // namespace nvk::spirv
