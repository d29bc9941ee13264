#include "vk/loader.h"

#include <dlfcn.h>

#include <cstdlib>
#include <string>

namespace nvk::vk {

namespace {

util::Status LoaderError(std::string what) {
    return {util::Code::kLoader, "Vulkan is not available: " + what + "." + kLoaderHint};
}

}  // namespace

util::Result<InstanceFns*> LoadLoader() {
    static InstanceFns fns;
    static util::Status outcome = [] {
        const char* env = std::getenv("NVK_VULKAN_LOADER");
        std::string path = env && *env ? env : "libvulkan.so.1";
        void* lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
        if (!lib) {
            const char* err = dlerror();
            return LoaderError("cannot open " + path + " (" + (err ? err : "unknown") + ")");
        }
        fns.vkGetInstanceProcAddr =
            reinterpret_cast<PFN_vkGetInstanceProcAddr>(dlsym(lib, "vkGetInstanceProcAddr"));
        if (!fns.vkGetInstanceProcAddr) {
            return LoaderError(path + " exports no vkGetInstanceProcAddr");
        }
#define NVK_LOAD_GLOBAL(name) \
    fns.name = reinterpret_cast<PFN_##name>(fns.vkGetInstanceProcAddr(nullptr, #name));
        NVK_VK_GLOBAL_FNS(NVK_LOAD_GLOBAL)
#undef NVK_LOAD_GLOBAL
        if (!fns.vkCreateInstance || !fns.vkEnumerateInstanceExtensionProperties) {
            return LoaderError(path + " lacks vkCreateInstance");
        }
        return util::Status::Ok();
    }();
    if (!outcome.ok()) return outcome;
    return &fns;
}

util::Status LoadInstanceFns(InstanceFns& fns, VkInstance instance) {
#define NVK_LOAD_INSTANCE(name) \
    fns.name = reinterpret_cast<PFN_##name>(fns.vkGetInstanceProcAddr(instance, #name));
    NVK_VK_INSTANCE_FNS(NVK_LOAD_INSTANCE)
    NVK_VK_DEBUG_FNS(NVK_LOAD_INSTANCE)
#undef NVK_LOAD_INSTANCE
#define NVK_CHECK_INSTANCE(name) \
    if (!fns.name) return util::Internal("the Vulkan loader lacks " #name);
    NVK_VK_INSTANCE_FNS(NVK_CHECK_INSTANCE)
#undef NVK_CHECK_INSTANCE
    return util::Status::Ok();
}

util::Status LoadDeviceFns(const InstanceFns& fns, VkDevice device, DeviceFns& out) {
#define NVK_LOAD_DEVICE(name)                                                     \
    out.name = reinterpret_cast<PFN_##name>(fns.vkGetDeviceProcAddr(device, #name)); \
    if (!out.name) return util::Internal("the Vulkan driver lacks " #name);
    NVK_VK_DEVICE_FNS(NVK_LOAD_DEVICE)
#undef NVK_LOAD_DEVICE
    return util::Status::Ok();
}

}  // namespace nvk::vk
