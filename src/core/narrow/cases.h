// KIR modules for the narrowing tests, in the shapes the front end builds
// (Python variables as vars, iternext storing `k < n` in a bool variable
// before the branch, indices truncated to i32 and wrapped). Each writes its
// results to `out` (param 0, 64 slots of 8 bytes), so that the differential
// test can compare the memory before and after the pass. narrow_test.cc
// checks what the pass does to each; narrow_fuzz_test.cc runs them all.
#pragma once

#include <string>
#include <vector>

namespace nvk::narrow::testing {

struct Case {
    std::string name;
    std::string text;
};

// for k in range(n): out[k & 63] = k      (n: an i32 extent, as in the 32-bit
// index specialisation, converted to i64 as Numba types it)
inline const char* kRangeLoop = R"(
param out.addr : u64 @0
param n : i32 @8
func main {
%b0 entry:
  %0 = var : ptr<function, i64>
  %1 = var : ptr<function, bool>
  %2 = var : ptr<function, i64>
  %3 = param 0 : u64
  %4 = param 1 : i32
  %5 = convert %4 : i64
  %6 = const 0 : i64
  store %0, %6
  br %b1
%b1 header:
  %7 = load %0 : i64
  %8 = lt %7, %5 : bool
  %9 = const 1 : i64
  %10 = add %7, %9 : i64
  store %0, %10
  store %2, %7
  store %1, %8
  %11 = load %1 : bool
  condbr %11, %b2, %b3
%b2 body:
  %12 = load %2 : i64
  %13 = const 63 : i64
  %14 = and %12, %13 : i64
  %15 = convert %14 : i32
  %16 = elemptr %3, %15 : ptr<global, i64>
  store %16, %12
  br %b1
%b3 exit:
  ret
}
)";

// The same loop bounded by an i64 parameter: k may reach 2^63 - 1, nothing narrows
// but the truncated index.
inline const char* kRangeLoopI64 = R"(
param out.addr : u64 @0
param n : i64 @8
func main {
%b0 entry:
  %0 = var : ptr<function, i64>
  %1 = var : ptr<function, bool>
  %2 = var : ptr<function, i64>
  %3 = param 0 : u64
  %5 = param 1 : i64
  %6 = const 0 : i64
  store %0, %6
  br %b1
%b1 header:
  %7 = load %0 : i64
  %8 = lt %7, %5 : bool
  %9 = const 1 : i64
  %10 = add %7, %9 : i64
  store %0, %10
  store %2, %7
  store %1, %8
  %11 = load %1 : bool
  condbr %11, %b2, %b3
%b2 body:
  %12 = load %2 : i64
  %13 = const 63 : i64
  %14 = and %12, %13 : i64
  %15 = convert %14 : i32
  %16 = elemptr %3, %15 : ptr<global, i64>
  store %16, %12
  br %b1
%b3 exit:
  ret
}
)";

// i = global_id(0) (u32 -> i64); if i < a.shape[0]: out[i & 63] = i * 3 + 1
// (3 * i may exceed 2^32); and `i > t` with t an i32 (a u32-ranged value
// against a maybe negative one: no common 32-bit kind) is stored as well.
inline const char* kIdGuard = R"(
param out.addr : u64 @0
param "a.shape[0]" : i32 @8
param t : i32 @12
func main {
%b0 entry:
  %0 = var : ptr<function, i64>
  %1 = var : ptr<function, bool>
  %2 = param 0 : u64
  %3 = param 1 : i32
  %25 = param 2 : i32
  %4 = builtin global_id 0 : u32
  %5 = convert %4 : i64
  store %0, %5
  %6 = load %0 : i64
  %7 = convert %3 : i64
  %8 = lt %6, %7 : bool
  store %1, %8
  %9 = load %1 : bool
  condbr %9, %b1, %b2
%b1 then:
  %10 = load %0 : i64
  %11 = const 3 : i64
  %12 = mul %10, %11 : i64
  %13 = const 1 : i64
  %14 = add %12, %13 : i64
  %15 = const 63 : i64
  %16 = and %10, %15 : i64
  %17 = convert %16 : i32
  %18 = elemptr %2, %17 : ptr<global, i64>
  store %18, %14
  br %b2
%b2 exit:
  %19 = load %0 : i64
  %20 = convert %25 : i64
  %21 = gt %19, %20 : bool
  %22 = convert %21 : i64
  %23 = const 63 : i32
  %24 = elemptr %2, %23 : ptr<global, i64>
  store %24, %22
  ret
}
)";

