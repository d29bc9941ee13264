// DivideInt64InFloat64: the replacement computes C's quotient and remainder,
// checked through the KIR interpreter on edge cases and random operands.
#include "kir/int64_division.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kir/interpret.h"
#include "kir/parser.h"
#include "kir/printer.h"
#include "kir/verifier.h"

namespace nvk::kir {
namespace {

constexpr uint64_t kBase = 0x1000;

// out[0] = n OP d, with n and d of `type`.
Module DivisionModule(const std::string& op, const std::string& type) {
    const std::string text = "param out.addr : u64 @0\nparam n : " + type + " @8\nparam d : " +
                             type + " @16\nfunc main {\n%b0 entry:\n  %0 = param 0 : u64\n" +
                             "  %1 = param 1 : " + type + "\n  %2 = param 2 : " + type + "\n" +
                             "  %3 = " + op + " %1, %2 : " + type + "\n  %4 = const 0 : i32\n" +
                             "  %5 = elemptr %0, %4 : ptr<global, " + type + ">\n" +
                             "  store %5, %3\n  ret\n}\n";
    util::Result<Module> parsed = Parse(text);
    EXPECT_TRUE(parsed.ok()) << parsed.status().message();
    Module m = *parsed;
    EXPECT_EQ(DivideInt64InFloat64(m), 1u);
    EXPECT_TRUE(Verify(m).ok()) << Verify(m).message() << Print(m);
    return m;
}

uint64_t RunDivision(const Module& m, uint64_t n, uint64_t d) {
    Inputs in;
    in.params = {kBase, n, d};
    in.memory.push_back({kBase, std::vector<uint8_t>(8)});
    util::Result<Trace> t = Interpret(m, in, 10000);
    EXPECT_TRUE(t.ok() && t->finished);
    uint64_t v = 0;
    std::memcpy(&v, t->memory.at(0).bytes.data(), 8);
    return v;
}

// C's truncating quotient and remainder; -2^63 / -1 wraps to -2^63.
uint64_t Expected(bool is_signed, bool rem, uint64_t n, uint64_t d) {
    if (!is_signed) return rem ? n % d : n / d;
    const int64_t a = static_cast<int64_t>(n), b = static_cast<int64_t>(d);
    const uint64_t ua = a < 0 ? 0 - n : n, ub = b < 0 ? 0 - d : d;
    const uint64_t q = ua / ub, r = ua % ub;
    if (rem) return a < 0 ? 0 - r : r;
    return (a < 0) != (b < 0) ? 0 - q : q;
}

std::vector<uint64_t> EdgeValues() {
    std::vector<uint64_t> v = {0, 1, 2, 3, 5, 7, 10, 255, 65535, 1000000007};
    for (int k : {31, 32, 33, 52, 53, 54, 61, 62, 63}) {
        const uint64_t p = uint64_t{1} << k;
        v.insert(v.end(), {p - 1, p, p + 1, p + 3, (p >> 1) * 3});
    }
    const size_t n = v.size();
    for (size_t i = 0; i < n; ++i) v.push_back(0 - v[i]);  // and the top of u64 / negatives
    return v;
}

class Int64Division : public testing::TestWithParam<std::tuple<const char*, const char*>> {};

TEST_P(Int64Division, MatchesC) {
    const std::string op = std::get<0>(GetParam()), type = std::get<1>(GetParam());
    const Module m = DivisionModule(op, type);
    const bool is_signed = type == "i64", rem = op == "rem";
    std::vector<std::pair<uint64_t, uint64_t>> cases;
    const std::vector<uint64_t> edges = EdgeValues();
    for (uint64_t n : edges)
        for (uint64_t d : edges)
            if (d != 0) cases.push_back({n, d});
    std::mt19937_64 rng(20261201);
    for (int i = 0; i < 20000; ++i) {  // operands of random bit lengths
        const int nb = static_cast<int>(rng() % 65), db = 1 + static_cast<int>(rng() % 64);
        const uint64_t n = nb == 0 ? 0 : rng() >> (64 - nb);
        const uint64_t d = (rng() >> (64 - db)) | (uint64_t{1} << (db - 1));
        cases.push_back({n, rng() % 4 == 0 ? 0 - d : d});
    }
    size_t wrong = 0;
    for (auto [n, d] : cases) {
        const uint64_t want = Expected(is_signed, rem, n, d), got = RunDivision(m, n, d);
        if (want != got && ++wrong <= 5) {
            ADD_FAILURE() << op << " " << type << ": n=" << n << " d=" << d << " want " << want
                          << " got " << got;
        }
    }
    EXPECT_EQ(wrong, 0u) << "of " << cases.size();
}

INSTANTIATE_TEST_SUITE_P(OpsAndTypes, Int64Division,
                         testing::Combine(testing::Values("div", "rem"),
                                          testing::Values("u64", "i64")));

// Only 64-bit integer divisions are replaced: 32-bit ones and float ones stay.
TEST(Int64DivisionPass, LeavesOtherDivisionsAlone) {
    util::Result<Module> parsed = Parse(R"(param x : i32 @0
param y : f64 @8
func main {
%b0 entry:
  %0 = param 0 : i32
  %1 = param 1 : f64
  %2 = div %0, %0 : i32
  %3 = rem %0, %0 : i32
  %4 = div %1, %1 : f64
  ret
}
)");
    ASSERT_TRUE(parsed.ok()) << parsed.status().message();
    Module m = *parsed;
    const std::string before = Print(m);
    EXPECT_EQ(DivideInt64InFloat64(m), 0u);
    EXPECT_EQ(Print(m), before);
}

}  // namespace
}  // namespace nvk::kir
