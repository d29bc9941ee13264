// VkResult -> util::Status: every failed Vulkan call becomes an error naming it.
#pragma once

#include <vulkan/vulkan.h>

#include "util/status.h"

namespace nvk::vk {

// "VK_ERROR_OUT_OF_DEVICE_MEMORY", ...; "VK_RESULT(<n>)" for unknown codes.
const char* ResultName(VkResult result);

// Ok for VK_SUCCESS (and the other non-negative codes); otherwise
// "<call> failed: <VK_...>" with Code::kOutOfMemory for the out-of-memory
// results and Code::kVulkan for the rest.
util::Status Check(VkResult result, const char* call);

}  // namespace nvk::vk

#define NVK_VK_CHECK(call_name, expr) NVK_RETURN_IF_ERROR(::nvk::vk::Check((expr), call_name))
