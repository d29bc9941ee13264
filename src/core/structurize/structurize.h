// Structurize: turn a function in CFG form into structured form (see kir.h).
#pragma once

#include "kir/kir.h"
#include "util/status.h"

namespace nvk::structurize {

// Rewrites module.function in place and sets function.structured. Fails with
// kUnsupported on irreducible control flow and kInvalidArgument on a
// malformed CFG (a block without terminator, a branch to a missing block).
// A function already marked structured is left alone.
util::Status Structurize(kir::Module& module);

}  // namespace nvk::structurize
