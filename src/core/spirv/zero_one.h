// A workaround for NVIDIA's Vulkan compiler: products and ands with a 0/1
// integer written as selects.
//
// Two programs of the type fuzzer (seeds 95 and 1060) came out wrong on the
// H200 (driver 580) while lavapipe and numba.njit agree:
//   - `(a if a else 0) * (1 & b)` stored `a` where b is even, as if the low
//     bit were `b != 0` (only beside a float64 division or a 64-bit remainder
//     in another statement);
//   - `L & R` with L a comparison (a bool taken as 0 or 1) gave 0 where the
//     answer is 1 (only beside a 64-bit division).
// Probes varied them piece by piece (results/h200_2026-12-01_bisect.txt,
// _patches.txt, _low_word.txt); neither the SPIR-V
// optimiser, nor narrowing, nor hiding the ranges of signed values
// (kir/int_ranges.h), nor sign extensions and compares rewritten by hand
// changed them. What did (the probe select_forms.py, added in 9f5bc98 and
// since removed; results/h200_2026-12-01_select_forms.txt): the same
// arithmetic as a select on the 0/1 value's condition, `b & 1 ? y : 0` for the product and
// `L ? R & 1 : 0` for the and, or a 1 the compiler cannot see (a kernel
// argument). `R & (L ? 1 : 0)`, the low bit taken by shifts and the and done
// on uint64 stay wrong.
//
// SelectZeroOneProducts rewrites the optimised module so. A 0/1 value is a
// non-constant integer defined as `OpSelect c 1 0` (its condition is c) or
// `OpSelect c 0 1` (not c), `OpBitwiseAnd x 1` (its condition is `v != 0`),
// or one of those through OpBitcast, OpUConvert or OpSConvert. A 0/-1 value
// (-1 where the condition holds) is `OpSelect c -1 0` or `OpSelect c 0 -1`,
// the low bit spread by `(x << (w-1)) >> (w-1)` (arithmetic), or the negation
// of a 0/1 value (and the other way round); OpBitcast and OpSConvert keep it.
// (H200, same experiment: `y * ((b << 63) >> 63) * -1` was wrong too.) Then,
// for a scalar integer result type T and the other operand y (bitcast to T
// where its signedness differs):
//     OpIMul y v        ->  OpSelect T cond y 0         (0/-1: 0 - y)
//     OpBitwiseAnd y v  ->  OpSelect T cond (y & 1) 0   (0/-1: y; y not a constant)
// Exact: y * v is y (or -y) or 0, and y & v is y's low bit (or y) or 0.
// Cost: a compare (none where v is a select) and a select for a multiply.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace nvk::spirv {

// Rewrites `words` in place as above (a valid module stays valid); returns how
// many instructions it rewrote (one scan of the words: it runs on every
// compilation). A module with none, or one it cannot read, is left as it is.
size_t SelectZeroOneProducts(std::vector<uint32_t>* words);

}  // namespace nvk::spirv
