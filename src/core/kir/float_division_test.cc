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

}  // namespace
}  // namespace nvk::kir