// x, y in [0, 2^20]: x * y may exceed 2^31 (and 2^32): the product stays i64;
// x + y fits i32 and narrows.
inline const char* kWideProduct = R"(
param out.addr : u64 @0
param x : i64 @8
param y : i64 @16
func main {
%b0 entry:
  %0 = param 0 : u64
  %1 = param 1 : i64
  %2 = param 2 : i64
  %3 = const 1048575 : i64
  %4 = and %1, %3 : i64
  %5 = and %2, %3 : i64
  %6 = mul %4, %5 : i64
  %7 = add %4, %5 : i64
  %8 = const 0 : i32
  %9 = elemptr %0, %8 : ptr<global, i64>
  store %9, %6
  %10 = const 1 : i32
  %11 = elemptr %0, %10 : ptr<global, i64>
  store %11, %7
  ret
}
)";

// A uint32 xorshift step as Numba types it: h is a u32 variable, the shifts
// and xors happen in u64 and the result is truncated when stored back.
inline const char* kXorshift = R"(
param out.addr : u64 @0
param seed : u32 @8
func main {
%b0 entry:
  %0 = var : ptr<function, u32>
  %1 = param 0 : u64
  %2 = param 1 : u32
  store %0, %2
  %3 = load %0 : u32
  %4 = convert %3 : u64
  %5 = const 13 : u64
  %6 = shl %4, %5 : u64
  %7 = xor %4, %6 : u64
  %8 = convert %7 : u32
  store %0, %8
  %9 = load %0 : u32
  %10 = convert %9 : u64
  %11 = const 17 : u64
  %12 = shr %10, %11 : u64
  %13 = xor %10, %12 : u64
  %14 = convert %13 : u32
  store %0, %14
  %15 = load %0 : u32
  %16 = convert %15 : u64
  %17 = const 5 : u64
  %18 = shl %16, %17 : u64
  %19 = xor %16, %18 : u64
  %20 = convert %19 : u32
  store %0, %20
  %21 = load %0 : u32
  %22 = const 0 : i32
  %23 = elemptr %1, %22 : ptr<global, u32>
  store %23, %21
  ret
}
)";

// h = h * 31 + x in an i64 variable over a loop, observed only as an int32:
// the variable and its math become 32-bit whatever their range.
inline const char* kTruncatedAccumulator = R"(
param out.addr : u64 @0
param x : i64 @8
param n : i32 @16
func main {
%b0 entry:
  %0 = var : ptr<function, i64>
  %1 = var : ptr<function, i64>
  %2 = param 0 : u64
  %3 = param 1 : i64
  %4 = param 2 : i32
  %5 = convert %4 : i64
  %6 = const 0 : i64
  store %0, %3
  store %1, %6
  br %b1
%b1 header:
  %7 = load %1 : i64
  %8 = lt %7, %5 : bool
  condbr %8, %b2, %b3
%b2 body:
  %9 = load %0 : i64
  %10 = const 31 : i64
  %11 = mul %9, %10 : i64
  %12 = load %1 : i64
  %13 = add %11, %12 : i64
  %16 = xor %13, %3 : i64
  store %0, %16
  %17 = const 1 : i64
  %18 = add %12, %17 : i64
  store %1, %18
  br %b1
%b3 exit:
  %19 = load %0 : i64
  %20 = convert %19 : i32
  %21 = const 0 : i32
  %22 = elemptr %2, %21 : ptr<global, i32>
  store %22, %20
  ret
}
)";

