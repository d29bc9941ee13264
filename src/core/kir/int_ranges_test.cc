// HideIntegerRanges: which signed values it hides, and how.
#include "kir/int_ranges.h"

#include <gtest/gtest.h>

#include "kir/parser.h"
#include "kir/printer.h"
#include "kir/verifier.h"

namespace nvk::kir {
namespace {

// -x of an int32 widened to int64 and stored; an int32 widened only to index.
constexpr const char* kModule = R"(param out.addr : u64 @0
param x : i32 @8
func main {
%b0 entry:
  %0 = param 0 : u64
  %1 = param 1 : i32
  %2 = neg %1 : i32
  %3 = convert %2 : i64
  %4 = convert %1 : i64
  %5 = elemptr %0, %4 : ptr<global, i64>
  store %5, %3
  ret
}
)";

// Runs the pass on `m` with mask `what`, expects `expected` hidden values and a module that
// verifies; returns the module's text.
std::string Hide(Module& m, unsigned what, size_t expected) {
    util::Result<size_t> hidden = HideIntegerRanges(m, what);
    EXPECT_TRUE(hidden.ok()) << hidden.status().message();
    if (hidden.ok()) {
        EXPECT_EQ(*hidden, expected) << Print(m);
    }
    util::Status verified = Verify(m);
    EXPECT_TRUE(verified.ok()) << verified.message();
    return Print(m);
}

// The same on the module `text` parses to ("" if it does not parse, a failure).
std::string Hide(const char* text, unsigned what, size_t expected) {
    util::Result<Module> parsed = Parse(text);
    EXPECT_TRUE(parsed.ok()) << parsed.status().message();
    if (!parsed.ok()) return "";
    Module m = *parsed;
    return Hide(m, what, expected);
}

TEST(IntRanges, HidesNegationAndBothSidesOfAWidening) {
    // The negation, the widening's operand and its result.
    const std::string text = Hide(kModule, kHideSignedIntRanges, 3);
    // The hidden u64 parameter, converted once per kind at the top of the entry block;
    // the index widening %4 is left alone; the store reads the hidden result.
    EXPECT_NE(text.find("param int.zero : u64 @16"), std::string::npos) << text;
    EXPECT_NE(text.find("  %6 = param 2 : u64\n  %7 = convert %6 : i32\n  %10 = bitcast %6 : i64\n"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("  %2 = neg %1 : i32\n  %8 = xor %2, %7 : i32\n"
                        "  %9 = xor %8, %7 : i32\n  %3 = convert %9 : i64\n"
                        "  %11 = xor %3, %10 : i64\n  %4 = convert %1 : i64\n"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("  store %5, %11\n"), std::string::npos) << text;
}

TEST(IntRanges, MaskChoosesWhatIsHidden) {
    const std::string text = Hide(kModule, kHideWidenOutputs, 1);
    EXPECT_NE(text.find("  %2 = neg %1 : i32\n  %3 = convert %2 : i64\n  %8 = xor %3, %7 : i64\n"),
              std::string::npos)
        << text;
    EXPECT_EQ(text.find("xor %2"), std::string::npos) << text;
}

TEST(IntRanges, LeavesUnsignedAndIndexOnlyModulesAlone) {
    constexpr const char* kIndexOnly = R"(param out.addr : u64 @0
param x : i32 @8
param y : u32 @12
func main {
%b0 entry:
  %0 = param 0 : u64
  %1 = param 1 : i32
  %2 = param 2 : u32
  %3 = convert %1 : i64
  %4 = elemptr %0, %3 : ptr<global, u64>
  %5 = convert %2 : u64
  store %4, %5
  ret
}
)";
    util::Result<Module> parsed = Parse(kIndexOnly);
    ASSERT_TRUE(parsed.ok()) << parsed.status().message();
    Module m = *parsed;
    const std::string before = Print(m);
    EXPECT_EQ(Hide(m, kHideSignedIntRanges, 0), before);  // no parameter added
    // kHideOtherWidenings: the stored u32 -> u64 widening, not the index.
    const std::string text = Hide(m, kHideOtherWidenings, 1);
    EXPECT_NE(text.find("  %5 = convert %2 : u64\n  %7 = xor %5, %6 : u64\n  store %4, %7\n"),
              std::string::npos)
        << text;
}

// The negation of a bool made an integer cannot overflow: left alone.
TEST(IntRanges, LeavesNegatedBoolsAlone) {
    constexpr const char* kBools = R"(param out.addr : u64 @0
param b : u32 @8
func main {
%b0 entry:
  %0 = param 0 : u64
  %1 = param 1 : u32
  %2 = const 0 : u32
  %3 = ne %1, %2 : bool
  %4 = const 1 : i32
  %5 = const 0 : i32
  %6 = select %3, %4, %5 : i32
  %7 = neg %6 : i32
  %8 = convert %3 : i32
  %9 = neg %8 : i32
  %10 = add %7, %9 : i32
  %11 = const 0 : i32
  %12 = elemptr %0, %11 : ptr<global, i32>
  store %12, %10
  ret
}
)";
    Hide(kBools, kHideNegAbs, 0);
}

// A widened constant (also one the narrowing pass wrote as a conversion of a constant, and
// one read from a variable stored only once) is a constant: neither side of it is hidden (a
// widened parameter is).
TEST(IntRanges, LeavesWidenedConstantsAlone) {
    constexpr const char* kConstants = R"(param out.addr : u64 @0
param x : i64 @8
param y : i32 @16
func main {
%b0 entry:
  %0 = param 0 : u64
  %1 = param 1 : i64
  %2 = const 16 : i32
  %3 = convert %2 : i64
  %4 = mul %1, %3 : i64
  %5 = param 2 : i32
  %6 = convert %5 : i64
  %7 = add %4, %6 : i64
  %8 = const 0 : i32
  %9 = elemptr %0, %8 : ptr<global, i64>
  %10 = const 3 : i64
  %11 = convert %10 : i32
  %14 = var : ptr<function, i32>
  store %14, %11
  %15 = load %14 : i32
  %12 = convert %15 : i64
  %13 = add %7, %12 : i64
  store %9, %13
  ret
}
)";
    const std::string text = Hide(kConstants, kHideAllIntRanges, 2);  // y's widening, both sides
    EXPECT_NE(text.find("  %3 = convert %2 : i64\n  %4 = mul %1, %3 : i64\n"), std::string::npos)
        << text;
}

