// InvocationTraffic: the bytes of global loads and stores one invocation's code holds
// (both arms of a branch, each op once; workgroup and function memory not counted), its
// atomics and its loops.
#include "kir/traffic.h"

#include <gtest/gtest.h>

#include "kir/parse_test_util.h"

namespace nvk::kir {
namespace {

// if x[i] > 0: out[i] = 1 (an i8) else out[i] = x[i] as i64; a workgroup array's
// element written and read (not global memory).
constexpr const char* kBranches = R"(param x.addr : u64 @0
param out.addr : u64 @8
func main {
%b0 entry:
  %0 = param 0 : u64
  %1 = param 1 : u64
  %2 = builtin global_id 0 : u32
  %3 = arrayvar 4 : ptr<workgroup, f64>
  %4 = elemptr %0, %2 : ptr<global, i32>
  %5 = load %4 : i32
  %6 = const 0 : i32
  %7 = gt %5, %6 : bool
  condbr %7, %b1, %b2
%b1 then:
  %8 = elemptr %1, %2 : ptr<global, i8>
  %9 = const 1 : i8
  store %8, %9
  br %b3
%b2 else:
  %10 = elemptr %1, %2 : ptr<global, i64>
  %11 = convert %5 : i64
  store %10, %11
  br %b3
%b3 done:
  %12 = indexptr %3, %6 : ptr<workgroup, f64>
  %13 = const 0.5 : f64
  store %12, %13
  %14 = load %12 : f64
  ret
}
)";

TEST(Traffic, CountsEachGlobalAccessOnceAndNothingElse) {
    const Traffic t = InvocationTraffic(ParseOk(kBranches));
    EXPECT_EQ(t.global_bytes, 4u + 1u + 8u);
    EXPECT_EQ(t.atomics, 0u);
    EXPECT_EQ(t.loops, 0u);
}

// for i in range(n): atomic add out[0] += 1; then out[1] = 0 (an f32 store)
constexpr const char* kLoopWithAtomic = R"(param out.addr : u64 @0
param n : i32 @8
func main {
%b0 entry:
  %0 = param 0 : u64
  %1 = param 1 : i32
  %2 = var : ptr<function, i32>
  %3 = const 0 : i32
  %4 = const 1 : i32
  store %2, %3
  br %b1
%b1 head:
  %5 = load %2 : i32
  %6 = lt %5, %1 : bool
  condbr %6, %b2, %b3
%b2 body:
  %7 = elemptr %0, %3 : ptr<global, i32>
  %8 = atomic add %7, %4 : i32
  %9 = add %5, %4 : i32
  store %2, %9
  br %b1
%b3 exit:
  %10 = elemptr %0, %4 : ptr<global, f32>
  %11 = const 0.0 : f32
  store %10, %11
  ret
}
)";

TEST(Traffic, SeesLoopsAndAtomics) {
    const Traffic t = InvocationTraffic(ParseOk(kLoopWithAtomic));
    EXPECT_EQ(t.global_bytes, 4u);  // the atomic is counted as an atomic, not as bytes
    EXPECT_EQ(t.atomics, 1u);
    EXPECT_EQ(t.loops, 1u);
}

}  // namespace
}  // namespace nvk::kir
