// Integer arithmetic that wraps on every driver, and the float forms that
// drivers approximate beyond what Python allows.
//
// Why signed arithmetic is done on unsigned types. SPIR-V defines OpIAdd,
// OpISub, OpIMul, OpShiftLeftLogical and OpSNegate as wrapping (two's
// complement), whatever the signedness of the type, unless the instruction is
// decorated NoSignedWrap. NVIDIA's Vulkan compiler (H200, driver of
// 2026-11) nevertheless treats a signed-typed result as if it could not
// overflow, like C's signed arithmetic: the typed fuzzer found, with CPU
// Numba's answers in brackets,
//   - `-x` on int16 -32768 then widened to int64 gave +32768 [-32768]: the
//     sign extension was moved through the "non-overflowing" negation, so the
//     negation ran in 64 bits;
//   - GLSL SAbs of int32 -2^31 then widened gave +2^31 [-2^31] (abs of the
//     minimum treated as impossible, the result as non-negative);
//   - `int64(int8) << 31` gave the negated product (the shift of a widened
//     narrow value turned into a signed 32-bit multiply by 2^31).
// Writing the negation as `~x + 1` on the signed type cured some of them and
// not others. What the driver cannot assume anything about is arithmetic on
// unsigned types, where wrapping is the ordinary, C-defined behaviour: so a
// signed add, sub, mul, shift left or negation is emitted as the same
// instruction on the unsigned type of its width, between two OpBitcasts
// (free: the bits are the same, the instruction is the same; the conversions
// that follow, OpSConvert and the sign-extending shift pair, see a value the
// driver knows nothing about and extend its real bits). abs is a select
// between x and its wrapped negation.
//
// Measured on the H200 after this change (2026-11-30): 25 of the 74 failing
// fuzz seeds pass, 49 still fail, all around the minimum of int8/int16
// (`-int8(-128)` widened still gives +128): the driver sees through the
// bitcasts. The front end's narrow wrap (arith.small_int_unary) now avoids the
// overflowing left shift of a shift pair instead; see docs/status.md.
//
// Index arithmetic stays signed. A value used only to index memory
// (kElemPtr/kIndexPtr operand 1), directly or through further add/sub/mul/
// shl/int conversions used only that way, overflows only where the access is
// out of bounds whatever the arithmetic; there the driver's assumption that
// it does not overflow is true and lets it fold the widening of a 32-bit
// index into the address (matmul's inner loop). IndexOnly() finds them
// (kir/index_only.h).
#include <spirv/unified1/GLSL.std.450.h>

#include <cstring>

#include "kir/index_only.h"
#include "spirv/emitter.h"

