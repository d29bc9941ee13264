// Host arguments: small NumPy arrays handed to a kernel without staging copies.
//
// A launch with NumPy arguments used to make a device array per argument, copy
// each in (a copy command), launch, and copy the written ones back through a
// staging buffer (another copy command and a barrier each way): five commands
// and three barriers around a one-dispatch kernel. The C++ launcher's NumPy path
// (bind/numpy_args.cc) instead takes, per small array, a mapped buffer from the
// pools here, memcpy()s the array into it, gives the kernel its address,
// waits, and memcpy()s the written ones back out: one dispatch, no copy commands,
// no barrier except the one that makes the kernel's writes visible to the host
// (batch.cc, Slot::host_barrier).
//
// Which memory (NVK_VULKAN_HOST_ARGS, read once per device; default "mixed"):
//   mapped  the device's arrays are mapped anyway (lavapipe, integrated GPUs):
//           ordinary array buffers, from the arrays' pool.
//   mixed   arrays the kernel only reads in device-local, host-visible memory
//           (a discrete GPU's BAR: host writes go out write-combined, the kernel
//           reads at device speed); written arrays in host memory (host-cached
//           where offered) that the kernel reads and writes over the bus, so that
//           the host reads them back from its own cache, not across the bus.
//   host    both kinds in host memory.
//   bar     both in device-local, host-visible memory (reading back crosses the bus
//           uncached).
//   off     no host arguments: NumPy arguments take the Python path (device arrays,
//           copies), as before.
// Without a device-local, host-visible type, "mixed" and "bar" use host memory, and
// so does an allocation that this type cannot serve (its heap may be small).
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

util::Result<BufferRef> Device::AllocateHostArg(uint64_t nbytes, bool written) {
    if (host_args_mode_ == HostArgs::kMapped) return Allocate(nbytes);
    NVK_RETURN_IF_ERROR(Usable());
    const int kind = written ? 1 : 0;
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

std::string Device::host_args_memory(bool written) const {
    switch (host_args_mode_) {
        case HostArgs::kOff: return "off";
        case HostArgs::kMapped: return "mapped arrays";
        default: break;
    }
    return host_arg_bar_[written ? 1 : 0] ? "device-local host-visible" : "host";
}

}  // namespace nvk::vk
