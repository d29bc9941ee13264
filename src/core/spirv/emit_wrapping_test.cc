// wrapping.cc: signed arithmetic on unsigned types except in index arithmetic,
// the float32 division guard, float -> 64-bit integers in two halves.
#include <gtest/gtest.h>

#include "kir/builder.h"
#include "spirv/check_test_util.h"
#include "spirv/emit_test_util.h"

namespace nvk::spirv {
namespace {

using kir::Op;
using kir::ScalarKind;
using testing::EmitChecked;

// in: i32[], out: i32[]. out[x * y + 1] = x * y + z: the first product and sum
// only index memory (signed), the second pair is a value (unsigned).
TEST(Wrapping, IndexArithmeticStaysSigned) {
    kir::Module m;
    kir::Builder b{m};
    uint32_t p_in = m.AddParam("in", ScalarKind::kU64);
    uint32_t p_out = m.AddParam("out", ScalarKind::kU64);
    b.CreateBlock("entry");
    kir::ValueId in = b.Param(p_in), out = b.Param(p_out);
    kir::TypeId i32 = b.Scalar(ScalarKind::kI32);
    kir::ValueId x = b.Load(b.ElemPtr(i32, in, b.ConstInt(i32, 0)));
    kir::ValueId y = b.Load(b.ElemPtr(i32, in, b.ConstInt(i32, 1)));
    kir::ValueId z = b.Load(b.ElemPtr(i32, in, b.ConstInt(i32, 2)));
    kir::ValueId index = b.Binary(Op::kAdd, b.Binary(Op::kMul, x, y), b.ConstInt(i32, 1));
    kir::ValueId value = b.Binary(Op::kAdd, b.Binary(Op::kMul, x, y), z);
    b.Store(b.ElemPtr(i32, out, index), value);
    b.Ret();
    auto e = EmitChecked(std::move(m));
    EXPECT_EQ(CheckPatterns(e.text, R"(
        CHECK: %[[p:\w+]] = OpIMul %int
        CHECK-NEXT: OpIAdd %int %[[p]] %int_1
        CHECK: OpIMul %uint
        CHECK: OpIAdd %uint
    )"), "") << e.text;
}

// A value used as an index and also stored is a value: unsigned.
TEST(Wrapping, MixedUseIsAValue) {
    kir::Module m;
    kir::Builder b{m};
    uint32_t p_out = m.AddParam("out", ScalarKind::kU64);
    b.CreateBlock("entry");
    kir::ValueId out = b.Param(p_out);
    kir::TypeId i32 = b.Scalar(ScalarKind::kI32);
    kir::ValueId x = b.Load(b.ElemPtr(i32, out, b.ConstInt(i32, 0)));
    kir::ValueId sum = b.Binary(Op::kAdd, x, b.ConstInt(i32, 3));
    b.Store(b.ElemPtr(i32, out, sum), sum);
    b.Ret();
    auto e = EmitChecked(std::move(m));
    EXPECT_EQ(CheckPatterns(e.text, "CHECK: OpIAdd %uint\nCHECK-NOT: OpIAdd %int"), "") << e.text;
}

kir::Module DivideModule(ScalarKind kind, bool driver = false) {
    kir::Module m;
    kir::Builder b{m};
    uint32_t p_out = m.AddParam("out", ScalarKind::kU64);
    b.CreateBlock("entry");
    kir::ValueId out = b.Param(p_out);
    kir::TypeId t = b.Scalar(kind), u32 = b.Scalar(ScalarKind::kU32);
    kir::ValueId x = b.Load(b.ElemPtr(t, out, b.ConstInt(u32, 0)));
    kir::ValueId y = b.Load(b.ElemPtr(t, out, b.ConstInt(u32, 1)));
    kir::ValueId q = driver ? b.Divide(x, y, kir::DivPrecision::kDriver) : b.Binary(Op::kDiv, x, y);
    b.Store(b.ElemPtr(t, out, b.ConstInt(u32, 2)), q);
    b.Ret();
    return m;
}

// float32: operands scaled by 1/4 where |y| > 2^126 (0x7e800000); float64 plain.
TEST(Wrapping, Float32DivisionGuard) {
    auto e = EmitChecked(DivideModule(ScalarKind::kF32));
    EXPECT_EQ(CheckPatterns(e.text, R"(
        CHECK: OpBitwiseAnd %uint %{{\w+}} %uint_2147483647
        CHECK: OpUGreaterThan %bool %{{\w+}} %uint_2122317824
        CHECK: %[[y:\w+]] = OpSelect %float
        CHECK: %[[x:\w+]] = OpSelect %float
        CHECK-NEXT: OpFDiv %float %[[x]] %[[y]]
    )"), "") << e.text;
    auto d = EmitChecked(DivideModule(ScalarKind::kF64));
    EXPECT_EQ(CheckPatterns(d.text, "CHECK-NOT: OpSelect\nCHECK: OpFDiv %double"), "") << d.text;
}

// A division marked kDriver (the math library's, whose divisors are bounded) is not guarded.
TEST(Wrapping, DriverDivisionIsNotGuarded) {
    auto e = EmitChecked(DivideModule(ScalarKind::kF32, true));
    EXPECT_EQ(CheckPatterns(e.text, R"(
        CHECK-NOT: OpUGreaterThan
        CHECK-NOT: OpSelect
        CHECK: %[[q:\w+]] = OpFDiv %float
    )"), "") << e.text;
    EXPECT_NE(e.text.find("NoContraction"), std::string::npos) << e.text;
}

}  // namespace
}  // namespace nvk::spirv