// Division: a u32-ranged value // 3 narrows (to u32); an i32-ranged value
// divided by an i32-ranged one does not (INT_MIN / -1 = 2^31), nor its rem
// result's neighbour a % b... which does fit: |a % b| < 2^31.
inline const char* kDivRem = R"(
param out.addr : u64 @0
param u : u32 @8
param a : i32 @12
param b : i32 @16
func main {
%b0 entry:
  %0 = param 0 : u64
  %1 = param 1 : u32
  %2 = param 2 : i32
  %3 = param 3 : i32
  %4 = convert %1 : i64
  %5 = convert %2 : i64
  %6 = convert %3 : i64
  %7 = const 0 : i64
  %8 = eq %6, %7 : bool
  condbr %8, %b2, %b1
%b1 divide:
  %9 = const 3 : i64
  %10 = div %4, %9 : i64
  %11 = div %5, %6 : i64
  %12 = rem %5, %6 : i64
  %13 = rem %4, %9 : i64
  %14 = const 0 : i32
  %15 = elemptr %0, %14 : ptr<global, i64>
  store %15, %10
  %16 = const 1 : i32
  %17 = elemptr %0, %16 : ptr<global, i64>
  store %17, %11
  %18 = const 2 : i32
  %19 = elemptr %0, %18 : ptr<global, i64>
  store %19, %12
  %20 = const 3 : i32
  %21 = elemptr %0, %20 : ptr<global, i64>
  store %21, %13
  br %b2
%b2 exit:
  ret
}
)";

// Shifts: by a count proven < 32 (c & 31) a small value narrows; by a count
// that may reach 63 (c & 63) it does not; shr of an i32-ranged value by c & 31
// narrows whatever the sign.
inline const char* kShifts = R"(
param out.addr : u64 @0
param x : i16 @8
param c : i64 @16
param y : i32 @24
func main {
%b0 entry:
  %0 = param 0 : u64
  %1 = param 1 : i16
  %2 = param 2 : i64
  %3 = param 3 : i32
  %4 = convert %1 : i64
  %5 = convert %3 : i64
  %6 = const 15 : i64
  %7 = and %2, %6 : i64
  %8 = shl %4, %7 : i64
  %9 = const 63 : i64
  %10 = and %2, %9 : i64
  %11 = shl %4, %10 : i64
  %12 = const 31 : i64
  %13 = and %2, %12 : i64
  %14 = shr %5, %13 : i64
  %15 = shr %5, %10 : i64
  %16 = const 0 : i32
  %17 = elemptr %0, %16 : ptr<global, i64>
  store %17, %8
  %18 = const 1 : i32
  %19 = elemptr %0, %18 : ptr<global, i64>
  store %19, %11
  %20 = const 2 : i32
  %21 = elemptr %0, %20 : ptr<global, i64>
  store %21, %14
  %22 = const 3 : i32
  %23 = elemptr %0, %22 : ptr<global, i64>
  store %23, %15
  ret
}
)";

// Two-dimensional indexing as the front end builds it in the 32-bit index
// specialisation: out[i, j] = float(i - j) with i, j = global ids guarded by
// the extents, negative indices wrapped, the linear index in i32.
inline const char* kIndex2d = R"(
param out.addr : u64 @0
param "out.shape[0]" : i32 @8
param "out.shape[1]" : i32 @12
param "out.strides[0]" : i32 @16
param "out.strides[1]" : i32 @20
func main {
%b0 entry:
  %0 = var : ptr<function, i64>
  %1 = var : ptr<function, i64>
  %2 = var : ptr<function, bool>
  %3 = param 0 : u64
  %4 = param 1 : i32
  %5 = param 2 : i32
  %6 = param 3 : i32
  %7 = param 4 : i32
  %8 = builtin global_id 0 : u32
  %9 = builtin global_id 1 : u32
  %10 = convert %8 : i64
  store %0, %10
  %11 = convert %9 : i64
  store %1, %11
  %12 = load %0 : i64
  %13 = convert %4 : i64
  %14 = lt %12, %13 : bool
  store %2, %14
  %15 = load %2 : bool
  condbr %15, %b1, %b3
%b1 and:
  %16 = load %1 : i64
  %17 = convert %5 : i64
  %18 = lt %16, %17 : bool
  condbr %18, %b2, %b3
%b2 then:
  %19 = load %0 : i64
  %20 = load %1 : i64
  %21 = sub %19, %20 : i64
  %22 = convert %21 : f32
  %23 = convert %19 : i32
  %24 = const 0 : i32
  %25 = lt %23, %24 : bool
  %26 = add %23, %4 : i32
  %27 = select %25, %26, %23 : i32
  %28 = mul %27, %6 : i32
  %29 = convert %20 : i32
  %30 = lt %29, %24 : bool
  %31 = add %29, %5 : i32
  %32 = select %30, %31, %29 : i32
  %33 = mul %32, %7 : i32
  %34 = add %28, %33 : i32
  %35 = elemptr %3, %34 : ptr<global, f32>
  store %35, %22
  br %b3
%b3 exit:
  ret
}
)";

