// Waiting for the timeline: interruptible, bounded, and aware of device loss.
//
// A wait never holds a device lock, and leaves the thread's WaitHook (the bindings: the
// GIL) for its duration. It first spins for at most kSpinNs on
// vkGetSemaphoreCounterValue: most kernels finish within that, and a sleeping
// wait would add the driver's wake-up latency (on the H200: 18 us for submit +
// spin-wait, 48 us for a plain blocking wait; reading a sum of 2^28 floats took
// 380 us with 100 us of spinning, 306 us with 2 ms), and a thread that slept
// through a wait runs its next calls slowly (the core clocked down: on an H100
// the launch of an 8192^3 matrix product, 4.3 ms of work, took 56 us of host
// time after a wait that spun 2 ms and slept, 11.6 us after one that spun
// throughout). NUMBA_VULKAN_SPIN_US changes the budget. numba.cuda's default
// spins without limit while the machine has a core per context; this spins for
// 20 ms at most, so that Ctrl-C still ends a wait within about 30 ms. Then it calls
// vkWaitSemaphores in slices of kSliceNs; between slices it
//   - runs the wait check (SetWaitCheck: the bindings run Python's signal
//     handlers there, so Ctrl-C ends a wait within about one slice),
//   - fails with Code::kTimeout once the wait has taken longer than timeout()
//     (NUMBA_VULKAN_TIMEOUT), so a runaway kernel becomes an error, not a hang,
//   - fails if another thread found the device lost meanwhile.
// An interrupted or timed-out wait changes no state: the work stays queued and
// the device usable. VK_ERROR_DEVICE_LOST from any call marks the device lost for
// good (Checked); every later call then fails (Usable).
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <string>

#include "vk/device.h"
#include "vk/fork.h"
#include "vk/result.h"

namespace nvk::vk {

namespace {
constexpr uint64_t kSliceNs = 10'000'000;  // 10 ms: Ctrl-C is seen well within 100 ms
// Spin budget before sleeping. Short enough that neither Ctrl-C nor the timeout
// notices it; on a CPU device (lavapipe) the spinning thread competes with the
// device's own worker threads, so it spins only briefly there.
constexpr uint64_t kSpinNs = 20'000'000;
constexpr uint64_t kCpuSpinNs = 5'000;
// A launch waiting for a free batch slot (or a stream's): the queue ahead of it keeps
// the device busy, so waking late costs nothing; asynchronous launches on the H200
// took 3.3 us each with every wait spinning 2 ms, 1.6-2.1 us with 100 us.
constexpr uint64_t kSlotSpinNs = 100'000;

// The spin budget: NUMBA_VULKAN_SPIN_US (microseconds, read once; not for slot waits)
// if set, else the above.
uint64_t SpinNs(bool cpu_device, bool for_slot) {
    static const long long from_env = [] {
        const char* v = std::getenv("NUMBA_VULKAN_SPIN_US");
        return v && *v ? std::max(0LL, std::atoll(v)) : -1LL;
    }();
    if (cpu_device) return kCpuSpinNs;
    if (for_slot) return kSlotSpinNs;
    return from_env >= 0 ? static_cast<uint64_t>(from_env) * 1000 : kSpinNs;
}

inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    asm volatile("yield");
#endif
}
std::atomic<WaitCheck> g_wait_check{nullptr};
thread_local WaitHook* t_wait_hook = nullptr;

// The calling thread's hook, left for the lifetime of this object.
class SteppedAside {
  public:
    SteppedAside() : hook_(t_wait_hook) {
        if (hook_) hook_->Leave();
    }
    ~SteppedAside() {
        if (hook_) hook_->Enter();
    }
    SteppedAside(const SteppedAside&) = delete;
    SteppedAside& operator=(const SteppedAside&) = delete;

  private:
    WaitHook* hook_;
};
}  // namespace

void SetWaitCheck(WaitCheck check) { g_wait_check.store(check); }

WaitHook* SetThreadWaitHook(WaitHook* hook) {
    WaitHook* previous = t_wait_hook;
    t_wait_hook = hook;
    return previous;
}

void Device::set_timeout(double seconds) {
    timeout_ns_.store(seconds > 0 ? static_cast<uint64_t>(seconds * 1e9) : 0);
}

