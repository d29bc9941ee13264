// Unit tests of the interval transfer functions and of the range analysis.
#include "narrow/cases.h"
#include "narrow/test_support.h"

namespace nvk::narrow::testing {
namespace {

using kir::MathFn;
using kir::Op;
using kir::ScalarKind;

constexpr Int k31 = Int{1} << 31, k32 = Int{1} << 32, k63 = Int{1} << 63;
const Interval kI32 = KindRange(ScalarKind::kI32), kI64 = KindRange(ScalarKind::kI64);
const Interval kU32 = KindRange(ScalarKind::kU32), kU64 = KindRange(ScalarKind::kU64);

Interval I(Int lo, Int hi) { return Interval::Of(lo, hi); }

TEST(Interval, KindRangesAndConstants) {
    EXPECT_EQ(kI32, I(-k31, k31 - 1));
    EXPECT_EQ(kU32, I(0, k32 - 1));
    EXPECT_EQ(kU64, I(0, (Int{1} << 64) - 1));
    EXPECT_EQ(KindRange(ScalarKind::kBool), I(0, 1));
    EXPECT_TRUE(KindRange(ScalarKind::kF32).empty());
    EXPECT_EQ(ConstValue(ScalarKind::kI64, ~uint64_t{0}), -1);
    EXPECT_EQ(ConstValue(ScalarKind::kU64, ~uint64_t{0}), (Int{1} << 64) - 1);
    EXPECT_EQ(ConstValue(ScalarKind::kI32, 0xffffffff80000000ull), -k31);
    EXPECT_EQ(ConstValue(ScalarKind::kI8, 0x80), -128);
}

TEST(Interval, AddSubMulWrapToTheFullKind) {
    EXPECT_EQ(Arith(Op::kAdd, ScalarKind::kI64, I(0, 10), I(-3, 5)), I(-3, 15));
    EXPECT_EQ(Arith(Op::kAdd, ScalarKind::kI64, I(0, k63 - 1), I(1, 1)), kI64);  // may wrap
    EXPECT_EQ(Arith(Op::kSub, ScalarKind::kU64, I(0, 10), I(0, 1)), kU64);       // 0 - 1 wraps
    EXPECT_EQ(Arith(Op::kMul, ScalarKind::kI64, I(-4, 3), I(-5, 2)), I(-15, 20));
    EXPECT_EQ(Arith(Op::kMul, ScalarKind::kI64, I(0, k32), I(0, k32)), kI64);  // 2^64 wraps
    EXPECT_EQ(Arith(Op::kNeg, ScalarKind::kI64, I(-k63, 0), {}), kI64);        // -INT_MIN
    EXPECT_EQ(Arith(Op::kNeg, ScalarKind::kI64, I(-5, 7), {}), I(-7, 5));
}

TEST(Interval, DivisionAndRemainder) {
    EXPECT_EQ(Arith(Op::kDiv, ScalarKind::kI64, I(0, k32 - 1), I(3, 3)), I(0, 1431655765));
    EXPECT_EQ(Arith(Op::kDiv, ScalarKind::kI64, I(-k63, 0), I(-1, -1)), kI64);  // INT_MIN / -1
    EXPECT_EQ(Arith(Op::kDiv, ScalarKind::kI64, I(-100, 100), I(-2, 5)), I(-100, 100));
    EXPECT_EQ(Arith(Op::kDiv, ScalarKind::kI64, I(10, 20), I(0, 0)), kI64);  // only zero
    EXPECT_EQ(Arith(Op::kRem, ScalarKind::kI64, I(-100, 100), I(7, 7)), I(-6, 6));
    EXPECT_EQ(Arith(Op::kRem, ScalarKind::kI64, I(0, 3), I(-7, 7)), I(0, 3));
    EXPECT_EQ(Arith(Op::kRem, ScalarKind::kI64, kI64, kI32), I(-(k31 - 1), k31 - 1));
}

TEST(Interval, BitwiseAndShifts) {
    EXPECT_EQ(Arith(Op::kAnd, ScalarKind::kI64, kI64, I(63, 63)), I(0, 63));
    EXPECT_EQ(Arith(Op::kOr, ScalarKind::kI64, I(0, 5), I(0, 9)), I(0, 15));
    EXPECT_EQ(Arith(Op::kXor, ScalarKind::kI64, I(-1, 5), I(-200, 9)), I(-256, 255));
    EXPECT_EQ(Arith(Op::kNot, ScalarKind::kI64, I(0, 5), {}), I(-6, -1));
    EXPECT_EQ(Arith(Op::kNot, ScalarKind::kU32, I(0, 5), {}), I(k32 - 6, k32 - 1));
    EXPECT_EQ(Arith(Op::kShl, ScalarKind::kI64, I(1, 3), I(0, 4)), I(1, 48));
    EXPECT_EQ(Arith(Op::kShl, ScalarKind::kI64, I(1, 3), I(0, 64)), kI64);  // count may be >= 64
    EXPECT_EQ(Arith(Op::kShl, ScalarKind::kI64, I(1, 1), I(63, 63)), kI64);  // 2^63 wraps
    EXPECT_EQ(Arith(Op::kShr, ScalarKind::kI64, I(-16, 16), I(1, 2)), I(-8, 8));
    EXPECT_EQ(Arith(Op::kShr, ScalarKind::kU64, kU64, I(32, 32)), I(0, k32 - 1));
    EXPECT_EQ(Arith(Op::kAnd, ScalarKind::kBool, I(0, 0), I(0, 1)), I(0, 0));
    EXPECT_EQ(Arith(Op::kOr, ScalarKind::kBool, I(0, 0), I(0, 0)), I(0, 0));
}

TEST(Interval, MathConvertRefine) {
    EXPECT_EQ(MathRange(MathFn::kMin, ScalarKind::kI64, I(0, 10), I(-5, 3)), I(-5, 3));
    EXPECT_EQ(MathRange(MathFn::kMax, ScalarKind::kI64, I(0, 10), I(-5, 3)), I(0, 10));
    EXPECT_EQ(MathRange(MathFn::kAbs, ScalarKind::kI64, I(-7, 3), {}), I(0, 7));
    EXPECT_EQ(MathRange(MathFn::kAbs, ScalarKind::kI64, I(-k63, 0), {}), kI64);
    EXPECT_EQ(ConvertRange(Op::kConvert, ScalarKind::kI32, ScalarKind::kI64, kI32), kI32);
    EXPECT_EQ(ConvertRange(Op::kConvert, ScalarKind::kI64, ScalarKind::kU32, I(-1, 5)), kU32);
    EXPECT_EQ(ConvertRange(Op::kConvert, ScalarKind::kF32, ScalarKind::kI64, {}), kI64);
    EXPECT_EQ(RefineLeft(Op::kLt, I(0, k63), I(-5, k31 - 1)), I(0, k31 - 2));
    EXPECT_EQ(RefineLeft(Op::kGe, I(0, 100), I(50, 60)), I(50, 100));
    EXPECT_TRUE(RefineLeft(Op::kLt, I(10, 20), I(0, 10)).empty());
    EXPECT_EQ(RefineLeft(Op::kNe, I(0, 10), I(0, 0)), I(1, 10));
}

TEST(Ranges, BuiltinsUnderDeviceLimits) {
    RangeOptions none, o;
    EXPECT_EQ(BuiltinRange(kir::Builtin::kGlobalId, 0, none), kU32);
    o.max_local_size[0] = 1024;
    o.max_groups[0] = 65535;
    EXPECT_EQ(BuiltinRange(kir::Builtin::kGlobalId, 0, o), I(0, 1024 * 65535 - 1));
    EXPECT_EQ(BuiltinRange(kir::Builtin::kLocalId, 0, o), I(0, 1023));
    EXPECT_EQ(BuiltinRange(kir::Builtin::kNumGroups, 0, o), I(1, 65535));
    EXPECT_EQ(BuiltinRange(kir::Builtin::kGlobalId, 1, o), kU32);  // axis 1 unknown
}

// The loop counter of `for k in range(n)` is bounded by n inside the loop.
TEST(Ranges, LoopCounterBoundedByItsTest) {
    kir::Module m = ParseOk(kRangeLoop);
    Ranges r = AnalyzeRanges(m, {});
    EXPECT_TRUE(r.complete);
    EXPECT_EQ(r.values[12], I(0, k31 - 2));  // k in the body
    EXPECT_EQ(r.values[7], I(0, k31 - 1));   // the cursor in the header
    EXPECT_EQ(r.values[10], I(1, k31));      // cursor + 1, before the test
    kir::Module wide = ParseOk(kRangeLoopI64);
    Ranges rw = AnalyzeRanges(wide, {});
    EXPECT_EQ(rw.values[12], I(0, k63 - 2));
}

// Guarded by an extent (>= 0 when the caller says so) an id is below 2^31 - 1.
TEST(Ranges, GuardRefinesVariables) {
    kir::Module m = ParseOk(kIndex2d);
    RangeOptions o;
    o.params = ExtentParamRanges(m);
    ASSERT_EQ(o.params.size(), 2u);
    Ranges r = AnalyzeRanges(m, o);
    EXPECT_EQ(r.values[19], I(0, k31 - 2));  // i in the then-block
    EXPECT_EQ(r.values[20], I(0, k31 - 2));  // j
    EXPECT_EQ(r.values[21], I(-(k31 - 2), k31 - 2));
    EXPECT_EQ(r.values[25], I(0, 0));  // i < 0 never holds
}

// A block only reached through an edge the ranges rule out stays unreached.
TEST(Ranges, InfeasibleEdge) {
    kir::Module m = ParseOk(R"(
param x : u16 @0
func main {
%b0 entry:
  %0 = param 0 : u16
  %1 = convert %0 : i64
  %2 = const 0 : i64
  %3 = lt %1, %2 : bool
  condbr %3, %b1, %b2
%b1 never:
  ret
%b2 always:
  ret
}
)");
    Ranges r = AnalyzeRanges(m, {});
    EXPECT_TRUE(r.reached[0]);
    EXPECT_FALSE(r.reached[1]);
    EXPECT_TRUE(r.reached[2]);
}

// The ranges of `text` with its %X (a parameter's kind) replaced by `x`.
Ranges AnalyzedAs(std::string text, const char* x) {
    for (size_t at; (at = text.find("%X")) != std::string::npos;) text.replace(at, 2, x);
    return AnalyzeRanges(ParseOk(text), {});
}

// x - 1 < n on an edge bounds the variable x was read from there, where the
// difference cannot wrap; nothing follows from a difference that can.
TEST(Ranges, FactsGoThroughDifferencesThatCannotWrap) {
    const char* text = R"(
param n : u16 @0
param x : %X @8
func main {
%b0 entry:
  %0 = param 0 : u16
  %1 = convert %0 : i64
  %9 = param 1 : %X
  %2 = convert %9 : i64
  %10 = var : ptr<function, i64>
  br %b3
%b3 test:
  store %10, %2
  %11 = load %10 : i64
  %3 = const 1 : i64
  %4 = sub %11, %3 : i64
  %5 = lt %4, %1 : bool
  condbr %5, %b1, %b2
%b1 below:
  %12 = load %10 : i64
  %13 = const 1 : i64
  %6 = add %12, %13 : i64
  ret
%b2 other:
  ret
}
)";
    auto analyzed = [&](const char* x) { return AnalyzedAs(text, x); };
    // x from a u32: x - 1 cannot wrap, and x - 1 < n <= 65535 gives x <= 65535 on the
    // edge, so x + 1 <= 65536 there (up to 2^32 without the fact).
    EXPECT_EQ(analyzed("u32").values[6], I(1, 65536));
    // x a whole i64: x - 1 wraps at INT64_MIN, so nothing follows (x + 1 may wrap too).
    EXPECT_EQ(analyzed("i64").values[6], KindRange(kir::ScalarKind::kI64));
}

// x + y against x: y's sign decides it where the sum cannot wrap (the range loop's
// wrap test, frontend/loops.py); a sum that can wrap leaves it open.
TEST(Ranges, SumAgainstItsTermDecidedBySign) {
    const char* text = R"(
param y : u16 @0
param x : %X @8
func main {
%b0 entry:
  %0 = param 0 : u16
  %1 = convert %0 : i64
  %9 = param 1 : %X
  %2 = convert %9 : i64
  %3 = add %2, %1 : i64
  %4 = lt %3, %2 : bool
  %5 = gt %2, %3 : bool
  %6 = ge %3, %2 : bool
  %7 = add %1, %2 : i64
  %8 = lt %7, %2 : bool
  %10 = sub %2, %1 : i64
  %11 = gt %10, %2 : bool
  %12 = le %10, %2 : bool
  %13 = eq %3, %2 : bool
  ret
}
)";
    auto analyzed = [&](const char* x) { return AnalyzedAs(text, x); };
    Ranges r = analyzed("u32");  // x + y < 2^33: no wrap
    EXPECT_EQ(r.values[4], I(0, 0));   // x + y < x
    EXPECT_EQ(r.values[5], I(0, 0));   // x > x + y
    EXPECT_EQ(r.values[6], I(1, 1));   // x + y >= x
    EXPECT_EQ(r.values[8], I(0, 0));   // y + x < x
    EXPECT_EQ(r.values[11], I(0, 0));  // x - y > x
    EXPECT_EQ(r.values[12], I(1, 1));  // x - y <= x
    EXPECT_EQ(r.values[13], I(0, 1));  // x + y == x: y may be 0
    Ranges w = analyzed("i64");  // x + y may wrap past INT64_MAX
    EXPECT_EQ(w.values[4], I(0, 1));
    EXPECT_EQ(w.values[11], I(0, 1));
}

}  // namespace
}  // namespace nvk::narrow::testing
