// Streams: ordered sequences of copies and launches that overlap with each other.
//
//   launch ─▶ open op of the stream ─submit─▶ kernel queue ─▶ stream timeline = v
//   copy, timestamp, graph replay ─▶ (open op submitted first) ─▶ one op ─▶ v + 1
//
// Each stream has a timeline semaphore. Every operation on a stream is one
// submission (an op) that signals the stream's next value and waits, on the device,
// for
//   - the stream's previous value (its operations run in order, also when they
//     go to different queues: copies and kernels),
//   - for each buffer it uses, the stream that last used the buffer
//     (Buffer::stream, stream_value) if another and not done yet,
//   - the device's own timeline (work outside streams, batch.cc) where a batch
//     still uses the buffer (Buffer::last_use; an open batch is submitted first).
// Work outside streams that uses a buffer a stream still uses waits for that
// stream the same way: OrderAccessLocked adds the wait to the open batch, whose
// submission carries it (batch.cc). Every wait names a value that was already
// submitted, so no queue ever waits for work that is not yet on some queue: no
// deadlock, even where all of it shares one queue (lavapipe). Semaphore waits
// order memory too (a full dependency), so no barriers are needed across them.
// Host accesses (Device::WaitBuffer) wait for both.
//
// Launches are batched (stream_launch.cc): a stream has at most one open op, which
// its launches are appended to. Its value is submitted + 1 while it is open, and
// it is submitted before any other op of the stream and before anything waits for
// its value (the invariant above holds).
//
// Queues (device.cc): copies go to a queue of a transfer-only family (the copy
// engines of a discrete GPU) where the device has one, kernels and timestamps to
// a second queue of the compute family where it has one; otherwise both go to
// the device's one queue, where streams still order correctly (but do not overlap).
// Buffers are shared between the families (VK_SHARING_MODE_CONCURRENT).
//
// Launch graphs (graph.cc) submit a command buffer of their own as one op
// (SubmitRecorded): ordered, and keeping its buffers alive, like any other. A
// graph's capture records into the graph, never into the stream.
//
// Lifetime: an op keeps the buffers it uses alive (StreamOp::keep, from the launch
// that first uses them in an open op) until it is seen complete (RecycleLocked: at
// the stream's next op, query, synchronize, or the device's synchronize), so a
// buffer dropped by Python meanwhile is neither reused nor destroyed under it.
// StreamStates live until the process ends; a stream dropped by Python is reused
// by the next one (AcquireStream).
//
// Threads: everything runs under the device's mutex (one lock for every queue,
// which Vulkan requires to be externally synchronised); waits drop it, and the
// state is read again after them (another thread may have opened or submitted an
// op of the same stream meanwhile).
#include <algorithm>
#include <cstring>
#include <string>

#include "vk/copy_regions.h"
#include "vk/device.h"
#include "vk/pipeline.h"
#include "vk/result.h"

