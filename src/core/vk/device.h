// A logical device: one compute queue, a pipeline cache, a buffer pool and the
// batches that launches are recorded into.
//
// Lifetime: devices live until the process ends (runtime.get_device caches
// them), so buffers and kernels may keep a plain Device* without ownership
// games. Nothing here is thread-safe: one thread at a time (as the spec says).
//
// Ordering model (batch.cc): every submission signals the next value of one
// timeline semaphore. A buffer records the value of the last batch that used
// it (`last_use`); waiting for a buffer waits for that value, submitting the
// open batch first if that is the one. See batch.cc for the batching rules.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <vector>

#include "vk/device_info.h"
#include "vk/loader.h"
#include "util/status.h"

namespace nvk::vk {

class Device;
class Instance;

inline constexpr uint32_t kMaxBatch = 16;     // launches per submission
inline constexpr uint32_t kMaxInFlight = 4;   // submissions the device may have pending
inline constexpr uint32_t kParamArenaBytes = 64 * 1024;  // parameter ring per batch
inline constexpr uint32_t kQueries = 1024;              // timestamp queries per device

// A VkBuffer with its own memory and a device address. Created and pooled by
// Device; users hold it through BufferRef, whose deleter returns it to the pool.
struct Buffer {
    Device* device = nullptr;
    VkBuffer buffer = VK_NULL_HANDLE;
    VkDeviceMemory memory = VK_NULL_HANDLE;
    uint64_t size = 0;            // bytes (the pool's bucket size)
    VkDeviceAddress address = 0;  // of byte 0
    uint8_t* mapped = nullptr;    // host pointer when the memory is host-visible
    uint64_t last_use = 0;        // timeline value of the last batch that used it
};
using BufferRef = std::shared_ptr<Buffer>;

struct PoolStats {
    uint64_t pooled_bytes = 0;    // released buffers kept for reuse
    uint64_t pooled_buffers = 0;
    uint64_t live_bytes = 0;      // buffers handed out and not yet released
    uint64_t hits = 0;            // allocations served from the pool
    uint64_t misses = 0;          // allocations that created a buffer
};

class Kernel;

class Device {
  public:
    // Opens physical device `info` of `instance`.
    static util::Result<Device*> Create(Instance& instance, const PhysicalDeviceInfo& info);

    const PhysicalDeviceInfo& info() const { return info_; }
    const DeviceFns& fns() const { return fns_; }
    VkDevice handle() const { return device_; }
    VkQueue queue() const { return queue_; }
    VkCommandPool command_pool() const { return command_pool_; }
    VkPipelineCache pipeline_cache() const { return pipeline_cache_; }
    // Whether array memory is mapped into the process (no staging for copies).
    bool arrays_mapped() const { return arrays_mapped_; }
    bool sync_launches = false;  // NUMBA_VULKAN_SYNC: every launch waits

    // ---- memory.cc: buffers and the pool -------------------------------------------
    util::Result<BufferRef> Allocate(uint64_t nbytes);
    uint64_t pool_limit() const { return pool_limit_; }
    void set_pool_limit(uint64_t bytes) { pool_limit_ = bytes; }
    // Frees pooled buffers until at most `limit` bytes stay pooled.
    util::Status Trim(uint64_t limit);
    PoolStats pool_stats() const;

    // ---- copy.cc: transfers between host memory and buffers ---------------------------
    // Each waits for the launches that still use the buffer (not for the others).
    util::Status Write(Buffer& dst, uint64_t offset, const void* src, uint64_t nbytes);
    util::Status Read(Buffer& src, uint64_t offset, void* dst, uint64_t nbytes);
    // Device-side copy, recorded into the open batch (ordered like a launch).
    util::Status Copy(Buffer& src, uint64_t src_offset, Buffer& dst, uint64_t dst_offset,
                      uint64_t nbytes);

    // ---- batch.cc: recording, submission, waiting -------------------------------------
    // Records one dispatch of `pipeline` (of `kernel`) into the open batch with the
    // parameter block `params` (`size` bytes): pushed directly, or, when `in_buffer`,
    // copied into the batch's parameter ring and its address pushed. Returns the
    // timeline value the dispatch completes at (for Buffer::last_use).
    util::Result<uint64_t> RecordDispatch(const Kernel& kernel, VkPipeline pipeline,
                                          const uint32_t groups[3], const void* params,
                                          uint32_t size, bool in_buffer);
    // Submits the open batch, if any.
    util::Status Flush();
    // Waits until the timeline reaches `value` (flushing first when it is the open batch).
    util::Status WaitValue(uint64_t value);
    util::Status WaitBuffer(const Buffer& buffer) { return WaitValue(buffer.last_use); }
    util::Status Synchronize();
    // The value that the batch being recorded will signal.
    uint64_t open_value() const { return submitted_ + 1; }
    bool Idle();

    // ---- timestamps.cc: timestamp queries for events -----------------------------------
    // Records a timestamp after all work recorded so far; returns the query index
    // and, in *value, the timeline value at which it is written. Queries are reused
    // round-robin, kQueries of them.
    util::Result<uint32_t> RecordTimestamp(uint64_t* value);
    // The timestamp of `query` in nanoseconds, waiting for `value` first.
    util::Result<double> ReadTimestampNs(uint32_t query, uint64_t value);

  private:
    friend class Kernel;
    struct Slot {
        VkCommandBuffer cb = VK_NULL_HANDLE;
        uint64_t value = 0;  // signalled when its last submission completed
        BufferRef params;    // host-mapped parameter ring
        uint32_t params_used = 0;
    };

    util::Status Init(Instance& instance);
    util::Result<Buffer*> CreateBuffer(uint64_t size, uint32_t memory_type, bool map);
    void DestroyBuffer(Buffer* buffer);
    void Release(Buffer* buffer);
    util::Result<BufferRef> AllocateHost(uint64_t nbytes);  // host-visible, never pooled
    util::Status BeginBatch();
    void RecordBarrier();
    util::Status StagedCopy(Buffer& buffer, uint64_t offset, void* host, uint64_t nbytes,
                            bool to_device);

    PhysicalDeviceInfo info_;
    DeviceFns fns_;
    VkDevice device_ = VK_NULL_HANDLE;
    VkQueue queue_ = VK_NULL_HANDLE;
    VkCommandPool command_pool_ = VK_NULL_HANDLE;
    VkPipelineCache pipeline_cache_ = VK_NULL_HANDLE;
    VkSemaphore timeline_ = VK_NULL_HANDLE;

    // Memory types: arrays (device-local, host-visible too where that is cheap) and
    // host (host-visible, coherent; staging and parameter rings).
    uint32_t array_type_ = 0, host_type_ = 0;
    bool arrays_mapped_ = false;

    // Pool: released buffers by bucket size.
    std::map<uint64_t, std::vector<Buffer*>> pool_;
    uint64_t pool_limit_ = 1024ull << 20;
    PoolStats stats_;
    BufferRef staging_;

    // Batches.
    std::array<Slot, kMaxInFlight + 1> slots_;
    int open_slot_ = -1;
    int next_slot_ = 0;
    uint32_t open_count_ = 0;
    VkPipeline bound_pipeline_ = VK_NULL_HANDLE;
    uint64_t submitted_ = 0;  // last value submitted
    uint64_t completed_ = 0;  // last value known complete

    // Timestamps.
    VkQueryPool query_pool_ = VK_NULL_HANDLE;
    uint32_t next_query_ = 0;
};

}  // namespace nvk::vk
