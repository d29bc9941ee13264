#include "vk/loader.h"

#if defined(_WIN32)
#include <windows.h>
#else
#include <dlfcn.h>
#endif

#include <cstdlib>
#include <iterator>
#include <string>
#include <vector>

namespace nvk::vk {

namespace {

// The names the Vulkan loader goes by, tried in order; only the Linux ones are tested
// (docs/install.md, "Platforms"). macOS has the LunarG SDK's or Homebrew's loader, else
// MoltenVK itself (portability enumeration: instance.cc); Windows has the loader that
// GPU drivers install.
#if defined(_WIN32)
constexpr const char* kLoaderNames[] = {"vulkan-1.dll"};
#elif defined(__APPLE__)
constexpr const char* kLoaderNames[] = {"libvulkan.1.dylib", "libvulkan.dylib",
                                         "libMoltenVK.dylib"};
#else
constexpr const char* kLoaderNames[] = {"libvulkan.so.1", "libvulkan.so"};
#endif

// Opens `path`; on failure returns null and sets `error` to the system's reason.
void* OpenLibrary(const std::string& path, std::string& error) {
#if defined(_WIN32)
    void* lib = reinterpret_cast<void*>(LoadLibraryA(path.c_str()));
    if (!lib) error = "error " + std::to_string(GetLastError());
#else
    void* lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        const char* err = dlerror();
        error = err ? err : "unknown";
    }
#endif
    return lib;
}

PFN_vkGetInstanceProcAddr GetInstanceProcAddr(void* lib) {
#if defined(_WIN32)
    auto sym = GetProcAddress(reinterpret_cast<HMODULE>(lib), "vkGetInstanceProcAddr");
#else
    void* sym = dlsym(lib, "vkGetInstanceProcAddr");
#endif
    return reinterpret_cast<PFN_vkGetInstanceProcAddr>(sym);
}

util::Status LoaderError(std::string what) {
    return {util::Code::kLoader, "Vulkan is not available: " + what + "." + kLoaderHint};
}

}  // namespace

util::Result<InstanceFns*> LoadLoader() {
    static InstanceFns fns;
    static util::Status outcome = [] {
        // NVK_VULKAN_LOADER names the one file to open (tests use it to simulate a
        // machine without a loader); otherwise the first of kLoaderNames that opens.
        const char* env = std::getenv("NVK_VULKAN_LOADER");
        std::vector<std::string> names;
        if (env && *env) {
            names.emplace_back(env);
        } else {
            names.assign(std::begin(kLoaderNames), std::end(kLoaderNames));
        }
        void* lib = nullptr;
        std::string path, tried;
        for (const std::string& name : names) {
            std::string error;
            lib = OpenLibrary(name, error);
            if (lib) {
                path = name;
                break;
            }
            tried += (tried.empty() ? "" : ", ") + name + " (" + error + ")";
        }
        if (!lib) {
            return LoaderError("cannot open " + tried +
                               (env && *env ? " named by NVK_VULKAN_LOADER"
                                            : "; NVK_VULKAN_LOADER may name another file"));
        }
        fns.vkGetInstanceProcAddr = GetInstanceProcAddr(lib);
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
    fns.get_cooperative_matrix_properties = reinterpret_cast<PFN_GetCooperativeMatrixProperties>(
        fns.vkGetInstanceProcAddr(instance, "vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR"));
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
