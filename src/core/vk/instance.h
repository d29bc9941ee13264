// The process-wide Vulkan instance, its debug messenger, and the physical
// devices it enumerates.
//
// One instance per process, created on first use with the debug level the
// caller passes (NUMBA_VULKAN_DEBUG): 0 plain; 1 adds VK_LAYER_KHRONOS_validation
// and a VK_EXT_debug_utils messenger; 2 also turns on synchronization
// validation. The messenger never prints: it appends each warning or error to
// a list that Python reads with validation_messages().
#pragma once

#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "vk/device_info.h"
#include "vk/loader.h"

namespace nvk::vk {

struct ValidationMessage {
    std::string severity;  // "warning" or "error"
    std::string message;
};

class Instance {
  public:
    // The instance, created on the first call with `debug_level`; later calls
    // return it whatever level they pass.
    static util::Result<Instance*> Get(int debug_level);

    VkInstance handle() const { return instance_; }
    const InstanceFns& fns() const { return *fns_; }
    int debug_level() const { return debug_level_; }
    uint32_t api_version() const { return api_version_; }

    // The Vulkan 1.2+ devices with a compute queue, in the driver's order.
    // `refresh` asks the driver again.
    util::Result<std::vector<PhysicalDeviceInfo>> Devices(bool refresh);

    std::vector<ValidationMessage> Messages(bool clear);
    void AddMessage(std::string severity, std::string message);

  private:
    util::Status Create(int debug_level);

    InstanceFns* fns_ = nullptr;
    VkInstance instance_ = VK_NULL_HANDLE;
    VkDebugUtilsMessengerEXT messenger_ = VK_NULL_HANDLE;
    int debug_level_ = 0;
    uint32_t api_version_ = VK_API_VERSION_1_2;
    std::mutex devices_mutex_;  // guards enumerated_ and devices_
    bool enumerated_ = false;
    std::vector<PhysicalDeviceInfo> devices_;
    std::mutex messages_mutex_;
    std::vector<ValidationMessage> messages_;
};

}  // namespace nvk::vk
