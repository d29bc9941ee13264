// SPIRV-Tools glue: validate, optimise and disassemble a module, and read the
// capabilities it declares.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "util/status.h"

namespace nvk::spirv {

// Validates for the Vulkan 1.2 environment (SPIR-V 1.5). A failure is
// kCodegen with the validator's messages followed by the disassembly.
util::Status Validate(const std::vector<uint32_t>& words);

// Runs SPIRV-Tools' performance passes (SSA rewrite of function variables,
// constant propagation and folding, dead-code elimination, CFG cleanup, ...).
// The result is not validated here; the caller validates it. A failure of the
// optimiser is kCodegen with its messages, never a warning.
util::Result<std::vector<uint32_t>> Optimize(const std::vector<uint32_t>& words);

// The function variables of an optimised module that a words pass added (PromoteLoopElements)
// made SSA values, and what that leaves simplified and dead code removed.
util::Result<std::vector<uint32_t>> PromoteVariables(const std::vector<uint32_t>& words);

// Text with friendly names (%main, %uint, block names) and indentation; on a
// malformed binary, a line that says why.
std::string Disassemble(const std::vector<uint32_t>& words);

// The capabilities the module declares that a device may lack, by their
// numba_vulkan names: "int64", "float64", "int16", "int8", "float16",
// "storage8", "storage16" (8/16-bit loads and stores through buffer device
// addresses), "push_constant8", "push_constant16" (8/16-bit push constants),
// "bfloat16_type", "bfloat16_matrix" (bfloat16 tiles, VK_KHR_shader_bfloat16).
// Shader and PhysicalStorageBufferAddresses are always declared and not listed.
std::vector<std::string> CapabilityNames(const std::vector<uint32_t>& words);

}  // namespace nvk::spirv
