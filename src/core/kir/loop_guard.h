// Loop guard: a driver that ends loops early without a word is caught in the act.
//
// lavapipe (Mesa's Vulkan driver for the CPU) counts the iterations of every
// loop of an invocation's SIMD vector together and, past 65,535, leaves the
// loop being run as if it had ended. What follows depends on the shape of the
// kernel: the code after the loop runs on with a cut-short result, or every
// later store of the invocation is lost (measured on Mesa 22.3: a loop that
// stores in its body, then any loop after it). Which loops get there is known
// only at run time (their trip counts depend on the arguments), and the
// compiler makes loops of its own (sum, dot, mean, array expressions), so
// kernels for such a driver are compiled with this pass, and the host compares
// two counts in the calling thread's status buffer after the work
// (numba_vulkan/runtime/reports.py raises VulkanLoopLimitError where they differ):
//
//   started   invocation (0, 0, 0) of each workgroup adds the workgroup's size
//             as its first act (stores before a cut are kept) and writes the
//             kernel's key, which names it on the host;
//   finished  at the kernel's one exit (every return is routed there), the
//             invocations whose balance is 0: one atomic per subgroup (a
//             ballot), or one per invocation.
//
// The balance is private: +1 on each edge that enters a loop's header from
// outside the loop, -1 for each loop that an edge leaves (taken in the block the
// edge leaves from, which is inside the loop, so a driver that jumps from the
// back edge to the loop's merge block skips it). It is 0 at the exit of every
// invocation that ran the kernel as written; a cut loop leaves it above 0, and
// an invocation whose later work the driver drops never adds itself: either way
// `finished` falls short. The balance is a function variable, which SPIRV-Tools'
// SSA rewrite (spirv/tools.cc) turns into phis: the final module carries it in
// registers, the form tests/device/test_loop_limit.py checks (its kernel shapes,
// cut on lavapipe with AVX-512, AVX2 and 128-bit vectors, all raise). Marking its
// accesses Volatile changed no final module: the rewrite promotes them regardless.
// (A flag written only by cut invocations is not enough: in some shapes the code
// after the cut loop sits inside that loop's construct and never runs.)
//
// A kernel needs no guard where no invocation can reach the cap: the front end names
// the loops whose trip counts it knows at compile time and whose iterations add up to at
// most half the cap (numba_vulkan/frontend/__init__.py static_loops); where those are
// exactly the function's loops (header names), the module is left as it is.
//
// Runs on the CFG form, before the structurizer.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kir/kir.h"

namespace nvk::kir {

// Status-buffer words the guard writes (numba_vulkan/sites.py has the whole layout).
inline constexpr uint32_t kLoopStartedWord = 13;   // invocations started
inline constexpr uint32_t kLoopFinishedWord = 14;  // invocations that left every loop by its exits
inline constexpr uint32_t kLoopKernelWord = 15;    // the last started kernel's key

struct LoopGuardOptions {
    std::string status_param;  // the status buffer's hidden parameter (u64 address)
    uint32_t kernel_key = 0;   // written to kLoopKernelWord
    bool subgroup_ballot = true;  // finished counted per subgroup; else one atomic each
    // Headers of the loops bounded well below the cap (names of their blocks): where they
    // are all the loops, none is guarded.
    std::vector<std::string> bounded_headers;
};

// Returns how many loops it guards; 0 (a kernel without loops, or with bounded loops
// only) leaves the module as it was.
size_t GuardLoops(Module& m, const LoopGuardOptions& options);

}  // namespace nvk::kir
