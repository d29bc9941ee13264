// Structurize: turn a function in CFG form into structured form (see kir.h).
#pragma once

#include "kir/kir.h"
#include "util/status.h"

namespace nvk::structurize {

util::Status Structurize(kir::Module& module);

}  // namespace nvk::structurize
