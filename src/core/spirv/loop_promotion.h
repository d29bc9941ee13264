// Elements of device memory that a loop reads and writes at one address, kept in
// registers while the loop runs.
//
// A kernel that updates one element in a loop (a random generator's state, `out[i] += x`)
// loads in each iteration what it stored in the previous one:
//
//     for k in range(...):
//         s0 = states[tid]['s0']    # the value stored below, one iteration ago
//         ...
//         states[tid]['s0'] = t
//         arr[i, j, k] = f(s0)      # may be states' memory, as far as the driver knows
//
// The driver cannot keep the value in a register: the store to `arr` between the two
// accesses may be to the same memory (Vulkan's buffers may alias, and ours are device
// addresses). On an H100 numba.cuda's doc_random_3d example spends 0.23 of its 0.46 ms on
// that round trip, and keeping the stores while only the loads were answered from
// registers made it slower still (0.75 ms: the stores, no longer waiting for the loads,
// were the cost; docs/corpus.md). PromoteLoopElements does what the probe with the state
// in local variables measured at 0.18 to 0.26 ms: for each element ("group": the plain loads
// and stores, of one type, whose address is the same sum of SSA values that do not change
// in the loop, and a constant) of a loop that loads and stores it, the value lives in
// function variables (made registers by SPIR-V's SSA rewriting) from the loop's entry to
// its exit: the first load in the loop loads it (a load moved into a branch taken while
// the register holds nothing), stores write only the register and mark it dirty, and the
// loop's exit stores it once if dirty.
//
// Why this is exact: memory differs from what the kernel wrote only at the promoted
// elements, only while the loop runs, and only in this invocation's view. Every other
// access this invocation makes to device memory in the loop is compared with the
// element's bytes (at compile time where both addresses are the same sum with constants far
// enough apart, else at run time): before an access that overlaps it, a dirty element is
// stored, and after a store that overlaps it the register is dropped (the next load loads
// again). A loop with a barrier, an atomic, a call, a return or an access of unknown
// address is left alone. Another invocation's access to the element without a barrier or
// atomic between is a data race, whose result Vulkan leaves undefined (as CUDA and
// numba.cuda do). Nothing is loaded that the kernel would not load, at the address it
// would: the one load happens where the first load of the loop is, when the register holds
// nothing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace nvk::spirv {

// Rewrites `words` in place as above, with function variables that the caller promotes to
// SSA values (PromoteVariables); returns how many elements it promoted. A module it does
// not understand, or with no loop that loads and stores an element, is left as it is.
size_t PromoteLoopElements(std::vector<uint32_t>* words);

}  // namespace nvk::spirv
