// UnrollCountedLoops: which loops it unrolls, and that the interpreter gives
// the same memory and the same number of iterations before and after, over
// starts, steps and bounds around the unroll factor and next to the int64
// limits (where the guard must fall back to the original loop).
#include "unroll/unroll.h"

#include <gtest/gtest.h>

#include <array>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "kir/interpret.h"
#include "kir/parser.h"
#include "kir/printer.h"
#include "kir/verifier.h"

namespace nvk::unroll {
namespace {

// The two loop forms' parameters, entry block and exit (which stores acc and the cursor).
constexpr const char* kHead = R"(param out.addr : u64 @0
param start : i64 @8
param step : i64 @16
param n : i64 @24
func main {
%b0 entry:
  %0 = var : ptr<function, i64>
  %1 = var : ptr<function, i64>
  %2 = param 0 : u64
  %3 = param 1 : i64
  %4 = param 2 : i64
  %5 = param 3 : i64
  %22 = var : ptr<function, i64>
)";
constexpr const char* kExit = R"(%b3 exit:
  %16 = load %1 : i64
  %17 = const 0 : i64
  %18 = elemptr %2, %17 : ptr<global, i64>
  store %18, %16
  %19 = load %0 : i64
  %20 = const 1 : i64
  %21 = elemptr %2, %20 : ptr<global, i64>
  store %21, %19
  ret
}
)";

// i = start; acc = 0; while i < n: acc = acc * 3 + i; i += step
// (the order of the iterations shows in acc); then out[0] = acc, out[1] = i.
// %MOD is replaced to make loops the pass must leave alone.
const std::string kLoop = std::string(kHead) + R"(  br %b1
%b1 pre:
  store %0, %3
  %6 = const 0 : i64
  store %1, %6
  store %22, %5
  %7 = lt %3, %5 : bool
  condbr %7, %b2, %b3
%b2 body:
  %8 = load %1 : i64
  %9 = load %0 : i64
  %10 = const 3 : i64
  %11 = mul %8, %10 : i64
  %12 = add %11, %9 : i64
  store %1, %12
  %13 = add %9, %4 : i64
  store %0, %13
  %MOD
  %14 = load %0 : i64
  %23 = load %22 : i64
  %15 = lt %14, %23 : bool
  condbr %15, %b2, %b3
)" + kExit;

kir::Module ParsedText(const std::string& text) {
    auto m = kir::Parse(text);
    EXPECT_TRUE(m.ok()) << m.status().message() << "\n" << text;
    return std::move(m).value();
}

kir::Module Parsed(const std::string& mod, bool empty_latch = false) {
    std::string text = kLoop;
    text.replace(text.find("%MOD"), 4, mod);
    if (empty_latch) {  // Python 3.12's CFG: the back edge goes through a block of its own
        text.replace(text.find("condbr %15, %b2, %b3"), 20, "condbr %15, %b4, %b3");
        text.replace(text.rfind("}"), 1, "%b4 latch:\n  br %b2\n}");
    }
    return ParsedText(text);
}

int Unrolled(kir::Module& m, int factor = 4) {
    UnrollOptions options;
    options.factor = factor;
    auto r = UnrollCountedLoops(m, options);
    EXPECT_TRUE(r.ok()) << r.status().message();
    util::Status v = kir::Verify(m);
    EXPECT_TRUE(v.ok()) << v.message() << "\n" << kir::Print(m);
    return r.ok() ? *r : -1;
}

struct Outcome {
    bool finished;
    int64_t acc, i;
};

Outcome Execute(const kir::Module& m, int64_t start, int64_t step, int64_t n) {
    kir::Inputs in;
    in.params = {0x1000, static_cast<uint64_t>(start), static_cast<uint64_t>(step),
                 static_cast<uint64_t>(n)};
    in.memory.push_back({0x1000, std::vector<uint8_t>(16, 0)});
    auto t = kir::Interpret(m, in, 20000);
    EXPECT_TRUE(t.ok()) << t.status().message();
    Outcome r{t->finished, 0, 0};
    std::memcpy(&r.acc, t->memory[0].bytes.data(), 8);
    std::memcpy(&r.i, t->memory[0].bytes.data() + 8, 8);
    return r;
}

