#include "spirv/check_test_util.h"

#include <gtest/gtest.h>

namespace nvk::spirv {
namespace {

const char* kText = R"(       %uint = OpTypeInt 32 0
          %7 = OpLoad %uint %x
          %8 = OpIAdd %uint %7 %7
               OpStore %y %8
               OpReturn
)";

TEST(CheckPatterns, MatchesInOrderWithCaptures) {
    EXPECT_EQ(CheckPatterns(kText, R"(
        CHECK: %[[v:\w+]] = OpLoad %uint %x
        CHECK-NEXT: %[[sum:\w+]] = OpIAdd %uint %[[v]] %[[v]]
        CHECK: OpStore %y %[[sum]]
    )"), "");
}

TEST(CheckPatterns, BlanksMatchAnyRun) {
    EXPECT_EQ(CheckPatterns(kText, "CHECK: %uint   =  OpTypeInt 32 0"), "");
}

TEST(CheckPatterns, FailsOnWrongOrder) {
    EXPECT_NE(CheckPatterns(kText, "CHECK: OpStore\nCHECK: OpLoad"), "");
}

TEST(CheckPatterns, FailsOnMismatchedCapture) {
    EXPECT_NE(CheckPatterns(kText, R"(
        CHECK: %[[v:\w+]] = OpLoad
        CHECK: OpStore %y %[[v]]
    )"), "");
}

TEST(CheckPatterns, CaptureDoesNotMatchALongerId) {
    EXPECT_NE(CheckPatterns("%a = OpX\nOpUse %ab\n", "CHECK: %[[a:\\w+]] = OpX\nCHECK: OpUse %[[a]]"),
              "");
}

TEST(CheckPatterns, CheckNextMustBeAdjacent) {
    EXPECT_NE(CheckPatterns(kText, "CHECK: OpTypeInt\nCHECK-NEXT: OpIAdd"), "");
}

TEST(CheckPatterns, CheckNot) {
    EXPECT_EQ(CheckPatterns(kText, "CHECK: OpLoad\nCHECK-NOT: OpFAdd\nCHECK: OpReturn"), "");
    EXPECT_NE(CheckPatterns(kText, "CHECK: OpLoad\nCHECK-NOT: OpIAdd\nCHECK: OpReturn"), "");
    EXPECT_NE(CheckPatterns(kText, "CHECK: OpLoad\nCHECK-NOT: OpStore"), "");
}

TEST(CheckPatterns, UndefinedCaptureIsAnError) {
    EXPECT_NE(CheckPatterns(kText, "CHECK: OpLoad %[[nope]]"), "");
}

TEST(CheckPatterns, MessageNamesTheDirective) {
    std::string msg = CheckPatterns(kText, "CHECK: OpFDiv");
    EXPECT_NE(msg.find("CHECK: OpFDiv"), std::string::npos) << msg;
}

}  // namespace
}  // namespace nvk::spirv

namespace nvk::spirv {
namespace {

TEST(CheckPatterns, AnonymousRegex) {
    EXPECT_EQ(CheckPatterns(kText, "CHECK: OpIAdd %{{u?int}} %{{[0-9]+}}"), "");
    EXPECT_NE(CheckPatterns(kText, "CHECK: OpIAdd %{{float}}"), "");
}

}  // namespace
}  // namespace nvk::spirv
