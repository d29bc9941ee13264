// Emit: SPIR-V words from a structured KIR module.
#pragma once

#include <cstdint>
#include <vector>

#include "kir/kir.h"
#include "util/status.h"

namespace nvk::spirv {

struct EmitOptions {
    // Parameters travel as push constants when they fit; otherwise the only
    // push constant is the 64-bit device address of a parameter buffer.
    bool params_in_buffer = false;
    bool fastmath = false;  // allow contraction/reassociation; no NaN/Inf preservation
    // Float widths for which the device can keep signed zeros, infinities and
    // NaNs (DeviceInfo.nan_preserve). Without fastmath the module asks for
    // SignedZeroInfNanPreserve at each width it computes in: without it a
    // driver may turn -0.0 into 0.0 (NVIDIA does), and Python's results differ.
    std::vector<uint32_t> preserve_float_widths;
    // Float widths for which the device can keep subnormals
    // (DeviceInfo.denorm_preserve). Without fastmath the module asks for
    // DenormPreserve at each of them it computes in: NVIDIA flushes float32
    // subnormals to zero otherwise, where NumPy keeps them.
    std::vector<uint32_t> denorm_preserve_widths;
};

// The module has one GLCompute entry point "main". Its workgroup size comes
// from specialization constants 0, 1, 2 (x, y, z; default 1), so one module
// serves every local size. A kernel with dynamic shared memory (a workgroup
// kArrayVar of 0 elements) has its length, in elements, in specialization
// constant 3 (default 1).
inline constexpr uint32_t kDynamicSharedSpecId = 3;
util::Result<std::vector<uint32_t>> Emit(const kir::Module& module, const EmitOptions& options);

}  // namespace nvk::spirv
