// Traffic: what one invocation of a kernel may do to device memory, read from its KIR,
// for choices of code shape by cost (the front end's group loop: a kernel whose
// invocations move a few bytes each is bound by how fast the driver starts workgroups,
// one that moves more by memory; numba_vulkan/frontend/grid.py).
//
// Every global load and store in the function counts once, whichever branch it is on
// (an upper bound on any path through a function without loops); a loop makes the
// count a per-iteration one, so `loops` says there is one.
#pragma once

#include <cstdint>

#include "kir/kir.h"

namespace nvk::kir {

struct Traffic {
    uint64_t global_bytes = 0;  // the global loads' and stores' element sizes, added up
    uint32_t atomics = 0;       // kAtomic ops, in any address space
    uint32_t loops = 0;         // natural loops of the function
};

Traffic InvocationTraffic(const Module& module);

}  // namespace nvk::kir
