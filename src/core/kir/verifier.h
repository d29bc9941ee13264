// Verify: check the invariants of kir.h (and, for a structured function, the
// structured-form rules) before a pass or the emitter relies on them.
#pragma once

#include "kir/kir.h"
#include "util/status.h"

namespace nvk::kir {

// A failure is kInternal and its message points into the printed KIR.
util::Status Verify(const Module& module);

}  // namespace nvk::kir
