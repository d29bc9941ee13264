// Launch graphs: capture, hazards decided once, replay (graph.h explains the model).
#include "vk/graph.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <unordered_map>

#include "vk/copy_regions.h"
#include "vk/pipeline.h"
#include "vk/result.h"

namespace nvk::vk {

// The graph's command pool and query pool; timestamps that replays point at the
// graph share them (Timestamp::owner), so an event stays readable after the graph
// is dropped. Destroyed through Device::Retire: never under the device's mutex
// (Device::SubmitRecorded releases replaced owners after unlocking).
struct Graph::Pools {
    Device* device = nullptr;
    VkCommandPool commands = VK_NULL_HANDLE;
    VkQueryPool queries = VK_NULL_HANDLE;
    ~Pools() {
        if (commands == VK_NULL_HANDLE && queries == VK_NULL_HANDLE) return;
        Device* d = device;
        VkCommandPool c = commands;
        VkQueryPool q = queries;
        d->Retire([d, c, q] {
            if (c != VK_NULL_HANDLE) d->fns().vkDestroyCommandPool(d->handle(), c, nullptr);
            if (q != VK_NULL_HANDLE) d->fns().vkDestroyQueryPool(d->handle(), q, nullptr);
        });
    }
};

namespace {

// The access masks of the stages a barrier names (compute and transfer only: a graph
// holds dispatches, copies and timestamps, which access no memory).
VkAccessFlags WritesOf(VkPipelineStageFlags stages) {
    VkAccessFlags a = 0;
    if (stages & VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT) a |= VK_ACCESS_SHADER_WRITE_BIT;
    if (stages & VK_PIPELINE_STAGE_TRANSFER_BIT) a |= VK_ACCESS_TRANSFER_WRITE_BIT;
    return a;
}

VkAccessFlags AccessesOf(VkPipelineStageFlags stages) {
    VkAccessFlags a = 0;
    if (stages & VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT)
        a |= VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT;
    if (stages & VK_PIPELINE_STAGE_TRANSFER_BIT)
        a |= VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
    return a;
}

}  // namespace

Graph::~Graph() = default;

uint32_t Graph::AddBuffer(BufferRef buffer) {
    buffers_.push_back(std::move(buffer));
    return static_cast<uint32_t>(buffers_.size() - 1);
}

uint32_t Graph::AddDispatch(const Kernel& kernel, VkPipeline pipeline, const uint32_t groups[3],
                            const void* block, uint32_t size, bool in_buffer,
                            const std::vector<std::pair<uint32_t, bool>>& used) {
    Command c;
    c.kind = Command::Kind::kDispatch;
    c.kernel = &kernel;
    c.pipeline = pipeline;
    std::memcpy(c.groups, groups, sizeof(c.groups));
    c.block = static_cast<uint32_t>(blocks_.size());
    c.size = size;
    c.in_buffer = in_buffer;
    blocks_.resize(blocks_.size() + ((size + 15u) & ~15u), 0);
    std::memcpy(blocks_.data() + c.block, block, size);
    blocks_in_buffer_ = blocks_in_buffer_ || in_buffer;
    c.used = used;
    commands_.push_back(std::move(c));
    return commands_.back().block;
}

void Graph::AddCopy(uint32_t src, uint32_t dst, const VkBufferCopy* regions, size_t n) {
    Command c;
    c.kind = Command::Kind::kCopy;
    c.used = {{src, false}, {dst, true}};
    c.regions.assign(regions, regions + n);
    commands_.push_back(std::move(c));
}

util::Result<TimestampRef> Graph::AddTimestamp() {
    if (device_->info().timestamp_bits == 0) {
        return util::Unsupported("the compute queue of Vulkan device '" + device_->info().name +
                                 "' writes no timestamps, so events cannot be timed");
    }
    auto ts = std::make_shared<Timestamp>();
    ts->query = static_cast<uint32_t>(stamps_.size());
    ts->resolved = true;  // until a replay writes it
    ts->ns = std::numeric_limits<double>::quiet_NaN();
    stamps_.push_back(ts);
    Command c;
    c.kind = Command::Kind::kTimestamp;
    c.query = ts->query;
    commands_.push_back(std::move(c));
    return ts;
}

util::Result<std::unique_ptr<Graph>> Graph::Instantiate() const {
    auto g = std::make_unique<Graph>(*device_);
    {
        std::lock_guard<std::mutex> lock(mu_);
        g->commands_ = commands_;
        g->blocks_ = blocks_;
        g->blocks_in_buffer_ = blocks_in_buffer_;
        g->buffers_ = buffers_;
        g->stamps_ = stamps_;
    }
    // Which entries are one buffer (rebinding must keep different ones different).
    std::unordered_map<Buffer*, uint32_t> classes;
    g->alias_.resize(g->buffers_.size());
    for (size_t e = 0; e < g->buffers_.size(); ++e) {
        g->alias_[e] = classes.emplace(g->buffers_[e].get(), static_cast<uint32_t>(classes.size()))
                           .first->second;
    }
    // Barriers: batch.cc's rule over the commands in order, per distinct buffer.
    std::vector<uint64_t> written(classes.size(), 0), read(classes.size(), 0);
    uint64_t epoch = 1;
    for (Command& c : g->commands_) {
        bool need = false;
        for (const auto& [entry, w] : c.used) {
            const uint32_t k = g->alias_[entry];
            need = need || written[k] == epoch || (w && read[k] == epoch);
        }
        if (need) {
            c.barrier = true;
            ++epoch;
        }
        for (const auto& [entry, w] : c.used) (w ? written : read)[g->alias_[entry]] = epoch;
    }
    return g;
}

size_t Graph::barrier_count() const {
    std::lock_guard<std::mutex> lock(mu_);
    size_t n = 0;
    for (const Command& c : commands_) n += c.barrier ? 1 : 0;
    return n;
}

void Graph::SetBuffer(uint32_t entry, BufferRef buffer) { buffers_[entry] = std::move(buffer); }

util::Status Graph::CheckAliasesLocked() const {
    std::unordered_map<Buffer*, uint32_t> seen;
    for (size_t e = 0; e < buffers_.size(); ++e) {
        auto [it, fresh] = seen.emplace(buffers_[e].get(), alias_[e]);
        if (!fresh && it->second != alias_[e]) {
            return util::Unsupported(
                "the graph's bindings give two arrays that were different memory at capture "
                "the same memory; its barriers were decided for separate memory: bind "
                "different arrays, or capture the graph with arrays that share memory the "
                "same way");
        }
    }
    return util::Status::Ok();
}

util::Status Graph::EnsurePoolsLocked() {
    if (pools_) return util::Status::Ok();
    auto pools = std::make_shared<Pools>();
    pools->device = device_;
    const DeviceFns& fns = device_->fns();
    VkCommandPoolCreateInfo info{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    info.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
    info.queueFamilyIndex = static_cast<uint32_t>(device_->info().compute_family);
    NVK_VK_CHECK("vkCreateCommandPool",
                 fns.vkCreateCommandPool(device_->handle(), &info, nullptr, &pools->commands));
    if (!stamps_.empty()) {
        VkQueryPoolCreateInfo q{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
        q.queryType = VK_QUERY_TYPE_TIMESTAMP;
        q.queryCount = static_cast<uint32_t>(stamps_.size());
        NVK_VK_CHECK("vkCreateQueryPool",
                     fns.vkCreateQueryPool(device_->handle(), &q, nullptr, &pools->queries));
    }
    pools_ = std::move(pools);
    return util::Status::Ok();
}

bool Graph::InstanceIdle(Instance& in) {
    auto& p = in.pending;
    for (size_t i = 0; i < p.size();) {
        StreamState& s = *p[i].first;
        if (p[i].second <= s.completed.load() || p[i].second <= device_->PollStream(s)) {
            p[i] = p.back();
            p.pop_back();
        } else {
            ++i;
        }
    }
    return p.empty();
}

util::Result<size_t> Graph::TakeInstanceLocked(std::unique_lock<std::mutex>& lock) {
    (void)lock;  // held throughout: a wait here holds only the graph's mutex
    NVK_RETURN_IF_ERROR(EnsurePoolsLocked());
    for (;;) {
        for (size_t i = 0; i < instances_.size(); ++i) {
            if (InstanceIdle(instances_[i])) return i;
        }
        if (instances_.size() < kGraphInstances) {
            Instance in;
            VkCommandBufferAllocateInfo info{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
            info.commandPool = pools_->commands;
            info.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
            info.commandBufferCount = 1;
            NVK_RETURN_IF_ERROR(device_->Checked(
                device_->fns().vkAllocateCommandBuffers(device_->handle(), &info, &in.cb),
                "vkAllocateCommandBuffers"));
            instances_.push_back(std::move(in));
            return instances_.size() - 1;
        }
        // Every instance has a replay in flight: wait for one of the oldest's.
        auto [s, value] = instances_[current_ == 0 ? 1 : 0].pending.front();
        NVK_RETURN_IF_ERROR(device_->WaitSemaphore(s->semaphore, s->completed, value, true));
    }
}

util::Status Graph::RecordLocked(Instance& in) {
    const DeviceFns& fns = device_->fns();
    if (blocks_in_buffer_) {
        if (!in.params || in.params->size < blocks_.size()) {
            NVK_ASSIGN_OR_RETURN(in.params, device_->AllocateHost(blocks_.size()));
        }
        std::memcpy(in.params->mapped, blocks_.data(), blocks_.size());
    }
    NVK_RETURN_IF_ERROR(
        device_->Checked(fns.vkResetCommandBuffer(in.cb, 0), "vkResetCommandBuffer"));
    VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    begin.flags = VK_COMMAND_BUFFER_USAGE_SIMULTANEOUS_USE_BIT;
    NVK_RETURN_IF_ERROR(
        device_->Checked(fns.vkBeginCommandBuffer(in.cb, &begin), "vkBeginCommandBuffer"));
    // A barrier orders everything before it against everything after it (Instantiate puts
    // none between commands already ordered by an earlier one), so its scopes are the stages
    // of all commands on each side: a graph of dispatches alone waits on the compute stage
    // only, not on transfers it does not have.
    auto stage_of = [](const Command& c) -> VkPipelineStageFlags {
        switch (c.kind) {
            case Command::Kind::kDispatch: return VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT;
            case Command::Kind::kCopy: return VK_PIPELINE_STAGE_TRANSFER_BIT;
            case Command::Kind::kTimestamp: break;
        }
        return 0;
    };
    std::vector<VkPipelineStageFlags> after(commands_.size() + 1, 0);
    for (size_t i = commands_.size(); i-- > 0;) after[i] = after[i + 1] | stage_of(commands_[i]);
    VkPipelineStageFlags before = 0;
    VkPipeline bound = VK_NULL_HANDLE;
    std::vector<uint8_t> pushed;  // what the bound pipeline's dispatches last saw
    uint64_t address = 0;
    for (size_t i = 0; i < commands_.size(); ++i) {
        const Command& c = commands_[i];
        if (c.barrier) {
            VkMemoryBarrier barrier{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
            barrier.srcAccessMask = WritesOf(before);
            barrier.dstAccessMask = AccessesOf(after[i]);
            fns.vkCmdPipelineBarrier(in.cb, before, after[i], 0, 1, &barrier, 0, nullptr, 0,
                                     nullptr);
        }
        before |= stage_of(c);
        switch (c.kind) {
            case Command::Kind::kDispatch: {
                if (c.pipeline != bound) {
                    fns.vkCmdBindPipeline(in.cb, VK_PIPELINE_BIND_POINT_COMPUTE, c.pipeline);
                    bound = c.pipeline;
                    pushed.clear();
                }
                const uint32_t push_size = c.kernel->push_size();
                const uint8_t* bytes = nullptr;
                uint32_t n = 0;
                if (c.in_buffer) {
                    address = in.params->address + c.block;
                    bytes = reinterpret_cast<const uint8_t*>(&address);
                    n = push_size >= 8 ? 8 : 0;
                } else if (push_size > 0 && c.size > 0) {
                    bytes = blocks_.data() + c.block;
                    n = std::min(push_size, (c.size + 3u) & ~3u);
                }
                // Push constants stay set across dispatches of one pipeline: a block equal to
                // the one pushed last (a chain of launches with the same arguments) is not
                // pushed again.
                if (n > 0 && !(pushed.size() == n && std::memcmp(pushed.data(), bytes, n) == 0)) {
                    fns.vkCmdPushConstants(in.cb, c.kernel->layout(), VK_SHADER_STAGE_COMPUTE_BIT,
                                           0, n, bytes);
                    pushed.assign(bytes, bytes + n);
                }
                fns.vkCmdDispatch(in.cb, c.groups[0], c.groups[1], c.groups[2]);
                break;
            }
            case Command::Kind::kCopy:
                CmdCopyBuffer(fns, in.cb, buffers_[c.used[0].first]->buffer,
                              buffers_[c.used[1].first]->buffer, c.regions.data(),
                              c.regions.size());
                break;
            case Command::Kind::kTimestamp:
                fns.vkCmdResetQueryPool(in.cb, pools_->queries, c.query, 1);
                fns.vkCmdWriteTimestamp(in.cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT,
                                        pools_->queries, c.query);
                break;
        }
    }
    // The host may read what the graph wrote (copies into pinned memory) once the
    // stream says it is done: make the writes visible to it.
    if (before != 0) {
        VkMemoryBarrier host{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
        host.srcAccessMask = WritesOf(before);
        host.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
        fns.vkCmdPipelineBarrier(in.cb, before, VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &host, 0,
                                 nullptr, 0, nullptr);
    }
    NVK_RETURN_IF_ERROR(device_->Checked(fns.vkEndCommandBuffer(in.cb), "vkEndCommandBuffer"));
    in.version = version_;
    ++records_;
    distinct_.clear();
    std::unordered_map<Buffer*, bool> seen;
    for (const BufferRef& b : buffers_) {
        if (seen.emplace(b.get(), true).second) distinct_.push_back(b);
    }
    return util::Status::Ok();
}

util::Result<uint64_t> Graph::Replay(StreamState& stream) {
    NVK_RETURN_IF_ERROR(device_->Usable());
    std::unique_lock<std::mutex> lock(mu_);
    if (current_ < 0 || instances_[current_].version != version_) {
        NVK_RETURN_IF_ERROR(CheckAliasesLocked());
        NVK_ASSIGN_OR_RETURN(size_t i, TakeInstanceLocked(lock));
        NVK_RETURN_IF_ERROR(RecordLocked(instances_[i]));
        current_ = static_cast<int>(i);
    }
    Instance& in = instances_[current_];
    NVK_ASSIGN_OR_RETURN(uint64_t value,
                         device_->SubmitRecorded(stream, in.cb, distinct_, in.params, stamps_,
                                                 pools_->queries, pools_));
    for (auto& p : in.pending) {
        if (p.first == &stream) {
            p.second = value;
            return value;
        }
    }
    in.pending.emplace_back(&stream, value);
    return value;
}

}  // namespace nvk::vk