// min, max, abs, neg, not, select on small values, and a range loop whose
// step sign is tested at run time ((step > 0 and k < n) or (step < 0 and k > n)).
inline const char* kMiscOps = R"(
param out.addr : u64 @0
param a : i8 @8
param b : u16 @10
param n : i32 @12
func main {
%b0 entry:
  %0 = var : ptr<function, i64>
  %1 = var : ptr<function, i64>
  %2 = var : ptr<function, bool>
  %44 = var : ptr<function, i64>
  %3 = param 0 : u64
  %4 = param 1 : i8
  %5 = param 2 : u16
  %6 = param 3 : i32
  %7 = convert %4 : i64
  %8 = convert %5 : i64
  %9 = convert %6 : i64
  %10 = math min %7, %8 : i64
  %11 = math max %7, %8 : i64
  %12 = math abs %7 : i64
  %13 = neg %8 : i64
  %14 = not %7 : i64
  %15 = gt %7, %8 : bool
  %16 = select %15, %13, %14 : i64
  %17 = add %10, %11 : i64
  %18 = add %17, %12 : i64
  %19 = add %18, %16 : i64
  %20 = const 0 : i32
  %21 = elemptr %3, %20 : ptr<global, i64>
  store %21, %19
  %22 = const 0 : i64
  store %0, %22
  %23 = const 1 : i64
  store %1, %23
  br %b1
%b1 header:
  %24 = load %0 : i64
  %25 = load %1 : i64
  %26 = const 0 : i64
  %27 = gt %25, %26 : bool
  %28 = lt %24, %9 : bool
  %29 = and %27, %28 : bool
  %30 = lt %25, %26 : bool
  %31 = gt %24, %9 : bool
  %32 = and %30, %31 : bool
  %33 = or %29, %32 : bool
  %34 = add %24, %25 : i64
  store %0, %34
  store %44, %24
  store %2, %33
  %35 = load %2 : bool
  condbr %35, %b2, %b3
%b2 body:
  %45 = load %44 : i64
  %36 = const 7 : i64
  %37 = rem %45, %36 : i64
  %38 = const 1 : i64
  %39 = add %37, %38 : i64
  %40 = convert %39 : i32
  %41 = elemptr %3, %40 : ptr<global, i64>
  %42 = load %41 : i64
  %43 = add %42, %45 : i64
  store %41, %43
  br %b1
%b3 exit:
  ret
}
)";

// while i < n: i += 2 with n an i32: i reaches up to 2^31, so i's variable
// becomes u32 but its comparison with n (which may be negative) stays 64-bit.
inline const char* kWhileStep2 = R"(
param out.addr : u64 @0
param n : i32 @8
func main {
%b0 entry:
  %0 = var : ptr<function, i64>
  %1 = param 0 : u64
  %2 = param 1 : i32
  %3 = convert %2 : i64
  %4 = const 0 : i64
  store %0, %4
  br %b1
%b1 header:
  %5 = load %0 : i64
  %6 = lt %5, %3 : bool
  condbr %6, %b2, %b3
%b2 body:
  %7 = load %0 : i64
  %8 = const 2 : i64
  %9 = add %7, %8 : i64
  store %0, %9
  br %b1
%b3 exit:
  %10 = load %0 : i64
  %11 = const 0 : i32
  %12 = elemptr %1, %11 : ptr<global, i64>
  store %12, %10
  ret
}
)";

inline std::vector<Case> AllCases() {
    return {{"RangeLoop", kRangeLoop},       {"RangeLoopI64", kRangeLoopI64},
            {"IdGuard", kIdGuard},           {"WideProduct", kWideProduct},
            {"Xorshift", kXorshift},         {"TruncatedAccumulator", kTruncatedAccumulator},
            {"DivRem", kDivRem},             {"Shifts", kShifts},
            {"Index2d", kIndex2d},           {"MiscOps", kMiscOps},
            {"WhileStep2", kWhileStep2}};
}

}  // namespace nvk::narrow::testing