util::Status Device::Usable() const {
    if (Forked()) return ForkedError();
    if (!lost_.load(std::memory_order_relaxed)) return util::Status::Ok();
    std::lock_guard<std::mutex> guard(lost_mu_);
    return {util::Code::kDeviceLost,
            "Vulkan device '" + info_.name + "' was lost (VK_ERROR_DEVICE_LOST, reported by " +
                lost_call_ +
                "): the driver gave up on it, usually after a kernel faulted or ran too long. "
                "No further work can run on it in this process; restart the process"};
}

void Device::MarkLost(const char* call) {
    std::lock_guard<std::mutex> guard(lost_mu_);
    if (lost_.load()) return;
    lost_call_ = call;
    lost_.store(true);
}

util::Status Device::Checked(VkResult result, const char* call) {
    if (result == VK_ERROR_DEVICE_LOST) {
        MarkLost(call);
        return Usable();
    }
    return Check(result, call);
}

void Device::NoteCompleted(std::atomic<uint64_t>& completed, uint64_t value) {
    uint64_t seen = completed.load();
    while (seen < value && !completed.compare_exchange_weak(seen, value)) {
    }
}

uint64_t Device::Poll(VkSemaphore semaphore, std::atomic<uint64_t>& completed) {
    uint64_t value = 0;
    VkResult r = fns_.vkGetSemaphoreCounterValue(device_, semaphore, &value);
    if (r == VK_SUCCESS) {
        NoteCompleted(completed, value);
    } else if (r == VK_ERROR_DEVICE_LOST) {
        MarkLost("vkGetSemaphoreCounterValue");
    }
    return completed.load();
}

// Waits until `semaphore` (the device's timeline or a stream's) reaches `value`;
// `completed` caches the last value seen.
util::Status Device::WaitSemaphore(VkSemaphore semaphore, std::atomic<uint64_t>& completed,
                                   uint64_t value, bool for_slot) {
    if (value <= completed.load()) return util::Status::Ok();
    const SteppedAside aside;  // callers hold no device lock here
    const auto start = std::chrono::steady_clock::now();
    const uint64_t timeout_ns = timeout_ns_.load();
    const auto spin_end = start + std::chrono::nanoseconds(SpinNs(info_.kind == "cpu", for_slot));
    for (int i = 0;; ++i) {
        if (Poll(semaphore, completed) >= value) return util::Status::Ok();
        if (lost_.load(std::memory_order_relaxed)) return Usable();
        // A few pauses between polls (a pause costs up to ~140 cycles on recent x86):
        // enough to leave the memory bus alone, few enough to see the value promptly.
        for (int k = 0; k < 4; ++k) CpuRelax();
        // steady_clock costs ~20 ns: read it every few polls only.
        if ((i & 15) == 15 && std::chrono::steady_clock::now() >= spin_end) break;
    }
    VkSemaphoreWaitInfo wait{VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO};
    wait.semaphoreCount = 1;
    wait.pSemaphores = &semaphore;
    wait.pValues = &value;
    for (;;) {
        VkResult r = fns_.vkWaitSemaphores(device_, &wait, kSliceNs);
        if (r == VK_SUCCESS) {
            NoteCompleted(completed, value);
            return util::Status::Ok();
        }
        if (r != VK_TIMEOUT) return Checked(r, "vkWaitSemaphores");
        NVK_RETURN_IF_ERROR(Usable());  // another thread may have found the device lost
        if (WaitCheck check = g_wait_check.load()) NVK_RETURN_IF_ERROR(check());
        const uint64_t waited = std::chrono::duration_cast<std::chrono::nanoseconds>(
                                    std::chrono::steady_clock::now() - start)
                                    .count();
        if (timeout_ns && waited >= timeout_ns) {
            return {util::Code::kTimeout,
                    "waited " + std::to_string(waited / 1e9).substr(0, 5) +
                        " s for Vulkan device '" + info_.name +
                        "', longer than its timeout (NUMBA_VULKAN_TIMEOUT=" +
                        std::to_string(timeout_ns / 1e9).substr(0, 5) +
                        " s): a kernel may be running away. The work stays queued; the "
                        "device remains usable once it finishes"};
        }
    }
}

}  // namespace nvk::vk