namespace nvk::spirv {

namespace {

using kir::Op;
using kir::ScalarKind;

}  // namespace

void Emitter::ComputeIndexOnly() { index_only_ = kir::IndexOnlyValues(m_); }

bool Emitter::IndexOnly(const kir::Inst& inst) const {
    return inst.result != kir::kNone && inst.result < index_only_.size() &&
           index_only_[inst.result];
}

Id Emitter::UnsignedType(ScalarKind k) {
    return b_.TypeInt(static_cast<uint32_t>(kir::BitWidth(k)), false);
}

Id Emitter::WrappingOp(spv::Op op, ScalarKind k, Id a, Id b) {
    if (!kir::IsSigned(k)) return Append(op, ScalarType(k), {a, b});
    Id u = UnsignedType(k);
    Id r = Append(op, u, {Append(spv::Op::OpBitcast, u, {a}), Append(spv::Op::OpBitcast, u, {b})});
    return Append(spv::Op::OpBitcast, ScalarType(k), {r});
}

Id Emitter::WrappingNegate(ScalarKind k, Id a) {
    Id u = UnsignedType(k);
    Id ua = kir::IsSigned(k) ? Append(spv::Op::OpBitcast, u, {a}) : a;
    Id r = Append(spv::Op::OpISub, u, {b_.ConstScalar(u, 0), ua});
    return kir::IsSigned(k) ? Append(spv::Op::OpBitcast, ScalarType(k), {r}) : r;
}

Id Emitter::WrappingAbs(ScalarKind k, Id a) {
    Id negative = Append(spv::Op::OpSLessThan, b_.TypeBool(), {a, b_.ConstScalar(ScalarType(k), 0)});
    return Append(spv::Op::OpSelect, ScalarType(k), {negative, WrappingNegate(k, a), a});
}

// float32 division. NVIDIA's driver divides float32 with an approximation
// (PTX div.approx-like) that returns 0 for any divisor of magnitude above
// 2^126: 3.4e38 / 3.4e38 gave 0.0, not 1.0 (Vulkan promises its 2.5 ulp only
// for divisors in [2^-126, 2^126]). Such a divisor and the dividend are
// scaled by 1/4 first (exact, the divisor stays normal; a dividend that
// loses bits is so small that the quotient underflows to a signed zero
// anyway), which keeps every divisor in the promised range. Cost: an abs, a
// compare, two multiplies and two selects per float32 division (none without
// a division; fastmath keeps the driver's plain division). A division marked
// DivPrecision::kDriver (kir.h) is not scaled: its divisor is promised within
// [2^-126, 2^126] (the math library's are bounded: docs/math.md, "Division").
Id Emitter::FloatDivide(ScalarKind k, Id a, Id b, bool driver) {
    Id type = ScalarType(k);
    auto plain = [&](Id x, Id y) {
        Id q = Append(spv::Op::OpFDiv, type, {x, y});
        if (!options_.fastmath) b_.Decorate(q, spv::Decoration::NoContraction);
        return q;
    };
    if (k != ScalarKind::kF32 || options_.fastmath || driver) return plain(a, b);
    Id bool_type = b_.TypeBool();
    Id u32 = b_.TypeInt(32, false);
    Id magnitude = Append(spv::Op::OpBitwiseAnd, u32,
                          {Append(spv::Op::OpBitcast, u32, {b}), b_.ConstU32(0x7fffffffu)});
    // Above 2^126 (0x7e800000) and not NaN: the infinities included (inf/inf stays NaN).
    Id big = Append(spv::Op::OpLogicalAnd, bool_type,
                    {Append(spv::Op::OpUGreaterThan, bool_type, {magnitude, b_.ConstU32(0x7e800000u)}),
                     Append(spv::Op::OpULessThanEqual, bool_type, {magnitude, b_.ConstU32(0x7f800000u)})});
    Id quarter = b_.ConstScalar(type, 0x3e800000u);
    auto scaled = [&](Id v) {
        Id s = Append(spv::Op::OpFMul, type, {v, quarter});
        b_.Decorate(s, spv::Decoration::NoContraction);
        return Append(spv::Op::OpSelect, type, {big, s, v});
    };
    return plain(scaled(a), scaled(b));
}

// Float -> 64-bit integer. NVIDIA's compiler narrows `uint32(uint64(f))` to a
// saturating 32-bit conversion of f: uint64(4294967296.0) truncated to 32 bits
// gave 0xffffffff, not 0 (also where only low bits are used, `x & uint64(f)`).
// The conversion is built from two 32-bit conversions of exact parts instead,
// hi = trunc(|f| * 2^-32) and lo = trunc(|f| - hi * 2^32) (both exact for
// float32 and float64: the remainder is below 2^32 and on f's ulp grid), so
// no 64-bit float conversion is left to narrow. Signed results negate the
// magnitude's bits. Out-of-range values are undefined, as in SPIR-V (the front
// end keeps Python's rules in range).
util::Result<Id> Emitter::FloatToInt64(Id value, ScalarKind from, ScalarKind to) {
    if (from == ScalarKind::kF16) {
        value = Append(spv::Op::OpFConvert, ScalarType(ScalarKind::kF32), {value});
        from = ScalarKind::kF32;
    }
    Id ftype = ScalarType(from);
    bool f64 = from == ScalarKind::kF64;
    auto fconst = [&](double d) {
        if (f64) {
            uint64_t bits;
            std::memcpy(&bits, &d, 8);
            return b_.ConstScalar(ftype, bits);
        }
        float s = static_cast<float>(d);
        uint32_t bits;
        std::memcpy(&bits, &s, 4);
        return b_.ConstScalar(ftype, bits);
    };
    auto exact = [&](spv::Op op, std::initializer_list<Id> operands) {
        Id r = Append(op, ftype, operands);
        b_.Decorate(r, spv::Decoration::NoContraction);
        return r;
    };
    Id u32 = b_.TypeInt(32, false), u64 = b_.TypeInt(64, false);
    bool is_signed = kir::IsSigned(to);
    Id m = value;
    if (is_signed) {
        m = Append(spv::Op::OpExtInst, ftype,
                   {b_.GlslStd450(), static_cast<uint32_t>(GLSLstd450FAbs), value});
    }
    Id hi = Append(spv::Op::OpConvertFToU, u32, {exact(spv::Op::OpFMul, {m, fconst(0x1p-32)})});
    Id hi_f = exact(spv::Op::OpFMul, {Append(spv::Op::OpConvertUToF, ftype, {hi}), fconst(0x1p32)});
    Id lo = Append(spv::Op::OpConvertFToU, u32, {exact(spv::Op::OpFSub, {m, hi_f})});
    Id bits = Append(spv::Op::OpBitwiseOr, u64,
                     {Append(spv::Op::OpShiftLeftLogical, u64,
                             {Append(spv::Op::OpUConvert, u64, {hi}), b_.ConstU64(32)}),
                      Append(spv::Op::OpUConvert, u64, {lo})});
    if (!is_signed) return bits;
    Id negative = Append(spv::Op::OpFOrdLessThan, b_.TypeBool(), {value, fconst(0.0)});
    Id negated = Append(spv::Op::OpISub, u64, {b_.ConstU64(0), bits});
    return Append(spv::Op::OpBitcast, ScalarType(to),
                  {Append(spv::Op::OpSelect, u64, {negative, negated, bits})});
}

}  // namespace nvk::spirv
