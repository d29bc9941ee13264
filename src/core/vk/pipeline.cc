#include "vk/pipeline.h"

#include <string>

#include "vk/result.h"

namespace nvk::vk {

util::Result<std::unique_ptr<Kernel>> Kernel::Create(Device& device, const uint32_t* words,
                                                     size_t count, uint32_t push_size) {
    NVK_RETURN_IF_ERROR(device.Usable());
    if (count < 5 || words[0] != 0x07230203u) {
        return util::InvalidArgument("not a SPIR-V module (bad magic number or too short)");
    }
    if (push_size % 4 != 0) return util::InvalidArgument("push_size must be a multiple of 4");
    if (push_size > device.info().max_push_constants) {
        return util::Unsupported("a kernel's " + std::to_string(push_size) +
                                 " bytes of push constants exceed the " +
                                 std::to_string(device.info().max_push_constants) +
                                 " that Vulkan device '" + device.info().name + "' allows");
    }
    std::unique_ptr<Kernel> kernel(new Kernel(device));
    kernel->push_size_ = push_size;
    const DeviceFns& fns = device.fns();

    VkShaderModuleCreateInfo module{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
    module.codeSize = count * sizeof(uint32_t);
    module.pCode = words;
    NVK_VK_CHECK("vkCreateShaderModule",
                 fns.vkCreateShaderModule(device.handle(), &module, nullptr, &kernel->module_));

    VkPushConstantRange range{VK_SHADER_STAGE_COMPUTE_BIT, 0, push_size};
    VkPipelineLayoutCreateInfo layout{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
    layout.pushConstantRangeCount = push_size > 0 ? 1 : 0;
    layout.pPushConstantRanges = &range;
    NVK_VK_CHECK("vkCreatePipelineLayout",
                 fns.vkCreatePipelineLayout(device.handle(), &layout, nullptr, &kernel->layout_));
    return kernel;
}

Kernel::~Kernel() {
    // Launches recorded so far may still use the pipelines: destroy them after those.
    Device* device = device_;
    std::vector<VkPipeline> pipelines;
    for (const auto& entry : pipelines_) pipelines.push_back(entry->pipeline);
    device->Retire([device, pipelines = std::move(pipelines), layout = layout_,
                    module = module_] {
        const DeviceFns& fns = device->fns();
        for (VkPipeline pipeline : pipelines) {
            fns.vkDestroyPipeline(device->handle(), pipeline, nullptr);
        }
        if (layout) fns.vkDestroyPipelineLayout(device->handle(), layout, nullptr);
        if (module) fns.vkDestroyShaderModule(device->handle(), module, nullptr);
    });
}

util::Result<VkPipeline> Kernel::FindOrCreate(const uint32_t local[3]) {
    // A forked child or a lost device must not reach the driver (fork.h, wait.cc): in a
    // child of a process that used an NVIDIA device, driver calls can block forever. In
    // a child, mu_ may even be held for good (by a parent's thread that was creating a
    // pipeline when the process forked): check before taking it.
    NVK_RETURN_IF_ERROR(device_->Usable());
    const std::array<uint32_t, 3> key{local[0], local[1], local[2]};
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& entry : pipelines_) {
        if (entry->local == key) {
            last_.store(entry.get(), std::memory_order_release);
            return entry->pipeline;
        }
    }
    const PhysicalDeviceInfo& info = device_->info();
    uint64_t total = uint64_t{key[0]} * key[1] * key[2];
    for (int i = 0; i < 3; ++i) {
        if (key[i] == 0 || key[i] > info.max_local_size[i] || total > info.max_local_invocations) {
            return util::Unsupported(
                "local size (" + std::to_string(key[0]) + ", " + std::to_string(key[1]) + ", " +
                std::to_string(key[2]) + ") is too large for Vulkan device '" + info.name +
                "': at most (" + std::to_string(info.max_local_size[0]) + ", " +
                std::to_string(info.max_local_size[1]) + ", " +
                std::to_string(info.max_local_size[2]) + ") and " +
                std::to_string(info.max_local_invocations) + " invocations per workgroup");
        }
    }
    VkSpecializationMapEntry entries[3];
    for (uint32_t i = 0; i < 3; ++i) entries[i] = {i, i * 4u, 4};
    VkSpecializationInfo spec{3, entries, sizeof(key), key.data()};
    VkComputePipelineCreateInfo create{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
    create.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
    create.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
    create.stage.module = module_;
    create.stage.pName = "main";
    create.stage.pSpecializationInfo = &spec;
    create.layout = layout_;
    VkPipeline pipeline = VK_NULL_HANDLE;
    NVK_VK_CHECK("vkCreateComputePipelines",
                 device_->fns().vkCreateComputePipelines(device_->handle(),
                                                         device_->pipeline_cache(), 1, &create,
                                                         nullptr, &pipeline));
    pipelines_.push_back(std::make_unique<Entry>(Entry{key, pipeline}));
    last_.store(pipelines_.back().get(), std::memory_order_release);
    return pipeline;
}

}  // namespace nvk::vk
