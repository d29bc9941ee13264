#include "vk/device.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>

#include "vk/fork.h"
#include "vk/instance.h"
#include "vk/result.h"

namespace nvk::vk {

namespace {

bool HasExtension(const InstanceFns& fns, VkPhysicalDevice handle, const char* name) {
    uint32_t count = 0;
    fns.vkEnumerateDeviceExtensionProperties(handle, nullptr, &count, nullptr);
    std::vector<VkExtensionProperties> list(count);
    fns.vkEnumerateDeviceExtensionProperties(handle, nullptr, &count, list.data());
    for (const auto& e : list) {
        if (std::strcmp(e.extensionName, name) == 0) return true;
    }
    return false;
}

// The first memory type whose flags include `required`, preferring those that also
// have `preferred`; -1 if none.
int FindType(const VkPhysicalDeviceMemoryProperties& mem, VkMemoryPropertyFlags required,
             VkMemoryPropertyFlags preferred) {
    int fallback = -1;
    for (uint32_t i = 0; i < mem.memoryTypeCount; ++i) {
        VkMemoryPropertyFlags f = mem.memoryTypes[i].propertyFlags;
        if ((f & required) != required) continue;
        if ((f & preferred) == preferred) return static_cast<int>(i);
        if (fallback < 0) fallback = static_cast<int>(i);
    }
    return fallback;
}

}  // namespace

util::Result<Device*> Device::Create(Instance& instance, const PhysicalDeviceInfo& info) {
    if (Forked()) return ForkedError();
    auto* device = new Device();  // lives until the process ends (see device.h)
    device->info_ = info;
    util::Status status = device->Init(instance);
    if (!status.ok()) {
        delete device;  // leaks the partial Vulkan objects; acceptable on a failed open
        return status;
    }
    return device;
}

util::Status Device::Init(Instance& instance) {
    const InstanceFns& ifns = instance.fns();
    if (!info_.buffer_device_address || !info_.timeline_semaphore) {
        return util::Unsupported("Vulkan device '" + info_.name +
                                 "' lacks bufferDeviceAddress or timelineSemaphore, which "
                                 "numba_vulkan needs");
    }

    // Features: the required ones, and every optional one the kernels may use.
    VkPhysicalDeviceShaderAtomicFloatFeaturesEXT atomic_float{
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ATOMIC_FLOAT_FEATURES_EXT};
    VkPhysicalDeviceVulkan12Features f12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
    VkPhysicalDeviceVulkan11Features f11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES};
    VkPhysicalDeviceFeatures2 supported{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
    supported.pNext = &f11;
    f11.pNext = &f12;
    if (info_.has_atomic_float_ext) f12.pNext = &atomic_float;
    ifns.vkGetPhysicalDeviceFeatures2(info_.handle, &supported);

    VkPhysicalDeviceShaderAtomicFloatFeaturesEXT e_atomic{
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ATOMIC_FLOAT_FEATURES_EXT};
    VkPhysicalDeviceVulkan12Features e12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
    VkPhysicalDeviceVulkan11Features e11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES};
    VkPhysicalDeviceFeatures2 enabled{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
    enabled.pNext = &e11;
    e11.pNext = &e12;
    const VkPhysicalDeviceFeatures& s = supported.features;
    enabled.features.shaderInt64 = s.shaderInt64;
    enabled.features.shaderFloat64 = s.shaderFloat64;
    enabled.features.shaderInt16 = s.shaderInt16;
    e11.storageBuffer16BitAccess = f11.storageBuffer16BitAccess;
    e11.uniformAndStorageBuffer16BitAccess = f11.uniformAndStorageBuffer16BitAccess;
    e11.storagePushConstant16 = f11.storagePushConstant16;
    e12.bufferDeviceAddress = VK_TRUE;
    e12.timelineSemaphore = VK_TRUE;
    e12.shaderInt8 = f12.shaderInt8;
    e12.shaderFloat16 = f12.shaderFloat16;
    e12.storageBuffer8BitAccess = f12.storageBuffer8BitAccess;
    e12.uniformAndStorageBuffer8BitAccess = f12.uniformAndStorageBuffer8BitAccess;
    e12.storagePushConstant8 = f12.storagePushConstant8;
    e12.shaderBufferInt64Atomics = f12.shaderBufferInt64Atomics;
    e12.shaderSharedInt64Atomics = f12.shaderSharedInt64Atomics;
    e12.scalarBlockLayout = f12.scalarBlockLayout;
    e12.vulkanMemoryModel = f12.vulkanMemoryModel;
    e12.vulkanMemoryModelDeviceScope = f12.vulkanMemoryModelDeviceScope;
    e12.shaderFloat16 = f12.shaderFloat16;
    std::vector<const char*> extensions;
    if (info_.has_atomic_float_ext) {
        extensions.push_back(VK_EXT_SHADER_ATOMIC_FLOAT_EXTENSION_NAME);
        e_atomic.shaderBufferFloat32AtomicAdd = atomic_float.shaderBufferFloat32AtomicAdd;
        e_atomic.shaderSharedFloat32AtomicAdd = atomic_float.shaderSharedFloat32AtomicAdd;
        e_atomic.shaderBufferFloat32Atomics = atomic_float.shaderBufferFloat32Atomics;
        e_atomic.shaderSharedFloat32Atomics = atomic_float.shaderSharedFloat32Atomics;
        e_atomic.shaderBufferFloat64AtomicAdd = atomic_float.shaderBufferFloat64AtomicAdd;
        e_atomic.shaderBufferFloat64Atomics = atomic_float.shaderBufferFloat64Atomics;
        e12.pNext = &e_atomic;
    }
    // Memory shared with CUDA (external.cc); NVK_VULKAN_NO_EXPORT=1 leaves it off,
    // so that tests see a device that cannot export.
    const char* no_export = std::getenv("NVK_VULKAN_NO_EXPORT");
    if (!(no_export && std::string(no_export) == "1") &&
        HasExtension(ifns, info_.handle, VK_KHR_EXTERNAL_MEMORY_FD_EXTENSION_NAME)) {
        extensions.push_back(VK_KHR_EXTERNAL_MEMORY_FD_EXTENSION_NAME);
        external_fd_ext_ = true;
    }
    // Statistics of compiled pipelines (registers, ...) for Kernel::Statistics: a
    // diagnostic, enabled where the driver has it (not lavapipe in Mesa 22).
    VkPhysicalDevicePipelineExecutablePropertiesFeaturesKHR executable_info{
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_EXECUTABLE_PROPERTIES_FEATURES_KHR};
    if (HasExtension(ifns, info_.handle, VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME)) {
        VkPhysicalDevicePipelineExecutablePropertiesFeaturesKHR has{
            VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_EXECUTABLE_PROPERTIES_FEATURES_KHR};
        VkPhysicalDeviceFeatures2 query{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
        query.pNext = &has;
        ifns.vkGetPhysicalDeviceFeatures2(info_.handle, &query);
        if (has.pipelineExecutableInfo) {
            extensions.push_back(VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME);
            executable_info.pipelineExecutableInfo = VK_TRUE;
            executable_info.pNext = enabled.pNext;
            enabled.pNext = &executable_info;
        }
    }
    // Cooperative matrices (nv.matrix on the matrix units): the features structure written
    // out, as the headers this builds with may predate VK_KHR_cooperative_matrix.
    struct {
        uint32_t sType = 1000506000;  // VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_KHR
        void* pNext = nullptr;
        VkBool32 cooperativeMatrix = VK_FALSE, cooperativeMatrixRobustBufferAccess = VK_FALSE;
    } coop_has, coop_on;
    if (info_.has_cooperative_matrix_ext) {
        VkPhysicalDeviceFeatures2 query{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
        query.pNext = &coop_has;
        ifns.vkGetPhysicalDeviceFeatures2(info_.handle, &query);
        if (coop_has.cooperativeMatrix) {
            extensions.push_back("VK_KHR_cooperative_matrix");
            coop_on.cooperativeMatrix = VK_TRUE;
            coop_on.pNext = enabled.pNext;
            enabled.pNext = &coop_on;
        }
    }
    // bfloat16 tiles (nv.matrix on the matrix units): the type and its cooperative matrices,
    // the latter only beside VK_KHR_cooperative_matrix (device_info.cc says what is on).
    ShaderBFloat16Features bf16_on;
    if (info_.bfloat16_type) {
        extensions.push_back(kShaderBFloat16Extension);
        bf16_on.shaderBFloat16Type = VK_TRUE;
        bf16_on.shaderBFloat16CooperativeMatrix =
            info_.bfloat16_matrix && coop_on.cooperativeMatrix;
        bf16_on.pNext = enabled.pNext;
        enabled.pNext = &bf16_on;
    }
    if (info_.subgroup_partitioned) extensions.push_back(kSubgroupPartitionedExtension);
    // MoltenVK and other portability drivers require this extension to be enabled.
    if (HasExtension(ifns, info_.handle, "VK_KHR_portability_subset")) {
        extensions.push_back("VK_KHR_portability_subset");
    }

    // Queues: the compute family's first queue for work outside streams; streams'
    // kernels on its second queue where it has one, their copies on a queue of a
    // transfer-only family where there is one (stream.cc); else the first queue.
    uint32_t family_count = 0;
    ifns.vkGetPhysicalDeviceQueueFamilyProperties(info_.handle, &family_count, nullptr);
    std::vector<VkQueueFamilyProperties> families(family_count);
    ifns.vkGetPhysicalDeviceQueueFamilyProperties(info_.handle, &family_count, families.data());
    const uint32_t compute_queues =
        std::min<uint32_t>(2, families[info_.compute_family].queueCount);
    const float priorities[2] = {1.0f, 1.0f};
    VkDeviceQueueCreateInfo queue_infos[2]{};
    queue_infos[0] = {VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
    queue_infos[0].queueFamilyIndex = static_cast<uint32_t>(info_.compute_family);
    queue_infos[0].queueCount = compute_queues;
    queue_infos[0].pQueuePriorities = priorities;
    uint32_t queue_info_count = 1;
    // NVK_VULKAN_STREAM_QUEUES=1: streams on the one queue, as on a device without
    // others (for comparisons on GPUs).
    const char* one_queue = std::getenv("NVK_VULKAN_STREAM_QUEUES");
    const bool single = one_queue && std::string(one_queue) == "1";
    const bool use_transfer = info_.transfer_family >= 0 && !single;
    if (use_transfer) {
        queue_infos[1] = {VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
        queue_infos[1].queueFamilyIndex = static_cast<uint32_t>(info_.transfer_family);
        queue_infos[1].queueCount = 1;
        queue_infos[1].pQueuePriorities = priorities;
        queue_info_count = 2;
    }
    const VkDeviceQueueCreateInfo& queue_info = queue_infos[0];

    VkDeviceCreateInfo create{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
    create.pNext = &enabled;
    create.queueCreateInfoCount = queue_info_count;
    create.pQueueCreateInfos = queue_infos;
    create.enabledExtensionCount = static_cast<uint32_t>(extensions.size());
    create.ppEnabledExtensionNames = extensions.data();
    NVK_VK_CHECK("vkCreateDevice",
                 ifns.vkCreateDevice(info_.handle, &create, nullptr, &device_));
    NVK_RETURN_IF_ERROR(LoadDeviceFns(ifns, device_, fns_));
    if (executable_info.pipelineExecutableInfo) {
        executable_properties_ = reinterpret_cast<PFN_vkGetPipelineExecutablePropertiesKHR>(
            ifns.vkGetDeviceProcAddr(device_, "vkGetPipelineExecutablePropertiesKHR"));
        executable_statistics_ = reinterpret_cast<PFN_vkGetPipelineExecutableStatisticsKHR>(
            ifns.vkGetDeviceProcAddr(device_, "vkGetPipelineExecutableStatisticsKHR"));
        executable_representations_ =
            reinterpret_cast<PFN_vkGetPipelineExecutableInternalRepresentationsKHR>(
                ifns.vkGetDeviceProcAddr(device_,
                                         "vkGetPipelineExecutableInternalRepresentationsKHR"));
        if (!executable_properties_ || !executable_statistics_ || !executable_representations_) {
            executable_properties_ = nullptr;
            executable_statistics_ = nullptr;
            executable_representations_ = nullptr;
        }
    }
    fns_.vkGetDeviceQueue(device_, queue_info.queueFamilyIndex, 0, &queue_);
    kernel_queue_ = queue_;
    if (compute_queues > 1 && !single) {
        fns_.vkGetDeviceQueue(device_, queue_info.queueFamilyIndex, 1, &kernel_queue_);
    }
    copy_queue_ = kernel_queue_;
    queue_families_.push_back(queue_info.queueFamilyIndex);
    if (use_transfer) {
        fns_.vkGetDeviceQueue(device_, queue_infos[1].queueFamilyIndex, 0, &copy_queue_);
        copy_family_ = 1;
        queue_families_.push_back(queue_infos[1].queueFamilyIndex);
    }

    VkCommandPoolCreateInfo pool_info{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    pool_info.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
    pool_info.queueFamilyIndex = queue_info.queueFamilyIndex;
    NVK_VK_CHECK("vkCreateCommandPool",
                 fns_.vkCreateCommandPool(device_, &pool_info, nullptr, &command_pool_));
    if (use_transfer) {
        pool_info.queueFamilyIndex = queue_infos[1].queueFamilyIndex;
        NVK_VK_CHECK("vkCreateCommandPool",
                     fns_.vkCreateCommandPool(device_, &pool_info, nullptr, &transfer_pool_));
    }

    VkPipelineCacheCreateInfo cache_info{VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO};
    NVK_VK_CHECK("vkCreatePipelineCache",
                 fns_.vkCreatePipelineCache(device_, &cache_info, nullptr, &pipeline_cache_));

    VkSemaphoreTypeCreateInfo type_info{VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO};
    type_info.semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE;
    type_info.initialValue = 0;
    VkSemaphoreCreateInfo sem_info{VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO};
    sem_info.pNext = &type_info;
    NVK_VK_CHECK("vkCreateSemaphore",
                 fns_.vkCreateSemaphore(device_, &sem_info, nullptr, &timeline_));

    // Memory types. Arrays live in device-local memory; where that memory is also
    // host-visible and the device is a CPU or an integrated GPU (one memory), arrays
    // are mapped and copies are plain memcpy. Otherwise copies go through staging.
    VkPhysicalDeviceMemoryProperties mem{};
    ifns.vkGetPhysicalDeviceMemoryProperties(info_.handle, &mem);
    const VkMemoryPropertyFlags host_flags =
        VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    int host = FindType(mem, host_flags, VK_MEMORY_PROPERTY_HOST_CACHED_BIT);
    if (host < 0) return util::Unsupported("Vulkan device '" + info_.name +
                                           "' has no host-visible coherent memory");
    host_type_ = static_cast<uint32_t>(host);
    int array = -1;
    bool unified = info_.kind == "cpu" || info_.kind == "integrated";
    if (unified) {
        array = FindType(mem, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT | host_flags,
                         VK_MEMORY_PROPERTY_HOST_CACHED_BIT);
    }
    if (array >= 0) {
        arrays_mapped_ = true;
    } else {
        array = FindType(mem, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, 0);
        if (array < 0) array = host;
        arrays_mapped_ = (mem.memoryTypes[array].propertyFlags & host_flags) == host_flags;
    }
    array_type_ = static_cast<uint32_t>(array);
    // NVK_VULKAN_STAGING=1: copy through staging buffers even where arrays could be
    // mapped, so that tests on lavapipe cover the path that discrete GPUs take.
    if (const char* env = std::getenv("NVK_VULKAN_STAGING"); env && std::string(env) == "1") {
        arrays_mapped_ = false;
    }
    // Host arguments (host_args.cc): mapped arrays where arrays are mapped; else
    // NVK_VULKAN_HOST_ARGS, "device" by default where there is device-local,
    // host-visible memory, "off" where there is none.
    const char* mode_env = std::getenv("NVK_VULKAN_HOST_ARGS");
    const std::string mode = mode_env ? mode_env : "";
    const int bar = FindType(mem, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT | host_flags, 0);
    const uint32_t bar_type = bar >= 0 ? static_cast<uint32_t>(bar) : host_type_;
    for (int kind = 0; kind < 3; ++kind) host_arg_type_[kind] = host_type_;
    auto in_bar = [&](int kind) {
        host_arg_type_[kind] = bar_type;
        host_arg_bar_[kind] = bar >= 0;
    };
    if (mode == "off" || (mode.empty() && !arrays_mapped_ && bar < 0)) {
        host_args_mode_ = HostArgs::kOff;
    } else if (arrays_mapped_) {
        host_args_mode_ = HostArgs::kMapped;
    } else if (mode.empty() || mode == "device") {
        host_args_mode_ = HostArgs::kDevice;
        in_bar(0);
        in_bar(1);  // kind 2, the readback buffers, stay in host memory
    } else if (mode == "mixed") {
        host_args_mode_ = HostArgs::kMixed;
        in_bar(0);
    } else if (mode == "host") {
        host_args_mode_ = HostArgs::kHost;
    } else if (mode == "bar") {
        host_args_mode_ = HostArgs::kBar;
        in_bar(0);
        in_bar(1);
    } else {
        return util::InvalidArgument("NVK_VULKAN_HOST_ARGS='" + mode +
                                     "': expected device, mixed, host, bar or off");
    }

    // Command buffers and parameter rings, one per batch slot.
    std::array<VkCommandBuffer, kMaxInFlight + 1> cbs{};
    VkCommandBufferAllocateInfo cb_info{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    cb_info.commandPool = command_pool_;
    cb_info.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    cb_info.commandBufferCount = static_cast<uint32_t>(cbs.size());
    NVK_VK_CHECK("vkAllocateCommandBuffers",
                 fns_.vkAllocateCommandBuffers(device_, &cb_info, cbs.data()));
    for (size_t i = 0; i < slots_.size(); ++i) {
        slots_[i].cb = cbs[i];
        NVK_ASSIGN_OR_RETURN(slots_[i].params, AllocateHost(kParamArenaBytes));
    }
    InitExternal(instance);
    return util::Status::Ok();
}

}  // namespace nvk::vk
