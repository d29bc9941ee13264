// Sinking a workgroup store past the selections that overwrite it.
//
// The tiled kernels of numba.cuda's documentation fill a shared tile so:
//
//     sA[ty, tx] = 0
//     if y < A.shape[0] and tx + i * TPB < A.shape[1]:
//         sA[ty, tx] = A[y, tx + i * TPB]
//
// two stores to one shared element on the way to the barrier. NVIDIA's Vulkan
// compiler keeps both; the same GLSL with one store of the selected value ran
// 4 % faster on the H200 (the probe matmul_spirv.py, added in 3efb940 and since
// removed: ours_index 7554 against ours_index_one_store 7850 GFLOP/s, in
// benchmarks/results/history.json (run "h200 2026-12-01 14:09 matmul spirv before sinking")).
// SinkStores rewrites the optimised module so: a store `OpStore %p %v` to
// Workgroup memory whose following structured selections (a chain: each selection's
// merge block may head the next) store to %p again is removed, every store to
// %p on the way is removed, the value each path last stored meets in OpPhis at
// the joins, and one store of it is placed where the chain ends.
//
// Why this is exact: nothing between the stores reads the variable %p points
// into (no load from it, no other store into it, no barrier, atomic, fence or
// call); every path from the first store reaches the chain's end (a selection
// whose region returns, loops or switches ends the chain before it); so the
// final memory is the same, and no invocation observes the difference: another
// invocation's access to the element between the stores would be a data race
// (Workgroup memory, no barrier in between), which Vulkan leaves undefined.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace nvk::spirv {

// Rewrites `words` in place as above (a valid module stays valid); returns how
// many stores it removed. A module it does not understand, or with nothing to
// sink (most: no Workgroup memory), is left as it is, without a copy.
size_t SinkStores(std::vector<uint32_t>* words);

}  // namespace nvk::spirv
