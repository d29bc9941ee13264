#include "vk/pipeline.h"

#include <cstring>
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
    NVK_ASSIGN_OR_RETURN(VkPipeline pipeline,
                         CreatePipeline(key, 0, device_->pipeline_cache()));
    pipelines_.push_back(std::make_unique<Entry>(Entry{key, pipeline}));
    last_.store(pipelines_.back().get(), std::memory_order_release);
    return pipeline;
}

util::Result<VkPipeline> Kernel::CreatePipeline(const std::array<uint32_t, 3>& local,
                                                VkPipelineCreateFlags flags,
                                                VkPipelineCache cache) const {
    const PhysicalDeviceInfo& info = device_->info();
    uint64_t total = uint64_t{local[0]} * local[1] * local[2];
    for (int i = 0; i < 3; ++i) {
        if (local[i] == 0 || local[i] > info.max_local_size[i] ||
            total > info.max_local_invocations) {
            return util::Unsupported(
                "local size (" + std::to_string(local[0]) + ", " + std::to_string(local[1]) +
                ", " + std::to_string(local[2]) + ") is too large for Vulkan device '" + info.name +
                "': at most (" + std::to_string(info.max_local_size[0]) + ", " +
                std::to_string(info.max_local_size[1]) + ", " +
                std::to_string(info.max_local_size[2]) + ") and " +
                std::to_string(info.max_local_invocations) + " invocations per workgroup");
        }
    }
    VkSpecializationMapEntry entries[3];
    for (uint32_t i = 0; i < 3; ++i) entries[i] = {i, i * 4u, 4};
    VkSpecializationInfo spec{3, entries, sizeof(local), local.data()};
    VkComputePipelineCreateInfo create{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
    create.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
    create.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
    create.stage.module = module_;
    create.stage.pName = "main";
    create.stage.pSpecializationInfo = &spec;
    create.flags = flags;
    create.layout = layout_;
    VkPipeline pipeline = VK_NULL_HANDLE;
    NVK_VK_CHECK("vkCreateComputePipelines",
                 device_->fns().vkCreateComputePipelines(device_->handle(), cache, 1, &create,
                                                         nullptr, &pipeline));
    return pipeline;
}

util::Result<Kernel::Report> Kernel::Statistics(const uint32_t local[3],
                                               bool representations) const {
    NVK_RETURN_IF_ERROR(device_->Usable());
    const auto properties = device_->executable_properties();
    const auto statistics = device_->executable_statistics();
    const auto texts = device_->executable_representations();
    if (!properties || !statistics || !texts) {
        return util::Unsupported("Vulkan device '" + device_->info().name +
                                 "' does not report pipeline statistics (its driver lacks "
                                 "VK_KHR_pipeline_executable_properties)");
    }
    // No pipeline cache: a pipeline found there might come without its statistics.
    const std::array<uint32_t, 3> size{local[0], local[1], local[2]};
    VkPipelineCreateFlags flags = VK_PIPELINE_CREATE_CAPTURE_STATISTICS_BIT_KHR;
    if (representations) flags |= VK_PIPELINE_CREATE_CAPTURE_INTERNAL_REPRESENTATIONS_BIT_KHR;
    NVK_ASSIGN_OR_RETURN(VkPipeline pipeline, CreatePipeline(size, flags, VK_NULL_HANDLE));
    const VkDevice handle = device_->handle();
    Report out;
    VkPipelineInfoKHR info{VK_STRUCTURE_TYPE_PIPELINE_INFO_KHR};
    info.pipeline = pipeline;
    uint32_t count = 0;
    VkResult result = properties(handle, &info, &count, nullptr);
    std::vector<VkPipelineExecutablePropertiesKHR> executables(
        count, {VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_PROPERTIES_KHR});
    if (result == VK_SUCCESS) result = properties(handle, &info, &count, executables.data());
    for (uint32_t e = 0; result == VK_SUCCESS && e < count; ++e) {
        VkPipelineExecutableInfoKHR which{VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_INFO_KHR};
        which.pipeline = pipeline;
        which.executableIndex = e;
        uint32_t n = 0;
        result = statistics(handle, &which, &n, nullptr);
        std::vector<VkPipelineExecutableStatisticKHR> stats(
            n, {VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_STATISTIC_KHR});
        if (result == VK_SUCCESS) result = statistics(handle, &which, &n, stats.data());
        for (uint32_t i = 0; result == VK_SUCCESS && i < n; ++i) {
            const VkPipelineExecutableStatisticKHR& s = stats[i];
            Statistic stat{executables[e].name, s.name, s.description};
            switch (s.format) {
                case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_BOOL32_KHR:
                    stat.value_int = s.value.b32 ? 1 : 0;
                    break;
                case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_INT64_KHR:
                    stat.value_int = s.value.i64;
                    break;
                case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_UINT64_KHR:
                    stat.value_int = static_cast<int64_t>(s.value.u64);
                    break;
                default:
                    stat.integral = false;
                    stat.value_float = s.value.f64;
            }
            out.statistics.push_back(std::move(stat));
        }
        if (!representations || result != VK_SUCCESS) continue;
        // Two calls: the entries, then their texts once their sizes are known.
        result = texts(handle, &which, &n, nullptr);
        std::vector<VkPipelineExecutableInternalRepresentationKHR> reps(
            n, {VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_INTERNAL_REPRESENTATION_KHR});
        if (result == VK_SUCCESS) result = texts(handle, &which, &n, reps.data());
        std::vector<std::string> data(n);
        for (uint32_t i = 0; result == VK_SUCCESS && i < n; ++i) {
            data[i].assign(reps[i].dataSize, '\0');
            reps[i].pData = data[i].data();
        }
        if (result == VK_SUCCESS) result = texts(handle, &which, &n, reps.data());
        for (uint32_t i = 0; result == VK_SUCCESS && i < n; ++i) {
            std::string text = std::move(data[i]);
            if (reps[i].isText) text.resize(std::strlen(text.c_str()));
            out.representations.push_back(
                {executables[e].name, reps[i].name, reps[i].description, std::move(text)});
        }
        if (result == VK_INCOMPLETE) result = VK_SUCCESS;  // a text that grew: kept as cut
    }
    device_->fns().vkDestroyPipeline(handle, pipeline, nullptr);  // never used by a launch
    NVK_VK_CHECK("vkGetPipelineExecutableStatisticsKHR", result);
    return out;
}

}  // namespace nvk::vk
