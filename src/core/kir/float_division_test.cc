// DivideFloat32InFloat64: which divisions it rewrites, and into what.
#include "kir/float_division.h"

#include <gtest/gtest.h>

#include "kir/parser.h"
#include "kir/printer.h"
#include "kir/verifier.h"

namespace nvk::kir {
namespace {

constexpr const char* kModule = R"(param out.addr : u64 @0
param x : f32 @8
param y : f32 @12
param z : f64 @16
func main {
%b0 entry:
  %0 = param 0 : u64
  %1 = param 1 : f32
  %2 = param 2 : f32
  %3 = param 3 : f64
  %4 = div %1, %2 : f32
  %5 = div %3, %3 : f64
  %6 = mul %4, %1 : f32
  %7 = const 0 : i32
  %8 = elemptr %0, %7 : ptr<global, f32>
  store %8, %6
  ret
}
)";

// The f32 quotient is computed in f64 and converted back under its old id, so
// that its uses (the mul) are unchanged; the f64 division and the rest stay.
TEST(FloatDivision, RewritesFloat32DivisionsOnly) {
    util::Result<Module> parsed = Parse(kModule);
    ASSERT_TRUE(parsed.ok()) << parsed.status().message();
    Module m = *parsed;
    EXPECT_EQ(DivideFloat32InFloat64(m), 1u);
    ASSERT_TRUE(Verify(m).ok()) << Verify(m).message();
    const std::string text = Print(m);
    EXPECT_NE(text.find("  %9 = convert %1 : f64\n  %10 = convert %2 : f64\n"
                        "  %11 = div %9, %10 : f64\n  %4 = convert %11 : f32\n"
                        "  %5 = div %3, %3 : f64\n  %6 = mul %4, %1 : f32\n"),
              std::string::npos)
        << text;
    EXPECT_EQ(DivideFloat32InFloat64(m), 0u);  // nothing left to rewrite
}

// The math library's own divisions (`div driver`) keep the driver's quotient:
// the pass rewrites only the unmarked f32 division, and the marking survives a
// print and a parse.
TEST(FloatDivision, LeavesDriverDivisionsAlone) {
    constexpr const char* kMarked = R"(param out.addr : u64 @0
param x : f32 @8
param y : f32 @12
func main {
%b0 entry:
  %0 = param 0 : u64
  %1 = param 1 : f32
  %2 = param 2 : f32
  %3 = div driver %1, %2 : f32
  %4 = div %3, %2 : f32
  %5 = const 0 : i32
  %6 = elemptr %0, %5 : ptr<global, f32>
  store %6, %4
  ret
}
)";
    util::Result<Module> parsed = Parse(kMarked);
    ASSERT_TRUE(parsed.ok()) << parsed.status().message();
    Module m = *parsed;
    EXPECT_EQ(Print(m), kMarked);
    EXPECT_EQ(DivideFloat32InFloat64(m), 1u);
    ASSERT_TRUE(Verify(m).ok()) << Verify(m).message();
    const std::string text = Print(m);
    EXPECT_NE(text.find("  %3 = div driver %1, %2 : f32\n  %7 = convert %3 : f64\n"
                        "  %8 = convert %2 : f64\n  %9 = div %7, %8 : f64\n"
                        "  %4 = convert %9 : f32\n"),
              std::string::npos)
        << text;
    util::Result<Module> again = Parse(text);
    ASSERT_TRUE(again.ok()) << again.status().message();
    EXPECT_EQ(Print(*again), text);
}

// Only floats take a precision, and only `driver`.
TEST(FloatDivision, DriverPrecisionIsForFloats) {
    constexpr const char* kInts = R"(param x : i32 @0
func main {
%b0 entry:
  %0 = param 0 : i32
  %1 = div driver %0, %0 : i32
  ret
}
)";
    util::Result<Module> ints = Parse(kInts);
    ASSERT_TRUE(ints.ok()) << ints.status().message();
    EXPECT_FALSE(Verify(*ints).ok());
    std::string bad = kInts;
    bad.replace(bad.find("driver"), 6, "sloppy");
    EXPECT_FALSE(Parse(bad).ok());
}

}  // namespace
}  // namespace nvk::kir
