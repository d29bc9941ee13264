// A workaround for NVIDIA's Vulkan compiler: integer values whose range it
// cannot know.
//
// SPIR-V integer arithmetic wraps. NVIDIA's compiler (H200, driver 580)
// nevertheless reasons about the ranges of signed values as if signed
// arithmetic could not overflow, and rewrites by those ranges; on the values
// where the assumption is false (the minimum of a type, products that leave
// 32 bits) the answers are wrong. The typed fuzzer found, with numba.njit's
// answers in brackets:
//   - `-x` of int8 -128, widened to int64, gave +128 [-128]; the same for
//     `abs` of int16 -32768 and of int32 -2^31 (taken as non-negative: a
//     floor division then skipped its correction for negative dividends);
//   - `int64(int8) << 31` gave the negated product (a 32x32->64 multiply by
//     the constant 0x80000000 read as signed).
// Emitting the arithmetic on unsigned types (spirv/wrapping.cc) did not cure
// these: the compiler sees through bitcasts. What it cannot see through is a
// value it does not know. HideIntegerRanges xors the bits of a hidden u64
// parameter "int.zero" (kir/abi.h), which the launcher sets to 0, into
//   - kHideNegAbs: the result of every signed negation and integer abs;
//   - kHideWidenInputs: the operand of every signed widening conversion
//     (int8/16/32 to a wider integer), so that the sign extension extends
//     the value's real bits;
//   - kHideWidenOutputs: the result of every such widening, so that later
//     arithmetic is done at the full width;
//   - kHideOtherWidenings: the result of every bool -> integer and unsigned
//     widening conversion (not in the default: no failure is known to need it);
//   - kHideCompareConstants: the constant side of a 64-bit ordered integer
//     comparison (<, <=, >, >=) whose other side is arithmetic (add, sub, mul,
//     shl). NVIDIA's compiler branched wrongly on `2 * x > c` of int64 x for
//     every constant c tried: `(x + x) > -3`, `x * 2 > 0`, `(x << 1) > -3` and
//     `x * 2 + 1 > -3` took the wrong arm for every positive x (for every
//     negative x with `<`, as if it compared unsigned), while `x * 3 > -3`,
//     `x + x == -4`, a comparison with a variable and the same comparisons stored
//     as values were right; uint64 `a * 2 > 5` was false where the product
//     wraps (the probe nvidia_addself.py, added in aa65fde and since removed;
//     benchmarks/results/h200_2026-12-01_addself.txt; the control-flow
//     fuzzer's nine NVIDIA failures all compare `x + x`).
// Widenings of constants are left alone (the result is a constant of the wider
// type, as a literal of that type would be, and hiding it kept the driver from
// folding it: `i * 16` on int64 became a full 64-bit multiply).
// Widenings used only to index memory (through add/sub/mul/shl/convert to an
// elemptr or indexptr index) are left alone: there an overflow means an
// out-of-bounds access anyway, and the driver folding the widening into the
// address is what makes 32-bit index math fast (spirv/wrapping.cc says the
// same of the emitter's signed index arithmetic). Cost: one push-constant load
// per invocation and one xor (two on 64-bit values on 32-bit ALUs) per hidden
// value. Compile runs it only where asked (CompileOptions::hide_int_ranges).
#pragma once

#include "kir/kir.h"
#include "util/status.h"

namespace nvk::kir {

inline constexpr const char* kIntZeroParam = "int.zero";

enum HideIntRanges : unsigned {
    kHideNegAbs = 1,
    kHideWidenInputs = 2,
    kHideWidenOutputs = 4,
    kHideOtherWidenings = 8,
    kHideCompareConstants = 16,
    kHideSignedIntRanges = 7,
    kHideNvidia = kHideSignedIntRanges | kHideCompareConstants,  // launchers.hide_int_ranges
    kHideAllIntRanges = 31,
};

// `what`: a mask of HideIntRanges. Returns how many values it hid; a module
// with none is left alone (no parameter is added).
util::Result<size_t> HideIntegerRanges(Module& m, unsigned what);

}  // namespace nvk::kir
