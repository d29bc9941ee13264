// A logical device: one compute queue, a pipeline cache, a buffer pool and the
// batches that launches are recorded into.
//
// Lifetime: devices live until the process ends (runtime.get_device caches
// them), so buffers and kernels may keep a plain Device* without ownership
// games.
//
// Threads: every public method may be called from any number of threads at once.
// One mutex (mu_) guards the batches, the open command buffer, the parameter
// rings, the pool and the query pool. It is held only while recording or
// submitting, never while waiting for the GPU: a wait (wait.cc) drops it, waits
// in short slices on the timeline semaphore, and re-checks the state afterwards.
// Staged copies (copy.cc) each take a staging buffer of their own. No lock is
// held while calling back into Python (the wait check), so the GIL and the
// device's locks cannot deadlock.
//
// Ordering model (batch.cc): every submission signals the next value of one
// timeline semaphore. A buffer records the value of the last batch that used
// it (`last_use`); waiting for a buffer waits for that value, submitting the
// open batch first if that is the one. See batch.cc for the batching rules.
//
// Streams (stream.cc): each has a timeline semaphore of its own; its work goes
// to other queues where the device has them and is ordered against the rest by
// semaphore waits (Buffer::stream / stream_value name the last stream use). Its
// launches are batched into an open op, submitted by rules like the batches'.
//
// Errors that outlive a call: VK_ERROR_DEVICE_LOST marks the device lost, and
// every later call fails with Code::kDeviceLost; in a child forked after the
// parent used Vulkan, every call fails with Code::kForked (fork.h).
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "vk/device_info.h"
#include "vk/device_records.h"
#include "vk/loader.h"
#include "vk/wait.h"
#include "util/status.h"

namespace nvk::vk {

class Instance;
class Kernel;

inline constexpr uint32_t kMaxBatch = 16;     // launches per submission
inline constexpr uint32_t kMaxInFlight = 4;   // submissions the device may have pending
inline constexpr uint32_t kParamArenaBytes = 64 * 1024;  // parameter ring per batch
inline constexpr uint32_t kQueries = 1024;              // timestamp queries per device
inline constexpr uint32_t kKernelSlots = 32;  // runtime/slots.py: host-array slots per kernel
inline constexpr uint64_t kSubmitGapNs = 40'000;  // batch.cc: submit-when-idle spacing
inline constexpr uint32_t kStreamInFlight = 64;   // stream.cc: submissions per stream in flight

class Device {
  public:
    // Opens physical device `info` of `instance`.
    static util::Result<Device*> Create(Instance& instance, const PhysicalDeviceInfo& info);

    const PhysicalDeviceInfo& info() const { return info_; }
    const DeviceFns& fns() const { return fns_; }
    VkDevice handle() const { return device_; }
    VkQueue queue() const { return queue_; }
    VkQueue stream_queue() const { return kernel_queue_; }  // streams' kernels (stream.cc)
    VkCommandPool command_pool() const { return command_pool_; }
    VkPipelineCache pipeline_cache() const { return pipeline_cache_; }
    // VK_KHR_pipeline_executable_properties' queries, or null where the driver lacks
    // them (Kernel::Statistics).
    PFN_vkGetPipelineExecutablePropertiesKHR executable_properties() const {
        return executable_properties_;
    }
    PFN_vkGetPipelineExecutableStatisticsKHR executable_statistics() const {
        return executable_statistics_;
    }
    PFN_vkGetPipelineExecutableInternalRepresentationsKHR executable_representations() const {
        return executable_representations_;
    }
    // Whether array memory is mapped into the process (no staging for copies).
    bool arrays_mapped() const { return arrays_mapped_; }
    bool sync_launches() const { return sync_launches_.load(std::memory_order_relaxed); }
    void set_sync_launches(bool on) { sync_launches_.store(on); }  // NUMBA_VULKAN_SYNC

