// Batches: how launches become submissions.
//
//   launch ─▶ open command buffer (slot k) ─submit─▶ queue ─▶ timeline = v
//
// There are kMaxInFlight + 1 slots, each a command buffer plus a host-mapped
// parameter ring. At most one slot is open (recording); the others are
// submitted or idle. The open batch is submitted
//   - at once after a launch if the device is idle (nothing would overlap it)
//     and either the host has waited for every submission so far (a launch
//     after a synchronisation: the host will wait for this one too, and every
//     microsecond before the submission adds to that wait) or the last
//     submission is at least kSubmitGapNs old: a host launching in a tight loop
//     (tiny kernels that finish before the next launch) would otherwise pay a
//     vkQueueSubmit per launch, several times the cost of recording one; it
//     fills batches instead,
//   - when it holds kMaxBatch launches,
//   - when someone waits for it (WaitValue / Synchronize / a copy of a buffer it uses,
//     a stream op that uses one of its buffers),
//   - when its parameter ring is full.
// Submission n signals the timeline value n, so "the value of the open batch"
// is always submitted_ + 1. Opening a slot first waits for the value of its
// previous submission: that bounds the submissions in flight to kMaxInFlight.
//
// Threads: all of this runs under the device's mutex, which OpenBatch drops
// while it waits for a slot; waits (WaitValue, Synchronize) snapshot what to wait
// for under the mutex and wait without it (wait.cc).
//
// Hazards: a command (dispatch or copy) gets a global memory barrier before it
// (compute and transfer writes before compute and transfer reads and writes,
// which orders it after everything earlier on the queue, in this batch and in
// earlier submissions) only where it needs one: where it reads or writes a
// buffer that a command since the last barrier wrote (read/write after write),
// or writes one that such a command read (write after read). Independent
// launches thus run back to back without a barrier (about 1.8 us of GPU time
// each on the H200), and may overlap. Kernels address memory through raw device
// addresses, so the unit is the whole Buffer: a kernel can touch only the
// buffers of its array arguments, all of which the launcher lists, with whether
// the kernel may write them (CompiledKernel.writes). Epochs make the check O(1)
// per buffer: a barrier raises epoch_, and a buffer remembers the epoch of its
// last write and last read. The state spans batches: submission order alone
// does not make one submission's writes visible to the next.
#include <algorithm>
#include <chrono>
#include <cstring>

#include "vk/device.h"
#include "vk/pipeline.h"
#include "vk/result.h"

