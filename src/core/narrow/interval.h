// Interval: the range of an integer (or bool) KIR value, as mathematical
// integers, and the transfer functions of the integer ops on ranges.
//
// Bounds are 128-bit so that every i64 and u64 value, and every sum or
// product of two of them, is exact: an op's result is computed without
// wrapping, and only then compared with the result kind's range. A result
// that may leave that range may wrap, so it becomes the kind's full range.
// This keeps every transfer function sound by construction: the interval
// always contains every value the op can produce under KIR's semantics
// (kir.h: integer ops wrap; div/rem truncate; shifts need a count < width).
#pragma once

#include <cstdint>

#include "kir/kir.h"

namespace nvk::narrow {

using Int = __int128;

inline Int Pow2(int n) { return Int{1} << n; }

struct Interval {
    Int lo = 1, hi = 0;  // empty when lo > hi (an unreachable value)

    static Interval Empty() { return {}; }
    static Interval Of(Int lo, Int hi) { return {lo, hi}; }
    static Interval Point(Int v) { return {v, v}; }
    bool empty() const { return lo > hi; }
    bool Contains(Int v) const { return lo <= v && v <= hi; }
    bool Within(const Interval& o) const { return empty() || (o.lo <= lo && hi <= o.hi); }
    bool operator==(const Interval& o) const {
        return (empty() && o.empty()) || (lo == o.lo && hi == o.hi);
    }
};

Interval Hull(const Interval& a, const Interval& b);
Interval Meet(const Interval& a, const Interval& b);

// Every value of an integer or bool kind ([0, 1] for bool); empty for other kinds.
Interval KindRange(kir::ScalarKind k);
bool Fits(const Interval& v, kir::ScalarKind k);  // Within(KindRange(k))
// The value of a constant's bits (sign- or zero-extended per kind).
Int ConstValue(kir::ScalarKind k, uint64_t bits);

// The range of `op` (add sub mul div rem neg and or xor not shl shr, math
// min/max/abs) on operands with these ranges, giving kind k. For shifts `b` is
// the count. Anything this does not model gives KindRange(k).
Interval Arith(kir::Op op, kir::ScalarKind k, const Interval& a, const Interval& b);
Interval MathRange(kir::MathFn fn, kir::ScalarKind k, const Interval& a, const Interval& b);
// convert/bitcast from kind `from` to integer kind `to`.
Interval ConvertRange(kir::Op op, kir::ScalarKind from, kir::ScalarKind to, const Interval& a);

// Refinement: the values of `a` for which `a op b` (a comparison) can hold,
// for some value of b in its range. Used on the edges of a conditional branch.
Interval RefineLeft(kir::Op cmp, const Interval& a, const Interval& b);
kir::Op SwapCompare(kir::Op cmp);    // a < b  <=>  b > a
kir::Op InvertCompare(kir::Op cmp);  // !(a < b)  <=>  a >= b (integers)

}  // namespace nvk::narrow
