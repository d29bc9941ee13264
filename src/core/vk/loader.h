// The Vulkan loader, opened at run time.
//
// VK_NO_PROTOTYPES is defined for the whole runtime, so no Vulkan symbol is
// linked: the loader is opened on first use (libvulkan.so.1, else libvulkan.so;
// loader.cc lists the macOS and Windows names, untested; NVK_VULKAN_LOADER names
// another file, which tests use to simulate a machine without a loader) and
// every entry point is fetched into the function table `Fns` below, global ones
// through vkGetInstanceProcAddr(NULL, ...), instance ones once the instance
// exists, device ones per device through vkGetDeviceProcAddr (which skips the
// loader's dispatch trampoline on the launch path).
#pragma once

#include <vulkan/vulkan.h>

#include "util/status.h"

namespace nvk::vk {

// The text users need when Vulkan is missing; runtime.hint in Python is the same.
inline constexpr const char* kLoaderHint =
    " Install your distribution's Vulkan loader (libvulkan1 on Debian and Ubuntu) and a driver.";

#define NVK_VK_GLOBAL_FNS(X)                  \
    X(vkCreateInstance)                       \
    X(vkEnumerateInstanceExtensionProperties) \
    X(vkEnumerateInstanceLayerProperties)     \
    X(vkEnumerateInstanceVersion)

#define NVK_VK_INSTANCE_FNS(X)                   \
    X(vkDestroyInstance)                         \
    X(vkEnumeratePhysicalDevices)                \
    X(vkGetPhysicalDeviceProperties)             \
    X(vkGetPhysicalDeviceProperties2)            \
    X(vkGetPhysicalDeviceFeatures2)              \
    X(vkGetPhysicalDeviceQueueFamilyProperties)  \
    X(vkGetPhysicalDeviceMemoryProperties)       \
    X(vkEnumerateDeviceExtensionProperties)      \
    X(vkCreateDevice)                            \
    X(vkGetDeviceProcAddr)

// Present only with VK_EXT_debug_utils; may stay null.
#define NVK_VK_DEBUG_FNS(X)             \
    X(vkCreateDebugUtilsMessengerEXT)   \
    X(vkDestroyDebugUtilsMessengerEXT)

#define NVK_VK_DEVICE_FNS(X)          \
    X(vkDestroyDevice)                \
    X(vkGetDeviceQueue)               \
    X(vkDeviceWaitIdle)               \
    X(vkCreateCommandPool)            \
    X(vkDestroyCommandPool)           \
    X(vkAllocateCommandBuffers)       \
    X(vkFreeCommandBuffers)           \
    X(vkBeginCommandBuffer)           \
    X(vkEndCommandBuffer)             \
    X(vkResetCommandBuffer)           \
    X(vkQueueSubmit)                  \
    X(vkQueueWaitIdle)                \
    X(vkCreateBuffer)                 \
    X(vkDestroyBuffer)                \
    X(vkGetBufferMemoryRequirements)  \
    X(vkAllocateMemory)               \
    X(vkFreeMemory)                   \
    X(vkBindBufferMemory)             \
    X(vkMapMemory)                    \
    X(vkUnmapMemory)                  \
    X(vkGetBufferDeviceAddress)       \
    X(vkCreateShaderModule)           \
    X(vkDestroyShaderModule)          \
    X(vkCreatePipelineLayout)         \
    X(vkDestroyPipelineLayout)        \
    X(vkCreateComputePipelines)       \
    X(vkDestroyPipeline)              \
    X(vkCreatePipelineCache)          \
    X(vkDestroyPipelineCache)         \
    X(vkGetPipelineCacheData)         \
    X(vkMergePipelineCaches)          \
    X(vkCmdBindPipeline)              \
    X(vkCmdPushConstants)             \
    X(vkCmdDispatch)                  \
    X(vkCmdPipelineBarrier)           \
    X(vkCmdCopyBuffer)                \
    X(vkCmdFillBuffer)                \
    X(vkCreateSemaphore)              \
    X(vkDestroySemaphore)             \
    X(vkWaitSemaphores)               \
    X(vkGetSemaphoreCounterValue)     \
    X(vkCreateQueryPool)              \
    X(vkDestroyQueryPool)             \
    X(vkCmdResetQueryPool)            \
    X(vkCmdWriteTimestamp)            \
    X(vkGetQueryPoolResults)

#define NVK_VK_DECLARE_FN(name) PFN_##name name = nullptr;

// Global and instance-level entry points (one table per process).
// VK_KHR_cooperative_matrix (Vulkan 1.3.255), declared here because the Vulkan headers
// this builds with may predate it: the structure of one configuration and the query.
struct CooperativeMatrixPropertiesKHR {
    uint32_t sType = 1000506001;  // VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_PROPERTIES_KHR
    void* pNext = nullptr;
    uint32_t MSize = 0, NSize = 0, KSize = 0;
    uint32_t AType = 0, BType = 0, CType = 0, ResultType = 0;  // VkComponentTypeKHR
    VkBool32 saturatingAccumulation = VK_FALSE;
    uint32_t scope = 0;  // VkScopeKHR: 3 is a subgroup
};
using PFN_GetCooperativeMatrixProperties = VkResult(VKAPI_PTR*)(
    VkPhysicalDevice, uint32_t*, CooperativeMatrixPropertiesKHR*);

struct InstanceFns {
    PFN_vkGetInstanceProcAddr vkGetInstanceProcAddr = nullptr;
    NVK_VK_GLOBAL_FNS(NVK_VK_DECLARE_FN)
    NVK_VK_INSTANCE_FNS(NVK_VK_DECLARE_FN)
    NVK_VK_DEBUG_FNS(NVK_VK_DECLARE_FN)
    // vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR where the loader has it, else null
    PFN_GetCooperativeMatrixProperties get_cooperative_matrix_properties = nullptr;
};

// Device-level entry points (one table per VkDevice).
struct DeviceFns {
    NVK_VK_DEVICE_FNS(NVK_VK_DECLARE_FN)
};

// Opens the loader (once; later calls return the first outcome) and fills the
// global entry points. Fails with Code::kLoader, the message holding kLoaderHint.
util::Result<InstanceFns*> LoadLoader();

// Fills the instance-level entry points of `fns` for `instance`.
util::Status LoadInstanceFns(InstanceFns& fns, VkInstance instance);

// Fills `out` for `device`.
util::Status LoadDeviceFns(const InstanceFns& fns, VkDevice device, DeviceFns& out);

}  // namespace nvk::vk
