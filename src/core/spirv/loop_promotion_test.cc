// PromoteLoopElements on hand-written modules in our emitter's form (device addresses turned
// into PhysicalStorageBuffer pointers): a state a loop loads and stores lives in registers,
// loaded once, written back at the loop's exit and before another access that may overlap
// it (decided at compile time for the same sum with constants apart, else compared at run
// time); a barrier in the loop, an address that changes each iteration, or an element the
// loop only loads leaves the module alone. Every output validates, and so does what
// PromoteVariables makes of it.
#include "spirv/loop_promotion.h"

#include <gtest/gtest.h>

#include <string>

#include "spirv/words_pass_test_util.h"

namespace nvk::spirv {
namespace {

// A kernel over two device addresses, %state and %out, and a count %n (push constants),
// up to the branch from its entry block to the block %header.
const std::string kPrologue = R"(
               OpCapability Shader
               OpCapability Int64
               OpCapability PhysicalStorageBufferAddresses
               OpMemoryModel PhysicalStorageBuffer64 GLSL450
               OpEntryPoint GLCompute %main "main" %params
               OpExecutionMode %main LocalSize 1 1 1
               OpName %state "state"
               OpName %out "out"
               OpMemberDecorate %Params 0 Offset 0
               OpMemberDecorate %Params 1 Offset 8
               OpMemberDecorate %Params 2 Offset 16
               OpDecorate %Params Block
       %void = OpTypeVoid
         %fn = OpTypeFunction %void
       %bool = OpTypeBool
       %uint = OpTypeInt 32 0
      %ulong = OpTypeInt 64 0
      %float = OpTypeFloat 32
     %Params = OpTypeStruct %ulong %ulong %uint
   %p_params = OpTypePointer PushConstant %Params
    %p_ulong = OpTypePointer PushConstant %ulong
     %p_uint = OpTypePointer PushConstant %uint
      %g_u64 = OpTypePointer PhysicalStorageBuffer %ulong
      %g_f32 = OpTypePointer PhysicalStorageBuffer %float
     %params = OpVariable %p_params PushConstant
     %uint_0 = OpConstant %uint 0
     %uint_1 = OpConstant %uint 1
     %uint_2 = OpConstant %uint 2
   %uint_264 = OpConstant %uint 264
    %ulong_1 = OpConstant %ulong 1
    %ulong_4 = OpConstant %ulong 4
    %ulong_8 = OpConstant %ulong 8
   %ulong_32 = OpConstant %ulong 32
    %float_1 = OpConstant %float 1
       %main = OpFunction %void None %fn
      %entry = OpLabel
         %a0 = OpAccessChain %p_ulong %params %uint_0
      %state = OpLoad %ulong %a0
         %a1 = OpAccessChain %p_ulong %params %uint_1
        %out = OpLoad %ulong %a1
         %a2 = OpAccessChain %p_uint %params %uint_2
          %n = OpLoad %uint %a2
               OpBranch %header
)";

// That kernel with a loop of %n iterations (i in %i) whose body is `body` (it branches to
// %latch).
std::vector<uint32_t> AssembleLoop(const std::string& body) {
    return AssembleModule(kPrologue + R"(
     %header = OpLabel
          %i = OpPhi %uint %uint_0 %entry %next %latch
               OpLoopMerge %exit %latch None
               OpBranch %test
       %test = OpLabel
       %more = OpULessThan %bool %i %n
               OpBranchConditional %more %body %exit
       %body = OpLabel
)" + body + R"(
      %latch = OpLabel
       %next = OpIAdd %uint %i %uint_1
               OpBranch %header
       %exit = OpLabel
               OpReturn
               OpFunctionEnd
)");
}

PassRun Promote(const std::string& body) {
    PassRun run = RunPass(PromoteLoopElements, AssembleLoop(body));
    // What the compiler does next: the variables become SSA values.
    std::vector<uint32_t> words = AssembleLoop(body);
    PromoteLoopElements(&words);
    util::Result<std::vector<uint32_t>> promoted = PromoteVariables(words);
    EXPECT_TRUE(promoted.ok());
    if (promoted.ok()) {
        util::Status status = Validate(*promoted);
        EXPECT_TRUE(status.ok()) << status.message();
        EXPECT_EQ(Count(Disassemble(*promoted), "OpVariable %_ptr_Function"), 0u);
    }
    return run;
}

void ExpectLoopUnchanged(const std::string& body) {
    ExpectPassLeavesAlone(PromoteLoopElements, AssembleLoop(body));
}

// The loop's own test (i < n) is one OpULessThan; a comparison of an access with an element
// at run time adds two.
constexpr size_t kLoopTests = 1;

// s = state[0]; state[0] = s + 1; out[i] = 1.0 (out may be state's memory)
const char* kCounter = R"(
         %ps = OpConvertUToPtr %g_u64 %state
          %s = OpLoad %ulong %ps Aligned 8
         %s1 = OpIAdd %ulong %s %ulong_1
               OpStore %ps %s1 Aligned 8
         %iw = OpUConvert %ulong %i
         %io = OpIMul %ulong %iw %ulong_4
         %ao = OpIAdd %ulong %out %io
         %po = OpConvertUToPtr %g_f32 %ao
               OpStore %po %float_1 Aligned 4
               OpBranch %latch
)";

