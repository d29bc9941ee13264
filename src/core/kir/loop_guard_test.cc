// GuardLoops: a guarded kernel computes what it did, counts itself started and
// finished when its loops run to their own ends (nested loops, a return from
// inside two loops, a loop after them), and is not counted finished when a
// driver's loop cap (modelled by the interpreter, as lavapipe does it) cuts any
// of them.
#include "kir/loop_guard.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "kir/interpret.h"
#include "kir/parse_test_util.h"
#include "kir/printer.h"
#include "kir/verifier.h"
#include "structurize/structurize.h"

namespace nvk::kir {
namespace {

// s = 0
// for i in range(n1):
//     for j in range(n2):
//         s += 1
//         if s == stop: out[0] = s + 1000; return
// for k in range(n3): s += 2
// out[0] = s
constexpr const char* kLoops = R"(param out.addr : u64 @0
param n1 : i32 @8
param n2 : i32 @12
param stop : i32 @16
param n3 : i32 @20
func main {
%b0 entry:
  %0 = param 0 : u64
  %1 = param 1 : i32
  %2 = param 2 : i32
  %3 = param 3 : i32
  %4 = param 4 : i32
  %5 = var : ptr<function, i32>
  %6 = var : ptr<function, i32>
  %7 = var : ptr<function, i32>
  %8 = var : ptr<function, i32>
  %9 = const 0 : i32
  store %5, %9
  store %6, %9
  br %b1
%b1 a_head:
  %10 = load %6 : i32
  %11 = lt %10, %1 : bool
  condbr %11, %b2, %b6
%b2 a_body:
  %12 = const 0 : i32
  store %7, %12
  br %b3
%b3 b_head:
  %13 = load %7 : i32
  %14 = lt %13, %2 : bool
  condbr %14, %b4, %b5
%b4 b_body:
  %15 = load %5 : i32
  %16 = const 1 : i32
  %17 = add %15, %16 : i32
  store %5, %17
  %18 = load %7 : i32
  %19 = add %18, %16 : i32
  store %7, %19
  %20 = eq %17, %3 : bool
  condbr %20, %b9, %b3
%b5 a_latch:
  %21 = load %6 : i32
  %22 = const 1 : i32
  %23 = add %21, %22 : i32
  store %6, %23
  br %b1
%b6 after:
  %24 = const 0 : i32
  store %8, %24
  br %b7
%b7 c_head:
  %25 = load %8 : i32
  %26 = lt %25, %4 : bool
  condbr %26, %b8, %b10
%b8 c_body:
  %27 = load %5 : i32
  %28 = const 2 : i32
  %29 = add %27, %28 : i32
  store %5, %29
  %30 = load %8 : i32
  %31 = const 1 : i32
  %32 = add %30, %31 : i32
  store %8, %32
  br %b7
%b9 early:
  %33 = load %5 : i32
  %34 = const 1000 : i32
  %35 = add %33, %34 : i32
  %36 = const 0 : i32
  %37 = elemptr %0, %36 : ptr<global, i32>
  store %37, %35
  ret
%b10 end:
  %38 = load %5 : i32
  %39 = const 0 : i32
  %40 = elemptr %0, %39 : ptr<global, i32>
  store %40, %38
  ret
}
)";

constexpr uint64_t kOut = 0x1000, kStatus = 0x2000;
constexpr uint32_t kKey = 0xC0FFEE;

Module Guarded(bool ballot = true) {
    Module m = ParseOk(kLoops);
    LoopGuardOptions o;
    o.status_param = "status.addr";
    o.kernel_key = kKey;
    o.subgroup_ballot = ballot;
    EXPECT_EQ(GuardLoops(m, o), 3u);  // a, b (nested) and c
    util::Status v = Verify(m);
    EXPECT_TRUE(v.ok()) << v.message() << "\n" << Print(m);
    return m;
}

struct Counts {
    int32_t out = 0;
    uint32_t started = 0, finished = 0, kernel = 0;
    bool ran_to_end = false;  // else it ended at an Unreachable after a cut loop
};

Counts Interpret(const Module& m, int n1, int n2, int stop, int n3, size_t cap = 0, uint32_t local_x = 0) {
    // A cut loop may end the run unfinished (Inputs::loop_cap): its counts are those so far.
    Inputs in;
    in.params = {kOut, uint64_t(uint32_t(n1)), uint64_t(uint32_t(n2)), uint64_t(uint32_t(stop)),
                 uint64_t(uint32_t(n3)), kStatus};
    in.builtins[{Builtin::kLocalId, 0}] = local_x;
    for (uint32_t axis = 0; axis < 3; ++axis) in.builtins[{Builtin::kLocalSize, axis}] = axis == 0 ? 4 : 1;
    in.memory = {{kOut, std::vector<uint8_t>(4)}, {kStatus, std::vector<uint8_t>(64)}};
    in.loop_cap = cap;
    util::Result<Trace> t = kir::Interpret(m, in, 1u << 20);
    EXPECT_TRUE(t.ok()) << t.status().message();
    Counts r;
    if (!t.ok()) return r;
    r.ran_to_end = t->finished;
    EXPECT_TRUE(t->finished || cap != 0);
    std::memcpy(&r.out, t->memory[0].bytes.data(), 4);
    const uint8_t* words = t->memory[1].bytes.data();
    std::memcpy(&r.started, words + 4 * kLoopStartedWord, 4);
    std::memcpy(&r.finished, words + 4 * kLoopFinishedWord, 4);
    std::memcpy(&r.kernel, words + 4 * kLoopKernelWord, 4);
    return r;
}

TEST(LoopGuard, KernelWithoutLoopsIsUnchanged) {
    Module m = ParseOk(R"(param out.addr : u64 @0
func main {
%b0 entry:
  %0 = param 0 : u64
  %1 = const 0 : i32
  %2 = elemptr %0, %1 : ptr<global, i32>
  store %2, %1
  ret
}
)");
    const std::string before = Print(m);
    LoopGuardOptions o;
    o.status_param = "status.addr";
    EXPECT_EQ(GuardLoops(m, o), 0u);
    EXPECT_EQ(Print(m), before);
}

TEST(LoopGuard, LoopsTheFrontEndBoundedAreLeftAsTheyAre) {
    // kLoops has three loops (headers a_head, b_head, c_head): named all, nothing changes.
    Module m = ParseOk(kLoops);
    const std::string before = Print(m);
    LoopGuardOptions o;
    o.status_param = "status.addr";
    o.bounded_headers = {"c_head", "a_head", "b_head"};
    EXPECT_EQ(GuardLoops(m, o), 0u);
    EXPECT_EQ(Print(m), before);
    // One loop left out (a device function's, a sum's), a name twice, or a name that is
    // not a loop's header: every loop is guarded.
    for (const std::vector<std::string>& names :
         {std::vector<std::string>{"a_head", "b_head"}, {"a_head", "b_head", "b_head"},
          {"a_head", "b_head", "a_body"}, {"a_head", "b_head", "c_head", "a_body"}}) {
        Module n = ParseOk(kLoops);
        o.bounded_headers = names;
        EXPECT_EQ(GuardLoops(n, o), 3u);
    }
}

TEST(LoopGuard, SameResultsAndBalancedCounts) {
    const Module original = ParseOk(kLoops);
    for (bool ballot : {true, false}) {
        const Module guarded = Guarded(ballot);
        for (auto [n1, n2, stop, n3] : {std::tuple{0, 0, -1, 0}, {3, 4, -1, 5}, {3, 4, 7, 5},
                                        {2, 0, -1, 3}, {0, 5, 1, 2}, {5, 5, 25, 0}}) {
            const Counts want = Interpret(original, n1, n2, stop, n3);
            const Counts got = Interpret(guarded, n1, n2, stop, n3);
            EXPECT_EQ(got.out, want.out) << n1 << " " << n2 << " " << stop << " " << n3;
            EXPECT_EQ(got.started, 4u);  // the workgroup's size, by its invocation (0, 0, 0)
            EXPECT_EQ(got.finished, 1u);
            EXPECT_EQ(got.kernel, kKey);
            const Counts other = Interpret(guarded, n1, n2, stop, n3, 0, /*local_x=*/1);
            EXPECT_EQ(other.started, 0u);
            EXPECT_EQ(other.finished, 1u);
        }
    }
}

TEST(LoopGuard, ACutLoopIsNotCountedFinished) {
    Module guarded = Guarded();
    ASSERT_TRUE(structurize::Structurize(guarded).ok());
    ASSERT_TRUE(Verify(guarded).ok()) << Print(guarded);
    Module original = ParseOk(kLoops);
    ASSERT_TRUE(structurize::Structurize(original).ok());
    // 3 x 4 inner iterations and 5 of the last loop: 3 * 4 + 3 + 5 = 20 back edges.
    const Counts full = Interpret(guarded, 3, 4, -1, 5, /*cap=*/21);
    EXPECT_EQ(full.out, 22);
    EXPECT_EQ(full.finished, 1u);
    int ran_to_end = 0;
    for (size_t cap : {2, 5, 12, 16, 19, 20}) {
        // The cap changes the original's result: the model cuts loops as the driver does...
        EXPECT_NE(Interpret(original, 3, 4, -1, 5, cap).out, 22) << cap;
        // ...and the guarded kernel, cut the same way, is not counted as finished.
        const Counts cut = Interpret(guarded, 3, 4, -1, 5, cap);
        EXPECT_EQ(cut.started, 4u) << cap;
        EXPECT_EQ(cut.finished, 0u) << cap;
        ran_to_end += cut.ran_to_end;
    }
    // Some cuts reach the exit (the balance tells), others end at an Unreachable after the
    // structurizer's dispatch (the interpreter stops there; lavapipe goes on).
    EXPECT_GT(ran_to_end, 0);
    // A return from inside both loops before the cap: not cut.
    const Counts early = Interpret(guarded, 3, 4, 6, 5, /*cap=*/8);
    EXPECT_EQ(early.out, 1006);
    EXPECT_EQ(early.finished, 1u);
}

}  // namespace
}  // namespace nvk::kir
