// Timestamp queries: the device side of runtime.Event.
//
// One query pool of kQueries timestamps per device, created on first use and
// handed out round-robin. Each record resets its query and writes it at the end
// of the pipeline, inside the open batch, so it lands after all work recorded
// before it. A record is a Timestamp the caller keeps (an Event holds it); the
// device remembers, per query, the last record that used it (weakly). Before a
// query is reused, the result of the record that still owns it is read and
// kept in that record, if anyone still holds it: so an event stays correct
// however many events were recorded after it (issue 9, item 4). Reading that
// result needs its batch done: usually long ago (kQueries records back); if not,
// the reuse submits the open batch and waits for it.
//
// Threads: recording, reuse and reading results happen under the device's mutex;
// waits drop it (and re-check afterwards).
#include <string>

#include "vk/device.h"
#include "vk/result.h"

namespace nvk::vk {

util::Status Device::ResolveTimestampLocked(Timestamp& ts) {
    uint64_t ticks = 0;
    const VkQueryResultFlags flags = VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT;
    VkQueryPool pool = ts.pool != VK_NULL_HANDLE ? ts.pool : query_pool_;  // a graph's, or ours
    NVK_RETURN_IF_ERROR(Checked(fns_.vkGetQueryPoolResults(device_, pool, ts.query, 1,
                                                           sizeof(ticks), &ticks, sizeof(ticks),
                                                           flags),
                                "vkGetQueryPoolResults"));
    if (info_.timestamp_bits < 64) ticks &= (uint64_t{1} << info_.timestamp_bits) - 1;
    ts.ns = static_cast<double>(ticks) * info_.timestamp_period;
    ts.resolved = true;
    return util::Status::Ok();
}

util::Status Device::EnsureQueryPoolLocked() {
    if (query_pool_ != VK_NULL_HANDLE) return util::Status::Ok();
    VkQueryPoolCreateInfo info{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
    info.queryType = VK_QUERY_TYPE_TIMESTAMP;
    info.queryCount = kQueries;
    NVK_VK_CHECK("vkCreateQueryPool", fns_.vkCreateQueryPool(device_, &info, nullptr, &query_pool_));
    return util::Status::Ok();
}

bool Device::TimestampDone(const Timestamp& ts) {
    if (ts.stream != nullptr) {
        return ts.value <= ts.stream->completed.load() || ts.value <= PollStream(*ts.stream);
    }
    return ts.value <= completed_.load() || ts.value <= PollCompleted();
}

util::Status Device::TakeQueryLocked(Lock& lock, bool open_batch) {
    // Each wait drops the lock, so everything is checked again after it.
    for (;;) {
        if (open_batch) NVK_RETURN_IF_ERROR(OpenBatch(lock));
        TimestampRef old = query_owner_[next_query_].lock();
        if (!old || old->resolved) return util::Status::Ok();
        if (old->stream == nullptr && old->value > submitted_) {  // in the open batch
            NVK_RETURN_IF_ERROR(FlushLocked());
            continue;
        }
        if (!TimestampDone(*old)) {
            lock.unlock();
            util::Status waited =
                old->stream ? WaitSemaphore(old->stream->semaphore, old->stream->completed,
                                            old->value)
                            : WaitTimeline(old->value);
            lock.lock();
            NVK_RETURN_IF_ERROR(waited);
            continue;
        }
        return ResolveTimestampLocked(*old);
    }
}

util::Result<TimestampRef> Device::RecordTimestamp() {
    NVK_RETURN_IF_ERROR(Usable());
    if (info_.timestamp_bits == 0) {
        return util::Unsupported("the compute queue of Vulkan device '" + info_.name +
                                 "' writes no timestamps, so events cannot be timed");
    }
    Lock lock(mu_);
    NVK_RETURN_IF_ERROR(EnsureQueryPoolLocked());
    // An open batch and query next_query_ free, without dropping the lock in between.
    NVK_RETURN_IF_ERROR(TakeQueryLocked(lock, /*open_batch=*/true));
    auto ts = std::make_shared<Timestamp>();
    ts->query = next_query_;
    ts->value = open_value();
    query_owner_[next_query_] = ts;
    next_query_ = (next_query_ + 1) % kQueries;
    VkCommandBuffer cb = slots_[open_slot_].cb;
    fns_.vkCmdResetQueryPool(cb, query_pool_, ts->query, 1);
    fns_.vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, query_pool_, ts->query);
    if (IdleLocked()) NVK_RETURN_IF_ERROR(FlushLocked());
    return ts;
}

util::Result<double> Device::ReadTimestampNs(Timestamp& ts) {
    NVK_RETURN_IF_ERROR(Usable());  // before the lock (fork.h)
    {
        Lock lock(mu_);
        if (ts.resolved) return ts.ns;
    }
    if (ts.stream != nullptr) {
        NVK_RETURN_IF_ERROR(WaitStream(*ts.stream, ts.value));
    } else {
        NVK_RETURN_IF_ERROR(WaitValue(ts.value));
    }
    Lock lock(mu_);
    // Resolved meanwhile by a reuse of its query, or still the owner of its query
    // (a reuse resolves it first, under this lock).
    if (!ts.resolved) NVK_RETURN_IF_ERROR(ResolveTimestampLocked(ts));
    return ts.ns;
}

}  // namespace nvk::vk
