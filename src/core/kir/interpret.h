// Interpret: run a KIR function on the host (tests only), so that a pass can be
// checked by running the function before and after it on the same inputs.
//
// The interpreter follows branches from the entry block and ignores Merge
// annotations, so it runs both the CFG form and the structured form. Values
// are kept as 64-bit patterns (integers masked to their width, floats as
// their IEEE bits). Local variables (Var) start as a recognisable garbage
// value. One invocation runs: atomics read and write memory, and it is its
// subgroup's only member. Global memory is a list of host regions, each a byte vector at a base address; an ElemPtr
// computes `base + index * size` and a Load/Store must fall inside a region.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "kir/kir.h"
#include "util/status.h"

namespace nvk::kir {

struct MemoryRegion {
    uint64_t base = 0;
    std::vector<uint8_t> bytes;
};

struct Inputs {
    std::vector<uint64_t> params;  // bit patterns, by index into Module::params
    std::map<std::pair<Builtin, uint32_t>, uint32_t> builtins;  // (builtin, axis); missing: 0
    std::vector<MemoryRegion> memory;
    // A driver's loop cap, as lavapipe's: after this many back edges in all (to a
    // header with a loop Merge, from a block not before it), the next one goes to
    // the loop's merge block instead, and an Unreachable reached after that ends
    // the run unfinished. Structured form only; 0: none.
    size_t loop_cap = 0;
};

struct Trace {
    bool finished = false;  // false: stopped at max_steps (likely an endless loop)
    size_t steps = 0;       // instructions executed
    std::vector<MemoryRegion> memory;  // the regions after the run
    std::vector<BlockId> path;         // blocks entered, in order (first 10000)
};

// Run the module's function. A malformed module or an out-of-bounds access is
// an error; running out of steps is not (Trace::finished is false).
util::Result<Trace> Interpret(const Module& module, const Inputs& inputs, size_t max_steps);

}  // namespace nvk::kir
