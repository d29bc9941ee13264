// Buffers and the buffer pool.
//
// Every array gets its own VkBuffer and VkDeviceMemory, sized to a bucket:
// 256 bytes at least, powers of two up to 64 MiB, multiples of 16 MiB above.
// When the last reference to a buffer goes away (BufferRef's deleter), the
// buffer is not freed but put on the free list of its bucket, as long as the
// pool then holds at most pool_limit bytes; otherwise it is destroyed. An
// allocation first looks at the free list of its bucket.
//
// A released buffer may still be in use by a launch in flight (the user dropped
// the array right after launching). Its last_use value says until when.
// Destruction is deferred until then (Retire: the destruction runs when a later
// flush, allocation, trim or synchronisation finds the timeline past that value),
// so dropping an array never waits (it may happen with the GIL held, in any
// thread). Reuse does not wait either: an allocation takes an idle buffer of its
// bucket if there is one, else the one released last, busy or not. The device
// orders the new owner's commands after the old owner's as it orders any two
// uses of one buffer (the Buffer keeps its hazard state: batch.cc's barriers,
// stream.cc's semaphore waits), and every host access to an array's memory
// waits for the buffer first (Write, Read, host views, mapped host arguments).
// A chain of operations that each allocate their result thus never stalls the
// host on the pool. (Streams hold their buffers until their ops complete, so a
// pooled buffer is never in an open stream op.)
//
// Threads: the pool, its statistics and the retired list are guarded by the
// device's mutex; creating and destroying Vulkan buffers happens outside it
// where it can.
#include <algorithm>
#include <bit>

#include "vk/device.h"
#include "vk/fork.h"
#include "vk/result.h"