    // ---- wait.cc: waits, their limits, and the errors that outlive a call ---------------
    // Seconds a single wait may take before it fails with Code::kTimeout (0: no limit).
    double timeout() const { return timeout_ns_.load() / 1e9; }
    void set_timeout(double seconds);
    // Ok unless the process was forked or the device was lost (then every call fails).
    util::Status Usable() const;
    // Marks the device lost as if a call had returned VK_ERROR_DEVICE_LOST (for tests).
    void SimulateDeviceLost() { MarkLost("a test"); }

    // ---- memory.cc: buffers and the pool -------------------------------------------
    // A buffer of at least nbytes, perhaps one from the pool that the device still
    // uses: the host waits for it (WaitBuffer) before touching its memory.
    util::Result<BufferRef> Allocate(uint64_t nbytes);
    // Host-visible (host-cached where the device offers it), mapped memory that the
    // device copies to and from directly: runtime.pinned_array. Never pooled.
    util::Result<BufferRef> AllocatePinned(uint64_t nbytes) { return AllocateHost(nbytes); }
    uint64_t pool_limit() const { return pool_limit_.load(); }
    void set_pool_limit(uint64_t bytes) { pool_limit_.store(bytes); }
    // Frees pooled buffers until at most `limit` bytes stay pooled.
    util::Status Trim(uint64_t limit);
    PoolStats pool_stats() const;

    // ---- external.cc: memory shared with other APIs (CUDA) as file descriptors ----------
    // Whether buffers can be exported and imported as OPAQUE_FD handles
    // (VK_KHR_external_memory_fd); if not, external_reason() says why.
    bool exports_memory() const { return get_memory_fd_ != nullptr; }
    const std::string& external_reason() const { return external_reason_; }
    // VkPhysicalDeviceIDProperties::deviceUUID (what CUDA's device UUID matches).
    const std::array<uint8_t, 16>& uuid() const { return uuid_; }
    // A buffer in dedicated, exportable memory of the arrays' kind. Never pooled.
    util::Result<BufferRef> AllocateExportable(uint64_t nbytes);
    // A new file descriptor for the memory of an exportable or imported buffer; the
    // caller owns it (an importer that succeeds takes it over).
    util::Result<int> ExportFd(const Buffer& buffer);
    // A buffer of `nbytes` over memory exported as `fd` (`memory_size` bytes, from
    // this driver: CUDA or Vulkan). Takes over `fd` when it succeeds.
    util::Result<BufferRef> ImportFd(int fd, uint64_t nbytes, uint64_t memory_size);
    // ---- host_args.cc: small NumPy arguments without staging ---------------------------
    // Whether launches may take small host arrays directly (the C++ launcher's NumPy
    // path): off under NVK_VULKAN_HOST_ARGS=off.
    bool host_args() const { return host_args_mode_ != HostArgs::kOff; }
    // Whether a written host argument is copied back through a readback buffer
    // (a copy command into host memory) rather than read from its own mapping.
    bool host_args_readback() const { return host_args_mode_ == HostArgs::kDevice; }
    // A mapped buffer of at least `nbytes` for a NumPy argument: kind 0 one the kernel
    // only reads, 1 one it may write, 2 the readback buffer of a written one (host
    // memory). The host copies the array in before the launch and, when written, out
    // after waiting. Pooled per kind and size; like Allocate, it waits for the
    // buffer's last use.
    util::Result<BufferRef> AllocateHostArg(uint64_t nbytes, int kind);
    // The memory host arguments of a kind use (for the docs and benchmarks):
    // "mapped arrays", "host", "device-local host-visible", "off".
    std::string host_args_memory(int kind) const;

    // ---- pipeline_cache.cc: the VkPipelineCache on disk (runtime/cache.py) ----------
    // The cache's contents (vkGetPipelineCacheData), header included.
    util::Result<std::vector<uint8_t>> PipelineCacheData();
    // Merges a cache saved earlier; the driver ignores data from another device or
    // driver (its header's UUID does not match), so a stale file is harmless.
    util::Status MergePipelineCache(const void* data, size_t nbytes);

