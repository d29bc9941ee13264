// Copies between host memory and buffers.
//
// Mapped buffers (lavapipe, integrated GPUs) are read or written with memcpy,
// after waiting only for the launches that still use the buffer
// (Buffer::last_use), not for the whole device. The others go through
// host-visible memory and a vkCmdCopyBuffer recorded into the open batch, ordered
// after earlier launches by the hazard tracking (batch.cc), so they need no wait
// before recording:
//   - a small write (up to kInlineWrite bytes) is copied into the open batch's
//     parameter ring and its copy command recorded, with no wait at all: the
//     launch that follows (a NumPy argument) goes out in the same submission;
//   - larger writes and all reads use a staging buffer of their own, in chunks of
//     half of kStagingBytes, double-buffered; a read waits once, for its copy.
//     The host's side of a large chunk is copied by several threads
//     (CopyOnThreads), as are large copies to and from mapped buffers: with one
//     thread, pageable device-to-host copies reached 7.5 GB/s on the H200
//     (numba.cuda: 18.3).
//
// Threads: each staged copy takes a staging buffer of its own (TakeStaging: a
// free one kept from an earlier copy, else a new one; at most kKeptStaging are
// kept), so concurrent copies never wait for each other's staging. It takes the
// device's mutex only to record and submit each chunk; its waits hold no lock.
#include <algorithm>
#include <cstring>
#include <system_error>
#include <thread>
#include <vector>

#include "vk/copy_regions.h"
#include "vk/device.h"
#include "vk/result.h"

