// Text-in, text-out tests of NarrowIntegers on the modules of cases.h: what
// it must narrow, and what it must leave at 64 bits. narrow_fuzz_test.cc runs
// the same modules before and after under the interpreter.
#include "narrow/cases.h"
#include "narrow/test_support.h"

namespace nvk::narrow::testing {
namespace {

// The printed module after the pass.
std::string After(const char* text, NarrowOptions options = {}) {
    return kir::Print(Narrowed(ParseOk(text), options));
}

bool HasLine(const std::string& text, const std::string& line) {
    return text.find("  " + line + "\n") != std::string::npos ||
           text.find("  " + line + " ") != std::string::npos;
}

size_t WideOps(const char* text) { return CountWideIntOps(ParseOk(text)); }
size_t WideOpsAfter(const char* text) { return CountWideIntOps(Narrowed(ParseOk(text))); }

// for k in range(n), n an i32 extent: the counter, its test and the index
// are 32-bit. The cursor may hold n + 1 = 2^31 after the last test, so its
// variable is u32; k itself (the pair's first) is i32. Only the i64 element
// stored to the i64 array remains.
TEST(Narrow, RangeLoopBoundedByI32Extent) {
    EXPECT_EQ(After(kRangeLoop), R"(param out.addr : u64 @0
param n : i32 @8
func main {
%b0 entry:
  %0 = var : ptr<function, u32>
  %1 = var : ptr<function, bool>
  %2 = var : ptr<function, i32>
  %3 = param 0 : u64
  %4 = param 1 : i32
  %17 = const 0 : u32
  store %0, %17
  br %b1
%b1 header:
  %18 = load %0 : u32
  %19 = bitcast %18 : i32
  %8 = lt %19, %4 : bool
  %20 = const 1 : u32
  %21 = add %18, %20 : u32
  store %0, %21
  store %2, %19
  store %1, %8
  %11 = load %1 : bool
  condbr %11, %b2, %b3
%b2 body:
  %22 = load %2 : i32
  %12 = convert %22 : i64
  %23 = const 63 : i32
  %24 = and %22, %23 : i32
  %16 = elemptr %3, %24 : ptr<global, i64>
  store %16, %12
  br %b1
%b3 exit:
  ret
}
)");
    EXPECT_EQ(WideOps(kRangeLoop), 9u);
    EXPECT_EQ(WideOpsAfter(kRangeLoop), 1u);
}

// Bounded by an i64 parameter the counter may reach 2^63 - 1: it stays i64;
// only the index, observed through truncation to i32, is computed in 32 bits.
TEST(Narrow, RangeLoopBoundedByI64ParamStaysWide) {
    std::string out = After(kRangeLoopI64);
    EXPECT_TRUE(HasLine(out, "%0 = var : ptr<function, i64>")) << out;
    EXPECT_TRUE(HasLine(out, "%8 = lt %7, %5 : bool")) << out;
    EXPECT_TRUE(HasLine(out, "%10 = add %7, %9 : i64")) << out;
    EXPECT_TRUE(HasLine(out, "%17 = convert %12 : i32")) << out;
    EXPECT_TRUE(HasLine(out, "%19 = and %17, %18 : i32")) << out;
    EXPECT_EQ(WideOpsAfter(kRangeLoopI64), 8u);
}

// The id, guarded by an extent, compares as u32 against the extent; 3 * i + 1
// may exceed 2^32 and stays i64; `i > t` (t: any i32) has no common 32-bit
// kind with a u32-ranged id and stays i64.
TEST(Narrow, IdGuardAndWhatMustStayWide) {
    std::string out = After(kIdGuard);
    EXPECT_TRUE(HasLine(out, "%0 = var : ptr<function, u32>")) << out;
    EXPECT_TRUE(HasLine(out, "%8 = lt %26, %27 : bool")) << out;
    EXPECT_TRUE(HasLine(out, "%12 = mul %10, %11 : i64")) << out;
    EXPECT_TRUE(HasLine(out, "%14 = add %12, %13 : i64")) << out;
    EXPECT_TRUE(HasLine(out, "%21 = gt %19, %20 : bool")) << out;
    EXPECT_TRUE(HasLine(out, "%20 = convert %25 : i64")) << out;
}

// Without device limits a global id is any u32; with them (1024 x 65535) it
// is below 2^26 and 3 * i + 1 fits i32.
TEST(Narrow, DeviceLimitsBoundIds) {
    NarrowOptions o;
    for (int a = 0; a < 3; ++a) {
        o.ranges.max_local_size[a] = 1024;
        o.ranges.max_groups[a] = 65535;
    }
    std::string out = After(kIdGuard, o);
    EXPECT_TRUE(HasLine(out, "%0 = var : ptr<function, i32>")) << out;
    EXPECT_FALSE(HasLine(out, "%12 = mul %10, %11 : i64")) << out;
    EXPECT_NE(out.find("= mul "), std::string::npos);
    EXPECT_NE(out.find(" : i32\n"), std::string::npos);
}

// x, y masked to 20 bits: x + y fits i32, x * y (up to 2^40) does not.
TEST(Narrow, ProductThatMayExceed32BitsStaysWide) {
    std::string out = After(kWideProduct);
    EXPECT_TRUE(HasLine(out, "%6 = mul %4, %5 : i64")) << out;
    EXPECT_TRUE(HasLine(out, "%17 = add %14, %16 : i32")) << out;
    EXPECT_TRUE(HasLine(out, "%14 = and %12, %13 : i32")) << out;  // x & mask: any x
}

// Numba computes uint32 ^ (uint32 << 13) in u64 and truncates: pure u32 math.
TEST(Narrow, XorshiftObservedThroughTruncation) {
    EXPECT_EQ(After(kXorshift), R"(param out.addr : u64 @0
param seed : u32 @8
func main {
%b0 entry:
  %0 = var : ptr<function, u32>
  %1 = param 0 : u64
  %2 = param 1 : u32
  store %0, %2
  %3 = load %0 : u32
  %24 = const 13 : u32
  %25 = shl %3, %24 : u32
  %26 = xor %3, %25 : u32
  store %0, %26
  %9 = load %0 : u32
  %27 = const 17 : u32
  %28 = shr %9, %27 : u32
  %29 = xor %9, %28 : u32
  store %0, %29
  %15 = load %0 : u32
  %30 = const 5 : u32
  %31 = shl %15, %30 : u32
  %32 = xor %15, %31 : u32
  store %0, %32
  %21 = load %0 : u32
  %22 = const 0 : i32
  %23 = elemptr %1, %22 : ptr<global, u32>
  store %23, %21
  ret
}
)");
    EXPECT_EQ(WideOpsAfter(kXorshift), 0u);
}

// An i64 accumulator observed only as an int32 becomes an i32 variable,
// whatever its range; the loop counter (bounded by an i32) too.
TEST(Narrow, AccumulatorObservedThroughTruncation) {
    EXPECT_EQ(After(kTruncatedAccumulator), R"(param out.addr : u64 @0
param x : i64 @8
param n : i32 @16
func main {
%b0 entry:
  %0 = var : ptr<function, i32>
  %1 = var : ptr<function, i32>
  %2 = param 0 : u64
  %3 = param 1 : i64
  %4 = param 2 : i32
  %23 = convert %3 : i32
  store %0, %23
  %24 = const 0 : i32
  store %1, %24
  br %b1
%b1 header:
  %25 = load %1 : i32
  %8 = lt %25, %4 : bool
  condbr %8, %b2, %b3
%b2 body:
  %26 = load %0 : i32
  %27 = const 31 : i32
  %28 = mul %26, %27 : i32
  %29 = load %1 : i32
  %30 = add %28, %29 : i32
  %31 = xor %30, %23 : i32
  store %0, %31
  %32 = const 1 : i32
  %33 = add %29, %32 : i32
  store %1, %33
  br %b1
%b3 exit:
  %34 = load %0 : i32
  %21 = const 0 : i32
  %22 = elemptr %2, %21 : ptr<global, i32>
  store %22, %34
  ret
}
)");
}

// u // 3 and u % 3 on a u32-ranged value: u32 math. a // b on i32-ranged
// values can be 2^31 (INT_MIN // -1): stays i64. a % b fits, but i32 rem of
// INT_MIN by -1 is undefined in SPIR-V, so it stays i64 too.
TEST(Narrow, DivisionAndRemainder) {
    std::string out = After(kDivRem);
    EXPECT_TRUE(HasLine(out, "%24 = div %1, %23 : u32")) << out;
    EXPECT_TRUE(HasLine(out, "%11 = div %5, %6 : i64")) << out;
    EXPECT_TRUE(HasLine(out, "%12 = rem %5, %6 : i64")) << out;
    EXPECT_NE(out.find("= rem %1, %23 : u32"), std::string::npos) << out;
    EXPECT_TRUE(HasLine(out, "%22 = const 0 : i32")) << out;  // b == 0 tested in i32
}

// Shifts narrow only with counts proven below 32.
TEST(Narrow, ShiftCounts) {
    std::string out = After(kShifts);
    EXPECT_NE(out.find("= shl %24, %27 : i32"), std::string::npos) << out;  // x << (c & 15)
    EXPECT_TRUE(HasLine(out, "%11 = shl %4, %10 : i64")) << out;         // x << (c & 63)
    EXPECT_NE(out.find("= shr %3, %32 : i32"), std::string::npos) << out;   // y >> (c & 31)
    EXPECT_TRUE(HasLine(out, "%15 = shr %5, %10 : i64")) << out;         // y >> (c & 63)
}

// Two-dimensional indexing with guarded ids: all 32-bit, and the wrapping of
// negative indices disappears (ids are never negative).
TEST(Narrow, Index2dGuardedByExtents) {
    EXPECT_EQ(After(kIndex2d), R"(param out.addr : u64 @0
param "out.shape[0]" : i32 @8
param "out.shape[1]" : i32 @12
param "out.strides[0]" : i32 @16
param "out.strides[1]" : i32 @20
func main {
%b0 entry:
  %0 = var : ptr<function, u32>
  %1 = var : ptr<function, u32>
  %2 = var : ptr<function, bool>
  %3 = param 0 : u64
  %4 = param 1 : i32
  %5 = param 2 : i32
  %6 = param 3 : i32
  %7 = param 4 : i32
  %8 = builtin global_id 0 : u32
  %9 = builtin global_id 1 : u32
  store %0, %8
  store %1, %9
  %36 = load %0 : u32
  %37 = bitcast %4 : u32
  %14 = lt %36, %37 : bool
  store %2, %14
  %15 = load %2 : bool
  condbr %15, %b1, %b3
%b1 and:
  %38 = load %1 : u32
  %39 = bitcast %5 : u32
  %18 = lt %38, %39 : bool
  condbr %18, %b2, %b3
%b2 then:
  %40 = load %0 : u32
  %41 = load %1 : u32
  %42 = bitcast %40 : i32
  %43 = bitcast %41 : i32
  %44 = sub %42, %43 : i32
  %22 = convert %44 : f32
  %28 = mul %42, %6 : i32
  %33 = mul %43, %7 : i32
  %34 = add %28, %33 : i32
  %35 = elemptr %3, %34 : ptr<global, f32>
  store %35, %22
  br %b3
%b3 exit:
  ret
}
)");
}

// min, max, abs, neg, not and select on small values; a range loop whose step
// sign is tested at run time.
TEST(Narrow, MiscOpsAndRuntimeStepLoop) {
    std::string out = After(kMiscOps);
    EXPECT_TRUE(HasLine(out, "%49 = math min %46, %48 : i32")) << out;
    EXPECT_TRUE(HasLine(out, "%51 = math abs %46 : i32")) << out;
    EXPECT_TRUE(HasLine(out, "%54 = select %15, %52, %53 : i32")) << out;
    EXPECT_TRUE(HasLine(out, "%28 = lt %62, %6 : bool")) << out;
    EXPECT_TRUE(HasLine(out, "%67 = rem %65, %66 : i32")) << out;
    EXPECT_EQ(WideOps(kMiscOps), 28u);
    EXPECT_EQ(WideOpsAfter(kMiscOps), 4u);
}

// while i < n: i += 2 -- i reaches 2^31 when n = 2^31 - 1: a u32 variable,
// and its test against n (maybe negative) stays 64-bit.
TEST(Narrow, WhileStepTwoReachesTwoToThe31) {
    std::string out = After(kWhileStep2);
    EXPECT_TRUE(HasLine(out, "%0 = var : ptr<function, u32>")) << out;
    EXPECT_TRUE(HasLine(out, "%6 = lt %5, %3 : bool")) << out;
    EXPECT_TRUE(HasLine(out, "%5 = convert %14 : i64")) << out;
}

// A module without 64-bit integers is left as it was.
TEST(Narrow, NothingToDo) {
    const char* text = R"(
param out.addr : u64 @0
param x : i32 @8
func main {
%b0 entry:
  %0 = param 0 : u64
  %1 = param 1 : i32
  %2 = const 0 : i32
  %3 = elemptr %0, %2 : ptr<global, i32>
  store %3, %1
  ret
}
)";
    EXPECT_EQ(After(text), kir::Print(ParseOk(text)));
}

// The low-bits rule must not apply to values observed at full width: a value
// stored truncated and also compared stays 64-bit.
TEST(Narrow, TruncatedAndComparedStaysWide) {
    const char* text = R"(
param out.addr : u64 @0
param x : i64 @8
param y : i64 @16
func main {
%b0 entry:
  %0 = param 0 : u64
  %1 = param 1 : i64
  %2 = param 2 : i64
  %3 = mul %1, %2 : i64
  %4 = convert %3 : i32
  %5 = const 0 : i32
  %6 = elemptr %0, %5 : ptr<global, i32>
  store %6, %4
  %7 = const 0 : i64
  %8 = lt %3, %7 : bool
  %9 = convert %8 : i32
  %10 = const 1 : i32
  %11 = elemptr %0, %10 : ptr<global, i32>
  store %11, %9
  ret
}
)";
    std::string out = After(text);
    EXPECT_TRUE(HasLine(out, "%3 = mul %1, %2 : i64")) << out;
    EXPECT_TRUE(HasLine(out, "%8 = lt %3, %7 : bool")) << out;
}

}  // namespace
}  // namespace nvk::narrow::testing