namespace nvk::vk {

namespace {

uint64_t Bucket(uint64_t n) {
    constexpr uint64_t kBig = 64ull << 20, kStep = 16ull << 20;
    if (n <= 256) return 256;
    if (n <= kBig) return std::bit_ceil(n);
    return (n + kStep - 1) / kStep * kStep;
}

// Buffers from this size on get a dedicated allocation (CreateBuffer).
constexpr uint64_t kDedicatedBytes = 64ull << 20;

}  // namespace

util::Result<Buffer*> Device::CreateBuffer(uint64_t size, uint32_t memory_type, bool map) {
    auto buffer = std::make_unique<Buffer>();
    buffer->device = this;
    buffer->size = size;
    VkBufferCreateInfo info{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
    info.size = size;
    info.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                 VK_BUFFER_USAGE_TRANSFER_DST_BIT | VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT;
    // Streams copy on the transfer family's queue: share buffers with it (no
    // ownership transfers; for buffers this costs nothing on the drivers we know).
    if (queue_families_.size() > 1) {
        info.sharingMode = VK_SHARING_MODE_CONCURRENT;
        info.queueFamilyIndexCount = static_cast<uint32_t>(queue_families_.size());
        info.pQueueFamilyIndices = queue_families_.data();
    } else {
        info.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
    }
    NVK_VK_CHECK("vkCreateBuffer", fns_.vkCreateBuffer(device_, &info, nullptr, &buffer->buffer));

    VkMemoryRequirements req{};
    fns_.vkGetBufferMemoryRequirements(device_, buffer->buffer, &req);
    if (!(req.memoryTypeBits & (1u << memory_type))) {
        fns_.vkDestroyBuffer(device_, buffer->buffer, nullptr);
        return util::Internal("the chosen memory type cannot hold storage buffers");
    }
    VkMemoryAllocateFlagsInfo flags{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_FLAGS_INFO};
    flags.flags = VK_MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT;
    // A large buffer's memory is allocated for it alone, and the driver is told so: NVIDIA's
    // then places it as it places CUDA's (a grid-stride pass over 32 GiB on an H100: 15 ms,
    // against 23 ms in memory allocated without the hint).
    VkMemoryDedicatedAllocateInfo dedicated{VK_STRUCTURE_TYPE_MEMORY_DEDICATED_ALLOCATE_INFO};
    dedicated.pNext = &flags;
    dedicated.buffer = buffer->buffer;
    VkMemoryAllocateInfo alloc{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
    alloc.pNext = size >= kDedicatedBytes ? static_cast<const void*>(&dedicated) : &flags;
    alloc.allocationSize = req.size;
    alloc.memoryTypeIndex = memory_type;
    util::Status status =
        Check(fns_.vkAllocateMemory(device_, &alloc, nullptr, &buffer->memory), "vkAllocateMemory");
    if (status.ok()) {
        status = Check(fns_.vkBindBufferMemory(device_, buffer->buffer, buffer->memory, 0),
                       "vkBindBufferMemory");
    }
    if (status.ok() && map) {
        void* ptr = nullptr;
        status = Check(fns_.vkMapMemory(device_, buffer->memory, 0, VK_WHOLE_SIZE, 0, &ptr),
                       "vkMapMemory");
        buffer->mapped = static_cast<uint8_t*>(ptr);
    }
    if (!status.ok()) {
        DestroyBuffer(buffer.release());
        return status;
    }
    VkBufferDeviceAddressInfo address{VK_STRUCTURE_TYPE_BUFFER_DEVICE_ADDRESS_INFO};
    address.buffer = buffer->buffer;
    buffer->address = fns_.vkGetBufferDeviceAddress(device_, &address);
    return buffer.release();
}

void Device::DestroyBuffer(Buffer* buffer) {
    // Its memory may come back under a new Buffer, which the hazard tracking
    // (batch.cc) knows nothing of: be safe and put a barrier before the next command.
    // Called under the device's mutex (retired destructions), or for a buffer no
    // other thread has seen.
    if (buffer->write_epoch != 0) force_barrier_.store(true, std::memory_order_relaxed);
    if (buffer->buffer) fns_.vkDestroyBuffer(device_, buffer->buffer, nullptr);
    if (buffer->memory) fns_.vkFreeMemory(device_, buffer->memory, nullptr);  // also unmaps
    delete buffer;
}

void Device::Retire(std::function<void()> destroy) {
    if (Forked()) return;  // leak: the driver is the parent's (fork.h)
    Lock lock(mu_);
    // Streams' work in flight may use it too (a kernel's pipelines), and so may the
    // launches of their open ops (stream.cc): wait for theirs.
    std::vector<std::pair<StreamState*, uint64_t>> streams;
    for (auto& s : streams_) {
        const uint64_t last = StreamLastLocked(*s);
        if (last > s->completed.load()) streams.emplace_back(s.get(), last);
    }
    if (!streams.empty() && !lost_.load()) {
        retired_.push_back({open_slot_ >= 0 ? open_value() : submitted_, std::move(streams),
                            std::move(destroy)});
        return;
    }
    RetireLocked(open_slot_ >= 0 ? open_value() : submitted_, std::move(destroy));
}

void Device::RetireLocked(uint64_t value, std::function<void()> destroy) {
    // A lost device runs nothing any more: destroy at once.
    if (lost_.load() || value <= completed_.load() || value <= PollCompleted()) {
        destroy();
        return;
    }
    retired_.push_back({value, {}, std::move(destroy)});
}

void Device::ReapLocked() {
    const bool lost = lost_.load();
    const uint64_t done = lost ? UINT64_MAX : PollCompleted();
    auto pending = [&](const Retired& r) {
        if (lost) return false;
        if (r.value > done) return true;
        for (const auto& [s, v] : r.streams) {
            if (v > s->completed.load() && v > PollStream(*s)) return true;
        }
        return false;
    };
    auto due = std::partition(retired_.begin(), retired_.end(), pending);
    std::vector<std::function<void()>> run;
    for (auto it = due; it != retired_.end(); ++it) run.push_back(std::move(it->destroy));
    retired_.erase(due, retired_.end());
    for (auto& destroy : run) destroy();
}

void Device::RetireBuffer(Buffer* buffer) {
    if (Forked()) return;
    Lock lock(mu_);
    RetireLocked(buffer->last_use.load(), [this, buffer] { DestroyBuffer(buffer); });
}

void Device::Release(Buffer* buffer) {
    if (Forked()) return;
    Lock lock(mu_);
    stats_.live_bytes -= buffer->size;
    if (!lost_.load() && stats_.pooled_bytes + buffer->size <= pool_limit_.load()) {
        pool_[buffer->size].push_back(buffer);
        stats_.pooled_bytes += buffer->size;
        stats_.pooled_buffers += 1;
        return;
    }
    RetireArrayLocked(buffer);
}

void Device::RetireArrayLocked(Buffer* buffer) {
    // An array's buffer leaves the pool's books: its bytes count as retired until the
    // destruction runs (under the mutex: RetireLocked and ReapLocked hold it).
    stats_.retired_bytes += buffer->size;
    RetireLocked(buffer->last_use.load(), [this, buffer] {
        stats_.retired_bytes -= buffer->size;
        DestroyBuffer(buffer);
    });
}

Buffer* Device::TakePooledLocked(std::vector<Buffer*>& list) {
    // An idle one, most recently released first (the warmest memory); else the last
    // released, which the device orders after its earlier uses (top of this file). With
    // one to choose from there is nothing to ask the timeline.
    if (list.size() == 1) {
        Buffer* only = list.back();
        list.pop_back();
        return only;
    }
    const uint64_t done = std::max(completed_.load(), PollCompleted());
    auto idle = std::find_if(list.rbegin(), list.rend(), [&](const Buffer* b) {
        return b->last_use.load() <= done &&
               (b->stream == nullptr || b->stream_value <= b->stream->completed.load());
    });
    auto it = idle != list.rend() ? std::prev(idle.base()) : std::prev(list.end());
    Buffer* buffer = *it;
    list.erase(it);
    return buffer;
}

util::Result<BufferRef> Device::Allocate(uint64_t nbytes) {
    NVK_RETURN_IF_ERROR(Usable());
    const uint64_t size = Bucket(nbytes);
    Buffer* buffer = nullptr;
    {
        Lock lock(mu_);
        if (!retired_.empty()) ReapLocked();
        auto it = pool_.find(size);
        if (it != pool_.end() && !it->second.empty()) {
            buffer = TakePooledLocked(it->second);
            stats_.pooled_bytes -= size;
            stats_.pooled_buffers -= 1;
            stats_.hits += 1;
            stats_.live_bytes += size;
        }
    }
    if (buffer) return BufferRef(buffer, [](Buffer* b) { b->device->Release(b); });
    util::Result<Buffer*> created = CreateBuffer(size, array_type_, arrays_mapped_);
    if (!created.ok() && created.status().code() == util::Code::kOutOfMemory) {
        // Give the pooled memory back and try once more.
        NVK_RETURN_IF_ERROR(Trim(0));
        created = CreateBuffer(size, array_type_, arrays_mapped_);
    }
    if (!created.ok()) return created.status();
    buffer = created.value();
    {
        Lock lock(mu_);
        stats_.misses += 1;
        stats_.live_bytes += size;
        stats_.peak_bytes = std::max(stats_.peak_bytes, stats_.live_bytes + stats_.pooled_bytes +
                                                            stats_.retired_bytes);
    }
    return BufferRef(buffer, [](Buffer* b) { b->device->Release(b); });
}

util::Result<BufferRef> Device::AllocateHost(uint64_t nbytes) {
    NVK_RETURN_IF_ERROR(Usable());  // pinned arrays and staging buffers come this way
    NVK_ASSIGN_OR_RETURN(Buffer * buffer, CreateBuffer(Bucket(nbytes), host_type_, true));
    return BufferRef(buffer, [](Buffer* b) { b->device->RetireBuffer(b); });
}

util::Status Device::Trim(uint64_t limit) {
    NVK_RETURN_IF_ERROR(Usable());
    uint64_t wait_for = 0;  // the last use of what is freed: its memory returns after it
    {
        Lock lock(mu_);
        for (auto it = pool_.rbegin(); it != pool_.rend() && stats_.pooled_bytes > limit; ++it) {
            auto& list = it->second;
            while (!list.empty() && stats_.pooled_bytes > limit) {
                Buffer* buffer = list.back();
                list.pop_back();
                stats_.pooled_bytes -= buffer->size;
                stats_.pooled_buffers -= 1;
                RetireArrayLocked(buffer);
            }
        }
        for (const auto& r : retired_) wait_for = std::max(wait_for, r.value);
    }
    if (wait_for == 0) return util::Status::Ok();
    NVK_RETURN_IF_ERROR(WaitValue(wait_for));
    Lock lock(mu_);
    ReapLocked();
    return util::Status::Ok();
}

PoolStats Device::pool_stats() const {
    Lock lock(mu_);
    return stats_;
}

}  // namespace nvk::vk
