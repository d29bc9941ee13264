// A stream's launches: the open op they are batched into (stream.cc has the model of
// streams, its ops and their waits).
//
// Launches are batched as batch.cc batches work outside streams: a stream has at
// most one open op (StreamState::open), a command buffer that its launches are
// appended to, with the waits of all of them. Its value is submitted + 1 while it
// is open: that is the stream_value of the buffers it uses and what the launch
// returns. It is submitted
//   - at once after a launch if nothing of the stream is in flight and either the
//     host has waited for everything the stream submitted or its last submission is
//     at least kSubmitGapNs old (batch.cc says why: a host that waits gets its work
//     out at once; a host launching in a tight loop fills ops instead of paying a
//     vkQueueSubmit per launch),
//   - when it holds kMaxBatch launches or its parameter ring is full,
//   - before any other op of the stream (copies, timestamps, graph replays), which
//     thus stay ordered after it,
//   - whenever anything would wait for its value: the stream's synchronize and
//     query, another stream's op or the device's batch that uses one of its
//     buffers (BufferWaitsLocked, WaitStreamsLocked), a host access to one of them
//     (WaitBuffer, BufferIdle), the device's Synchronize, Idle and Flush, and the
//     release of the stream.
// So the invariant holds: a wait for a value names an op already submitted. Only
// submitted ops are in flight (StreamState::in_flight); the open op is counted by
// StreamLastLocked where a value "after everything recorded" is needed (Retire).
// If its submission fails, its launches are dropped, their buffers' marks cleared,
// and the error goes to the caller that submitted it.
//
// Barriers inside an op: its launches are ordered only by the barriers between
// them. A launch gets a global memory barrier before it where it reads or writes a
// buffer that a launch of the op wrote since the op's last barrier, or writes one
// that such a launch read (batch.cc's rule; the lists are per op, short, and
// searched linearly). A raw dispatch (`opaque`, accesses unknown) gets one on both
// sides. The first launch of an op needs none: the semaphore waits order it.
#include <algorithm>
#include <cstring>
#include <string>

#include "vk/device.h"
#include "vk/pipeline.h"
#include "vk/result.h"

