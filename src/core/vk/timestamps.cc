// Timestamp queries: the device side of runtime.Event.
//
// One query pool of kQueries timestamps per device, created on first use and
// handed out round-robin: an event recorded more than kQueries records ago may
// read a newer timestamp. Each record resets its query and writes it at the end
// of the pipeline, inside the open batch, so it lands after all work recorded
// before it. Recording happens under the device's mutex; reading waits without it.
#include <string>

#include "vk/device.h"
#include "vk/result.h"

namespace nvk::vk {

util::Result<uint32_t> Device::RecordTimestamp(uint64_t* value) {
    NVK_RETURN_IF_ERROR(Usable());
    if (info_.timestamp_bits == 0) {
        return util::Unsupported("the compute queue of Vulkan device '" + info_.name +
                                 "' writes no timestamps, so events cannot be timed");
    }
    Lock lock(mu_);
    if (query_pool_ == VK_NULL_HANDLE) {
        VkQueryPoolCreateInfo info{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
        info.queryType = VK_QUERY_TYPE_TIMESTAMP;
        info.queryCount = kQueries;
        NVK_VK_CHECK("vkCreateQueryPool",
                     fns_.vkCreateQueryPool(device_, &info, nullptr, &query_pool_));
    }
    NVK_RETURN_IF_ERROR(OpenBatch(lock));
    const uint32_t query = next_query_;
    next_query_ = (next_query_ + 1) % kQueries;
    VkCommandBuffer cb = slots_[open_slot_].cb;
    fns_.vkCmdResetQueryPool(cb, query_pool_, query, 1);
    fns_.vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, query_pool_, query);
    *value = open_value();
    if (IdleLocked()) NVK_RETURN_IF_ERROR(FlushLocked());
    return query;
}

util::Result<double> Device::ReadTimestampNs(uint32_t query, uint64_t value) {
    VkQueryPool pool = VK_NULL_HANDLE;
    {
        Lock lock(mu_);
        pool = query_pool_;
    }
    if (pool == VK_NULL_HANDLE || query >= kQueries) {
        return util::InvalidArgument("the event was never recorded");
    }
    NVK_RETURN_IF_ERROR(WaitValue(value));
    uint64_t ticks = 0;
    NVK_RETURN_IF_ERROR(Checked(
        fns_.vkGetQueryPoolResults(device_, pool, query, 1, sizeof(ticks), &ticks, sizeof(ticks),
                                   VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT),
        "vkGetQueryPoolResults"));
    if (info_.timestamp_bits < 64) ticks &= (uint64_t{1} << info_.timestamp_bits) - 1;
    return static_cast<double>(ticks) * info_.timestamp_period;
}

}  // namespace nvk::vk
