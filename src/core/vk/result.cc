#include "vk/result.h"

#include <string>

namespace nvk::vk {

const char* ResultName(VkResult result) {
    switch (result) {
#define NVK_CASE(x) \
    case x: return #x;
        NVK_CASE(VK_SUCCESS)
        NVK_CASE(VK_NOT_READY)
        NVK_CASE(VK_TIMEOUT)
        NVK_CASE(VK_EVENT_SET)
        NVK_CASE(VK_EVENT_RESET)
        NVK_CASE(VK_INCOMPLETE)
        NVK_CASE(VK_ERROR_OUT_OF_HOST_MEMORY)
        NVK_CASE(VK_ERROR_OUT_OF_DEVICE_MEMORY)
        NVK_CASE(VK_ERROR_INITIALIZATION_FAILED)
        NVK_CASE(VK_ERROR_DEVICE_LOST)
        NVK_CASE(VK_ERROR_MEMORY_MAP_FAILED)
        NVK_CASE(VK_ERROR_LAYER_NOT_PRESENT)
        NVK_CASE(VK_ERROR_EXTENSION_NOT_PRESENT)
        NVK_CASE(VK_ERROR_FEATURE_NOT_PRESENT)
        NVK_CASE(VK_ERROR_INCOMPATIBLE_DRIVER)
        NVK_CASE(VK_ERROR_TOO_MANY_OBJECTS)
        NVK_CASE(VK_ERROR_FORMAT_NOT_SUPPORTED)
        NVK_CASE(VK_ERROR_FRAGMENTED_POOL)
        NVK_CASE(VK_ERROR_UNKNOWN)
        NVK_CASE(VK_ERROR_OUT_OF_POOL_MEMORY)
        NVK_CASE(VK_ERROR_INVALID_EXTERNAL_HANDLE)
        NVK_CASE(VK_ERROR_FRAGMENTATION)
        NVK_CASE(VK_ERROR_INVALID_OPAQUE_CAPTURE_ADDRESS)
        NVK_CASE(VK_PIPELINE_COMPILE_REQUIRED)
        NVK_CASE(VK_ERROR_VALIDATION_FAILED_EXT)
        NVK_CASE(VK_ERROR_INVALID_SHADER_NV)
#undef NVK_CASE
        default: break;
    }
    thread_local std::string buf;
    buf = "VK_RESULT(" + std::to_string(static_cast<int>(result)) + ")";
    return buf.c_str();
}

util::Status Check(VkResult result, const char* call) {
    if (result >= 0) return util::Status::Ok();
    std::string message = std::string(call) + " failed: " + ResultName(result);
    if (result == VK_ERROR_OUT_OF_DEVICE_MEMORY || result == VK_ERROR_OUT_OF_HOST_MEMORY) {
        return {util::Code::kOutOfMemory, message};
    }
    return {util::Code::kVulkan, message};
}

}  // namespace nvk::vk
