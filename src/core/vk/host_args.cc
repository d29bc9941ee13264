// Host arguments: small NumPy arrays handed to a kernel without staging copies.
//
// A launch with NumPy arguments used to make a device array per argument in
// Python, copy each in (a copy command), launch, and copy the written ones back
// through a staging buffer: four copy commands and two barriers around a
// one-dispatch kernel with three arrays, and tens of microseconds of Python. The
// C++ launcher's NumPy path (bind/numpy_args.cc) instead takes, per small array, a
// mapped buffer from the pools here and memcpy()s the array into it (the host
// writes it directly, so no copy command and no barrier), gives the kernel its
// address, and for the arrays the kernel may write, waits and memcpy()s them out.
// A barrier at the end of the batch makes the device's writes visible to the host
// (batch.cc, Slot::host_barrier).
//
// Which memory (NVK_VULKAN_HOST_ARGS, read once per device):
//   mapped  the device's arrays are mapped anyway (lavapipe, integrated GPUs):
//           ordinary array buffers, from the arrays' pool. Always, where so.
//   device  (the default elsewhere) every array in device-local, host-visible
//           memory (a discrete GPU's BAR: the host's writes go out write-combined,
//           the kernel reads and writes at device speed); a written one is copied
//           back by one copy command into host memory (host-cached where offered),
//           which the host then reads from its own cache: uncached reads across
//           the bus are slow.
//   mixed   read arrays as under "device"; written ones in host memory, read and
//           written by the kernel across the bus (no copy command, but every access
//           of the kernel pays the bus's latency: a loop over them is slow).
//   host    every array in host memory, read and written across the bus.
//   bar     every array in device-local, host-visible memory, the written ones read
//           back by the host across the bus, uncached.
//   off     no host arguments: NumPy arguments take the Python path (device arrays
//           and copies).
// A discrete device without a device-local, host-visible memory type gets "off"
// unless the variable asks otherwise (its host arguments would all live in host
// memory); an allocation that this type cannot serve (its heap may be small: 256 MiB
// without resizable BAR) falls back to host memory.
//
// Pools: per kind, free buffers by size bucket (as the arrays' pool), at most
// kArgPoolPerSize of a size. A released buffer may still be used by a launch in
// flight (arguments only read make an asynchronous launch; an interrupted wait):
// it is reused only once idle, and destroyed like an array's (memory.cc: retired
// until its last use is done). These buffers are not in pool_stats(): that
// describes the arrays' pool.
#include <bit>
#include <cstdlib>
#include <cstring>

#include "vk/device.h"
#include "vk/fork.h"

namespace nvk::vk {

namespace {
constexpr size_t kArgPoolPerSize = 16;

uint64_t ArgBucket(uint64_t n) { return n <= 256 ? 256 : std::bit_ceil(n); }
}  // namespace

util::Result<BufferRef> Device::AllocateHostArg(uint64_t nbytes, int kind) {
    if (host_args_mode_ == HostArgs::kMapped) {
        // From the array pool: the launch that used it last may still run (memory.cc).
        NVK_ASSIGN_OR_RETURN(BufferRef ref, Allocate(nbytes));
        NVK_RETURN_IF_ERROR(WaitBuffer(*ref));
        return ref;
    }
    NVK_RETURN_IF_ERROR(Usable());
    if (kind < 0 || kind > 2) return util::InvalidArgument("host argument kind 0, 1 or 2");
    const uint64_t size = ArgBucket(nbytes);
    Buffer* buffer = nullptr;
    {
        Lock lock(mu_);
        // The oldest released first, and only if the device is done with it: a loop of
        // asynchronous launches (arguments only read) then cycles through a few buffers
        // instead of waiting for the last launch each time.
        auto it = arg_pool_[kind].find(size);
        if (it != arg_pool_[kind].end() && !it->second.empty()) {
            Buffer* oldest = it->second.front();
            const uint64_t last = oldest->last_use.load();
            if (last <= completed_.load() || last <= PollCompleted()) {
                buffer = oldest;
                it->second.erase(it->second.begin());
            }
        }
    }
    if (buffer == nullptr) {
        util::Result<Buffer*> created = CreateBuffer(size, host_arg_type_[kind], true);
        if (!created.ok() && host_arg_type_[kind] != host_type_) {
            // The device-local, host-visible heap can be small (256 MiB without
            // resizable BAR) and shared with others: host memory does the job too.
            created = CreateBuffer(size, host_type_, true);
        }
        if (!created.ok()) return created.status();
        buffer = created.value();
        buffer->arg_pool = kind;
    }
    BufferRef ref(buffer, [](Buffer* b) { b->device->ReleaseHostArg(b); });
    NVK_RETURN_IF_ERROR(WaitBuffer(*buffer));  // an interrupted launch may still use it
    return ref;
}

void Device::ReleaseHostArg(Buffer* buffer) {
    if (Forked()) return;
    Lock lock(mu_);
    auto& list = arg_pool_[buffer->arg_pool][buffer->size];
    if (!lost_.load() && list.size() < kArgPoolPerSize) {
        list.push_back(buffer);
        return;
    }
    RetireLocked(buffer->last_use.load(), [this, buffer] { DestroyBuffer(buffer); });
}

std::string Device::host_args_memory(int kind) const {
    switch (host_args_mode_) {
        case HostArgs::kOff: return "off";
        case HostArgs::kMapped: return "mapped arrays";
        default: break;
    }
    if (kind < 0 || kind > 2) return "?";
    if (kind == 2 && host_args_mode_ != HostArgs::kDevice) return "none";  // no readback
    return host_arg_bar_[kind] ? "device-local host-visible" : "host";
}

}  // namespace nvk::vk