namespace nvk::vk {

void Device::MarkUsed(Buffer& buffer, uint64_t value) {
    if (buffer.last_use.load(std::memory_order_relaxed) < value) buffer.last_use.store(value);
}

util::Status Device::OpenBatch(Lock& lock) {
    while (open_slot_ < 0) {
        Slot& slot = slots_[next_slot_];
        const uint64_t previous = slot.value;  // its last submission must be done
        if (previous > completed_.load() && previous > PollCompleted()) {
            lock.unlock();
            util::Status waited = WaitTimeline(previous, /*for_slot=*/true);
            lock.lock();
            NVK_RETURN_IF_ERROR(waited);
            continue;  // another thread may have opened a batch meanwhile
        }
        NVK_RETURN_IF_ERROR(Checked(fns_.vkResetCommandBuffer(slot.cb, 0), "vkResetCommandBuffer"));
        VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
        begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
        NVK_RETURN_IF_ERROR(
            Checked(fns_.vkBeginCommandBuffer(slot.cb, &begin), "vkBeginCommandBuffer"));
        slot.params_used = 0;
        slot.waits.clear();
        slot.host_barrier = false;
        open_slot_ = next_slot_;
        next_slot_ = (next_slot_ + 1) % static_cast<int>(slots_.size());
        open_count_ = 0;
        bound_pipeline_ = VK_NULL_HANDLE;
    }
    return util::Status::Ok();
}

void Device::RecordBarrier() {
    VkMemoryBarrier barrier{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
    barrier.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
    barrier.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT |
                            VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
    const VkPipelineStageFlags stages =
        VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT;
    fns_.vkCmdPipelineBarrier(slots_[open_slot_].cb, stages, stages, 0, 1, &barrier, 0, nullptr,
                              0, nullptr);
}

util::Status Device::OrderAccessLocked(Buffer* const* used, size_t n, const bool* writes) {
    if (!streams_.empty()) NVK_RETURN_IF_ERROR(WaitStreamsLocked(used, n));
    bool need = force_barrier_.load(std::memory_order_relaxed);
    for (size_t i = 0; i < n && !need; ++i) {
        const bool w = writes == nullptr || writes[i];
        need = used[i]->write_epoch == epoch_ || (w && used[i]->read_epoch == epoch_);
    }
    if (need) {
        RecordBarrier();
        ++epoch_;
        force_barrier_.store(false, std::memory_order_relaxed);
        barriers_.fetch_add(1, std::memory_order_relaxed);
    }
    for (size_t i = 0; i < n; ++i) {
        if (writes == nullptr || writes[i]) {
            used[i]->write_epoch = epoch_;
        } else {
            used[i]->read_epoch = epoch_;
        }
    }
    return util::Status::Ok();
}

util::Result<uint64_t> Device::RecordDispatch(const Kernel& kernel, VkPipeline pipeline,
                                              const uint32_t groups[3], const void* params,
                                              uint32_t size, bool in_buffer,
                                              Buffer* const* used, size_t n_used,
                                              const bool* writes, bool hold,
                                              bool host_reads) {
    NVK_RETURN_IF_ERROR(Usable());
    const uint32_t aligned = (size + 15u) & ~15u;
    if (in_buffer && aligned > kParamArenaBytes) {
        return util::Unsupported("a kernel's parameter block of " + std::to_string(size) +
                                 " bytes exceeds the limit of " +
                                 std::to_string(kParamArenaBytes));
    }
    Lock lock(mu_);
    for (;;) {
        NVK_RETURN_IF_ERROR(OpenBatch(lock));
        if (!in_buffer || slots_[open_slot_].params_used + aligned <= kParamArenaBytes) break;
        NVK_RETURN_IF_ERROR(FlushLocked());  // the ring is full: start a new batch
    }
    Slot& slot = slots_[open_slot_];
    VkCommandBuffer cb = slot.cb;
    NVK_RETURN_IF_ERROR(OrderAccessLocked(used, n_used, writes));
    if (pipeline != bound_pipeline_) {
        fns_.vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline);
        bound_pipeline_ = pipeline;
    }
    const uint32_t push_size = kernel.push_size();
    if (in_buffer) {
        std::memcpy(slot.params->mapped + slot.params_used, params, size);
        uint64_t address = slot.params->address + slot.params_used;
        slot.params_used += aligned;
        if (push_size >= 8) {
            fns_.vkCmdPushConstants(cb, kernel.layout(), VK_SHADER_STAGE_COMPUTE_BIT, 0, 8,
                                    &address);
        }
    } else if (push_size > 0 && size > 0) {
        uint32_t n = std::min(push_size, (size + 3u) & ~3u);
        fns_.vkCmdPushConstants(cb, kernel.layout(), VK_SHADER_STAGE_COMPUTE_BIT, 0, n, params);
    }
    fns_.vkCmdDispatch(cb, groups[0], groups[1], groups[2]);
    if (host_reads) slot.host_barrier = true;
    ++open_count_;
    const uint64_t value = open_value();
    for (size_t i = 0; i < n_used; ++i) MarkUsed(*used[i], value);
    if (sync_launches()) {
        lock.unlock();
        NVK_RETURN_IF_ERROR(WaitValue(value));
    } else if (open_count_ >= kMaxBatch || (!hold && SubmitNow())) {
        NVK_RETURN_IF_ERROR(FlushLocked());
    }
    return value;
}

bool Device::SubmitDue() const {
    return NowNs() - last_submit_ns_ >= kSubmitGapNs;
}

bool Device::SubmitNow() {
    // The host waited for everything submitted (launch, synchronize, launch, ...): it
    // is not launching in a tight loop, and the sooner the launch goes out, the sooner
    // its next wait ends.
    const bool caught_up = waited_.load(std::memory_order_relaxed) >= submitted_;
    return (caught_up || SubmitDue()) && IdleLocked();
}

uint64_t Device::NowNs() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

util::Status Device::Flush() {
    NVK_RETURN_IF_ERROR(Usable());
    Lock lock(mu_);
    NVK_RETURN_IF_ERROR(FlushLocked());
    return FlushStreamsLocked();
}

util::Status Device::FlushLocked() {
    if (open_slot_ < 0) return util::Status::Ok();
    Slot& slot = slots_[open_slot_];
    open_slot_ = -1;
    if (slot.host_barrier) {
        // Host arguments (host_args.cc): the host reads what the batch's dispatches
        // wrote once the timeline says they are done; a semaphore signal makes the
        // writes available, this makes them visible to the host.
        VkMemoryBarrier barrier{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
        barrier.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
        barrier.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
        fns_.vkCmdPipelineBarrier(
            slot.cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
            VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &barrier, 0, nullptr, 0, nullptr);
    }
    NVK_RETURN_IF_ERROR(Checked(fns_.vkEndCommandBuffer(slot.cb), "vkEndCommandBuffer"));
    const uint64_t value = submitted_ + 1;
    VkTimelineSemaphoreSubmitInfo timeline{VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO};
    timeline.signalSemaphoreValueCount = 1;
    timeline.pSignalSemaphoreValues = &value;
    // Streams that still used buffers of this batch when it was recorded (stream.cc).
    std::vector<VkSemaphore> wait_sems;
    std::vector<uint64_t> wait_values;
    std::vector<VkPipelineStageFlags> wait_stages;
    for (const auto& [sem, v] : slot.waits) {
        wait_sems.push_back(sem);
        wait_values.push_back(v);
        wait_stages.push_back(VK_PIPELINE_STAGE_ALL_COMMANDS_BIT);
    }
    timeline.waitSemaphoreValueCount = static_cast<uint32_t>(wait_values.size());
    timeline.pWaitSemaphoreValues = wait_values.data();
    VkSubmitInfo submit{VK_STRUCTURE_TYPE_SUBMIT_INFO};
    submit.pNext = &timeline;
    submit.waitSemaphoreCount = static_cast<uint32_t>(wait_sems.size());
    submit.pWaitSemaphores = wait_sems.data();
    submit.pWaitDstStageMask = wait_stages.data();
    submit.commandBufferCount = 1;
    submit.pCommandBuffers = &slot.cb;
    submit.signalSemaphoreCount = 1;
    submit.pSignalSemaphores = &timeline_;
    NVK_RETURN_IF_ERROR(
        Checked(fns_.vkQueueSubmit(queue_, 1, &submit, VK_NULL_HANDLE), "vkQueueSubmit"));
    submitted_ = value;
    slot.value = value;
    last_submit_ns_ = NowNs();
    if (!retired_.empty()) ReapLocked();
    return util::Status::Ok();
}

bool Device::Idle() {
    Lock lock(mu_);
    // Recorded work may wait in the open batch (small writes wait for the launch that
    // follows them): submit it, it is not done.
    bool recorded = open_slot_ >= 0 && open_count_ > 0;
    if (recorded) (void)FlushLocked();
    for (auto& s : streams_) {  // and so may the streams' launches (stream.cc)
        if (s->open.active) {
            (void)FlushStreamLocked(*s);
            recorded = true;
        }
    }
    return !recorded && IdleLocked() && !StreamsBusyLocked();
}

bool Device::IdleLocked() {
    if (completed_.load() >= submitted_) return true;
    return PollCompleted() >= submitted_;
}

util::Status Device::WaitValue(uint64_t value) {
    NVK_RETURN_IF_ERROR(Usable());
    if (value <= completed_.load()) return util::Status::Ok();
    {
        Lock lock(mu_);
        if (value > submitted_) NVK_RETURN_IF_ERROR(FlushLocked());
        if (value > submitted_) {
            return util::Internal("waiting for a batch that was never recorded");
        }
    }
    NVK_RETURN_IF_ERROR(WaitTimeline(value));
    NoteWaited(value);
    return util::Status::Ok();
}

void Device::NoteWaited(uint64_t value) {
    uint64_t seen = waited_.load();
    while (seen < value && !waited_.compare_exchange_weak(seen, value)) {
    }
}

util::Status Device::Synchronize() {
    NVK_RETURN_IF_ERROR(Usable());
    uint64_t value = 0;
    std::vector<std::pair<StreamState*, uint64_t>> streams;  // and every stream's work
    {
        Lock lock(mu_);
        NVK_RETURN_IF_ERROR(FlushLocked());
        NVK_RETURN_IF_ERROR(FlushStreamsLocked());
        value = submitted_;
        for (auto& s : streams_) {
            if (s->submitted > s->completed.load()) {
                streams.emplace_back(s.get(), s->submitted);
            } else {
                NoteCompleted(s->waited, s->submitted);  // caught up (stream.cc)
            }
        }
    }
    NVK_RETURN_IF_ERROR(WaitTimeline(value));
    NoteWaited(value);
    for (auto& [s, v] : streams) NVK_RETURN_IF_ERROR(WaitStream(*s, v));
    std::vector<BufferRef> drop;  // released after the lock: their deleters take it
    Lock lock(mu_);
    for (auto& s : streams_) RecycleLocked(*s, drop);
    if (!retired_.empty()) ReapLocked();
    lock.unlock();
    drop.clear();
    return util::Status::Ok();
}

}  // namespace nvk::vk
