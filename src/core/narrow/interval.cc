#include "narrow/interval.h"

#include <algorithm>
#include <initializer_list>

namespace nvk::narrow {

using kir::MathFn;
using kir::Op;
using kir::ScalarKind;

namespace {

constexpr Int kInf = Int{1} << 100;  // beyond every kind; only inside refinements

Interval Corners(std::initializer_list<Int> xs) {
    return {std::min(xs), std::max(xs)};
}

// The range `r` if no value of it leaves kind k (no wrapping), else all of k.
Interval Clip(const Interval& r, ScalarKind k) {
    if (r.empty()) return r;
    return r.Within(KindRange(k)) ? r : KindRange(k);
}

Int MaxAbs(const Interval& r) { return std::max(r.lo < 0 ? -r.lo : r.lo, r.hi < 0 ? -r.hi : r.hi); }

// Smallest n with 0 <= x < 2^n (x >= 0).
int UnsignedBits(Int x) {
    int n = 0;
    while (n < 127 && Pow2(n) <= x) ++n;
    return n;
}

// Smallest n with r inside [-2^(n-1), 2^(n-1) - 1]: every value of r is the
// sign extension of its low n bits, so bitwise ops of two such values are too.
int SignedBits(const Interval& r) {
    int n = 1;
    while (n < 127 && !(r.lo >= -Pow2(n - 1) && r.hi <= Pow2(n - 1) - 1)) ++n;
    return n;
}

// Truncating division's range for a divisor range of one sign (no zero).
Interval DivOneSign(const Interval& a, const Interval& b) {
    return Corners({a.lo / b.lo, a.lo / b.hi, a.hi / b.lo, a.hi / b.hi});
}

Interval Bitwise(Op op, const Interval& a, const Interval& b) {
    if (op == Op::kAnd) {
        if (a.lo >= 0 && b.lo >= 0) return {0, std::min(a.hi, b.hi)};
        if (a.lo >= 0) return {0, a.hi};  // x & y <= y for y >= 0, and >= 0
        if (b.lo >= 0) return {0, b.hi};
    }
    if (a.lo >= 0 && b.lo >= 0) {
        int n = std::max(UnsignedBits(a.hi), UnsignedBits(b.hi));
        return {0, Pow2(n) - 1};
    }
    int n = std::max(SignedBits(a), SignedBits(b));
    return {-Pow2(n - 1), Pow2(n - 1) - 1};
}

// Logic on bools: a known operand may decide the result.
Interval BoolOp(Op op, const Interval& a, const Interval& b) {
    auto is = [](const Interval& r, int v) { return r.lo == v && r.hi == v; };
    switch (op) {
        case Op::kAnd:
            if (is(a, 0) || is(b, 0)) return Interval::Point(0);
            if (is(a, 1) && is(b, 1)) return Interval::Point(1);
            return {0, 1};
        case Op::kOr:
            if (is(a, 1) || is(b, 1)) return Interval::Point(1);
            if (is(a, 0) && is(b, 0)) return Interval::Point(0);
            return {0, 1};
        case Op::kNot: return {1 - a.hi, 1 - a.lo};
        case Op::kXor:
            if (a.lo == a.hi && b.lo == b.hi) return Interval::Point(a.lo ^ b.lo);
            return {0, 1};
        default: return {0, 1};
    }
}

}  // namespace

Interval Hull(const Interval& a, const Interval& b) {
    if (a.empty()) return b;
    if (b.empty()) return a;
    return {std::min(a.lo, b.lo), std::max(a.hi, b.hi)};
}

Interval Meet(const Interval& a, const Interval& b) {
    if (a.empty() || b.empty()) return Interval::Empty();
    Interval r{std::max(a.lo, b.lo), std::min(a.hi, b.hi)};
    return r.empty() ? Interval::Empty() : r;
}

Interval KindRange(ScalarKind k) {
    if (k == ScalarKind::kBool) return {0, 1};
    if (!kir::IsInteger(k)) return Interval::Empty();
    int w = kir::BitWidth(k);
    if (kir::IsSigned(k)) return {-Pow2(w - 1), Pow2(w - 1) - 1};
    return {0, Pow2(w) - 1};
}

bool Fits(const Interval& v, ScalarKind k) { return v.Within(KindRange(k)); }

Int ConstValue(ScalarKind k, uint64_t bits) {
    if (k == ScalarKind::kBool) return bits & 1;
    int w = kir::BitWidth(k);
    uint64_t mask = w >= 64 ? ~uint64_t{0} : (uint64_t{1} << w) - 1;
    uint64_t m = bits & mask;
    if (kir::IsSigned(k) && w < 64 && (m >> (w - 1)) & 1) return Int(m) - Pow2(w);
    if (kir::IsSigned(k) && w == 64) return static_cast<int64_t>(m);
    return Int(m);
}

Interval Arith(Op op, ScalarKind k, const Interval& a, const Interval& b) {
    Interval full = KindRange(k);
    bool unary = op == Op::kNeg || op == Op::kNot;
    if (a.empty() || (!unary && b.empty())) return Interval::Empty();
    if (k == ScalarKind::kBool) return BoolOp(op, a, b);
    int w = kir::BitWidth(k);
    switch (op) {
        case Op::kAdd: return Clip({a.lo + b.lo, a.hi + b.hi}, k);
        case Op::kSub: return Clip({a.lo - b.hi, a.hi - b.lo}, k);
        case Op::kMul:
            if (MaxAbs(a) > Pow2(64) || MaxAbs(b) > Pow2(62)) return full;  // keep i128 exact
            return Clip(Corners({a.lo * b.lo, a.lo * b.hi, a.hi * b.lo, a.hi * b.hi}), k);
        case Op::kNeg: return Clip({-a.hi, -a.lo}, k);
        case Op::kDiv: {
            // A zero divisor is undefined behaviour; the range covers the others.
            Interval r = Interval::Empty();
            Interval neg = Meet(b, {-kInf, -1}), pos = Meet(b, {1, kInf});
            if (!neg.empty()) r = Hull(r, DivOneSign(a, neg));
            if (!pos.empty()) r = Hull(r, DivOneSign(a, pos));
            return r.empty() ? full : Clip(r, k);
        }
        case Op::kRem: {
            // |a % b| < |b| and |a % b| <= |a|; the sign is a's (C truncation).
            if (b.lo == 0 && b.hi == 0) return full;
            Int m = MaxAbs(b) - 1;
            return Clip({a.lo >= 0 ? 0 : std::max(a.lo, -m), a.hi <= 0 ? 0 : std::min(a.hi, m)}, k);
        }
        case Op::kAnd: case Op::kOr: case Op::kXor: return Clip(Bitwise(op, a, b), k);
        case Op::kNot:
            if (kir::IsSigned(k)) return Clip({-a.hi - 1, -a.lo - 1}, k);  // ~x == -x - 1
            return Clip({full.hi - a.hi, full.hi - a.lo}, k);
        case Op::kShl: {
            if (!b.Within({0, w - 1})) return full;  // a count >= width is undefined
            if (UnsignedBits(MaxAbs(a)) + static_cast<int>(b.hi) > 120) return full;
            Int lo = Pow2(static_cast<int>(b.lo)), hi = Pow2(static_cast<int>(b.hi));
            return Clip(Corners({a.lo * lo, a.lo * hi, a.hi * lo, a.hi * hi}), k);
        }
        case Op::kShr: {
            if (!b.Within({0, w - 1})) return full;
            int lo = static_cast<int>(b.lo), hi = static_cast<int>(b.hi);
            // Arithmetic (and, on non-negative values, logical) shifts are
            // monotone in the value and, for a fixed value, in the count.
            return Clip(Corners({a.lo >> lo, a.lo >> hi, a.hi >> lo, a.hi >> hi}), k);
        }
        default: return full;
    }
}

Interval MathRange(MathFn fn, ScalarKind k, const Interval& a, const Interval& b) {
    Interval full = KindRange(k);
    if (a.empty()) return a;
    switch (fn) {
        case MathFn::kMin:
            if (b.empty()) return b;
            return Clip({std::min(a.lo, b.lo), std::min(a.hi, b.hi)}, k);
        case MathFn::kMax:
            if (b.empty()) return b;
            return Clip({std::max(a.lo, b.lo), std::max(a.hi, b.hi)}, k);
        case MathFn::kAbs:
            if (a.lo >= 0) return a;
            if (a.hi <= 0) return Clip({-a.hi, -a.lo}, k);  // abs(INT_MIN) wraps: full
            return Clip({0, std::max(-a.lo, a.hi)}, k);
        default: return full;
    }
}

Interval ConvertRange(Op op, ScalarKind from, ScalarKind to, const Interval& a) {
    bool int_from = from == ScalarKind::kBool || kir::IsInteger(from);
    if (!int_from) return KindRange(to);  // float -> int: any value of `to`
    if (a.empty()) return a;
    if (op == Op::kBitcast && kir::BitWidth(from) != kir::BitWidth(to)) return KindRange(to);
    // Integer conversions keep every value that fits the new kind.
    return Fits(a, to) ? a : KindRange(to);
}

Interval RefineLeft(Op cmp, const Interval& a, const Interval& b) {
    if (b.empty()) return Interval::Empty();
    switch (cmp) {
        case Op::kLt: return Meet(a, {-kInf, b.hi - 1});
        case Op::kLe: return Meet(a, {-kInf, b.hi});
        case Op::kGt: return Meet(a, {b.lo + 1, kInf});
        case Op::kGe: return Meet(a, {b.lo, kInf});
        case Op::kEq: return Meet(a, b);
        case Op::kNe:
            if (b.lo != b.hi || a.empty()) return a;
            if (a.lo == b.lo && a.hi == b.lo) return Interval::Empty();
            if (a.lo == b.lo) return {a.lo + 1, a.hi};
            if (a.hi == b.lo) return {a.lo, a.hi - 1};
            return a;
        default: return a;
    }
}

Op SwapCompare(Op cmp) {
    switch (cmp) {
        case Op::kLt: return Op::kGt;
        case Op::kLe: return Op::kGe;
        case Op::kGt: return Op::kLt;
        case Op::kGe: return Op::kLe;
        default: return cmp;
    }
}

Op InvertCompare(Op cmp) {
    switch (cmp) {
        case Op::kLt: return Op::kGe;
        case Op::kLe: return Op::kGt;
        case Op::kGt: return Op::kLe;
        case Op::kGe: return Op::kLt;
        case Op::kEq: return Op::kNe;
        case Op::kNe: return Op::kEq;
        default: return cmp;
    }
}

}  // namespace nvk::narrow
