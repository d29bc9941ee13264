// Fork detection: a Vulkan device cannot be used in a child made by fork().
//
// The driver's threads, its memory mappings and the queue's state belong to the
// parent; in a forked child the first wait blocks forever. WatchForks() (called
// when the instance is created) registers a pthread_atfork handler that marks the
// child. Every entry point of the runtime checks Forked() first (a relaxed atomic
// load: free on the launch path) and fails with Code::kForked, whose message says
// to use multiprocessing's 'spawn' start method. Destructors in the child leak
// instead of calling into the driver (or taking a lock held across the fork).
//
// Rule for every entry point (Python bindings included): check Forked() (or
// Device::Usable()) BEFORE taking any runtime lock or calling any vk* function. A
// lock may have been held by another thread of the parent when it forked (a
// pipeline being created holds its kernel's lock for milliseconds); that thread
// does not exist in the child, so the lock is never released there.
//
// Exit: the driver registers its own exit-time teardown in the parent (NVIDIA's
// vkCreateInstance installs an atexit handler; Mesa's queues one that joins their
// threads; shared libraries have destructors). In a forked child those run at
// exit() against driver threads and locks that did not survive the fork: NVIDIA's
// waits forever (a child that had raised our error cleanly then hung in
// sys.exit), and it would act on device state and file descriptors the child
// shares with its parent. So the child handler also registers, with on_exit (run
// before every handler registered earlier, i.e. before all of the parent's), a
// handler that flushes C stdio and ends the process with _exit(status): by then
// Python has finished its own finalisation (atexit functions, objects), so only
// the C-level teardown of the parent's libraries is skipped, as os._exit and
// multiprocessing's forked workers skip it.
#pragma once

#include "util/status.h"

namespace nvk::vk {

// Registers the atfork handler (once per process).
void WatchForks();

// Whether this process is a child forked after WatchForks().
bool Forked();

// The error every call in a forked child returns.
util::Status ForkedError();

}  // namespace nvk::vk
