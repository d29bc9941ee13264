#include "vk/fork.h"

#include <pthread.h>
#include <stdlib.h>  // on_exit (glibc)
#include <unistd.h>  // _exit

#include <atomic>
#include <cstdio>
#include <mutex>

namespace nvk::vk {

namespace {
std::atomic<bool> g_forked{false};

// Registered in the child (fork.h, "Exit"): later than any handler of the parent's,
// so exit() runs it before them; it ends the process without running them.
#if defined(__GLIBC__)
void SkipParentsTeardown(int status, void*) {
    std::fflush(nullptr);
    _exit(status);
}
#endif

void MarkChild() {
    g_forked.store(true, std::memory_order_relaxed);
#if defined(__GLIBC__)  // on_exit passes the exit status; elsewhere exit runs as usual
    on_exit(SkipParentsTeardown, nullptr);
#endif
}
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