TEST(LoopPromotion, AStateUpdatedInALoopLivesInRegisters) {
    const PassRun run = Promote(kCounter);
    const std::string& text = run.text;
    EXPECT_EQ(run.count, 1u) << text;
    // The load, behind a selection on whether the register holds the element; two write
    // backs: before the store to out (where it overlaps) and at the loop's exit. The store
    // to state itself is gone.
    EXPECT_EQ(Count(text, "OpLoad %ulong %ps Aligned 8"), 0u) << text;
    EXPECT_EQ(Count(text, "Aligned 8"), 3u) << text;
    EXPECT_EQ(Count(text, "OpULessThan"), kLoopTests + 2) << text;
    EXPECT_EQ(Count(text, "Aligned 4"), 1u) << text;  // the store to out stays
    EXPECT_EQ(Count(text, "OpSelectionMerge"), 3u) << text;
}

// state[0] and state[1], the second at state + `offset` (8, defined by `lines`): two
// elements, each store beside the other, with no comparison at run time.
void ExpectNeighboursApart(const std::string& lines, const std::string& offset) {
    const PassRun run = Promote(R"(
         %ps = OpConvertUToPtr %g_u64 %state
          %s = OpLoad %ulong %ps Aligned 8
)" + lines + R"(
         %a8 = OpIAdd %ulong %state )" + offset + R"(
         %pt = OpConvertUToPtr %g_u64 %a8
          %t = OpLoad %ulong %pt Aligned 8
         %s1 = OpIAdd %ulong %s %t
               OpStore %ps %s1 Aligned 8
               OpStore %pt %s Aligned 8
               OpBranch %latch
)");
    EXPECT_EQ(run.count, 2u) << run.text;
    EXPECT_EQ(Count(run.text, "OpULessThan"), kLoopTests) << run.text;
}

TEST(LoopPromotion, NeighbouringElementsNeedNoComparison) {
    ExpectNeighboursApart("", "%ulong_8");
}

TEST(LoopPromotion, AnOffsetComputedFromConstantsCountsAsOne) {
    // The front end's sign extension of a constant offset, (8 << 32) >> 32, which the
    // optimiser leaves as shifts: still state[1].
    ExpectNeighboursApart(R"(
         %up = OpShiftLeftLogical %ulong %ulong_8 %ulong_32
        %off = OpShiftRightArithmetic %ulong %up %ulong_32)",
                          "%off");
}

