#include "vk/instance.h"

#include <cstring>

#include "vk/fork.h"
#include "vk/result.h"

namespace nvk::vk {

namespace {

VKAPI_ATTR VkBool32 VKAPI_CALL CollectMessage(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                              VkDebugUtilsMessageTypeFlagsEXT,
                                              const VkDebugUtilsMessengerCallbackDataEXT* data,
                                              void* user) {
    auto* instance = static_cast<Instance*>(user);
    const char* level =
        (severity & VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT) ? "error" : "warning";
    instance->AddMessage(level, data && data->pMessage ? data->pMessage : "");
    return VK_FALSE;
}

bool HasExtension(const std::vector<VkExtensionProperties>& list, const char* name) {
    for (const auto& e : list) {
        if (std::strcmp(e.extensionName, name) == 0) return true;
    }
    return false;
}

}  // namespace

util::Result<Instance*> Instance::Get(int debug_level) {
    // Before the static's guard: a parent's thread may have been creating the instance
    // at the fork (WatchForks runs first), and the guard would then never be released.
    if (Forked()) return ForkedError();
    static Instance* instance = nullptr;
    static util::Status outcome = [&] {
        WatchForks();                // from now on a forked child must not use Vulkan
        instance = new Instance();  // lives until the process ends
        return instance->Create(debug_level);
    }();
    if (Forked()) return ForkedError();
    if (!outcome.ok()) return outcome;
    return instance;
}

util::Status Instance::Create(int debug_level) {
    NVK_ASSIGN_OR_RETURN(fns_, LoadLoader());
    debug_level_ = debug_level;
    uint32_t version = VK_API_VERSION_1_0;
    if (fns_->vkEnumerateInstanceVersion) fns_->vkEnumerateInstanceVersion(&version);
    if (version < VK_API_VERSION_1_2) {
        return {util::Code::kLoader, "the Vulkan loader supports only Vulkan " +
                                         std::to_string(VK_API_VERSION_MAJOR(version)) + "." +
                                         std::to_string(VK_API_VERSION_MINOR(version)) +
                                         "; numba_vulkan needs 1.2." + kLoaderHint};
    }
    api_version_ = version >= VK_API_VERSION_1_3 ? VK_API_VERSION_1_3 : VK_API_VERSION_1_2;

    uint32_t count = 0;
    fns_->vkEnumerateInstanceExtensionProperties(nullptr, &count, nullptr);
    std::vector<VkExtensionProperties> extensions(count);
    fns_->vkEnumerateInstanceExtensionProperties(nullptr, &count, extensions.data());
    std::vector<const char*> enabled;
    VkInstanceCreateFlags flags = 0;
    if (HasExtension(extensions, VK_KHR_PORTABILITY_ENUMERATION_EXTENSION_NAME)) {
        enabled.push_back(VK_KHR_PORTABILITY_ENUMERATION_EXTENSION_NAME);
        flags |= VK_INSTANCE_CREATE_ENUMERATE_PORTABILITY_BIT_KHR;
    }

    std::vector<const char*> layers;
    bool debug = false;
    if (debug_level > 0) {
        fns_->vkEnumerateInstanceLayerProperties(&count, nullptr);
        std::vector<VkLayerProperties> available(count);
        fns_->vkEnumerateInstanceLayerProperties(&count, available.data());
        bool has_layer = false;
        for (const auto& l : available) {
            if (std::strcmp(l.layerName, "VK_LAYER_KHRONOS_validation") == 0) has_layer = true;
        }
        if (has_layer && HasExtension(extensions, VK_EXT_DEBUG_UTILS_EXTENSION_NAME)) {
            layers.push_back("VK_LAYER_KHRONOS_validation");
            enabled.push_back(VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
            debug = true;
        } else {
            AddMessage("warning",
                       "NUMBA_VULKAN_DEBUG is set but VK_LAYER_KHRONOS_validation is not "
                       "installed (vulkan-validationlayers on Debian)");
        }
    }

    VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
    app.pApplicationName = "numba_vulkan";
    app.pEngineName = "numba_vulkan";
    app.apiVersion = api_version_;

    VkDebugUtilsMessengerCreateInfoEXT messenger_info{
        VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT};
    messenger_info.messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT |
                                     VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
    messenger_info.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT |
                                 VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                                 VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT;
    messenger_info.pfnUserCallback = CollectMessage;
    messenger_info.pUserData = this;

    VkValidationFeatureEnableEXT sync_validation =
        VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT;
    VkValidationFeaturesEXT features{VK_STRUCTURE_TYPE_VALIDATION_FEATURES_EXT};
    features.enabledValidationFeatureCount = 1;
    features.pEnabledValidationFeatures = &sync_validation;

    VkInstanceCreateInfo info{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
    info.flags = flags;
    info.pApplicationInfo = &app;
    info.enabledExtensionCount = static_cast<uint32_t>(enabled.size());
    info.ppEnabledExtensionNames = enabled.data();
    info.enabledLayerCount = static_cast<uint32_t>(layers.size());
    info.ppEnabledLayerNames = layers.data();
    if (debug) {
        // The messenger in the chain also reports problems of vkCreateInstance itself.
        info.pNext = &messenger_info;
        if (debug_level >= 2) messenger_info.pNext = &features;
    }
    VkResult r = fns_->vkCreateInstance(&info, nullptr, &instance_);
    if (r == VK_ERROR_INCOMPATIBLE_DRIVER) {
        return {util::Code::kLoader,
                "vkCreateInstance failed: VK_ERROR_INCOMPATIBLE_DRIVER (no Vulkan driver)." +
                    std::string(kLoaderHint)};
    }
    NVK_VK_CHECK("vkCreateInstance", r);
    NVK_RETURN_IF_ERROR(LoadInstanceFns(*fns_, instance_));
    if (debug && fns_->vkCreateDebugUtilsMessengerEXT) {
        messenger_info.pNext = nullptr;
        NVK_VK_CHECK("vkCreateDebugUtilsMessengerEXT",
                     fns_->vkCreateDebugUtilsMessengerEXT(instance_, &messenger_info, nullptr,
                                                          &messenger_));
    }
    return util::Status::Ok();
}

util::Result<std::vector<PhysicalDeviceInfo>> Instance::Devices(bool refresh) {
    std::lock_guard<std::mutex> lock(devices_mutex_);
    if (enumerated_ && !refresh) return devices_;
    uint32_t count = 0;
    NVK_VK_CHECK("vkEnumeratePhysicalDevices",
                 fns_->vkEnumeratePhysicalDevices(instance_, &count, nullptr));
    std::vector<VkPhysicalDevice> handles(count);
    NVK_VK_CHECK("vkEnumeratePhysicalDevices",
                 fns_->vkEnumeratePhysicalDevices(instance_, &count, handles.data()));
    std::vector<PhysicalDeviceInfo> devices;
    for (VkPhysicalDevice handle : handles) {
        PhysicalDeviceInfo info = QueryDeviceInfo(*fns_, handle);
        if (info.api_version < VK_API_VERSION_1_2 || info.compute_family < 0) continue;
        info.index = static_cast<int>(devices.size());
        devices.push_back(std::move(info));
    }
    devices_ = std::move(devices);
    enumerated_ = true;
    return devices_;
}

std::vector<ValidationMessage> Instance::Messages(bool clear) {
    std::lock_guard<std::mutex> lock(messages_mutex_);
    std::vector<ValidationMessage> out = messages_;
    if (clear) messages_.clear();
    return out;
}

void Instance::AddMessage(std::string severity, std::string message) {
    std::lock_guard<std::mutex> lock(messages_mutex_);
    messages_.push_back({std::move(severity), std::move(message)});
}

}  // namespace nvk::vk
