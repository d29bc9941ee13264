// Fork detection: a Vulkan device cannot be used in a child made by fork().
//
// The driver's threads, its memory mappings and the queue's state belong to the
// parent; in a forked child the first wait blocks forever. WatchForks() (called
// when the instance is created) registers a pthread_atfork handler that marks the
// child. Every entry point of the runtime checks Forked() first (a relaxed atomic
// load: free on the launch path) and fails with Code::kForked, whose message says
// to use multiprocessing's 'spawn' start method. Destructors in the child leak
// instead of calling into the driver (or taking a lock held across the fork).
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
