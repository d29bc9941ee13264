// SoftRounding: Floor, Ceil and Trunc from the bits give the C library's
// results bit for bit (signed zeros, halves, the edges of the mantissa, the
// subnormals, infinities and NaN), in the KIR interpreter.
#include "kir/soft_rounding.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "kir/interpret.h"
#include "kir/parser.h"
#include "kir/printer.h"
#include "kir/verifier.h"

namespace nvk::kir {
namespace {

// out[0..2] = floor(x), ceil(x), trunc(x) of one parameter x of `type`.
Module RoundingModule(const std::string& type) {
    const std::string size = type == "f64" ? "8" : "4";
    const std::string text = "param out.addr : u64 @0\nparam x : " + type +
                             " @8\nfunc main {\n%b0 entry:\n"
                             "  %0 = param 0 : u64\n  %1 = param 1 : " + type + "\n"
                             "  %2 = math floor %1 : " + type + "\n"
                             "  %3 = math ceil %1 : " + type + "\n"
                             "  %4 = math trunc %1 : " + type + "\n"
                             "  %5 = const 0 : i32\n  %6 = elemptr %0, %5 : ptr<global, " + type + ">\n"
                             "  store %6, %2\n"
                             "  %7 = const 1 : i32\n  %8 = elemptr %0, %7 : ptr<global, " + type + ">\n"
                             "  store %8, %3\n"
                             "  %9 = const 2 : i32\n  %10 = elemptr %0, %9 : ptr<global, " + type + ">\n"
                             "  store %10, %4\n  ret\n}\n";
    util::Result<Module> m = Parse(text);
    EXPECT_TRUE(m.ok()) << m.status().message() << "\n" << size;
    return m.ok() ? *m : Module();
}

template <typename F>
std::vector<F> Operands() {
    using L = std::numeric_limits<F>;
    const F p = static_cast<F>(std::ldexp(1.0, L::digits - 1));  // 2^mantissa: the first spacing of 1
    std::vector<F> v = {F(0), -F(0), F(0.5), F(-0.5), F(0.4), F(-0.4), F(1), F(-1), F(1.5),
                        F(-1.5), F(2.5), F(-2.5), F(3.7), F(-3.7), L::denorm_min(), -L::denorm_min(),
                        L::min(), -L::min(), L::max(), -L::max(), L::infinity(), -L::infinity(),
                        L::quiet_NaN(), -L::quiet_NaN(), p, -p, F(1e10) + F(0.25),
                        -(F(1e10) + F(0.25)), F(2147483648.0), F(9.3e18), -F(9.3e18)};
    for (F base : {p, F(p / 2), F(p / 4), F(2147483648.0), F(1), F(1 << 20)})
        for (F s : {F(1), F(-1)}) {
            F x = s * base;
            for (int j = 0; j < 4; ++j) {  // the neighbours on both sides
                v.push_back(x);
                v.push_back(std::nextafter(x, L::infinity()));
                v.push_back(std::nextafter(x, -L::infinity()));
                x = std::nextafter(x, L::infinity());
            }
            v.push_back(s * (base + F(0.5)));
            v.push_back(s * (base - F(0.5)));
        }
    uint64_t state = 12345;  // random bit patterns
    for (int j = 0; j < 2000; ++j) {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        if constexpr (sizeof(F) == 8) {
            v.push_back(std::bit_cast<F>(state));
        } else {
            v.push_back(std::bit_cast<F>(static_cast<uint32_t>(state >> 32)));
        }
    }
    return v;
}

template <typename F, typename U>
void CheckAgainstLibm(const std::string& type, unsigned widths) {
    Module m = RoundingModule(type);
    ASSERT_EQ(SoftRounding(m, widths), 3u);
    ASSERT_TRUE(Verify(m).ok()) << Verify(m).message() << "\n" << Print(m);
    EXPECT_EQ(Print(m).find("math"), std::string::npos) << Print(m);
    for (F x : Operands<F>()) {
        Inputs in;
        in.params = {0x1000, std::bit_cast<U>(x)};
        in.memory.push_back({0x1000, std::vector<uint8_t>(3 * sizeof(F), 0)});
        util::Result<Trace> t = Interpret(m, in, 10000);
        ASSERT_TRUE(t.ok()) << t.status().message();
        U got[3];
        std::memcpy(got, t->memory[0].bytes.data(), sizeof(got));
        const F want[3] = {std::floor(x), std::ceil(x), std::trunc(x)};
        const char* names[3] = {"floor", "ceil", "trunc"};
        for (int j = 0; j < 3; ++j) {
            if (std::isnan(x)) {  // NaN stays NaN, its bits unchanged
                EXPECT_EQ(got[j], std::bit_cast<U>(x)) << names[j];
                continue;
            }
            EXPECT_EQ(got[j], std::bit_cast<U>(want[j]))
                << names[j] << "(" << x << ") = " << std::bit_cast<F>(got[j]) << ", want " << want[j];
        }
    }
}

TEST(SoftRounding, Float64AsTheCLibrary) { CheckAgainstLibm<double, uint64_t>("f64", kSoftRoundingF64); }

TEST(SoftRounding, Float32AsTheCLibrary) { CheckAgainstLibm<float, uint32_t>("f32", kSoftRoundingF32); }

// Only the widths asked for are rewritten.
TEST(SoftRounding, LeavesOtherWidthsAlone) {
    Module m = RoundingModule("f32");
    EXPECT_EQ(SoftRounding(m, kSoftRoundingF64), 0u);
    EXPECT_NE(Print(m).find("math trunc"), std::string::npos);
}

}  // namespace
}  // namespace nvk::kir
