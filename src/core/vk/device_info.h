// What a physical device offers: the facts behind runtime.DeviceInfo, read
// from its properties, features and queue families.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "vk/loader.h"

namespace nvk::vk {

// VK_KHR_shader_bfloat16, written out (as loader.h does for VK_KHR_cooperative_matrix)
// because the Vulkan headers this builds with predate it: its name and its features
// structure, members in the specification's order.
inline constexpr const char* kShaderBFloat16Extension = "VK_KHR_shader_bfloat16";
// VK_NV_shader_subgroup_partitioned (no features structure: the extension and the
// subgroup operations' PARTITIONED bit say it all).
inline constexpr const char* kSubgroupPartitionedExtension = "VK_NV_shader_subgroup_partitioned";
struct ShaderBFloat16Features {
    uint32_t sType = 1000141000;  // VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_BFLOAT16_FEATURES_KHR
    void* pNext = nullptr;
    VkBool32 shaderBFloat16Type = VK_FALSE;
    VkBool32 shaderBFloat16DotProduct = VK_FALSE;
    VkBool32 shaderBFloat16CooperativeMatrix = VK_FALSE;
};

struct PhysicalDeviceInfo {
    int index = -1;
    VkPhysicalDevice handle = VK_NULL_HANDLE;
    std::string name;
    std::string kind;  // "discrete", "integrated", "virtual", "cpu", "other"
    uint32_t api_version = 0;
    uint32_t driver_version = 0;
    uint32_t vendor_id = 0;
    uint32_t device_id = 0;
    std::string driver_name;
    std::string driver_info;
    int compute_family = -1;   // the first family with compute
    int transfer_family = -1;  // a transfer-only family, or -1

    bool float64 = false, int64 = false, int16 = false, int8 = false;
    bool int64_atomics = false, float16 = false, storage16 = false, storage8 = false;
    bool float32_atomic_add = false;
    bool push_constant8 = false, push_constant16 = false;  // 8/16-bit push constants
    bool buffer_device_address = false, timeline_semaphore = false;
    bool vulkan_memory_model = false;
    bool has_atomic_float_ext = false;
    // VK_KHR_cooperative_matrix: the configurations the device lists, each
    // (M, N, K, A, B, C, Result component types, scope) as Vulkan numbers them.
    bool has_cooperative_matrix_ext = false;
    std::vector<std::array<uint32_t, 8>> matrix_shapes;
    // VK_KHR_shader_bfloat16: shaders may declare bfloat16 values (shaderBFloat16Type) and
    // tiles of them (shaderBFloat16CooperativeMatrix, with VK_KHR_cooperative_matrix). The
    // device enables both wherever they are supported (device.cc), so these say what is on.
    bool has_bfloat16_ext = false;
    bool bfloat16_type = false, bfloat16_matrix = false;

    std::array<uint32_t, 3> max_local_size{};
    uint32_t max_local_invocations = 0;
    std::array<uint32_t, 3> max_groups{};
    uint32_t max_shared_memory = 0;
    uint32_t max_push_constants = 0;
    std::vector<int> nan_preserve;  // 16, 32, 64
    std::vector<int> denorm_preserve;  // widths whose subnormals shaders can keep
    uint32_t timestamp_bits = 0;
    float timestamp_period = 1.0f;

    uint32_t subgroup_size = 1;
    bool subgroup_basic = false, subgroup_vote = false, subgroup_arithmetic = false;
    bool subgroup_ballot = false, subgroup_shuffle = false, subgroup_shuffle_relative = false;
    bool has_subgroup_partitioned_ext = false;
    bool subgroup_partitioned = false;  // the extension, for compute shaders (device.cc enables it)

    uint64_t device_local_bytes = 0;  // the largest device-local heap
};

PhysicalDeviceInfo QueryDeviceInfo(const InstanceFns& fns, VkPhysicalDevice handle);

}  // namespace nvk::vk
