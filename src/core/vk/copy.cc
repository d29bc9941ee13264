// Copies between host memory and buffers.
//
// A copy waits only for the launches that still use its buffer (Buffer::last_use),
// not for the whole device. Mapped buffers (lavapipe, integrated GPUs) are then
// read or written with memcpy; the others go through a host-visible staging
// buffer and a vkCmdCopyBuffer recorded into the open batch, in chunks of at
// most kStagingBytes.
#include <algorithm>
#include <cstring>

#include "vk/device.h"
#include "vk/result.h"

namespace nvk::vk {

namespace {
constexpr uint64_t kStagingBytes = 64ull << 20;
}

util::Status Device::Write(Buffer& dst, uint64_t offset, const void* src, uint64_t nbytes) {
    if (offset + nbytes > dst.size) return util::InvalidArgument("write past the end of a buffer");
    if (nbytes == 0) return util::Status::Ok();
    NVK_RETURN_IF_ERROR(WaitBuffer(dst));
    if (dst.mapped) {
        std::memcpy(dst.mapped + offset, src, nbytes);
        return util::Status::Ok();
    }
    return StagedCopy(dst, offset, const_cast<void*>(src), nbytes, /*to_device=*/true);
}

util::Status Device::Read(Buffer& src, uint64_t offset, void* dst, uint64_t nbytes) {
    if (offset + nbytes > src.size) return util::InvalidArgument("read past the end of a buffer");
    if (nbytes == 0) return util::Status::Ok();
    NVK_RETURN_IF_ERROR(WaitBuffer(src));
    if (src.mapped) {
        std::memcpy(dst, src.mapped + offset, nbytes);
        return util::Status::Ok();
    }
    return StagedCopy(src, offset, dst, nbytes, /*to_device=*/false);
}

util::Status Device::StagedCopy(Buffer& buffer, uint64_t offset, void* host, uint64_t nbytes,
                                bool to_device) {
    const uint64_t chunk_max = std::min(nbytes, kStagingBytes);
    if (!staging_ || staging_->size < chunk_max) {
        staging_.reset();
        NVK_ASSIGN_OR_RETURN(staging_, AllocateHost(chunk_max));
    }
    auto* bytes = static_cast<uint8_t*>(host);
    for (uint64_t done = 0; done < nbytes;) {
        const uint64_t n = std::min(nbytes - done, staging_->size);
        NVK_RETURN_IF_ERROR(WaitBuffer(*staging_));
        if (to_device) std::memcpy(staging_->mapped, bytes + done, n);
        NVK_RETURN_IF_ERROR(BeginBatch());
        RecordBarrier();
        VkBufferCopy region{};
        region.size = n;
        if (to_device) {
            region.dstOffset = offset + done;
            fns_.vkCmdCopyBuffer(slots_[open_slot_].cb, staging_->buffer, buffer.buffer, 1,
                                 &region);
        } else {
            region.srcOffset = offset + done;
            fns_.vkCmdCopyBuffer(slots_[open_slot_].cb, buffer.buffer, staging_->buffer, 1,
                                 &region);
        }
        const uint64_t value = open_value();
        staging_->last_use = value;
        buffer.last_use = value;
        if (!to_device) {
            NVK_RETURN_IF_ERROR(WaitValue(value));
            std::memcpy(bytes + done, staging_->mapped, n);
        }
        done += n;
    }
    // Host memory of a write may change once we return: make the last chunk land.
    return to_device ? WaitValue(staging_->last_use) : util::Status::Ok();
}

util::Status Device::Copy(Buffer& src, uint64_t src_offset, Buffer& dst, uint64_t dst_offset,
                          uint64_t nbytes) {
    if (src_offset + nbytes > src.size || dst_offset + nbytes > dst.size) {
        return util::InvalidArgument("copy past the end of a buffer");
    }
    if (nbytes == 0) return util::Status::Ok();
    NVK_RETURN_IF_ERROR(BeginBatch());
    RecordBarrier();
    VkBufferCopy region{src_offset, dst_offset, nbytes};
    fns_.vkCmdCopyBuffer(slots_[open_slot_].cb, src.buffer, dst.buffer, 1, &region);
    const uint64_t value = open_value();
    src.last_use = std::max(src.last_use, value);
    dst.last_use = std::max(dst.last_use, value);
    ++open_count_;
    if (open_count_ >= kMaxBatch || Idle()) NVK_RETURN_IF_ERROR(Flush());
    return util::Status::Ok();
}

}  // namespace nvk::vk