    // ---- copy.cc: transfers between host memory and buffers ---------------------------
    // Ordered after the launches recorded before them; a Read returns once the data is
    // on the host, a Write may return before the device has the data (small writes
    // to unmapped buffers go out with the next submission) but after `src` was read.
    util::Status Write(Buffer& dst, uint64_t offset, const void* src, uint64_t nbytes);
    util::Status Read(Buffer& src, uint64_t offset, void* dst, uint64_t nbytes);
    // Device-side copy, recorded into the open batch (ordered like a launch).
    // `host_reads`: the host reads `dst` once it completes (host arguments' readback).
    // Returns the timeline value it completes at.
    util::Result<uint64_t> Copy(Buffer& src, uint64_t src_offset, Buffer& dst,
                                uint64_t dst_offset, uint64_t nbytes, bool host_reads = false);

    // ---- batch.cc: recording, submission, waiting -------------------------------------
    // Records one dispatch of `pipeline` (of `kernel`) into the open batch with the
    // parameter block `params` (`size` bytes): pushed directly, or, when `in_buffer`,
    // copied into the batch's parameter ring and its address pushed. The `n_used`
    // buffers `used` are marked as used by it (Buffer::last_use) before any other
    // thread can see the dispatch. `writes[i]` says whether the kernel may write
    // used[i] (null: it may write every one); a barrier is recorded before the
    // dispatch only where it conflicts with earlier work (batch.cc). Every buffer the
    // kernel can touch must be listed. `hold`: do not submit it now even if the
    // device is idle (the caller records copies of its results next and waits for
    // them, which submits everything at once). `host_reads`: the host reads memory the
    // dispatch writes once it completes (host arguments): the batch ends with a barrier
    // that makes the writes visible to the host. Returns the timeline value it
    // completes at.
    util::Result<uint64_t> RecordDispatch(const Kernel& kernel, VkPipeline pipeline,
                                          const uint32_t groups[3], const void* params,
                                          uint32_t size, bool in_buffer,
                                          Buffer* const* used = nullptr, size_t n_used = 0,
                                          const bool* writes = nullptr, bool hold = false,
                                          bool host_reads = false);
    // The next command gets a barrier whatever it touches (raw dispatches, whose
    // accesses are not all known).
    void ForceBarrier() { force_barrier_.store(true, std::memory_order_relaxed); }
    // Barriers recorded so far (for tests of the hazard tracking).
    uint64_t barrier_count() const { return barriers_.load(std::memory_order_relaxed); }
    // Submits the open batch and the streams' open ops, if any.
    util::Status Flush();
    // Waits until the timeline reaches `value` (flushing first when it is the open
    // batch). Interruptible (SetWaitCheck) and bounded by timeout().
    util::Status WaitValue(uint64_t value);
    // Waits until neither the device's batches nor a stream use `buffer`.
    util::Status WaitBuffer(const Buffer& buffer);
    // Whether neither uses it now (never waits; an open batch using it: false).
    bool BufferIdle(const Buffer& buffer);
    // Waits for everything recorded so far, by any thread.
    util::Status Synchronize();
    bool Idle();

    // ---- timestamps.cc: timestamp queries for events -----------------------------------
    // Records a timestamp after all work recorded so far. Queries are reused
    // round-robin, kQueries of them; a Timestamp stays readable after its query is
    // reused (its result is kept first).
    util::Result<TimestampRef> RecordTimestamp();
    // Whether the timestamp has been written (never waits or submits).
    bool TimestampDone(const Timestamp& ts);
    // The timestamp in nanoseconds, waiting for its batch first.
    util::Result<double> ReadTimestampNs(Timestamp& ts);

