// The device's VkPipelineCache, saved to disk and loaded again by
// runtime/cache.py (one file per device and driver), so that a new process
// creates the pipelines of cached kernels without the driver compiling them.
#include "vk/device.h"
#include "vk/result.h"

namespace nvk::vk {

util::Result<std::vector<uint8_t>> Device::PipelineCacheData() {
    NVK_RETURN_IF_ERROR(Usable());
    size_t size = 0;
    NVK_VK_CHECK("vkGetPipelineCacheData",
                 fns_.vkGetPipelineCacheData(device_, pipeline_cache_, &size, nullptr));
    std::vector<uint8_t> data(size);
    if (size == 0) return data;
    // VK_INCOMPLETE only if the cache grew in between (another thread made a
    // pipeline): the prefix written is still a valid cache.
    VkResult r = fns_.vkGetPipelineCacheData(device_, pipeline_cache_, &size, data.data());
    if (r != VK_SUCCESS && r != VK_INCOMPLETE) {
        NVK_VK_CHECK("vkGetPipelineCacheData", r);
    }
    data.resize(size);
    return data;
}

util::Status Device::MergePipelineCache(const void* data, size_t nbytes) {
    NVK_RETURN_IF_ERROR(Usable());
    VkPipelineCacheCreateInfo info{VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO};
    info.initialDataSize = nbytes;
    info.pInitialData = data;
    VkPipelineCache loaded = VK_NULL_HANDLE;
    NVK_VK_CHECK("vkCreatePipelineCache",
                 fns_.vkCreatePipelineCache(device_, &info, nullptr, &loaded));
    VkResult r = fns_.vkMergePipelineCaches(device_, pipeline_cache_, 1, &loaded);
    fns_.vkDestroyPipelineCache(device_, loaded, nullptr);
    NVK_VK_CHECK("vkMergePipelineCaches", r);
    return util::Status::Ok();
}

}  // namespace nvk::vk