namespace nvk::narrow::testing {
namespace {

// Issue 8's ops: an atomic whose old value nobody uses still writes memory, so
// dead-code removal keeps it; shared arrays, barriers and subgroup ops pass
// through, and the results of atomics and subgroup ops keep their full range
// (the i64 add on them stays 64-bit).
TEST(Narrow, KeepsAtomicsBarriersAndSubgroupOps) {
    const char* text = R"(param out.addr : u64 @0
func main {
%b0 entry:
  %0 = param 0 : u64
  %1 = arrayvar 4 : ptr<workgroup, i64>
  %2 = const 0 : i32
  %3 = indexptr %1, %2 : ptr<workgroup, i64>
  %4 = const 1 : i64
  %5 = atomic add %3, %4 : i64
  barrier workgroup
  %6 = load %3 : i64
  %7 = subgroup sum 0 %6 : i64
  %8 = add %7, %4 : i64
  %9 = elemptr %0, %2 : ptr<global, i64>
  store %9, %8
  ret
}
)";
    std::string after = After(text);
    EXPECT_TRUE(HasLine(after, "%5 = atomic add %3, %4 : i64")) << after;
    EXPECT_TRUE(HasLine(after, "barrier workgroup")) << after;
    EXPECT_TRUE(HasLine(after, "%8 = add %7, %4 : i64")) << after;
}

}  // namespace
}  // namespace nvk::narrow::testing
