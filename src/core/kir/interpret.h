// Interpret: run a KIR function on the host (tests only), so that a pass can be
// checked by running the function before and after it on the same inputs.
#pragma once

#include "kir/kir.h"

namespace nvk::kir {
}  // namespace nvk::kir
