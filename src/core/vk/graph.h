// Launch graphs' device side: commands captured from a stream (dispatches, buffer
// copies, timestamps), recorded once into a command buffer that every replay
// submits again.
//
//   capture: AddDispatch / AddCopy / AddTimestamp ─▶ Instantiate ─▶ Replay, Replay, ...
//
// Capture only collects: nothing is recorded or submitted. Instantiate copies the
// commands into a new Graph and decides, once, where a barrier goes: before a
// command that reads or writes a buffer an earlier command wrote since the last
// barrier, or writes one such a command read (the rule of batch.cc, applied to
// the buffers each command used at capture). Commands name buffers by entry of a
// buffer table, so that a binding can give an entry another buffer (SetBuffer)
// and patch the parameter blocks (blocks()): the bindings layer does that
// (bind/runtime_graph.cc). A rebinding may not make two entries that were
// different buffers at capture the same buffer (their barriers were decided as
// for independent memory): the next Replay then fails.
//
// Replay submits the graph on a stream like one operation of it (Device::
// SubmitRecorded, stream.cc): it waits on the device for the stream's earlier
// work and for whatever else still uses its buffers (other streams, the open batch,
// which is submitted first), and later work that uses them waits for it. The
// buffers stay alive until it completes. One host call, one vkQueueSubmit; the
// parameter blocks are not touched unless a binding changed.
//
// Instances: a command buffer with its own parameter ring (blocks of kernels that
// take their parameters from memory) and the bindings it was recorded with. An
// unchanged graph submits its current instance again, also while an earlier
// replay of it is still in flight (recorded with SIMULTANEOUS_USE; replays run
// one after another, ordered by their buffers). After a binding changed, the next
// replay records an instance that no replay uses any more (a new one while fewer
// than kGraphInstances exist, else it waits for the oldest), so a replay in
// flight never sees its parameters change.
//
// Threads: a Graph's methods may be called from several threads; its mutex
// guards the commands, bindings and instances. Replay takes the device's mutex
// only to submit. Its Vulkan objects (command pool, query pool) are destroyed
// through Device::Retire once no work in flight can use them.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "vk/device.h"

namespace nvk::vk {

class Kernel;

inline constexpr size_t kGraphInstances = 2;  // command buffers per graph (see above)

class Graph {
  public:
    explicit Graph(Device& device) : device_(&device) {}
    ~Graph();
    Graph(const Graph&) = delete;
    Graph& operator=(const Graph&) = delete;

    Device& device() const { return *device_; }
    std::unique_lock<std::mutex> Lock() { return std::unique_lock<std::mutex>(mu_); }

    // ---- capture (no Vulkan calls) ---------------------------------------------------
    // A new entry of the buffer table.
    uint32_t AddBuffer(BufferRef buffer);
    // A dispatch of `pipeline` (of `kernel`) over `groups` workgroups with the
    // parameter block `block` (`size` bytes, pushed or, when `in_buffer`, read from
    // memory). It uses the buffers of the entries in `used`, writing those marked true.
    // Returns the offset of its block in blocks().
    uint32_t AddDispatch(const Kernel& kernel, VkPipeline pipeline, const uint32_t groups[3],
                         const void* block, uint32_t size, bool in_buffer,
                         const std::vector<std::pair<uint32_t, bool>>& used);
    // Copies `regions` from the buffer of entry `src` to that of `dst`.
    void AddCopy(uint32_t src, uint32_t dst, const VkBufferCopy* regions, size_t n);
    // A timestamp after the commands so far; every replay writes it and points the
    // record at itself. Until the first replay it reads as NaN nanoseconds.
    util::Result<TimestampRef> AddTimestamp();
    size_t command_count() const { return commands_.size(); }
    size_t buffer_count() const { return buffers_.size(); }

    // A copy of the captured commands, with its barriers decided, ready to replay.
    util::Result<std::unique_ptr<Graph>> Instantiate() const;
    // Barriers recorded between its commands (of an instantiated graph).
    size_t barrier_count() const;

    // ---- bindings (the caller holds Lock()) -------------------------------------------
    uint8_t* block(uint32_t offset) { return blocks_.data() + offset; }
    const BufferRef& buffer(uint32_t entry) const { return buffers_[entry]; }
    void SetBuffer(uint32_t entry, BufferRef buffer);
    // The parameter blocks or buffers changed: the next replay records an instance.
    void Changed() { ++version_; }

    // ---- replay -----------------------------------------------------------------------
    // Submits the graph on `stream`; returns the stream's value it completes at.
    util::Result<uint64_t> Replay(StreamState& stream);
    // Times a command buffer was recorded (for tests: an unchanged replay records none).
    uint64_t records() const { return records_; }

  private:
    struct Command {
        enum class Kind : uint8_t { kDispatch, kCopy, kTimestamp };
        Kind kind = Kind::kDispatch;
        bool barrier = false;  // a barrier before it (decided by Instantiate)
        const Kernel* kernel = nullptr;
        VkPipeline pipeline = VK_NULL_HANDLE;
        uint32_t groups[3] = {1, 1, 1};
        uint32_t block = 0, size = 0;
        bool in_buffer = false;
        std::vector<std::pair<uint32_t, bool>> used;  // (entry, written); copies: src, dst
        std::vector<VkBufferCopy> regions;
        uint32_t query = 0;
    };
    struct Instance {
        VkCommandBuffer cb = VK_NULL_HANDLE;
        BufferRef params;  // the blocks, for dispatches that read them from memory
        uint64_t version = 0;
        std::vector<std::pair<StreamState*, uint64_t>> pending;  // its replays in flight
    };
    // Vulkan objects shared with the timestamps a replay points at itself.
    struct Pools;

    util::Status EnsurePoolsLocked();
    util::Status CheckAliasesLocked() const;
    bool InstanceIdle(Instance& instance);
    util::Result<size_t> TakeInstanceLocked(std::unique_lock<std::mutex>& lock);
    util::Status RecordLocked(Instance& instance);

    Device* device_;
    mutable std::mutex mu_;
    std::vector<Command> commands_;
    std::vector<uint8_t> blocks_;     // parameter blocks, each 16-byte aligned
    bool blocks_in_buffer_ = false;   // some dispatch reads its block from memory
    std::vector<BufferRef> buffers_;  // the buffer table
    std::vector<uint32_t> alias_;     // per entry: which distinct buffer it was at capture
    std::vector<TimestampRef> stamps_;
    std::shared_ptr<Pools> pools_;
    std::vector<Instance> instances_;
    int current_ = -1;  // the instance an unchanged replay submits
    uint64_t version_ = 1;
    uint64_t records_ = 0;
    std::vector<BufferRef> distinct_;  // the distinct buffers of the table (as recorded)
};

}  // namespace nvk::vk