// The loop before and after the pass, run from (start, step, n): the same memory, and
// both finished or neither (`must_finish`: loops that end, which both must finish).
void ExpectSameRun(const kir::Module& before, const kir::Module& after, int64_t start,
                   int64_t step, int64_t n, bool must_finish, const std::string& what = "") {
    Outcome a = Execute(before, start, step, n), b = Execute(after, start, step, n);
    const std::string at = what + " " + std::to_string(start) + " " + std::to_string(step) +
                           " " + std::to_string(n);
    if (must_finish) {
        EXPECT_TRUE(a.finished && b.finished) << at;
    } else {
        EXPECT_EQ(a.finished, b.finished) << at;
    }
    if (a.finished && b.finished) {
        EXPECT_EQ(a.acc, b.acc) << at;
        EXPECT_EQ(a.i, b.i) << at;
    }
}

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
constexpr int64_t kTwo31 = int64_t{1} << 31;
constexpr int64_t kTop = kTwo31 - (int64_t{1} << 28);  // the guard's window ends here
constexpr int64_t kCap = (int64_t{1} << 28) / 4;         // steps from here run the original loop

TEST(Unroll, SameResultsForEveryTripCountAndFactor) {
    for (int factor : {2, 3, 4, 8, -4}) {  // -4: 4, with an empty latch block
        bool latch = factor < 0;
        factor = factor < 0 ? -factor : factor;
        kir::Module before = Parsed("", latch);
        kir::Module after = Parsed("", latch);
        ASSERT_EQ(Unrolled(after, factor), 1);
        for (int64_t start : {-3, 0, 5})
            for (int64_t step : {1, 2, 3, 7})
                for (int trips = 0; trips < 20; ++trips) {
                    int64_t n = start + trips * step - (trips ? step - 1 : 0);
                    ExpectSameRun(before, after, start, step, n, true, std::to_string(factor));
                }
    }
}

TEST(Unroll, NextToTheInt64Limits) {
    kir::Module before = Parsed("");
    kir::Module after = Parsed("");
    ASSERT_EQ(Unrolled(after), 1);
    struct Case { int64_t start, step, n; };
    // Loops that end (the last i is the bound itself, or the step jumps past
    // it without wrapping) and a few that wrap around and run out of steps.
    for (Case c : {Case{kMax - 20, 4, kMax}, Case{kMax - 9, 3, kMax}, Case{kMax - 98, 7, kMax},
                   Case{-(int64_t{1} << 62), int64_t{1} << 61, (int64_t{1} << 62) + 1},
                   Case{kMin, int64_t{1} << 62, int64_t{1} << 62}, Case{kMin + 1, kMax, 0},
                   Case{kMin, 1000, kMin + 10'000}, Case{kMax - 20, 7, kMax},
                   Case{-5, 0, 10}, Case{5, -1, 10},
                   // Either side of the guard's window [-2^31, 2^31 - 2^28) and step cap.
                   Case{kTop - 9, 1, kTop + 9}, Case{kTop - 2, 3, kTop + 30},
                   Case{-kTwo31 - 5, 2, -kTwo31 + 20}, Case{0, kCap - 1, 9 * kCap},
                   Case{0, kCap, 9 * kCap}, Case{-7, kCap + 1, 5 * kCap}}) {
        ExpectSameRun(before, after, c.start, c.step, c.n, false);
    }
}

TEST(Unroll, LeavesAloneLoopsWhoseBoundOrStepChangeOrThatSynchronise) {
    const char* mods[] = {
        "store %22, %12",                // the bound changes in the loop (bound = acc)
        "store %0, %9",                  // i stored twice
        "barrier workgroup",             // copies would break the barrier's uniformity
    };
    for (const char* mod : mods) {
        kir::Module m = Parsed(mod);
        EXPECT_EQ(Unrolled(m), 0) << mod;
    }
    kir::Module m = Parsed("");
    EXPECT_EQ(Unrolled(m, 1), 0);
}

// for j in range(start, n, step): acc = acc * 3 + j   (as frontend/loops.py lowers it:
// a header that tests the cursor %0 against n by the step's sign and advances it, and
// a body that reads the value in %23); then out[0] = acc, out[1] = the cursor. %TEST
// is replaced by the test of a literal positive step.
const std::string kRange = std::string(kHead) + R"(  %23 = var : ptr<function, i64>
  %24 = var : ptr<function, i64>
  br %b1
%b1 pre:
  store %0, %3
  %6 = const 0 : i64
  store %1, %6
  store %22, %5
  store %24, %4
  br %b2
%b2 L10:
  %7 = load %0 : i64
  %8 = load %22 : i64
  %9 = load %24 : i64
  %30 = const 0 : i64
  %31 = gt %9, %30 : bool
  %32 = lt %7, %8 : bool
  %33 = and %31, %32 : bool
  %34 = lt %9, %30 : bool
  %35 = gt %7, %8 : bool
  %36 = and %34, %35 : bool
  %37 = or %33, %36 : bool
  %TEST
  %38 = add %7, %9 : i64
  store %0, %38
  store %23, %7
  condbr %37, %b4, %b3
%b4 L12:
  %10 = load %1 : i64
  %11 = load %23 : i64
  %12 = const 3 : i64
  %13 = mul %10, %12 : i64
  %14 = add %13, %11 : i64
  store %1, %14
  br %b2
)" + kExit;