    // ---- stream.cc, stream_launch.cc: streams --------------------------------------------
    // A stream (a free one reused, or a new one). ReleaseStream gives it back; its
    // work goes on and is never waited for by the release.
    util::Result<StreamState*> AcquireStream();
    void ReleaseStream(StreamState* stream);
    // Enqueues copies of `regions` from `src` to `dst` on `stream` (the transfer
    // queue where there is one) and returns at once.
    util::Status StreamCopy(StreamState& stream, Buffer& src, Buffer& dst,
                            const VkBufferCopy* regions, size_t n_regions);
    // Enqueues the dispatches `pieces` of `pipeline` (one grid) on `stream` (the second
    // compute queue where there is one): appended to the stream's open op, which is
    // submitted by the rules of stream.cc; like RecordDispatch otherwise (`writes`,
    // null: every buffer written, decides the barriers between launches of one op).
    // `opaque`: the kernel may touch memory `used` does not list (a raw module),
    // so it gets a barrier on both sides. Returns the stream's timeline value it
    // completes at (that of the open op).
    util::Result<uint64_t> StreamDispatch(StreamState& stream, const Kernel& kernel,
                                          VkPipeline pipeline, const DispatchPiece* pieces,
                                          size_t n_pieces, uint32_t size, bool in_buffer,
                                          Buffer* const* used, size_t n_used,
                                          const bool* writes = nullptr, bool opaque = false);
    // Records a timestamp after the work enqueued on `stream` so far.
    util::Result<TimestampRef> StreamTimestamp(StreamState& stream);
    // Whether everything enqueued on `stream` has finished (never waits; submits the
    // stream's open op, so that it does finish).
    util::Result<bool> StreamDone(StreamState& stream);
    // The stream's value of the last work enqueued: its open op's, if any, else that
    // of its last submission (0: none yet).
    uint64_t StreamValue(StreamState& stream);
    // The last value of the stream's timeline known complete (asks the semaphore).
    uint64_t StreamCompleted(StreamState& stream) { return PollStream(stream); }
    // Waits for everything enqueued on `stream` so far (interruptible, bounded).
    util::Status StreamSynchronize(StreamState& stream);
    // Which queues streams use: 0 the device's queue, 1 a second queue of its family,
    // 2 a queue of the transfer-only family (for tests and the docs).
    int stream_kernel_queue() const { return kernel_queue_ != queue_ ? 1 : 0; }
    int stream_copy_queue() const {
        return copy_family_ == 1 ? 2 : (copy_queue_ != queue_ ? 1 : 0);
    }

    // Submits `cb`, recorded beforehand (a launch graph's, graph.h), on `stream` like one
    // operation of it (StreamDispatch): ordered after the stream's earlier work and
    // whatever else still uses `buffers`, which it keeps alive, with `params` (its
    // parameter ring), until done. Points `stamps` (queries of `pool`, kept alive by
    // `owner`) at this submission. Returns the stream's value it completes at.
    util::Result<uint64_t> SubmitRecorded(StreamState& stream, VkCommandBuffer cb,
                                          const std::vector<BufferRef>& buffers,
                                          const BufferRef& params,
                                          const std::vector<TimestampRef>& stamps,
                                          VkQueryPool pool, const std::shared_ptr<void>& owner);

    // Runs `destroy` once the timeline passes what is recorded now (the open batch,
    // if any): for Vulkan objects that launches in flight may still use. Never waits.
    void Retire(std::function<void()> destroy);

  private:
    friend class Kernel;
    friend class Graph;  // graph.cc: its pools, instances and waits
    struct Slot {
        VkCommandBuffer cb = VK_NULL_HANDLE;
        uint64_t value = 0;  // signalled when its last submission completed
        BufferRef params;    // host-mapped parameter ring
        uint32_t params_used = 0;
        // Stream values the submission waits for (streams still using its buffers).
        std::vector<std::pair<VkSemaphore, uint64_t>> waits;
        bool host_barrier = false;  // end with a shader-write -> host-read barrier
    };
    enum class HostArgs { kOff, kMapped, kDevice, kHost, kBar, kMixed };

    using Lock = std::unique_lock<std::mutex>;

