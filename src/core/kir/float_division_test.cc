// DivideFloat32InFloat64: which divisions it rewrites, and into what.
#include "kir/float_division.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "kir/interpret.h"
#include "kir/parse_test_util.h"
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
    Module m = ParseOk(kModule);
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
    Module m = ParseOk(kMarked);
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


// ---------------------------------------------------------------- the fused sequence

// out[0] = x / y in the entry block, out[1] = (x / y) / y and out[2] = x / that
// times x / y in the next block: divisions in the entry block (whose later values,
// the addresses among them, then live in a block of their own) and two in one
// block, the second using the first.
constexpr const char* kChain = R"(param out.addr : u64 @0
param x : f32 @8
param y : f32 @12
func main {
%b0 entry:
  %0 = param 0 : u64
  %1 = param 1 : f32
  %2 = param 2 : f32
  %3 = div %1, %2 : f32
  %4 = const 0 : i32
  %5 = elemptr %0, %4 : ptr<global, f32>
  %6 = const 1 : i32
  %7 = elemptr %0, %6 : ptr<global, f32>
  store %5, %3
  br %b1
%b1 body:
  %8 = div %3, %2 : f32
  %9 = div %1, %8 : f32
  %10 = mul %9, %3 : f32
  store %7, %8
  %11 = const 2 : i32
  %12 = elemptr %0, %11 : ptr<global, f32>
  store %12, %10
  ret
}
)";

uint32_t Bits(float v) {
    uint32_t u;
    std::memcpy(&u, &v, 4);
    return u;
}

float Float(uint32_t u) {
    float v;
    std::memcpy(&v, &u, 4);
    return v;
}

// The module run on (x, y): out[0..2].
std::vector<float> Run(const Module& m, float x, float y) {
    Inputs in;
    in.params = {0x1000, Bits(x), Bits(y)};
    in.memory.push_back({0x1000, std::vector<uint8_t>(12, 0)});
    util::Result<Trace> t = Interpret(m, in, 100000);
    EXPECT_TRUE(t.ok()) << t.status().message();
    std::vector<float> out(3);
    std::memcpy(out.data(), t->memory[0].bytes.data(), 12);
    return out;
}

// Equal bits, or both NaN.
bool Same(float a, float b) { return Bits(a) == Bits(b) || (std::isnan(a) && std::isnan(b)); }

// Operands that reach every case: the specials, both sides of every bound of the
// safe range (float_division.h), the mantissas of b near 2 that go the float64
// way, quotients near the overflow and subnormal thresholds, random bits.
std::vector<std::pair<float, float>> HardPairs() {
    std::vector<float> specials = {0.0f, -0.0f, 1.0f, -1.0f, INFINITY, -INFINITY, NAN,
                                   1e-45f, -1e-45f, 1.1754942e-38f, 1.17549435e-38f,
                                   3.4028235e38f, -3.4028235e38f, 2.0f, 3.0f, 0.1f,
                                   Float(0x3fffffff), Float(0x3ffffe00), Float(0x3ffffdff)};
    std::vector<float> values = specials;
    for (int e = -149; e <= 127; e += 1) {  // every exponent, twice
        values.push_back(std::ldexp(1.0f, e));
        values.push_back(std::ldexp(1.6180339f, e));
    }
    std::vector<std::pair<float, float>> pairs;
    for (float a : values)
        for (float b : specials) {
            pairs.push_back({a, b});
            pairs.push_back({b, a});
        }
    std::mt19937 rng(12);
    for (int i = 0; i < 6000; ++i) {
        uint32_t a = rng(), b = rng();
        if (i % 2) b = (a & 0x807fffffu) ^ ((rng() % 200) << 23);  // nearby exponents
        pairs.push_back({Float(a), Float(b)});
    }
    for (float a : values)
        for (int e = -149; e <= 127; e += 11) pairs.push_back({a, std::ldexp(1.9999999f, e)});
    return pairs;
}

void ExpectCorrectlyRounded(const Module& m, const char* what) {
    int checked = 0, wrong = 0;
    for (auto [x, y] : HardPairs()) {
        std::vector<float> out = Run(m, x, y);
        float q = static_cast<float>(static_cast<double>(x) / y);  // rounded once
        float q2 = static_cast<float>(static_cast<double>(q) / y);
        float q3 = static_cast<float>(static_cast<double>(x) / q2) * q;
        for (auto [got, want] : {std::pair{out[0], q}, {out[1], q2}, {out[2], q3}}) {
            ++checked;
            if (!Same(got, want) && ++wrong <= 5)
                ADD_FAILURE() << what << ": " << x << " / " << y << " gave " << got
                              << ", not " << want;
        }
    }
    EXPECT_EQ(wrong, 0) << what << ": of " << checked;
}

// With fused_fma: each division becomes the float32 sequence and a branch to a
// block of its own for the float64 way; the quotient is read back from a variable
// under the division's id at the head of the rest of the block. The values that
// now cross blocks go through variables (the quotients) or are computed again
// (addresses and constants).
TEST(FloatDivision, FusedSequenceWithRareFloat64Branch) {
    Module m = ParseOk(kChain);
    Float32DivisionOptions options;
    options.fused_fma = true;
    EXPECT_EQ(DivideFloat32(m, options), 3u);
    ASSERT_TRUE(Verify(m).ok()) << Verify(m).message();
    const std::string text = Print(m);
    for (const char* expected :
         {"%b0 entry:\n", "entry.div0.rare:\n", "entry.div0.done:\n  %3 = load ",
          "body.div1.rare:\n", "body.div1.done:\n  %8 = load ", "body.div2.done:\n  %9 = load ",
          "div driver ", "math fma ", " : f64\n", "condbr "}) {
        EXPECT_NE(text.find(expected), std::string::npos) << expected << "\n" << text;
    }
    EXPECT_EQ(text.find("div %1, %2 : f32"), std::string::npos) << text;
    // Every kind of instruction the entry block must keep stays there.
    const Block& entry = m.function.entry();
    EXPECT_EQ(entry.insts[0].op, Op::kVar);
    // Nothing is left to rewrite, and the text parses back to itself.
    EXPECT_EQ(DivideFloat32(m, options), 0u);
    util::Result<Module> again = Parse(text);
    ASSERT_TRUE(again.ok()) << again.status().message();
    EXPECT_EQ(Print(*again), text);
    ExpectCorrectlyRounded(m, "fused");
}