namespace nvk::vk {

namespace {

bool Contains(const std::vector<Buffer*>& list, const Buffer* b) {
    return std::find(list.begin(), list.end(), b) != list.end();
}

}  // namespace

util::Status Device::OpenStreamBatchLocked(Lock& lock, StreamState& s,
                                           std::vector<BufferRef>& drop) {
    for (;;) {
        if (s.open.active) return util::Status::Ok();
        RecycleLocked(s, drop);
        if (s.in_flight.size() < kStreamInFlight) break;
        const uint64_t oldest = s.in_flight.front().value;
        lock.unlock();
        util::Status waited = WaitSemaphore(s.semaphore, s.completed, oldest, /*for_slot=*/true);
        lock.lock();
        NVK_RETURN_IF_ERROR(waited);
    }
    NVK_ASSIGN_OR_RETURN(StreamOp op, TakeOpLocked(s, 0, drop));
    StreamBatch& b = s.open;
    b.op = std::move(op);
    b.active = true;
    b.launches = 0;
    b.params_used = 0;
    b.bound = VK_NULL_HANDLE;
    b.barrier_next = false;
    b.written.clear();
    b.read.clear();
    b.waits.clear();
    if (s.submitted > s.completed.load()) AddWait(b.waits, s.semaphore, s.submitted);
    return util::Status::Ok();
}

util::Status Device::FlushStreamLocked(StreamState& s) {
    StreamBatch& b = s.open;
    if (!b.active) return util::Status::Ok();
    b.active = false;
    StreamOp op = std::move(b.op);
    b.op = StreamOp{};
    const uint64_t value = s.submitted + 1;
    // The host may read what the launches wrote (mapped arrays) once the stream says
    // they are done: make the writes visible to it.
    VkMemoryBarrier host{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
    host.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT;
    host.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
    fns_.vkCmdPipelineBarrier(op.cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                              VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &host, 0, nullptr, 0, nullptr);
    util::Status status = Checked(fns_.vkEndCommandBuffer(op.cb), "vkEndCommandBuffer");
    if (status.ok()) status = SubmitOneLocked(kernel_queue_, op.cb, b.waits, s.semaphore, value);
    if (!status.ok()) {
        // Its launches never run: nothing may wait for them. The buffers stay kept
        // until the op is reused (TakeOpLocked), when no lock forbids their release.
        for (const BufferRef& ref : op.keep) {
            if (ref->stream == &s && ref->stream_value == value) ref->stream = nullptr;
        }
        s.free_ops[0].push_back(std::move(op));
        return status;
    }
    s.submitted = value;
    s.last_submit_ns = NowNs();
    op.value = value;
    s.in_flight.push_back(std::move(op));
    return util::Status::Ok();
}

util::Status Device::FlushStreamsLocked() {
    for (auto& s : streams_) NVK_RETURN_IF_ERROR(FlushStreamLocked(*s));
    return util::Status::Ok();
}

bool Device::StreamSubmitNowLocked(StreamState& s) {
    // As batch.cc's SubmitNow, for the stream alone: the host waited for all of it
    // (not launching in a tight loop) or it submitted nothing for a while, and nothing
    // of it would run before this op anyway.
    const uint64_t submitted = s.submitted.load();
    if (s.waited.load() < submitted && NowNs() - s.last_submit_ns < kSubmitGapNs) return false;
    return submitted <= s.completed.load() || submitted <= PollStream(s);
}

util::Result<uint64_t> Device::StreamDispatch(StreamState& stream, const Kernel& kernel,
                                              VkPipeline pipeline, const DispatchPiece* pieces,
                                              size_t n_pieces, uint32_t size, bool in_buffer,
                                              Buffer* const* used, size_t n_used,
                                              const bool* writes, bool opaque) {
    NVK_RETURN_IF_ERROR(Usable());
    const uint32_t aligned = (size + 15u) & ~15u;
    const uint64_t param_bytes = in_buffer ? uint64_t{aligned} * n_pieces : 0;
    if (param_bytes > kParamArenaBytes) {
        return util::Unsupported("a stream launch's parameter blocks (" +
                                 std::to_string(n_pieces) + " x " + std::to_string(size) +
                                 " bytes) exceed the limit of " + std::to_string(kParamArenaBytes));
    }
    std::vector<BufferRef> drop;  // released after the lock (their deleters take it)
    Lock lock(mu_);
    for (;;) {
        NVK_RETURN_IF_ERROR(OpenStreamBatchLocked(lock, stream, drop));
        if (stream.open.params_used + param_bytes <= kParamArenaBytes) break;
        NVK_RETURN_IF_ERROR(FlushStreamLocked(stream));  // the ring is full: a new op
    }
    // From here on the lock is held throughout: the open op stays this stream's.
    StreamBatch& b = stream.open;
    NVK_RETURN_IF_ERROR(BufferWaitsLocked(stream, used, n_used, b.waits));
    if (in_buffer && !b.op.params) {
        NVK_ASSIGN_OR_RETURN(b.op.params, AllocateHost(kParamArenaBytes));
    }

    // A barrier where this launch conflicts with one since the op's last barrier.
    bool need = b.barrier_next || opaque;
    for (size_t i = 0; i < n_used && !need; ++i) {
        const bool w = writes == nullptr || writes[i];
        need = Contains(b.written, used[i]) || (w && Contains(b.read, used[i]));
    }
    VkCommandBuffer cb = b.op.cb;
    if (need && b.launches > 0) {
        VkMemoryBarrier barrier{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
        barrier.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT;
        barrier.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT;
        fns_.vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                                  VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 1, &barrier, 0,
                                  nullptr, 0, nullptr);
        b.written.clear();
        b.read.clear();
    }
    b.barrier_next = opaque;
    for (size_t i = 0; i < n_used; ++i) {
        auto& list = writes == nullptr || writes[i] ? b.written : b.read;
        if (!Contains(list, used[i])) list.push_back(used[i]);
    }

    if (pipeline != b.bound) {
        fns_.vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline);
        b.bound = pipeline;
    }
    const uint32_t push_size = kernel.push_size();
    for (size_t i = 0; i < n_pieces; ++i) {
        if (in_buffer) {
            std::memcpy(b.op.params->mapped + b.params_used, pieces[i].params, size);
            const uint64_t address = b.op.params->address + b.params_used;
            b.params_used += aligned;
            if (push_size >= 8) {
                fns_.vkCmdPushConstants(cb, kernel.layout(), VK_SHADER_STAGE_COMPUTE_BIT, 0, 8,
                                        &address);
            }
        } else if (push_size > 0 && size > 0) {
            const uint32_t n = std::min(push_size, (size + 3u) & ~3u);
            fns_.vkCmdPushConstants(cb, kernel.layout(), VK_SHADER_STAGE_COMPUTE_BIT, 0, n,
                                    pieces[i].params);
        }
        // The pieces of one grid are independent workgroups: no barrier between them.
        fns_.vkCmdDispatch(cb, pieces[i].groups[0], pieces[i].groups[1], pieces[i].groups[2]);
    }

    const uint64_t value = stream.submitted + 1;
    for (size_t i = 0; i < n_used; ++i) {
        Buffer& buf = *used[i];
        if (buf.stream == &stream && buf.stream_value == value) continue;  // kept already
        if (BufferRef ref = buf.weak_from_this().lock()) b.op.keep.push_back(std::move(ref));
        buf.stream = &stream;
        buf.stream_value = value;
    }
    ++b.launches;
    if (b.launches >= kMaxBatch || sync_launches() || StreamSubmitNowLocked(stream)) {
        NVK_RETURN_IF_ERROR(FlushStreamLocked(stream));
    }
    return value;
}

}  // namespace nvk::vk
