// SinkStores on hand-written modules: the tiled matmul's two stores per tile element become
// one (per tile, across two guarded selections), the module stays valid and computes the
// same, and what a store cannot pass (a load of the same variable, a barrier, a return in
// the region) leaves the module alone.
#include "spirv/store_sinking.h"

#include <gtest/gtest.h>

#include <string>

#include "spirv/words_pass_test_util.h"

namespace nvk::spirv {
namespace {

std::vector<uint32_t> Assemble(const std::string& body) {
    return AssembleModule(R"(
               OpCapability Shader
               OpMemoryModel Logical GLSL450
               OpEntryPoint GLCompute %main "main" %lid %sa %sb %out
               OpExecutionMode %main LocalSize 16 1 1
               OpName %pa "pa"
               OpName %pb "pb"
               OpDecorate %lid BuiltIn LocalInvocationId
               OpDecorate %rt ArrayStride 4
               OpMemberDecorate %blk 0 Offset 0
               OpDecorate %blk Block
               OpDecorate %out DescriptorSet 0
               OpDecorate %out Binding 0
       %void = OpTypeVoid
         %fn = OpTypeFunction %void
       %bool = OpTypeBool
       %uint = OpTypeInt 32 0
      %float = OpTypeFloat 32
     %v3uint = OpTypeVector %uint 3
    %uint_0 = OpConstant %uint 0
    %uint_2 = OpConstant %uint 2
    %uint_8 = OpConstant %uint 8
   %uint_16 = OpConstant %uint 16
  %uint_264 = OpConstant %uint 264
   %float_0 = OpConstant %float 0
   %float_1 = OpConstant %float 1
   %float_2 = OpConstant %float 2
       %tile = OpTypeArray %float %uint_16
     %p_tile = OpTypePointer Workgroup %tile
        %p_w = OpTypePointer Workgroup %float
     %p_in3 = OpTypePointer Input %v3uint
         %rt = OpTypeRuntimeArray %float
        %blk = OpTypeStruct %rt
      %p_blk = OpTypePointer StorageBuffer %blk
        %p_g = OpTypePointer StorageBuffer %float
        %lid = OpVariable %p_in3 Input
         %sa = OpVariable %p_tile Workgroup
         %sb = OpVariable %p_tile Workgroup
        %out = OpVariable %p_blk StorageBuffer
       %main = OpFunction %void None %fn
      %entry = OpLabel
         %l3 = OpLoad %v3uint %lid
          %t = OpCompositeExtract %uint %l3 0
         %pa = OpAccessChain %p_w %sa %t
         %pb = OpAccessChain %p_w %sb %t
         %po = OpAccessChain %p_g %out %uint_0 %t
         %c1 = OpULessThan %bool %t %uint_8
         %c2 = OpULessThan %bool %t %uint_2
)" + body + R"(
               OpFunctionEnd
)");
}

// SinkStores on `body`, both the input and the output validated.
PassRun Sink(const std::string& body) { return RunPass(SinkStores, Assemble(body)); }

// `body` is valid and SinkStores leaves it as it is.
void ExpectUnchanged(const std::string& body) { ExpectPassLeavesAlone(SinkStores, Assemble(body)); }

// sa[t] = 0; sb[t] = 0; if t < 8: { if t < 2: sa[t] = 1 }; if t < 8: sb[t] = 2; barrier;
// out[t] = sa[t] + sb[t]
const char* kTiles = R"(
               OpStore %pa %float_0
               OpStore %pb %float_0
               OpSelectionMerge %m1 None
               OpBranchConditional %c1 %a1 %m1
         %a1 = OpLabel
               OpSelectionMerge %m0 None
               OpBranchConditional %c2 %a2 %m0
         %a2 = OpLabel
               OpStore %pa %float_1
               OpBranch %m0
         %m0 = OpLabel
               OpBranch %m1
         %m1 = OpLabel
               OpSelectionMerge %m2 None
               OpBranchConditional %c1 %b1 %m2
         %b1 = OpLabel
               OpStore %pb %float_2
               OpBranch %m2
         %m2 = OpLabel
               OpControlBarrier %uint_2 %uint_2 %uint_264
         %va = OpLoad %float %pa
         %vb = OpLoad %float %pb
          %s = OpFAdd %float %va %vb
               OpStore %po %s
               OpReturn
)";

TEST(StoreSinking, TileStoresBecomeOneStoreBeforeTheBarrier) {
    const PassRun sunk = Sink(kTiles);
    const std::string& text = sunk.text;
    EXPECT_EQ(sunk.count, 4u) << text;  // two per tile, one store of each put back
    EXPECT_EQ(Count(text, "OpStore %pa"), 1u) << text;
    EXPECT_EQ(Count(text, "OpStore %pb"), 1u) << text;
    EXPECT_EQ(Count(text, "OpPhi"), 3u) << text;  // sa at m0 and m1, sb at m2
    // Both stores come after the last phi (m2's), before the barrier.
    size_t barrier = text.find("OpControlBarrier");
    size_t store_a = text.find("OpStore %pa"), store_b = text.find("OpStore %pb");
    size_t last_phi = text.rfind("OpPhi");
    EXPECT_LT(last_phi, store_a);
    EXPECT_LT(last_phi, store_b);
    EXPECT_LT(store_a, barrier);
    EXPECT_LT(store_b, barrier);
}

TEST(StoreSinking, ALoadOfTheVariableBetweenTheStoresStopsIt) {
    std::string body = kTiles;
    // sa[t] read inside the first selection: the first store must stay.
    body.replace(body.find("         %a2 = OpLabel\n"), 0, "");
    body.replace(body.find("               OpStore %pa %float_1"), 0,
                 "         %peek = OpLoad %float %pa\n");
    const PassRun sunk = Sink(body);
    const std::string& text = sunk.text;
    EXPECT_EQ(Count(text, "OpStore %pa"), 2u) << text;  // sa untouched
    EXPECT_EQ(Count(text, "OpStore %pb"), 1u) << text;  // sb still sinks (another variable)
    EXPECT_EQ(sunk.count, 2u);
}

TEST(StoreSinking, NoSecondStoreBeforeTheBarrierLeavesTheModuleAlone) {
    // The second stores after the barrier: nothing to merge across it.
    const char* body = R"(
               OpStore %pa %float_0
               OpSelectionMerge %m1 None
               OpBranchConditional %c1 %a1 %m1
         %a1 = OpLabel
               OpBranch %m1
         %m1 = OpLabel
               OpControlBarrier %uint_2 %uint_2 %uint_264
               OpStore %pa %float_1
               OpReturn
)";
    ExpectUnchanged(body);
}

TEST(StoreSinking, AReturnInTheRegionLeavesTheModuleAlone) {
    const char* body = R"(
               OpStore %pa %float_0
               OpSelectionMerge %m1 None
               OpBranchConditional %c1 %a1 %a2
         %a1 = OpLabel
               OpStore %pa %float_1
               OpBranch %m1
         %a2 = OpLabel
               OpReturn
         %m1 = OpLabel
               OpControlBarrier %uint_2 %uint_2 %uint_264
               OpReturn
)";
    ExpectUnchanged(body);
}

TEST(StoreSinking, GarbageComesBackUnchanged) {
    std::vector<uint32_t> junk{1, 2, 3};
    EXPECT_EQ(SinkStores(&junk), 0u);
    EXPECT_EQ(junk, (std::vector<uint32_t>{1, 2, 3}));
}

}  // namespace
}  // namespace nvk::spirv