kir::Module ParsedRange(bool literal_step, bool empty_latch = false) {
    std::string text = kRange;
    // A literal positive step: the header tests j < n alone.
    text.replace(text.find("%TEST"), 5, literal_step ? "%39 = lt %7, %8 : bool" : "");
    if (literal_step) text.replace(text.find("condbr %37"), 10, "condbr %39");
    if (empty_latch) {
        text.replace(text.find("  br %b2\n%b3"), 9, "  br %b5\n");
        text.replace(text.rfind("}"), 1, "%b5 latch:\n  br %b2\n}");
    }
    return ParsedText(text);
}

TEST(Unroll, RangeLoopsAreRotatedThenUnrolled) {
    for (bool literal : {false, true})
        for (bool latch : {false, true})
            for (int factor : {2, 4, 8}) {
                kir::Module before = ParsedRange(literal, latch);
                kir::Module after = ParsedRange(literal, latch);
                ASSERT_EQ(Unrolled(after, factor), 1) << kir::Print(after);
                std::vector<int64_t> steps = {1, 2, 3, 7};
                if (!literal) steps.insert(steps.end(), {0, -1, -3});  // the run-time sign
                for (int64_t start : {-3, 0, 5})
                    for (int64_t step : steps)
                        for (int trips = 0; trips < 20; ++trips) {
                            int64_t n = start + trips * step - (trips && step > 0 ? step - 1 : 0);
                            ExpectSameRun(before, after, start, step, n, true,
                                          std::to_string(literal) + std::to_string(latch) +
                                              std::to_string(factor));
                        }
                // Next to the limits and either side of the guard's window and step cap.
                for (auto [start, step, n] : std::vector<std::array<int64_t, 3>>{
                         {kMax - 20, 4, kMax}, {kMax - 98, 7, kMax}, {kTop - 9, 1, kTop + 9},
                         {kTop - 2, 3, kTop + 30}, {-kTwo31 - 5, 2, -kTwo31 + 20},
                         {0, kCap - 1, 9 * kCap}, {0, kCap, 9 * kCap}})
                    ExpectSameRun(before, after, start, step, n, false);
            }
}

TEST(Unroll, LeavesAloneRangeLoopsWithKnownTripCounts) {
    kir::Module m = ParsedRange(true);
    UnrollOptions options;
    options.static_headers = {"L10"};  // the front end knew its trip count
    auto r = UnrollCountedLoops(m, options);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(*r, 0);
}

}  // namespace
}  // namespace nvk::unroll
