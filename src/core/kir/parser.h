// Parse: KIR text (as Print writes it) back into a Module.
#pragma once

#include <string_view>

#include "kir/kir.h"
#include "util/status.h"

namespace nvk::kir {

// Errors name the line and column of the text.
util::Result<Module> Parse(std::string_view text);

}  // namespace nvk::kir