TEST(LoopPromotion, AStoreIntoTheElementIsComparedAtRunTime) {
    // state[0] as a u64 and a float stored 4 bytes into it: the same sum, not apart.
    const PassRun run = Promote(R"(
         %ps = OpConvertUToPtr %g_u64 %state
          %s = OpLoad %ulong %ps Aligned 8
         %s1 = OpIAdd %ulong %s %ulong_1
               OpStore %ps %s1 Aligned 8
         %a4 = OpIAdd %ulong %state %ulong_4
         %pf = OpConvertUToPtr %g_f32 %a4
               OpStore %pf %float_1 Aligned 4
               OpBranch %latch
)");
    EXPECT_EQ(run.count, 1u) << run.text;
    EXPECT_EQ(Count(run.text, "OpULessThan"), kLoopTests + 2) << run.text;
}

TEST(LoopPromotion, ABarrierInTheLoopLeavesItAlone) {
    ExpectLoopUnchanged(R"(
         %ps = OpConvertUToPtr %g_u64 %state
          %s = OpLoad %ulong %ps Aligned 8
         %s1 = OpIAdd %ulong %s %ulong_1
               OpStore %ps %s1 Aligned 8
               OpControlBarrier %uint_2 %uint_2 %uint_264
               OpBranch %latch
)");
}

TEST(LoopPromotion, AnAddressThatChangesEachIterationIsLeftAlone) {
    // out[i] += 1: a new element every iteration.
    ExpectLoopUnchanged(R"(
         %iw = OpUConvert %ulong %i
         %io = OpIMul %ulong %iw %ulong_4
         %ao = OpIAdd %ulong %out %io
         %po = OpConvertUToPtr %g_f32 %ao
          %v = OpLoad %float %po Aligned 4
         %v1 = OpFAdd %float %v %float_1
               OpStore %po %v1 Aligned 4
               OpBranch %latch
)");
}

TEST(LoopPromotion, AnElementTheLoopOnlyLoadsIsLeftAlone) {
    ExpectLoopUnchanged(R"(
         %ps = OpConvertUToPtr %g_u64 %state
          %s = OpLoad %ulong %ps Aligned 8
         %iw = OpUConvert %ulong %i
         %io = OpIMul %ulong %iw %ulong_8
         %ao = OpIAdd %ulong %out %io
         %po = OpConvertUToPtr %g_u64 %ao
               OpStore %po %s Aligned 8
               OpBranch %latch
)");
}

TEST(LoopPromotion, MoreComparisonsThanAccessesSavedLeaveTheLoopAlone) {
    // One element (a load and a store saved) against three stores it must be compared with.
    ExpectLoopUnchanged(R"(
         %ps = OpConvertUToPtr %g_u64 %state
          %s = OpLoad %ulong %ps Aligned 8
         %s1 = OpIAdd %ulong %s %ulong_1
               OpStore %ps %s1 Aligned 8
         %iw = OpUConvert %ulong %i
         %io = OpIMul %ulong %iw %ulong_4
         %ao = OpIAdd %ulong %out %io
         %po = OpConvertUToPtr %g_f32 %ao
               OpStore %po %float_1 Aligned 4
         %b1 = OpIAdd %ulong %ao %ulong_4
         %p1 = OpConvertUToPtr %g_f32 %b1
               OpStore %p1 %float_1 Aligned 4
         %b2 = OpIAdd %ulong %b1 %ulong_4
         %p2 = OpConvertUToPtr %g_f32 %b2
               OpStore %p2 %float_1 Aligned 4
               OpBranch %latch
)");
}