    util::Status Init(Instance& instance);
    void InitExternal(Instance& instance);  // external.cc, once memory types are chosen
    util::Result<Buffer*> CreateExternalBuffer(uint64_t nbytes, int import_fd,
                                               uint64_t import_size);
    util::Result<Buffer*> CreateBuffer(uint64_t size, uint32_t memory_type, bool map);
    void DestroyBuffer(Buffer* buffer);  // the buffer must be idle
    void Release(Buffer* buffer);        // BufferRef's deleter for pooled buffers
    void ReleaseHostArg(Buffer* buffer); // the same for host-argument buffers
    void RetireBuffer(Buffer* buffer);   // destroys it now if idle, else once it is
    void RetireLocked(uint64_t value, std::function<void()> destroy);
    void RetireArrayLocked(Buffer* buffer);  // RetireLocked, counted in retired_bytes
    void ReapLocked();                   // runs the retired destructions that are due
    Buffer* TakePooledLocked(std::vector<Buffer*>& list);  // removes one; list not empty
    util::Result<BufferRef> AllocateHost(uint64_t nbytes);  // host-visible, never pooled

    // batch.cc; the *Locked functions need mu_ held. OpenBatch may drop and retake it
    // (to wait for a slot), so callers re-read the state after it.
    util::Status OpenBatch(Lock& lock);
    util::Status FlushLocked();
    bool IdleLocked();
    bool SubmitDue() const;  // the last submission is at least kSubmitGapNs old
    bool SubmitNow();        // whether a launch goes out at once (batch.cc)
    void NoteWaited(uint64_t value);  // a host wait saw `value` complete
    static uint64_t NowNs();
    void RecordBarrier();
    // Records a barrier before the next command if it reads or writes something an
    // earlier command wrote, or writes something an earlier command read, since the
    // last barrier; then notes its accesses. `writes` null: every buffer written.
    // Fails only where a stream's open op that uses one of them fails to submit.
    util::Status OrderAccessLocked(Buffer* const* used, size_t n, const bool* writes);
    util::Status OrderAccessLocked(Buffer& read, Buffer& written) {
        Buffer* both[2] = {&read, &written};
        const bool w[2] = {false, true};
        return OrderAccessLocked(both, 2, w);
    }
    uint64_t open_value() const { return submitted_ + 1; }  // the open batch's value
    static void MarkUsed(Buffer& buffer, uint64_t value);   // under mu_

    // copy.cc
    util::Result<BufferRef> TakeStaging(uint64_t nbytes);  // a free one of >= nbytes, or new
    void GiveBackStaging(BufferRef staging);
    util::Status InlineWrite(Buffer& dst, uint64_t offset, const void* src, uint64_t nbytes);
    util::Status StagedCopy(Buffer& buffer, uint64_t offset, void* host, uint64_t nbytes,
                            bool to_device);

    util::Status ResolveTimestampLocked(Timestamp& ts);  // timestamps.cc; its batch is done
    // Makes query next_query_ free to reuse (timestamps.cc); may drop and retake the
    // lock, and opens a batch first when `open_batch`.
    util::Status TakeQueryLocked(Lock& lock, bool open_batch);

