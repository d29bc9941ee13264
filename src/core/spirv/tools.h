// SPIRV-Tools glue: optimise, validate and disassemble a module.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "util/status.h"

namespace nvk::spirv {

// Validation failure: kCodegen with the validator's message and the disassembly.
util::Status Validate(const std::vector<uint32_t>& words);
util::Result<std::vector<uint32_t>> Optimize(const std::vector<uint32_t>& words);
std::string Disassemble(const std::vector<uint32_t>& words);

}  // namespace nvk::spirv