TEST(LoopPromotion, AnAddressComputedInTwoBranchesIsOneElement) {
    // state[n] loaded and stored in both arms of a selection, its address computed in each
    // (as inlined calls leave it): one element, no comparison at run time.
    const PassRun run = Promote(R"(
        %bit = OpBitwiseAnd %uint %i %uint_1
        %odd = OpINotEqual %bool %bit %uint_0
               OpSelectionMerge %join None
               OpBranchConditional %odd %then %else
       %then = OpLabel
        %nwa = OpUConvert %ulong %n
        %xa = OpIMul %ulong %nwa %ulong_8
        %aa = OpIAdd %ulong %state %xa
        %pa = OpConvertUToPtr %g_u64 %aa
        %sa = OpLoad %ulong %pa Aligned 8
       %sa1 = OpIAdd %ulong %sa %ulong_1
               OpStore %pa %sa1 Aligned 8
               OpBranch %join
       %else = OpLabel
        %nwb = OpUConvert %ulong %n
         %xb = OpIMul %ulong %ulong_8 %nwb
         %ab = OpIAdd %ulong %xb %state
         %pb = OpConvertUToPtr %g_u64 %ab
         %sb = OpLoad %ulong %pb Aligned 8
        %sb1 = OpIAdd %ulong %sb %ulong_4
               OpStore %pb %sb1 Aligned 8
               OpBranch %join
       %join = OpLabel
               OpBranch %latch
)");
    EXPECT_EQ(run.count, 1u) << run.text;
    EXPECT_EQ(Count(run.text, "OpULessThan"), kLoopTests) << run.text;
    EXPECT_EQ(Count(run.text, "Aligned 8"), 3u) << run.text;  // two loads on a miss, one write back
}

TEST(LoopPromotion, AnAddressLikeOneOutsideTheLoopStillChangesWithIt) {
    // The exit block comes before the body here (blocks follow dominance, not nesting) and
    // computes i * 8 as the body does: the body's address state + i * 8 has the same terms
    // as one made outside the loop, yet i changes every iteration.
    ExpectPassLeavesAlone(PromoteLoopElements, AssembleModule(kPrologue + R"(
     %header = OpLabel
          %i = OpPhi %uint %uint_0 %entry %next %latch
         %iw = OpUConvert %ulong %i
       %more = OpULessThan %bool %i %n
               OpLoopMerge %exit %latch None
               OpBranchConditional %more %body %exit
       %exit = OpLabel
         %xe = OpIMul %ulong %iw %ulong_8
         %ae = OpIAdd %ulong %state %xe
         %pe = OpConvertUToPtr %g_u64 %ae
               OpStore %pe %ulong_1 Aligned 8
               OpReturn
       %body = OpLabel
         %xb = OpIMul %ulong %iw %ulong_8
         %ab = OpIAdd %ulong %state %xb
         %pb = OpConvertUToPtr %g_u64 %ab
          %s = OpLoad %ulong %pb Aligned 8
         %s1 = OpIAdd %ulong %s %ulong_1
               OpStore %pb %s1 Aligned 8
               OpBranch %latch
      %latch = OpLabel
       %next = OpIAdd %uint %i %uint_1
               OpBranch %header
               OpFunctionEnd
)"));
}

TEST(LoopPromotion, AnAddressDeepInPureArithmeticIsStillInvariant) {
    // The state's index through 40 pure operations inside the loop (NVIDIA's hidden ranges
    // make index arithmetic that deep): still the same element every iteration.
    std::string chain = "          %c0 = OpUConvert %ulong %n\n";
    for (int k = 1; k <= 40; ++k) {
        chain += "          %c" + std::to_string(k) + " = OpBitwiseOr %ulong %c" +
                 std::to_string(k - 1) + " %ulong_32\n";
    }
    const PassRun run = Promote(chain + R"(
         %at = OpIAdd %ulong %state %c40
         %ps = OpConvertUToPtr %g_u64 %at
          %s = OpLoad %ulong %ps Aligned 8
         %s1 = OpIAdd %ulong %s %ulong_1
               OpStore %ps %s1 Aligned 8
               OpBranch %latch
)");
    EXPECT_EQ(run.count, 1u) << run.text;
}

TEST(LoopPromotion, GarbageComesBackUnchanged) {
    std::vector<uint32_t> words = {1, 2, 3};
    EXPECT_EQ(PromoteLoopElements(&words), 0u);
    EXPECT_EQ(words, (std::vector<uint32_t>{1, 2, 3}));
}

}  // namespace
}  // namespace nvk::spirv
