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
// kernels for such a driver are compiled with this pass: an invocation that
// leaves a loop other than by one of the loop's own exits counts itself in the
// status buffer and names the kernel, and the host raises VulkanLoopLimitError
// when it reads the count (numba_vulkan/runtime/reports.py).
//
// "Left by its own exits" is a private balance: +1 on each edge that enters a
// loop's header from outside the loop, -1 for each loop that an edge leaves
// (taken in the block the edge leaves from, which is inside the loop, so a
// driver that jumps from the back edge to the loop's merge block skips it). It
// is 0 at the exit of every invocation that ran the kernel as written; a cut
// loop leaves it above 0. Every return is routed through one exit block, where
// it is checked. The balance lives in memory (a private array the compiler
// cannot resolve): in a register, a cut loop's merge can see a value of a path
// that never ran.
//
// Runs on the CFG form, before the structurizer.
#pragma once

#include <cstdint>
#include <string>

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
};

// Returns how many loops it guards; 0 (a kernel without loops) leaves the module as it was.
size_t GuardLoops(Module& m, const LoopGuardOptions& options);

}  // namespace nvk::kir