    // stream.cc
    using Waits = std::vector<std::pair<VkSemaphore, uint64_t>>;
    // Adds a wait for `semaphore` >= `value` (raising one already there).
    static void AddWait(Waits& waits, VkSemaphore semaphore, uint64_t value);
    // The waits a new op of `s` touching `used` needs: the stream's previous op and
    // BufferWaitsLocked. Every value named is submitted (open ops are submitted first).
    util::Status StreamWaitsLocked(StreamState& s, Buffer* const* used, size_t n, Waits& waits);
    // Adds to `waits` what `s` must wait for before it uses `used`: other streams and
    // batches of the device that still use them (submitting them first if open).
    util::Status BufferWaitsLocked(StreamState& s, Buffer* const* used, size_t n, Waits& waits);
    // Adds to the open batch the waits for streams that still use `used`.
    util::Status WaitStreamsLocked(Buffer* const* used, size_t n);
    // Submits the open op of `s` and waits (dropping the lock) until `s` has room
    // for one more op in flight; returns with both true and the lock held.
    util::Status ReadyStreamLocked(Lock& lock, StreamState& s, std::vector<BufferRef>& drop);
    // A command buffer of `family` for an op of `s` (reused or new), begun.
    util::Result<StreamOp> TakeOpLocked(StreamState& s, int family, std::vector<BufferRef>& drop);
    // Waits (no lock held) until `s` reaches `value`, which must be submitted.
    util::Status WaitStream(StreamState& s, uint64_t value);
    // One vkQueueSubmit of `cb` that waits for `waits` and signals `signal` = `value`.
    util::Status SubmitOneLocked(VkQueue queue, VkCommandBuffer cb, const Waits& waits,
                                 VkSemaphore signal, uint64_t value);
    // Submits one op on `s` (after its open op): `record` fills its command buffer.
    util::Result<uint64_t> SubmitStreamLocked(Lock& lock, StreamState& s, VkQueue queue,
                                              int family, Buffer* const* used, size_t n_used,
                                              const std::function<util::Status(StreamOp&)>& record,
                                              std::vector<BufferRef>& drop);
    // stream_launch.cc: the open op that a stream's launches are batched into.
    // Opens an op on `s` for launches unless one is open; may drop the lock to wait
    // for room (kStreamInFlight), so callers re-read the state after it.
    util::Status OpenStreamBatchLocked(Lock& lock, StreamState& s, std::vector<BufferRef>& drop);
    // Submits the open op of `s`, if any (never drops the lock). If the submission
    // fails, its launches are dropped (the error says so to the caller).
    util::Status FlushStreamLocked(StreamState& s);
    util::Status FlushStreamsLocked();  // every stream's open op
    // Whether the open op of `s` goes out at once after a launch.
    bool StreamSubmitNowLocked(StreamState& s);
    util::Status EnsureQueryPoolLocked();
    // Moves the completed ops of `s` to its free lists; their kept buffers go to `drop`
    // (released by the caller after unlocking: a deleter takes the lock).
    void RecycleLocked(StreamState& s, std::vector<BufferRef>& drop);
    uint64_t PollStream(StreamState& s);
    // The value after which `s` uses nothing recorded so far (its open op's, if any).
    static uint64_t StreamLastLocked(const StreamState& s) {
        return s.open.active ? s.submitted.load() + 1 : s.submitted.load();
    }
    bool StreamsBusyLocked();

    // wait.cc: waits without any lock held, in slices; checks interrupts and the timeout.
    // `for_slot`: a launch or copy waiting for room in the queue, which spins less.
    util::Status WaitTimeline(uint64_t value, bool for_slot = false) {
        return WaitSemaphore(timeline_, completed_, value, for_slot);
    }
    util::Status WaitSemaphore(VkSemaphore semaphore, std::atomic<uint64_t>& completed,
                               uint64_t value, bool for_slot = false);
    static void NoteCompleted(std::atomic<uint64_t>& completed, uint64_t value);
    uint64_t Poll(VkSemaphore semaphore, std::atomic<uint64_t>& completed);
    uint64_t PollCompleted() { return Poll(timeline_, completed_); }  // returns completed_
    // Checks `result` of `call`, marking the device lost on VK_ERROR_DEVICE_LOST.
    util::Status Checked(VkResult result, const char* call);
    void MarkLost(const char* call);

    PhysicalDeviceInfo info_;
    DeviceFns fns_;
    VkDevice device_ = VK_NULL_HANDLE;
    VkQueue queue_ = VK_NULL_HANDLE;
    VkCommandPool command_pool_ = VK_NULL_HANDLE;
    // Streams' queues (stream.cc): kernels on kernel_queue_ (a second queue of the
    // compute family, else queue_), copies on copy_queue_ (a queue of the transfer-only
    // family when copy_family_ is 1, with its pool transfer_pool_; else kernel_queue_).
    VkQueue kernel_queue_ = VK_NULL_HANDLE;
    VkQueue copy_queue_ = VK_NULL_HANDLE;
    int copy_family_ = 0;
    VkCommandPool transfer_pool_ = VK_NULL_HANDLE;
    std::vector<uint32_t> queue_families_;  // the families buffers are shared between
    VkPipelineCache pipeline_cache_ = VK_NULL_HANDLE;
    VkSemaphore timeline_ = VK_NULL_HANDLE;

