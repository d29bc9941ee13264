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
// the array right after launching). Its last_use value says until when: reuse
// and destruction both wait for it, so the device never sees a buffer change
// owner under a running kernel.
#include <bit>

#include "vk/device.h"
#include "vk/result.h"

namespace nvk::vk {

namespace {

uint64_t Bucket(uint64_t n) {
    constexpr uint64_t kBig = 64ull << 20, kStep = 16ull << 20;
    if (n <= 256) return 256;
    if (n <= kBig) return std::bit_ceil(n);
    return (n + kStep - 1) / kStep * kStep;
}

}  // namespace

util::Result<Buffer*> Device::CreateBuffer(uint64_t size, uint32_t memory_type, bool map) {
    auto buffer = std::make_unique<Buffer>();
    buffer->device = this;
    buffer->size = size;
    VkBufferCreateInfo info{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
    info.size = size;
    info.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                 VK_BUFFER_USAGE_TRANSFER_DST_BIT | VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT;
    info.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
    NVK_VK_CHECK("vkCreateBuffer", fns_.vkCreateBuffer(device_, &info, nullptr, &buffer->buffer));

    VkMemoryRequirements req{};
    fns_.vkGetBufferMemoryRequirements(device_, buffer->buffer, &req);
    if (!(req.memoryTypeBits & (1u << memory_type))) {
        fns_.vkDestroyBuffer(device_, buffer->buffer, nullptr);
        return util::Internal("the chosen memory type cannot hold storage buffers");
    }
    VkMemoryAllocateFlagsInfo flags{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_FLAGS_INFO};
    flags.flags = VK_MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT;
    VkMemoryAllocateInfo alloc{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
    alloc.pNext = &flags;
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
    if (buffer->last_use > completed_) (void)WaitValue(buffer->last_use);
    if (buffer->buffer) fns_.vkDestroyBuffer(device_, buffer->buffer, nullptr);
    if (buffer->memory) fns_.vkFreeMemory(device_, buffer->memory, nullptr);  // also unmaps
    delete buffer;
}

void Device::Release(Buffer* buffer) {
    stats_.live_bytes -= buffer->size;
    if (stats_.pooled_bytes + buffer->size <= pool_limit_) {
        pool_[buffer->size].push_back(buffer);
        stats_.pooled_bytes += buffer->size;
        stats_.pooled_buffers += 1;
        return;
    }
    DestroyBuffer(buffer);
}

util::Result<BufferRef> Device::Allocate(uint64_t nbytes) {
    uint64_t size = Bucket(nbytes);
    Buffer* buffer = nullptr;
    auto it = pool_.find(size);
    if (it != pool_.end() && !it->second.empty()) {
        buffer = it->second.back();
        it->second.pop_back();
        stats_.pooled_bytes -= size;
        stats_.pooled_buffers -= 1;
        stats_.hits += 1;
        // A launch in flight may still use it (see the top of this file).
        NVK_RETURN_IF_ERROR(WaitBuffer(*buffer));
    } else {
        util::Result<Buffer*> created = CreateBuffer(size, array_type_, arrays_mapped_);
        if (!created.ok() && created.status().code() == util::Code::kOutOfMemory &&
            !pool_.empty()) {
            // Give the pooled memory back and try once more.
            NVK_RETURN_IF_ERROR(Trim(0));
            created = CreateBuffer(size, array_type_, arrays_mapped_);
        }
        if (!created.ok()) return created.status();
        buffer = created.value();
        stats_.misses += 1;
    }
    stats_.live_bytes += size;
    return BufferRef(buffer, [](Buffer* b) { b->device->Release(b); });
}

util::Result<BufferRef> Device::AllocateHost(uint64_t nbytes) {
    NVK_ASSIGN_OR_RETURN(Buffer * buffer, CreateBuffer(Bucket(nbytes), host_type_, true));
    return BufferRef(buffer, [](Buffer* b) { b->device->DestroyBuffer(b); });
}

util::Status Device::Trim(uint64_t limit) {
    for (auto it = pool_.rbegin(); it != pool_.rend() && stats_.pooled_bytes > limit; ++it) {
        auto& list = it->second;
        while (!list.empty() && stats_.pooled_bytes > limit) {
            Buffer* buffer = list.back();
            list.pop_back();
            stats_.pooled_bytes -= buffer->size;
            stats_.pooled_buffers -= 1;
            DestroyBuffer(buffer);
        }
    }
    return util::Status::Ok();
}

PoolStats Device::pool_stats() const { return stats_; }

}  // namespace nvk::vk
