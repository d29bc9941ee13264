#include "vk/fork.h"

#include <pthread.h>

#include <atomic>
#include <mutex>

namespace nvk::vk {

namespace {
std::atomic<bool> g_forked{false};
void MarkChild() { g_forked.store(true, std::memory_order_relaxed); }
}  // namespace

void WatchForks() {
    static std::once_flag once;
    std::call_once(once, [] { pthread_atfork(nullptr, nullptr, MarkChild); });
}

bool Forked() { return g_forked.load(std::memory_order_relaxed); }

util::Status ForkedError() {
    return {util::Code::kForked,
            "this process was forked from one that had already used Vulkan, and a Vulkan "
            "device cannot be used in a forked child (the first wait would block forever). "
            "Start worker processes with multiprocessing's 'spawn' start method instead: "
            "multiprocessing.get_context('spawn') or multiprocessing.set_start_method('spawn')"};
}

}  // namespace nvk::vk