// Comparisons with constants: only a 64-bit ordered one whose other side is arithmetic
// (here x + x, whichever side the constant is on) gets its constant hidden.
TEST(IntRanges, HidesTheConstantComparedWithArithmetic) {
    constexpr const char* kCompares = R"(param out.addr : u64 @0
param x : i64 @8
param y : i32 @16
func main {
%b0 entry:
  %0 = param 0 : u64
  %1 = param 1 : i64
  %2 = param 2 : i32
  %3 = add %1, %1 : i64
  %4 = const -3 : i64
  %5 = gt %3, %4 : bool
  %6 = lt %4, %3 : bool
  %7 = eq %3, %4 : bool
  %8 = gt %1, %4 : bool
  %9 = add %2, %2 : i32
  %10 = const -3 : i32
  %11 = gt %9, %10 : bool
  %12 = and %5, %6 : bool
  %13 = and %7, %8 : bool
  %14 = and %12, %13 : bool
  %15 = and %14, %11 : bool
  %16 = convert %15 : i64
  %17 = const 0 : i64
  %18 = elemptr %0, %17 : ptr<global, i64>
  store %18, %16
  ret
}
)";
    // Not the equality, not x itself, not the 32-bit comparison.
    const std::string text = Hide(kCompares, kHideCompareConstants, 2);
    EXPECT_NE(text.find("  %21 = xor %4, %20 : i64\n  %5 = gt %3, %21 : bool\n"
                        "  %22 = xor %4, %20 : i64\n  %6 = lt %22, %3 : bool\n"
                        "  %7 = eq %3, %4 : bool\n  %8 = gt %1, %4 : bool\n"),
              std::string::npos)
        << text;
    // Not part of NVIDIA's signed-range mask alone.
    Hide(kCompares, kHideSignedIntRanges, 0);
}

}  // namespace
}  // namespace nvk::kir