// The controls of the lavapipe tests: the reciprocal moved by up to 3 ulps, and
// Fma computed exactly from float64 (as the device does it where it rounds once).
TEST(FloatDivision, FusedSequenceWithLooseReciprocal) {
    for (uint32_t ulps : {3u, 8u}) {
        for (bool exact : {false, true}) {
            Module m = ParseOk(kChain);
            Float32DivisionOptions options;
            options.fused_fma = true;
            options.test_ulps = ulps;
            options.exact_fma = exact;
            EXPECT_EQ(DivideFloat32(m, options), 3u);
            ASSERT_TRUE(Verify(m).ok()) << Verify(m).message();
            const std::string text = Print(m);
            EXPECT_EQ(text.find("math fma ") == std::string::npos, exact) << text;
            ExpectCorrectlyRounded(m, exact ? "loose, exact fma" : "loose");
        }
    }
}

// Without fused_fma DivideFloat32 is DivideFloat32InFloat64: one block, no branch.
TEST(FloatDivision, WithoutFusedFmaFloat64) {
    Module m = ParseOk(kChain);
    EXPECT_EQ(DivideFloat32(m, Float32DivisionOptions{}), 3u);
    ASSERT_TRUE(Verify(m).ok()) << Verify(m).message();
    EXPECT_EQ(m.function.blocks.size(), 2u);
    EXPECT_EQ(Print(m).find("fma"), std::string::npos);
    ExpectCorrectlyRounded(m, "float64");
}

// Driver divisions and float64 ones are left alone; a module without float32
// divisions is unchanged.
TEST(FloatDivision, FusedLeavesOtherDivisionsAlone) {
    constexpr const char* kOthers = R"(param out.addr : u64 @0
param x : f32 @8
param z : f64 @16
func main {
%b0 entry:
  %0 = param 0 : u64
  %1 = param 1 : f32
  %2 = param 2 : f64
  %3 = div driver %1, %1 : f32
  %4 = div %2, %2 : f64
  %5 = const 0 : i32
  %6 = elemptr %0, %5 : ptr<global, f32>
  store %6, %3
  ret
}
)";
    Module m = ParseOk(kOthers);
    Float32DivisionOptions options;
    options.fused_fma = true;
    EXPECT_EQ(DivideFloat32(m, options), 0u);
    EXPECT_EQ(Print(m), kOthers);
}

// Divisions by constant powers of two of magnitude >= 1 with a normal reciprocal become
// multiplications by it, under the division's id; the others stay divisions: 3, 0.5, 2^127
// (an f32 reciprocal that is subnormal) and an i64 2^40 converted to i32 (wraps to 0).
TEST(DivideByPowersOfTwo, RewritesExactReciprocalsOnly) {
    constexpr const char* kConsts = R"(param out.addr : u64 @0
param x : f32 @8
param y : f64 @16
func main {
%b0 entry:
  %0 = param 0 : u64
  %1 = param 1 : f32
  %2 = param 2 : f64
  %3 = const 2.0 : f32
  %4 = div %1, %3 : f32
  %5 = const -4 : i64
  %6 = convert %5 : f64
  %7 = div %2, %6 : f64
  %8 = const 3.0 : f32
  %9 = div %4, %8 : f32
  %10 = const 0.5 : f64
  %11 = div %7, %10 : f64
  %12 = const 1.7014118346046923e+38 : f32
  %13 = div %9, %12 : f32
  %14 = const 1099511627776 : i64
  %15 = convert %14 : i32
  %16 = convert %15 : f64
  %17 = div %11, %16 : f64
  %18 = const 1.0 : f64
  %19 = div %17, %18 : f64
  %20 = convert %19 : f32
  %21 = add %13, %20 : f32
  %22 = const 0 : i32
  %23 = elemptr %0, %22 : ptr<global, f32>
  store %23, %21
  ret
}
)";
    Module m = ParseOk(kConsts);
    EXPECT_EQ(DivideByPowersOfTwo(m), 3u);
    ASSERT_TRUE(Verify(m).ok()) << Verify(m).message();
    const std::string text = Print(m);
    EXPECT_NE(text.find("%4 = mul %1, %24 : f32"), std::string::npos) << text;
    EXPECT_NE(text.find("%7 = mul %2, %25 : f64"), std::string::npos) << text;
    EXPECT_NE(text.find("%19 = mul %17, %26 : f64"), std::string::npos) << text;
    EXPECT_NE(text.find("%24 = const 0.5 : f32"), std::string::npos) << text;
    EXPECT_NE(text.find("%25 = const -0.25 : f64"), std::string::npos) << text;
    EXPECT_NE(text.find("%26 = const 1.0 : f64"), std::string::npos) << text;
    for (const char* kept : {"%9 = div %4, %8", "%11 = div %7, %10", "%13 = div %9, %12",
                             "%17 = div %11, %16"}) {
        EXPECT_NE(text.find(kept), std::string::npos) << kept << "\n" << text;
    }
    EXPECT_EQ(DivideByPowersOfTwo(m), 0u);
}

}  // namespace
}  // namespace nvk::kir
