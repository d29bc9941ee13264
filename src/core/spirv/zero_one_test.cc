// SelectZeroOneProducts on hand-written modules: type-fuzz seed 1060's product with a low
// bit and seed 95's and with a bool become selects (the module stays valid, new constants
// and compares are added where the module lacks them), and what is not a 0/1 operand is
// left alone.
#include "spirv/zero_one.h"

#include <gtest/gtest.h>

#include <string>

#include "spirv/check_test_util.h"
#include "spirv/words_pass_test_util.h"

namespace nvk::spirv {
namespace {

// A compute shader that stores the uint64 %r (`body` defines it) from %x and %y, two
// uint64 values loaded from a buffer, %xi (int64 of %x) and %c (x < y).
std::vector<uint32_t> AssembleProduct(const std::string& body) {
    return AssembleModule(R"(
               OpCapability Shader
               OpCapability Int64
               OpMemoryModel Logical GLSL450
               OpEntryPoint GLCompute %main "main" %buf
               OpExecutionMode %main LocalSize 1 1 1
               OpName %x "x"
               OpName %y "y"
               OpName %xi "xi"
               OpName %c "c"
               OpName %r "r"
               OpDecorate %rt ArrayStride 8
               OpMemberDecorate %blk 0 Offset 0
               OpDecorate %blk Block
               OpDecorate %buf DescriptorSet 0
               OpDecorate %buf Binding 0
       %void = OpTypeVoid
         %fn = OpTypeFunction %void
       %bool = OpTypeBool
       %uint = OpTypeInt 32 0
      %ulong = OpTypeInt 64 0
       %long = OpTypeInt 64 1
     %uint_0 = OpConstant %uint 0
     %uint_1 = OpConstant %uint 1
     %uint_2 = OpConstant %uint 2
    %ulong_0 = OpConstant %ulong 0
    %ulong_1 = OpConstant %ulong 1
    %ulong_5 = OpConstant %ulong 5
   %ulong_32 = OpConstant %ulong 32
   %ulong_63 = OpConstant %ulong 63
     %long_1 = OpConstant %long 1
         %rt = OpTypeRuntimeArray %ulong
        %blk = OpTypeStruct %rt
      %p_blk = OpTypePointer StorageBuffer %blk
        %p_g = OpTypePointer StorageBuffer %ulong
        %buf = OpVariable %p_blk StorageBuffer
       %main = OpFunction %void None %fn
      %entry = OpLabel
         %px = OpAccessChain %p_g %buf %uint_0 %uint_0
         %py = OpAccessChain %p_g %buf %uint_0 %uint_1
         %pr = OpAccessChain %p_g %buf %uint_0 %uint_2
          %x = OpLoad %ulong %px
          %y = OpLoad %ulong %py
         %xi = OpBitcast %long %x
          %c = OpULessThan %bool %x %y
)" + body + R"(
               OpStore %pr %r
               OpReturn
               OpFunctionEnd
)");
}

// SelectZeroOneProducts on `body`, the input and the output validated.
PassRun Rewrite(const std::string& body) { return RunPass(SelectZeroOneProducts, AssembleProduct(body)); }

void ExpectProductUnchanged(const std::string& body) { ExpectPassLeavesAlone(SelectZeroOneProducts, AssembleProduct(body)); }

TEST(ZeroOneTest, ProductWithLowBitBecomesSelectOnTheBit) {
    // Seed 1060: y * (1 & x), the bit taken on int64 and used as uint64. The module has no
    // int64 zero: it is added.
    PassRun r = Rewrite(R"(
        %bit = OpBitwiseAnd %long %long_1 %xi
       %bitu = OpBitcast %ulong %bit
          %r = OpIMul %ulong %y %bitu
)");
    EXPECT_EQ(r.count, 1u);
    EXPECT_EQ(CheckPatterns(r.text, R"(
CHECK: %[[zl:\w+]] = OpConstant %long 0
CHECK: %[[bit:\w+]] = OpBitwiseAnd %long %long_1 %xi
CHECK: %[[nz:\w+]] = OpINotEqual %bool %[[bit]] %[[zl]]
CHECK-NEXT: %r = OpSelect %ulong %[[nz]] %y %ulong_0
CHECK-NOT: OpIMul
)"), "");
}

TEST(ZeroOneTest, AndWithBoolBecomesSelectOfLowBit) {
    // Seed 95: zext(c) & y, the other operand's low bit where c holds.
    PassRun r = Rewrite(R"(
         %cz = OpSelect %ulong %c %ulong_1 %ulong_0
          %r = OpBitwiseAnd %ulong %cz %y
)");
    EXPECT_EQ(r.count, 1u);
    EXPECT_EQ(CheckPatterns(r.text, R"(
CHECK: %[[bit:\w+]] = OpBitwiseAnd %ulong %y %ulong_1
CHECK-NEXT: %r = OpSelect %ulong %c %[[bit]] %ulong_0
)"), "");
}

TEST(ZeroOneTest, NegatedBoolThroughConversionsSwapsTheArms) {
    // (c ? 0 : 1) on 32 bits, widened, times y: y where c does not hold.
    PassRun r = Rewrite(R"(
        %nc = OpSelect %uint %c %uint_0 %uint_1
        %nw = OpUConvert %ulong %nc
         %r = OpIMul %ulong %nw %y
)");
    EXPECT_EQ(r.count, 1u);
    EXPECT_EQ(CheckPatterns(r.text, R"(
CHECK: %r = OpSelect %ulong %c %ulong_0 %y
)"), "");
}

TEST(ZeroOneTest, OtherSignednessIsBitcast) {
    // int64 y times a uint64 0/1 value: the select needs y as uint64. No bool type is added
    // (the module has one).
    PassRun r = Rewrite(R"(
        %bit = OpBitwiseAnd %ulong %y %ulong_1
          %r = OpIMul %ulong %xi %bit
)");
    EXPECT_EQ(r.count, 1u);
    EXPECT_EQ(CheckPatterns(r.text, R"(
CHECK: %[[bit:\w+]] = OpBitwiseAnd %ulong %y %ulong_1
CHECK-NEXT: %[[nz:\w+]] = OpINotEqual %bool %[[bit]] %ulong_0
CHECK-NEXT: %[[xu:\w+]] = OpBitcast %ulong %xi
CHECK-NEXT: %r = OpSelect %ulong %[[nz]] %[[xu]] %ulong_0
)"), "");
    EXPECT_EQ(CheckPatterns(r.text, "CHECK: OpTypeBool\nCHECK-NOT: OpTypeBool\nCHECK: OpFunction"), "");
}

TEST(ZeroOneTest, ZeroMinusOneValuesNegateTheProduct) {
    // The low bit spread over 64 bits (0 or -1) times y: -y where the bit is set; its and
    // with y: y there. The negation of a 0/1 select is 0/-1 too. The shift count is 63
    // sign-extended by a shift pair, as the emitter writes a 64-bit literal.
    PassRun r = Rewrite(R"(
       %n_hi = OpShiftLeftLogical %ulong %ulong_63 %ulong_32
      %n_hil = OpBitcast %long %n_hi
          %n = OpShiftRightArithmetic %long %n_hil %ulong_32
        %shl = OpShiftLeftLogical %ulong %x %n
       %shll = OpBitcast %long %shl
       %mask = OpShiftRightArithmetic %long %shll %n
      %masku = OpBitcast %ulong %mask
         %p1 = OpIMul %ulong %y %masku
         %cz = OpSelect %ulong %c %ulong_1 %ulong_0
         %nc = OpSNegate %ulong %cz
          %r = OpBitwiseAnd %ulong %p1 %nc
)");
    EXPECT_EQ(r.count, 2u);
    EXPECT_EQ(CheckPatterns(r.text, R"(
CHECK: %[[zl:\w+]] = OpConstant %long 0
CHECK: OpShiftLeftLogical %ulong %x
CHECK: %[[mask:\w+]] = OpShiftRightArithmetic %long
CHECK: %[[nz:\w+]] = OpINotEqual %bool %[[mask]] %[[zl]]
CHECK-NEXT: %[[neg:\w+]] = OpISub %ulong %ulong_0 %y
CHECK-NEXT: %[[p1:\w+]] = OpSelect %ulong %[[nz]] %[[neg]] %ulong_0
CHECK: %r = OpSelect %ulong %c %[[p1]] %ulong_0
)"), "");
}

TEST(ZeroOneTest, WhatIsNotZeroOneIsLeftAlone) {
    ExpectProductUnchanged("%r = OpIMul %ulong %x %y\n");                    // no 0/1 operand
    ExpectProductUnchanged("%r = OpBitwiseAnd %ulong %x %ulong_1\n");         // the low bit itself
    ExpectProductUnchanged("%r = OpIMul %ulong %ulong_1 %y\n");               // a constant 1
    ExpectProductUnchanged(R"(
         %cz = OpSelect %ulong %c %ulong_1 %ulong_5
          %r = OpIMul %ulong %cz %y
)");                                                                    // 0 or 5
    ExpectProductUnchanged(R"(
         %cz = OpSelect %ulong %c %ulong_1 %ulong_0
          %r = OpBitwiseAnd %ulong %cz %ulong_5
)");                                                                    // and with a constant
    ExpectProductUnchanged(R"(
         %sh = OpShiftRightLogical %ulong %x %ulong_5
          %r = OpIMul %ulong %sh %y
)");
}

}  // namespace
}  // namespace nvk::spirv