namespace nvk::vk {

namespace {
constexpr uint64_t kStagingBytes = 64ull << 20;
constexpr size_t kKeptStaging = 4;  // free staging buffers kept for later copies
constexpr uint64_t kInlineWrite = 16 * 1024;
constexpr uint64_t kBytesPerThread = 4ull << 20;  // below this a chunk is one memcpy
constexpr unsigned kMaxCopyThreads = 8;

// memcpy in up to kMaxCopyThreads slices (this thread takes the first), slices of
// at least kBytesPerThread; a thread that cannot be started leaves its slice to
// this thread.
void CopyOnThreads(uint8_t* dst, const uint8_t* src, uint64_t n) {
    static const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
    const uint64_t threads =
        std::min<uint64_t>({cores, kMaxCopyThreads, std::max<uint64_t>(1, n / kBytesPerThread)});
    if (threads == 1) {
        std::memcpy(dst, src, n);
        return;
    }
    const uint64_t slice = (n / threads + 63) & ~uint64_t{63};  // cache-line aligned cuts
    std::vector<std::thread> helpers;
    helpers.reserve(threads - 1);
    uint64_t left_over = n;  // from here on, copied by this thread after its own slice
    for (uint64_t at = slice; at < n; at += slice) {
        const uint64_t len = std::min(slice, n - at);
        try {
            helpers.emplace_back([=] { std::memcpy(dst + at, src + at, len); });
        } catch (const std::system_error&) {
            left_over = at;
            break;
        }
    }
    std::memcpy(dst, src, std::min(slice, n));
    if (left_over < n) std::memcpy(dst + left_over, src + left_over, n - left_over);
    for (std::thread& t : helpers) t.join();
}
}  // namespace

util::Result<BufferRef> Device::TakeStaging(uint64_t nbytes) {
    BufferRef dropped;  // released after the lock: its deleter takes the lock
    {
        Lock lock(mu_);
        for (auto it = staging_free_.begin(); it != staging_free_.end(); ++it) {
            if ((*it)->size >= nbytes) {
                BufferRef found = std::move(*it);
                staging_free_.erase(it);
                return found;
            }
        }
        if (staging_free_.size() >= kKeptStaging) {  // all too small: make room
            dropped = std::move(staging_free_.front());
            staging_free_.erase(staging_free_.begin());
        }
    }
    return AllocateHost(nbytes);
}

void Device::GiveBackStaging(BufferRef staging) {
    Lock lock(mu_);
    if (staging_free_.size() < kKeptStaging) {
        staging_free_.push_back(std::move(staging));
        return;
    }
    lock.unlock();  // `staging` is retired by its deleter, which takes the lock
}

util::Status Device::Write(Buffer& dst, uint64_t offset, const void* src, uint64_t nbytes) {
    NVK_RETURN_IF_ERROR(Usable());
    if (offset + nbytes > dst.size) return util::InvalidArgument("write past the end of a buffer");
    if (nbytes == 0) return util::Status::Ok();
    if (dst.mapped) {
        NVK_RETURN_IF_ERROR(WaitBuffer(dst));
        CopyOnThreads(dst.mapped + offset, static_cast<const uint8_t*>(src), nbytes);
        return util::Status::Ok();
    }
    if (nbytes <= kInlineWrite) return InlineWrite(dst, offset, src, nbytes);
    return StagedCopy(dst, offset, const_cast<void*>(src), nbytes, /*to_device=*/true);
}

util::Status Device::InlineWrite(Buffer& dst, uint64_t offset, const void* src,
                                 uint64_t nbytes) {
    const uint32_t aligned = static_cast<uint32_t>((nbytes + 15u) & ~uint64_t{15});
    Lock lock(mu_);
    for (;;) {
        NVK_RETURN_IF_ERROR(OpenBatch(lock));
        if (slots_[open_slot_].params_used + aligned <= kParamArenaBytes) break;
        NVK_RETURN_IF_ERROR(FlushLocked());  // the ring is full: start a new batch
    }
    Slot& slot = slots_[open_slot_];
    std::memcpy(slot.params->mapped + slot.params_used, src, nbytes);
    // The ring is written by the host only, and reused only once this batch is done:
    // no hazard on it. The destination is written by the copy.
    Buffer* used = &dst;
    NVK_RETURN_IF_ERROR(OrderAccessLocked(&used, 1, nullptr));
    VkBufferCopy region{slot.params_used, offset, nbytes};
    CmdCopyBuffer(fns_, slot.cb, slot.params->buffer, dst.buffer, &region, 1);
    slot.params_used += aligned;
    MarkUsed(dst, open_value());
    ++open_count_;
    // Not submitted yet (unless the batch is full): the launch that reads it comes next
    // and goes out with it. Anything that waits for `dst` submits it (WaitValue).
    if (open_count_ >= kMaxBatch) NVK_RETURN_IF_ERROR(FlushLocked());
    return util::Status::Ok();
}

util::Status Device::Read(Buffer& src, uint64_t offset, void* dst, uint64_t nbytes) {
    NVK_RETURN_IF_ERROR(Usable());
    if (offset + nbytes > src.size) return util::InvalidArgument("read past the end of a buffer");
    if (nbytes == 0) return util::Status::Ok();
    if (src.mapped) {
        NVK_RETURN_IF_ERROR(WaitBuffer(src));
        CopyOnThreads(static_cast<uint8_t*>(dst), src.mapped + offset, nbytes);
        return util::Status::Ok();
    }
    // The copy is ordered after the launches that write `src` (batch.cc): one wait.
    return StagedCopy(src, offset, dst, nbytes, /*to_device=*/false);
}

util::Status Device::StagedCopy(Buffer& buffer, uint64_t offset, void* host, uint64_t nbytes,
                                bool to_device) {
    // Two staging halves, so that the host copies one chunk while the device copies
    // the other: chunk k uses half k % 2 and waits only for chunk k - 2.
    const uint64_t chunk = std::min(nbytes, kStagingBytes / 2);
    NVK_ASSIGN_OR_RETURN(BufferRef staging, TakeStaging(2 * chunk));
    // Kept for later copies on every way out, also after an error (Ctrl-C): the
    // next user waits for its last use first.
    struct GiveBack {
        Device* device;
        BufferRef* staging;
        ~GiveBack() { device->GiveBackStaging(std::move(*staging)); }
    } give_back{this, &staging};
    const uint64_t half = staging->size / 2;
    auto* bytes = static_cast<uint8_t*>(host);
    uint64_t half_value[2] = {0, 0};  // when each half's last device copy completes
    auto record = [&](uint64_t done, uint64_t n, int h) -> util::Status {
        Lock lock(mu_);
        NVK_RETURN_IF_ERROR(OpenBatch(lock));
        if (to_device) {
            NVK_RETURN_IF_ERROR(OrderAccessLocked(*staging, buffer));
        } else {
            NVK_RETURN_IF_ERROR(OrderAccessLocked(buffer, *staging));
        }
        VkBufferCopy region{};
        region.size = n;
        if (to_device) {
            region.srcOffset = h * half;
            region.dstOffset = offset + done;
            CmdCopyBuffer(fns_, slots_[open_slot_].cb, staging->buffer, buffer.buffer, &region,
                          1);
        } else {
            region.srcOffset = offset + done;
            region.dstOffset = h * half;
            CmdCopyBuffer(fns_, slots_[open_slot_].cb, buffer.buffer, staging->buffer, &region,
                          1);
        }
        half_value[h] = open_value();
        MarkUsed(*staging, half_value[h]);
        MarkUsed(buffer, half_value[h]);
        return FlushLocked();  // start it now; the host goes on with the other half
    };
    NVK_RETURN_IF_ERROR(WaitBuffer(*staging));  // an earlier copy may still use it
    if (to_device) {
        int h = 0;
        for (uint64_t done = 0; done < nbytes; done += half, h ^= 1) {
            const uint64_t n = std::min(nbytes - done, half);
            NVK_RETURN_IF_ERROR(WaitValue(half_value[h]));
            CopyOnThreads(staging->mapped + h * half, bytes + done, n);
            NVK_RETURN_IF_ERROR(record(done, n, h));
        }
        // The caller's memory may change once we return, but it was copied already;
        // wait anyway so that a write is complete when Write returns.
        return WaitValue(staging->last_use.load());
    }
    // To the host: the device copies chunk k + 1 while the host copies chunk k out.
    NVK_RETURN_IF_ERROR(record(0, std::min(nbytes, half), 0));
    int h = 0;
    for (uint64_t done = 0; done < nbytes; done += half, h ^= 1) {
        const uint64_t n = std::min(nbytes - done, half);
        const uint64_t next = done + half;
        if (next < nbytes) {
            NVK_RETURN_IF_ERROR(WaitValue(half_value[h ^ 1]));
            NVK_RETURN_IF_ERROR(record(next, std::min(nbytes - next, half), h ^ 1));
        }
        NVK_RETURN_IF_ERROR(WaitValue(half_value[h]));
        CopyOnThreads(bytes + done, staging->mapped + h * half, n);
    }
    return util::Status::Ok();
}

util::Result<uint64_t> Device::Copy(Buffer& src, uint64_t src_offset, Buffer& dst,
                                    uint64_t dst_offset, uint64_t nbytes, bool host_reads) {
    if (src_offset + nbytes > src.size || dst_offset + nbytes > dst.size) {
        return util::InvalidArgument("copy past the end of a buffer");
    }
    if (nbytes == 0) return uint64_t{0};
    NVK_RETURN_IF_ERROR(Usable());
    Lock lock(mu_);
    NVK_RETURN_IF_ERROR(OpenBatch(lock));
    NVK_RETURN_IF_ERROR(OrderAccessLocked(src, dst));
    VkBufferCopy region{src_offset, dst_offset, nbytes};
    CmdCopyBuffer(fns_, slots_[open_slot_].cb, src.buffer, dst.buffer, &region, 1);
    const uint64_t value = open_value();
    MarkUsed(src, value);
    MarkUsed(dst, value);
    if (host_reads) slots_[open_slot_].host_barrier = true;
    ++open_count_;
    if (open_count_ >= kMaxBatch || (!host_reads && SubmitDue() && IdleLocked())) {
        NVK_RETURN_IF_ERROR(FlushLocked());
    }
    return value;
}

}  // namespace nvk::vk
