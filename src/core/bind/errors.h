// Turning a failed Status into a Python exception: the only place where the
// core's error codes meet Python's exception classes.
#pragma once

#include "util/status.h"

namespace nvk::bind {

// Raises the Python exception for `status` (which must not be ok):
//   kInvalidArgument -> ValueError        kUnsupported -> numba_vulkan.errors.VulkanSupportError
//   kCodegen -> SpirvCodegenError          kInternal -> numba_vulkan.errors.InternalCompilerError
//   kVulkan -> numba_vulkan.errors.VulkanError   kOutOfMemory -> MemoryError
//   kLoader -> numba_vulkan.errors.VulkanLoaderError (message contains runtime.hint)
//   kTimeout -> VulkanTimeoutError   kDeviceLost -> VulkanDeviceLostError
//   kForked -> VulkanForkError       kInterrupted -> the exception already set (KeyboardInterrupt)
[[noreturn]] void Throw(const util::Status& status);

inline void ThrowIfError(const util::Status& status) {
    if (!status.ok()) Throw(status);
}

template <typename T>
T Unwrap(util::Result<T>&& r) {
    if (!r.ok()) Throw(r.status());
    return std::move(r).value();
}

}  // namespace nvk::bind