namespace nvk::vk {

void Device::AddWait(Waits& waits, VkSemaphore semaphore, uint64_t value) {
    for (auto& w : waits) {
        if (w.first == semaphore) {
            w.second = std::max(w.second, value);
            return;
        }
    }
    waits.emplace_back(semaphore, value);
}

uint64_t Device::PollStream(StreamState& s) { return Poll(s.semaphore, s.completed); }

util::Result<StreamState*> Device::AcquireStream() {
    NVK_RETURN_IF_ERROR(Usable());
    std::vector<BufferRef> drop;
    Lock lock(mu_);
    for (auto& s : streams_) {
        RecycleLocked(*s, drop);
        if (!s->in_use) {
            s->in_use = true;
            return s.get();
        }
    }
    auto s = std::make_unique<StreamState>();
    VkSemaphoreTypeCreateInfo type_info{VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO};
    type_info.semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE;
    VkSemaphoreCreateInfo sem_info{VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO};
    sem_info.pNext = &type_info;
    NVK_RETURN_IF_ERROR(
        Checked(fns_.vkCreateSemaphore(device_, &sem_info, nullptr, &s->semaphore),
                "vkCreateSemaphore"));
    s->in_use = true;
    streams_.push_back(std::move(s));
    return streams_.back().get();
}

void Device::ReleaseStream(StreamState* stream) {
    if (stream == nullptr || !Usable().ok()) return;
    Lock lock(mu_);
    // Its work goes on (nobody may be left to submit it); the next AcquireStream may
    // take it. A failure here has no caller to tell: the device is likely lost.
    (void)FlushStreamLocked(*stream);
    stream->in_use = false;
}

void Device::RecycleLocked(StreamState& s, std::vector<BufferRef>& drop) {
    if (s.in_flight.empty()) return;
    const uint64_t done = lost_.load() ? UINT64_MAX : PollStream(s);
    while (!s.in_flight.empty() && s.in_flight.front().value <= done) {
        StreamOp op = std::move(s.in_flight.front());
        s.in_flight.pop_front();
        for (auto& b : op.keep) drop.push_back(std::move(b));
        op.keep.clear();
        if (op.cb != VK_NULL_HANDLE) s.free_ops[op.family].push_back(std::move(op));
    }
}

bool Device::StreamsBusyLocked() {
    for (auto& s : streams_) {
        if (s->open.active) return true;
        if (s->submitted > s->completed.load() && s->submitted > PollStream(*s)) return true;
    }
    return false;
}

util::Status Device::WaitStreamsLocked(Buffer* const* used, size_t n) {
    for (size_t i = 0; i < n; ++i) {
        Buffer& b = *used[i];
        if (b.stream == nullptr) continue;
        if (b.stream_value > b.stream->submitted) {  // in the stream's open op
            NVK_RETURN_IF_ERROR(FlushStreamLocked(*b.stream));
        }
        if (b.stream_value <= b.stream->completed.load() || b.stream_value <= PollStream(*b.stream)) {
            b.stream = nullptr;  // done: later work need not look again
            continue;
        }
        AddWait(slots_[open_slot_].waits, b.stream->semaphore, b.stream_value);
    }
    return util::Status::Ok();
}

util::Status Device::BufferWaitsLocked(StreamState& s, Buffer* const* used, size_t n,
                                       Waits& waits) {
    for (size_t i = 0; i < n; ++i) {
        Buffer& b = *used[i];
        if (b.stream != nullptr && b.stream != &s) {
            StreamState& other = *b.stream;
            if (b.stream_value > other.submitted) {  // in the other stream's open op
                NVK_RETURN_IF_ERROR(FlushStreamLocked(other));
            }
            if (b.stream_value > other.completed.load() && b.stream_value > PollStream(other)) {
                AddWait(waits, other.semaphore, b.stream_value);
            }
        }
        const uint64_t last = b.last_use.load();
        if (last > completed_.load() && last > PollCompleted()) {
            if (last > submitted_) NVK_RETURN_IF_ERROR(FlushLocked());  // in the open batch
            AddWait(waits, timeline_, last);
        }
    }
    return util::Status::Ok();
}

util::Status Device::StreamWaitsLocked(StreamState& s, Buffer* const* used, size_t n,
                                       Waits& waits) {
    if (s.submitted > s.completed.load()) AddWait(waits, s.semaphore, s.submitted);
    return BufferWaitsLocked(s, used, n, waits);
}

util::Status Device::WaitStream(StreamState& s, uint64_t value) {
    NVK_RETURN_IF_ERROR(WaitSemaphore(s.semaphore, s.completed, value));
    NoteCompleted(s.waited, value);  // the host caught up with it (StreamSubmitNowLocked)
    return util::Status::Ok();
}

util::Result<StreamOp> Device::TakeOpLocked(StreamState& s, int family,
                                            std::vector<BufferRef>& drop) {
    StreamOp op;
    auto& free = s.free_ops[family];
    if (!free.empty()) {
        op = std::move(free.back());
        free.pop_back();
        // An op whose submission failed comes back with its buffers still kept.
        for (auto& b : op.keep) drop.push_back(std::move(b));
        op.keep.clear();
        util::Status reset = Checked(fns_.vkResetCommandBuffer(op.cb, 0), "vkResetCommandBuffer");
        if (!reset.ok()) {
            free.push_back(std::move(op));
            return reset;
        }
    } else {
        VkCommandBufferAllocateInfo info{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
        info.commandPool = family == 1 ? transfer_pool_ : command_pool_;
        info.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
        info.commandBufferCount = 1;
        NVK_RETURN_IF_ERROR(
            Checked(fns_.vkAllocateCommandBuffers(device_, &info, &op.cb), "vkAllocateCommandBuffers"));
        op.family = family;
    }
    VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    util::Status begun =
        Checked(fns_.vkBeginCommandBuffer(op.cb, &begin), "vkBeginCommandBuffer");
    if (!begun.ok()) {
        free.push_back(std::move(op));  // reset again before its next use
        return begun;
    }
    return op;
}

util::Status Device::ReadyStreamLocked(Lock& lock, StreamState& s, std::vector<BufferRef>& drop) {
    for (;;) {
        NVK_RETURN_IF_ERROR(FlushStreamLocked(s));
        RecycleLocked(s, drop);
        if (s.in_flight.size() < kStreamInFlight) return util::Status::Ok();
        const uint64_t oldest = s.in_flight.front().value;
        lock.unlock();
        util::Status waited = WaitSemaphore(s.semaphore, s.completed, oldest, /*for_slot=*/true);
        lock.lock();
        NVK_RETURN_IF_ERROR(waited);
    }
}

util::Result<uint64_t> Device::SubmitStreamLocked(
    Lock& lock, StreamState& s, VkQueue queue, int family, Buffer* const* used, size_t n_used,
    const std::function<util::Status(StreamOp&)>& record, std::vector<BufferRef>& drop) {
    NVK_RETURN_IF_ERROR(ReadyStreamLocked(lock, s, drop));
    Waits waits;
    NVK_RETURN_IF_ERROR(StreamWaitsLocked(s, used, n_used, waits));
    NVK_ASSIGN_OR_RETURN(StreamOp op, TakeOpLocked(s, family, drop));
    // On any failure below, the op goes back to the free list (its buffer is reset
    // before reuse).
    struct Keep {
        StreamState& s;
        StreamOp& op;
        bool submitted = false;
        ~Keep() {
            if (!submitted) s.free_ops[op.family].push_back(std::move(op));
        }
    } keep{s, op};
    NVK_RETURN_IF_ERROR(record(op));
    NVK_RETURN_IF_ERROR(Checked(fns_.vkEndCommandBuffer(op.cb), "vkEndCommandBuffer"));

    const uint64_t value = s.submitted + 1;
    NVK_RETURN_IF_ERROR(SubmitOneLocked(queue, op.cb, waits, s.semaphore, value));
    s.submitted = value;
    s.last_submit_ns = NowNs();
    op.value = value;
    for (size_t i = 0; i < n_used; ++i) {
        Buffer& b = *used[i];
        if (BufferRef ref = b.weak_from_this().lock()) op.keep.push_back(std::move(ref));
        b.stream = &s;
        b.stream_value = value;
    }
    keep.submitted = true;
    s.in_flight.push_back(std::move(op));
    return value;
}

util::Status Device::SubmitOneLocked(VkQueue queue, VkCommandBuffer cb, const Waits& waits,
                                     VkSemaphore signal, uint64_t value) {
    constexpr size_t kStackWaits = 8;
    VkSemaphore stack_sems[kStackWaits];
    uint64_t stack_values[kStackWaits];
    VkPipelineStageFlags stack_stages[kStackWaits];
    std::vector<VkSemaphore> heap_sems;
    std::vector<uint64_t> heap_values;
    std::vector<VkPipelineStageFlags> heap_stages;
    VkSemaphore* sems = stack_sems;
    uint64_t* values = stack_values;
    VkPipelineStageFlags* stages = stack_stages;
    if (waits.size() > kStackWaits) {
        heap_sems.resize(waits.size());
        heap_values.resize(waits.size());
        heap_stages.resize(waits.size());
        sems = heap_sems.data();
        values = heap_values.data();
        stages = heap_stages.data();
    }
    for (size_t i = 0; i < waits.size(); ++i) {
        sems[i] = waits[i].first;
        values[i] = waits[i].second;
        stages[i] = VK_PIPELINE_STAGE_ALL_COMMANDS_BIT;
    }
    VkTimelineSemaphoreSubmitInfo timeline{VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO};
    timeline.waitSemaphoreValueCount = static_cast<uint32_t>(waits.size());
    timeline.pWaitSemaphoreValues = values;
    timeline.signalSemaphoreValueCount = 1;
    timeline.pSignalSemaphoreValues = &value;
    VkSubmitInfo submit{VK_STRUCTURE_TYPE_SUBMIT_INFO};
    submit.pNext = &timeline;
    submit.waitSemaphoreCount = static_cast<uint32_t>(waits.size());
    submit.pWaitSemaphores = sems;
    submit.pWaitDstStageMask = stages;
    submit.commandBufferCount = 1;
    submit.pCommandBuffers = &cb;
    submit.signalSemaphoreCount = 1;
    submit.pSignalSemaphores = &signal;
    return Checked(fns_.vkQueueSubmit(queue, 1, &submit, VK_NULL_HANDLE), "vkQueueSubmit");
}

// ---- other ops ---------------------------------------------------------------------

util::Result<uint64_t> Device::SubmitRecorded(StreamState& s, VkCommandBuffer cb,
                                              const std::vector<BufferRef>& buffers,
                                              const BufferRef& params,
                                              const std::vector<TimestampRef>& stamps,
                                              VkQueryPool pool,
                                              const std::shared_ptr<void>& owner) {
    NVK_RETURN_IF_ERROR(Usable());
    std::vector<BufferRef> drop;                   // released after the lock, as are
    std::vector<std::shared_ptr<void>> replaced;   // the graphs' pools the stamps leave
    constexpr size_t kStackUsed = 32;
    Buffer* stack_used[kStackUsed];
    std::unique_ptr<Buffer*[]> heap_used;
    Buffer** used = stack_used;
    if (buffers.size() > kStackUsed) {
        heap_used.reset(new Buffer*[buffers.size()]);
        used = heap_used.get();
    }
    for (size_t i = 0; i < buffers.size(); ++i) used[i] = buffers[i].get();
    Lock lock(mu_);
    NVK_RETURN_IF_ERROR(ReadyStreamLocked(lock, s, drop));
    Waits waits;
    NVK_RETURN_IF_ERROR(StreamWaitsLocked(s, used, buffers.size(), waits));
    const uint64_t value = s.submitted + 1;
    NVK_RETURN_IF_ERROR(SubmitOneLocked(kernel_queue_, cb, waits, s.semaphore, value));
    s.submitted = value;
    s.last_submit_ns = NowNs();
    StreamOp op;  // cb stays null: the command buffer is the graph's
    op.value = value;
    op.keep.reserve(buffers.size() + 1);
    for (size_t i = 0; i < buffers.size(); ++i) {
        op.keep.push_back(buffers[i]);
        used[i]->stream = &s;
        used[i]->stream_value = value;
    }
    if (params) op.keep.push_back(params);
    s.in_flight.push_back(std::move(op));
    for (const TimestampRef& ts : stamps) {
        if (ts->owner != owner) {
            replaced.push_back(std::move(ts->owner));
            ts->owner = owner;
        }
        ts->pool = pool;
        ts->stream = &s;
        ts->value = value;
        ts->resolved = false;
    }
    return value;
}

util::Status Device::StreamCopy(StreamState& stream, Buffer& src, Buffer& dst,
                                const VkBufferCopy* regions, size_t n_regions) {
    NVK_RETURN_IF_ERROR(Usable());
    for (size_t i = 0; i < n_regions; ++i) {
        const VkBufferCopy& r = regions[i];
        if (r.srcOffset + r.size > src.size || r.dstOffset + r.size > dst.size) {
            return util::InvalidArgument("copy past the end of a buffer");
        }
    }
    if (n_regions == 0) return util::Status::Ok();
    std::vector<BufferRef> drop;  // released after the lock (their deleters take it)
    Lock lock(mu_);
    Buffer* used[2] = {&src, &dst};
    auto record = [&](StreamOp& op) {
        CmdCopyBuffer(fns_, op.cb, src.buffer, dst.buffer, regions, n_regions);
        return util::Status::Ok();
    };
    return SubmitStreamLocked(lock, stream, copy_queue_, copy_family_, used, 2, record, drop)
        .status();
}

util::Result<TimestampRef> Device::StreamTimestamp(StreamState& stream) {
    NVK_RETURN_IF_ERROR(Usable());
    if (info_.timestamp_bits == 0) {
        return util::Unsupported("the compute queue of Vulkan device '" + info_.name +
                                 "' writes no timestamps, so events cannot be timed");
    }
    std::vector<BufferRef> drop;
    Lock lock(mu_);
    NVK_RETURN_IF_ERROR(EnsureQueryPoolLocked());
    // The open op submitted, room on the stream and a free query, without dropping the
    // lock in between.
    for (;;) {
        NVK_RETURN_IF_ERROR(ReadyStreamLocked(lock, stream, drop));
        NVK_RETURN_IF_ERROR(TakeQueryLocked(lock, /*open_batch=*/false));
        if (!stream.open.active && stream.in_flight.size() < kStreamInFlight) break;
    }
    auto ts = std::make_shared<Timestamp>();
    ts->query = next_query_;
    ts->stream = &stream;
    auto record = [&](StreamOp& op) {
        fns_.vkCmdResetQueryPool(op.cb, query_pool_, ts->query, 1);
        fns_.vkCmdWriteTimestamp(op.cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, query_pool_,
                                 ts->query);
        return util::Status::Ok();
    };
    NVK_ASSIGN_OR_RETURN(ts->value,
                         SubmitStreamLocked(lock, stream, kernel_queue_, 0, nullptr, 0, record, drop));
    query_owner_[next_query_] = ts;
    next_query_ = (next_query_ + 1) % kQueries;
    return ts;
}

// ---- the host's view ---------------------------------------------------------------

uint64_t Device::StreamValue(StreamState& stream) {
    Lock lock(mu_);
    return StreamLastLocked(stream);
}

util::Result<bool> Device::StreamDone(StreamState& stream) {
    std::vector<BufferRef> drop;
    Lock lock(mu_);
    NVK_RETURN_IF_ERROR(FlushStreamLocked(stream));  // not done, but then it will be
    RecycleLocked(stream, drop);
    return stream.submitted <= stream.completed.load() || stream.submitted <= PollStream(stream);
}

util::Status Device::StreamSynchronize(StreamState& stream) {
    NVK_RETURN_IF_ERROR(Usable());
    uint64_t value = 0;
    {
        Lock lock(mu_);
        NVK_RETURN_IF_ERROR(FlushStreamLocked(stream));
        value = stream.submitted;
    }
    NVK_RETURN_IF_ERROR(WaitStream(stream, value));
    std::vector<BufferRef> drop;
    Lock lock(mu_);
    RecycleLocked(stream, drop);
    if (!retired_.empty()) ReapLocked();
    lock.unlock();
    return util::Status::Ok();
}

util::Status Device::WaitBuffer(const Buffer& buffer) {
    NVK_RETURN_IF_ERROR(WaitValue(buffer.last_use.load()));
    StreamState* stream = nullptr;
    uint64_t value = 0;
    {
        Lock lock(mu_);
        stream = buffer.stream;
        value = buffer.stream_value;
        if (stream != nullptr && value > stream->submitted) {  // in the stream's open op
            NVK_RETURN_IF_ERROR(FlushStreamLocked(*stream));
        }
    }
    if (stream == nullptr) return util::Status::Ok();
    return WaitStream(*stream, value);
}

bool Device::BufferIdle(const Buffer& buffer) {
    Lock lock(mu_);
    const uint64_t last = buffer.last_use.load();
    if (last > completed_.load() && last > PollCompleted()) return false;
    StreamState* s = buffer.stream;
    if (s == nullptr) return true;
    if (buffer.stream_value > s->submitted) {
        // In the stream's open op: submit it, so that a caller polling for the buffer
        // sees it idle eventually (if the submission fails, the marks are gone).
        (void)FlushStreamLocked(*s);
        return false;
    }
    return buffer.stream_value <= s->completed.load() || buffer.stream_value <= PollStream(*s);
}

}  // namespace nvk::vk
