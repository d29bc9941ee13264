// What a device keeps about its work besides itself: buffers, timestamps, the pool's
// figures and streams' submissions (device.h's Device owns and guards them).
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <utility>
#include <vector>

#include "vk/loader.h"

namespace nvk::vk {

class Device;
struct StreamState;

// A VkBuffer with its own memory and a device address. Created and pooled by
// Device; users hold it through BufferRef, whose deleter returns it to the pool.
struct Buffer : std::enable_shared_from_this<Buffer> {
    Device* device = nullptr;
    VkBuffer buffer = VK_NULL_HANDLE;
    VkDeviceMemory memory = VK_NULL_HANDLE;
    uint64_t size = 0;            // bytes (the pool's bucket size)
    VkDeviceAddress address = 0;  // of byte 0
    uint8_t* mapped = nullptr;    // host pointer when the memory is host-visible
    // Timeline value of the last batch that used it. Written under the device's
    // mutex (only ever raised); read without it.
    std::atomic<uint64_t> last_use{0};
    // Hazard tracking (batch.cc): the barrier epoch in which a recorded command last
    // wrote / read it (0: never). Guarded by the device's mutex.
    uint64_t write_epoch = 0;
    uint64_t read_epoch = 0;
    // The stream that last used it and the value of that stream's timeline at which
    // that use completes (stream.cc). Guarded by the device's mutex.
    StreamState* stream = nullptr;
    uint64_t stream_value = 0;
    // Exportable or imported memory (external.cc): the size of its dedicated
    // VkDeviceMemory, which an importer must name; 0 for ordinary buffers.
    uint64_t external_size = 0;
    // Which pool it returns to: -1 the arrays' pool, else the host-argument pool of
    // that kind (host_args.cc, Device::AllocateHostArg).
    int arg_pool = -1;
};
using BufferRef = std::shared_ptr<Buffer>;

// One recorded timestamp (timestamps.cc). Its fields are guarded by the device's
// mutex; the result is kept here once read, or before its query is reused.
struct Timestamp {
    uint32_t query = 0;
    uint64_t value = 0;  // the timeline value of the batch that writes it
    StreamState* stream = nullptr;  // whose timeline `value` is on (null: the device's)
    double ns = 0;
    bool resolved = false;
    // A launch graph's timestamp (graph.h): its query is in `pool`, which `owner`
    // keeps alive; null: the device's pool. Set by each replay, under the mutex.
    VkQueryPool pool = VK_NULL_HANDLE;
    std::shared_ptr<void> owner;
};
using TimestampRef = std::shared_ptr<Timestamp>;

struct PoolStats {
    uint64_t pooled_bytes = 0;    // released buffers kept for reuse
    uint64_t pooled_buffers = 0;
    uint64_t live_bytes = 0;      // buffers handed out and not yet released
    uint64_t hits = 0;            // allocations served from the pool
    uint64_t misses = 0;          // allocations that created a buffer
    uint64_t retired_bytes = 0;   // released, not pooled, waiting for the device to be freed
    uint64_t peak_bytes = 0;      // the most live + pooled + retired bytes held at once
};

// One submission of a stream (stream.cc): its command buffer, the value it
// signals, the buffers it keeps alive until it completes, and its parameter ring.
struct StreamOp {
    VkCommandBuffer cb = VK_NULL_HANDLE;  // null: a launch graph's (not the stream's to reuse)
    int family = 0;  // 0: compute (kernels, timestamps), 1: the transfer family
    uint64_t value = 0;
    BufferRef params;  // host-mapped parameters of dispatches (lazily made, kept)
    std::vector<BufferRef> keep;
};

// A stream's open op (stream.cc): a command buffer that the stream's latest launches
// are still being recorded into, submitted later as one op. Its value is the stream's
// submitted + 1.
struct StreamBatch {
    bool active = false;
    StreamOp op;                   // op.cb is recording while active
    uint32_t launches = 0;         // grids recorded into it
    uint32_t params_used = 0;      // bytes of op.params taken
    VkPipeline bound = VK_NULL_HANDLE;
    bool barrier_next = false;     // the last launch's accesses are unknown (raw dispatch)
    std::vector<Buffer*> written, read;  // by its launches since its last barrier
    std::vector<std::pair<VkSemaphore, uint64_t>> waits;  // what its submission waits for
};

// A stream's device side. Owned by the device until the process ends (streams
// dropped by Python are reused), so Buffer::stream never dangles. Guarded by the
// device's mutex, except the atomics.
struct StreamState {
    VkSemaphore semaphore = VK_NULL_HANDLE;
    std::atomic<uint64_t> completed{0};  // last value known complete
    std::atomic<uint64_t> submitted{0};  // last value submitted (written under the mutex)
    std::atomic<uint64_t> waited{0};     // last value a host wait saw complete
    uint64_t last_submit_ns = 0;         // steady clock at its last submission
    bool in_use = false;
    StreamBatch open;                    // launches not yet submitted
    std::deque<StreamOp> in_flight;      // oldest first
    std::vector<StreamOp> free_ops[2];   // by family, for reuse
};

// A piece of a stream launch: one dispatch of a grid (split grids have several).
struct DispatchPiece {
    uint32_t groups[3];
    const void* params;
};

}  // namespace nvk::vk