    // Memory types: arrays (device-local, host-visible too where that is cheap) and
    // host (host-visible, coherent; staging and parameter rings).
    uint32_t array_type_ = 0, host_type_ = 0;
    bool arrays_mapped_ = false;
    // Host arguments (host_args.cc): how they are held, and the memory type of each
    // kind (AllocateHostArg).
    HostArgs host_args_mode_ = HostArgs::kOff;
    uint32_t host_arg_type_[3] = {0, 0, 0};
    bool host_arg_bar_[3] = {false, false, false};  // whether that type is device-local

    PFN_vkGetPipelineExecutablePropertiesKHR executable_properties_ = nullptr;
    PFN_vkGetPipelineExecutableStatisticsKHR executable_statistics_ = nullptr;
    PFN_vkGetPipelineExecutableInternalRepresentationsKHR executable_representations_ = nullptr;

    // external.cc: set by Init when the driver offers VK_KHR_external_memory_fd.
    bool external_fd_ext_ = false;
    PFN_vkGetMemoryFdKHR get_memory_fd_ = nullptr;
    std::string external_reason_;
    std::array<uint8_t, 16> uuid_{};

    std::atomic<bool> sync_launches_{false};
    std::atomic<uint64_t> timeout_ns_{0};
    std::atomic<bool> lost_{false};
    std::string lost_call_;  // the call that reported the loss (written once, under lost_mu_)
    mutable std::mutex lost_mu_;

    // Everything below is guarded by mu_ (atomics may be read without it).
    mutable std::mutex mu_;

    // Pool: released buffers by bucket size.
    std::map<uint64_t, std::vector<Buffer*>> pool_;
    std::atomic<uint64_t> pool_limit_{1024ull << 20};
    PoolStats stats_;
    // Destructions waiting for the timeline to pass a value (Retire), and for streams
    // to pass theirs.
    struct Retired {
        uint64_t value;
        std::vector<std::pair<StreamState*, uint64_t>> streams;
        std::function<void()> destroy;
    };
    std::vector<Retired> retired_;
    // Every stream made so far (owned until the process ends; see StreamState).
    std::vector<std::unique_ptr<StreamState>> streams_;

    // Free host-argument buffers by kind and size (host_args.cc).
    std::map<uint64_t, std::vector<Buffer*>> arg_pool_[3];

    // Free staging buffers for copies to and from unmapped arrays (copy.cc).
    std::vector<BufferRef> staging_free_;

    // Batches.
    std::array<Slot, kMaxInFlight + 1> slots_;
    int open_slot_ = -1;
    int next_slot_ = 0;
    uint32_t open_count_ = 0;
    VkPipeline bound_pipeline_ = VK_NULL_HANDLE;
    uint64_t submitted_ = 0;               // last value submitted
    uint64_t last_submit_ns_ = 0;          // steady clock at the last submission
    // Hazard tracking: the current barrier epoch (raised by every barrier), and
    // whether the next command needs a barrier regardless (a buffer written in this
    // epoch was destroyed: its memory may come back under another Buffer).
    uint64_t epoch_ = 1;
    std::atomic<bool> force_barrier_{false};
    std::atomic<uint64_t> barriers_{0};
    std::atomic<uint64_t> completed_{0};  // last value known complete
    std::atomic<uint64_t> waited_{0};     // last value a host wait (WaitValue, Synchronize) saw

    // Timestamps: the pool, the next query to hand out, and the record that last
    // used each query (kept alive by its holder only).
    VkQueryPool query_pool_ = VK_NULL_HANDLE;
    uint32_t next_query_ = 0;
    std::array<std::weak_ptr<Timestamp>, kQueries> query_owner_;
};

}  // namespace nvk::vk
