#include "vk/device_info.h"

#include <cstring>

namespace nvk::vk {

namespace {

const char* KindName(VkPhysicalDeviceType type) {
    switch (type) {
        case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return "discrete";
        case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return "integrated";
        case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return "virtual";
        case VK_PHYSICAL_DEVICE_TYPE_CPU: return "cpu";
        default: return "other";
    }
}

}  // namespace

PhysicalDeviceInfo QueryDeviceInfo(const InstanceFns& fns, VkPhysicalDevice handle) {
    PhysicalDeviceInfo info;
    info.handle = handle;

    VkPhysicalDeviceProperties basic{};
    fns.vkGetPhysicalDeviceProperties(handle, &basic);
    info.api_version = basic.apiVersion;
    if (basic.apiVersion < VK_API_VERSION_1_2) return info;  // filtered out by the caller

    uint32_t count = 0;
    fns.vkEnumerateDeviceExtensionProperties(handle, nullptr, &count, nullptr);
    std::vector<VkExtensionProperties> extensions(count);
    fns.vkEnumerateDeviceExtensionProperties(handle, nullptr, &count, extensions.data());
    for (const auto& e : extensions) {
        if (std::strcmp(e.extensionName, VK_EXT_SHADER_ATOMIC_FLOAT_EXTENSION_NAME) == 0) {
            info.has_atomic_float_ext = true;
        }
        if (std::strcmp(e.extensionName, "VK_KHR_cooperative_matrix") == 0) {
            info.has_cooperative_matrix_ext = true;
        }
        if (std::strcmp(e.extensionName, kShaderBFloat16Extension) == 0) {
            info.has_bfloat16_ext = true;
        }
        if (std::strcmp(e.extensionName, kSubgroupPartitionedExtension) == 0) {
            info.has_subgroup_partitioned_ext = true;
        }
    }
    if (info.has_cooperative_matrix_ext && fns.get_cooperative_matrix_properties) {
        uint32_t n = 0;
        if (fns.get_cooperative_matrix_properties(handle, &n, nullptr) == VK_SUCCESS && n > 0) {
            std::vector<CooperativeMatrixPropertiesKHR> shapes(n);
            if (fns.get_cooperative_matrix_properties(handle, &n, shapes.data()) == VK_SUCCESS) {
                for (uint32_t i = 0; i < n; ++i) {
                    const auto& s = shapes[i];
                    info.matrix_shapes.push_back({s.MSize, s.NSize, s.KSize, s.AType, s.BType,
                                                  s.CType, s.ResultType, s.scope});
                }
            }
        }
    }

    // Properties: 1.1 (subgroups), 1.2 (float controls, driver).
    VkPhysicalDeviceVulkan12Properties p12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_PROPERTIES};
    VkPhysicalDeviceVulkan11Properties p11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_PROPERTIES};
    p11.pNext = &p12;
    VkPhysicalDeviceProperties2 props{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
    props.pNext = &p11;
    fns.vkGetPhysicalDeviceProperties2(handle, &props);
    const VkPhysicalDeviceLimits& limits = props.properties.limits;

    // Features: 1.0, 1.1 (16-bit storage), 1.2 (8-bit, float16, BDA, timeline, memory model).
    VkPhysicalDeviceShaderAtomicFloatFeaturesEXT atomic_float{
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ATOMIC_FLOAT_FEATURES_EXT};
    VkPhysicalDeviceVulkan12Features f12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
    VkPhysicalDeviceVulkan11Features f11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES};
    f11.pNext = &f12;
    if (info.has_atomic_float_ext) f12.pNext = &atomic_float;
    VkPhysicalDeviceFeatures2 features{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
    features.pNext = &f11;
    fns.vkGetPhysicalDeviceFeatures2(handle, &features);

    info.name = props.properties.deviceName;
    info.kind = KindName(props.properties.deviceType);
    info.driver_version = props.properties.driverVersion;
    info.vendor_id = props.properties.vendorID;
    info.device_id = props.properties.deviceID;
    info.driver_name = p12.driverName;
    info.driver_info = p12.driverInfo;

    info.float64 = features.features.shaderFloat64;
    info.int64 = features.features.shaderInt64;
    info.int16 = features.features.shaderInt16;
    info.int8 = f12.shaderInt8;
    info.int64_atomics = f12.shaderBufferInt64Atomics;
    info.float16 = f12.shaderFloat16;
    info.storage16 = f11.storageBuffer16BitAccess;
    info.storage8 = f12.storageBuffer8BitAccess;
    info.push_constant8 = f12.storagePushConstant8;
    info.push_constant16 = f11.storagePushConstant16;
    info.float32_atomic_add =
        atomic_float.shaderBufferFloat32AtomicAdd && atomic_float.shaderSharedFloat32AtomicAdd;
    if (info.has_bfloat16_ext) {
        ShaderBFloat16Features bf16;
        VkPhysicalDeviceFeatures2 query{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
        query.pNext = &bf16;
        fns.vkGetPhysicalDeviceFeatures2(handle, &query);
        info.bfloat16_type = bf16.shaderBFloat16Type;
        // Tiles of bfloat16 are tiles first: the cooperative-matrix extension must be on too.
        info.bfloat16_matrix = bf16.shaderBFloat16Type && bf16.shaderBFloat16CooperativeMatrix &&
                               info.has_cooperative_matrix_ext;
    }
    info.buffer_device_address = f12.bufferDeviceAddress;
    info.timeline_semaphore = f12.timelineSemaphore;
    info.vulkan_memory_model = f12.vulkanMemoryModel;

    for (int i = 0; i < 3; ++i) {
        info.max_local_size[i] = limits.maxComputeWorkGroupSize[i];
        info.max_groups[i] = limits.maxComputeWorkGroupCount[i];
    }
    info.max_local_invocations = limits.maxComputeWorkGroupInvocations;
    info.max_shared_memory = limits.maxComputeSharedMemorySize;
    info.max_push_constants = limits.maxPushConstantsSize;
    info.timestamp_period = limits.timestampPeriod;
    if (p12.shaderSignedZeroInfNanPreserveFloat16) info.nan_preserve.push_back(16);
    if (p12.shaderSignedZeroInfNanPreserveFloat32) info.nan_preserve.push_back(32);
    if (p12.shaderSignedZeroInfNanPreserveFloat64) info.nan_preserve.push_back(64);
    if (p12.shaderDenormPreserveFloat16) info.denorm_preserve.push_back(16);
    if (p12.shaderDenormPreserveFloat32) info.denorm_preserve.push_back(32);
    if (p12.shaderDenormPreserveFloat64) info.denorm_preserve.push_back(64);

    info.subgroup_size = p11.subgroupSize;
    if (p11.subgroupSupportedStages & VK_SHADER_STAGE_COMPUTE_BIT) {
        VkSubgroupFeatureFlags ops = p11.subgroupSupportedOperations;
        info.subgroup_basic = ops & VK_SUBGROUP_FEATURE_BASIC_BIT;
        info.subgroup_vote = ops & VK_SUBGROUP_FEATURE_VOTE_BIT;
        info.subgroup_arithmetic = ops & VK_SUBGROUP_FEATURE_ARITHMETIC_BIT;
        info.subgroup_ballot = ops & VK_SUBGROUP_FEATURE_BALLOT_BIT;
        info.subgroup_shuffle = ops & VK_SUBGROUP_FEATURE_SHUFFLE_BIT;
        info.subgroup_shuffle_relative = ops & VK_SUBGROUP_FEATURE_SHUFFLE_RELATIVE_BIT;
        // Lanes grouped by value in one instruction (numba.cuda's match_any_sync).
        info.subgroup_partitioned = info.has_subgroup_partitioned_ext &&
                                    (ops & VK_SUBGROUP_FEATURE_PARTITIONED_BIT_NV);
    }

    fns.vkGetPhysicalDeviceQueueFamilyProperties(handle, &count, nullptr);
    std::vector<VkQueueFamilyProperties> families(count);
    fns.vkGetPhysicalDeviceQueueFamilyProperties(handle, &count, families.data());
    for (uint32_t i = 0; i < count; ++i) {
        VkQueueFlags flags = families[i].queueFlags;
        if ((flags & VK_QUEUE_COMPUTE_BIT) && info.compute_family < 0) {
            info.compute_family = static_cast<int>(i);
            info.timestamp_bits = families[i].timestampValidBits;
        }
        if ((flags & VK_QUEUE_TRANSFER_BIT) && !(flags & VK_QUEUE_COMPUTE_BIT) &&
            !(flags & VK_QUEUE_GRAPHICS_BIT) && info.transfer_family < 0) {
            info.transfer_family = static_cast<int>(i);
        }
    }

    VkPhysicalDeviceMemoryProperties memory{};
    fns.vkGetPhysicalDeviceMemoryProperties(handle, &memory);
    for (uint32_t i = 0; i < memory.memoryHeapCount; ++i) {
        if ((memory.memoryHeaps[i].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT) &&
            memory.memoryHeaps[i].size > info.device_local_bytes) {
            info.device_local_bytes = memory.memoryHeaps[i].size;
        }
    }
    return info;
}

}  // namespace nvk::vk
