// HideFloatZeros (lavapipe's float zeros): which zeros it hides, and what it
// leaves alone.
#include "kir/float_zeros.h"

#include <gtest/gtest.h>

#include "kir/abi.h"
#include "kir/parse_test_util.h"
#include "kir/printer.h"
#include "kir/verifier.h"

namespace nvk::kir {
namespace {

// out[0] = 0.0 / x (f64), out[1] = float(False) * y (f32): both zeros become
// the hidden parameter's bits; -0.0 becomes them with the sign bit or-ed in;
// 1.0 stays a constant.
TEST(FloatZeros, HidesConstantZerosAndConvertedConstants) {
    Module m = ParseOk(R"(param out.addr : u64 @0
param x : f64 @8
param y : f32 @16
func main {
%b0 entry:
  %0 = param 0 : u64
  %1 = param 1 : f64
  %2 = param 2 : f32
  br %b1
%b1 body:
  %3 = const 0.0 : f64
  %4 = div %3, %1 : f64
  %5 = const -0.0 : f64
  %6 = add %4, %5 : f64
  %7 = const 0 : i32
  %8 = elemptr %0, %7 : ptr<global, f64>
  store %8, %6
  %9 = const false : bool
  %10 = convert %9 : f32
  %11 = mul %10, %2 : f32
  %12 = const 1.0 : f32
  %13 = add %11, %12 : f32
  %14 = const 2 : i32
  %15 = elemptr %0, %14 : ptr<global, f32>
  store %15, %13
  ret
}
)");
    util::Result<size_t> replaced = HideFloatZeros(m);
    ASSERT_TRUE(replaced.ok());
    EXPECT_EQ(*replaced, 3u);
    ASSERT_TRUE(Verify(m).ok()) << Verify(m).message();
    const std::string text = Print(m);
    EXPECT_NE(text.find("%20 = const 9223372036854775808 : u64\n  %21 = or %18, %20 : u64\n"
                        "  %22 = bitcast %21 : f64\n"),
              std::string::npos) << text;
    EXPECT_NE(text.find("param float.zero : u32 @20"), std::string::npos) << text;
    EXPECT_NE(text.find("%16 = param 3 : u32\n  %17 = bitcast %16 : f32\n"
                        "  %18 = convert %16 : u64\n  %19 = bitcast %18 : f64\n"),
              std::string::npos) << text;
    EXPECT_NE(text.find("%4 = div %19, %1 : f64"), std::string::npos) << text;
    EXPECT_NE(text.find("%6 = add %4, %22 : f64"), std::string::npos) << text;
    EXPECT_NE(text.find("%11 = mul %17, %2 : f32"), std::string::npos) << text;
    EXPECT_NE(text.find("%13 = add %11, %12 : f32"), std::string::npos) << text;
    ASSERT_EQ(m.args.size(), 1u);  // the parsed module declares no arguments; the pass adds one
    EXPECT_EQ(m.args[0].kind, ArgKind::kHidden);
    EXPECT_EQ(m.args[0].name, kFloatZeroParam);
    EXPECT_EQ(m.args[0].offset, 20u);
}

// A conversion of a value the driver might prove zero (here an i32 parameter)
// is or-ed with the hidden bits right after it, and its users read the result.
TEST(FloatZeros, DisguisesConversionsOfIntegers) {
    Module m = ParseOk(R"(param n : i32 @0
param x : f64 @8
func main {
%b0 entry:
  %0 = param 0 : i32
  %1 = param 1 : f64
  br %b1
%b1 body:
  %2 = convert %0 : f64
  %3 = div %1, %2 : f64
  ret
}
)");
    util::Result<size_t> replaced = HideFloatZeros(m);
    ASSERT_TRUE(replaced.ok());
    EXPECT_EQ(*replaced, 1u);
    ASSERT_TRUE(Verify(m).ok()) << Verify(m).message();
    const std::string text = Print(m);
    EXPECT_NE(text.find("%4 = param 2 : u32\n  %5 = convert %4 : u64\n  %6 = bitcast %5 : f64\n"),
              std::string::npos) << text;
    EXPECT_NE(text.find("%2 = convert %0 : f64\n  %7 = bitcast %2 : u64\n"
                        "  %8 = or %7, %5 : u64\n  %9 = bitcast %8 : f64\n"
                        "  %3 = div %1, %9 : f64\n"),
              std::string::npos) << text;
}

TEST(FloatZeros, LeavesModulesWithoutFloatZerosAlone) {
    Module m = ParseOk(R"(param x : f32 @0
func main {
%b0 entry:
  %0 = param 0 : f32
  %1 = const 0 : i32
  %2 = const 2.5 : f32
  %3 = add %0, %2 : f32
  ret
}
)");
    const std::string before = Print(m);
    util::Result<size_t> replaced = HideFloatZeros(m);
    ASSERT_TRUE(replaced.ok());
    EXPECT_EQ(*replaced, 0u);
    EXPECT_EQ(Print(m), before);
    EXPECT_TRUE(m.args.empty());
}

}  // namespace
}  // namespace nvk::kir
