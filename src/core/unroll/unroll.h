// UnrollCountedLoops: unroll grid-stride style loops by a factor, guarded by
// their trip count, so that a GPU can issue the loads of several iterations
// before it waits for the first (memory-level parallelism).
//
// Why: NVIDIA's Vulkan compiler does not unroll a loop whose trip count is
// known only at run time, and a loop that loads one element per iteration and
// then uses it keeps one load in flight per invocation: a grid-stride
// reduction of 2^28 float32 ran at 2.4 TB/s as written and at 3.9 TB/s
// unrolled four times (numba.cuda's NVVM unrolls such loops itself; 3.9 with
// this pass at eight copies). Copies
// of the body separated by the original exit tests do not help (the compiler
// does not move a load above a branch): the copies must run without tests
// between them, which is what the trip-count guard allows.
//
// What is unrolled (CFG form, before narrowing): a loop made of one block B
// that branches back to itself while `i < bound` (Numba's rotated `while`
// loop), where
//   - i is a signed 32- or 64-bit local variable that B stores exactly once,
//     with i + step, and the test reads i + step (after that store), or i before
//     it (a rotated range loop, below);
//   - step and bound are computed in B from constants, entry-block values and
//     local variables that B does not store (so they do not change while the
//     loop runs);
//   - B has no barrier and no subgroup operation (copies would break their
//     uniformity), and at most max_body_insts instructions.
// Such a loop becomes one loop whose body runs F iterations or one:
//   H: if 0 < step < 2^28 / F, bound is large enough for the test below not
//      to overflow, -2^31 <= i < 2^31 - 2^28 (a window that lets the narrowing
//      pass prove each copy's i fits int32, so the copies index in 32 bits),
//      and i < bound - (F-1) step:  U  else  B
//   U: F copies of B's body;  L
//   B: the original body, once;  L
//   L: if i < bound:  H  else  the loop's exit
// with every edge that entered B now entering H.
//
// Numba's `for i in range(start, stop, step)` is two blocks: a header that tests
// the cursor (by the step's sign where the step is known only at run time:
// `(step > 0 and i < stop) or (step < 0 and i > stop)`, which is `i < stop` under
// H's step > 0) and advances it, and the body, which goes back to the header.
// Where the body is straight-line code, the pass first rotates such a loop: the
// body followed by a copy of the header becomes the one block B, and the header
// stays in front of it as the first iteration's test. Range loops whose trip
// counts the front end knew (UnrollOptions::static_headers) are left to the
// driver, which unrolls them itself. On the H100, a grid-stride sum written as a
// range loop ran at 2.1 TB/s before (numba.cuda 2.9). When H chooses U, the
// original loop would have run at least F more iterations (step > 0, so
// i + k step < bound for k < F), so U runs exactly those iterations in order:
// the results are the original loop's, bit for bit (float sums keep their
// order). The loop keeps its single exit, so the structurizer nests it as
// before (a second loop with exits of its own made it wrap both in an outer
// loop, and NVIDIA's compiler then lost most of the gain).
#pragma once

#include <cstddef>
#include <set>
#include <string>

#include "kir/kir.h"
#include "util/status.h"

namespace nvk::unroll {

struct UnrollOptions {
    int factor = 4;               // copies of the body per unrolled iteration (2..8); 1 disables
                                  // (compile.cc passes the NUMBA_VULKAN_UNROLL value, default 8)
    size_t max_body_insts = 160;  // larger loop bodies are left alone
    // Header block names of range loops whose trip counts are compile-time constants:
    // not rotated (the driver unrolls such loops itself).
    std::set<std::string> static_headers;
};

// Unrolls every loop of the form above; returns how many it unrolled.
util::Result<int> UnrollCountedLoops(kir::Module& module, const UnrollOptions& options);

}  // namespace nvk::unroll
