// How a thread waits for the device: the check run between a wait's slices and the hook
// a thread steps aside by while it waits (wait.cc).
#pragma once

#include "util/status.h"

namespace nvk::vk {

// Called between the slices of every interruptible wait, without any device lock
// held: a non-ok Status (Code::kInterrupted) ends the wait with that error. The
// Python bindings install one that runs Python's signal handlers (Ctrl-C).
using WaitCheck = util::Status (*)();
void SetWaitCheck(WaitCheck check);

// A thread's way to step aside while it waits for the device: Leave() before a wait (no
// device lock is then held) and Enter() after it, on the thread that set it. The Python
// bindings keep the GIL through the calls that usually return at once (launches,
// allocations, device copies: handing the GIL to another thread and taking it back cost
// Dask's threaded scheduler on our chunks more than the calls themselves) and hand it
// over only while such a call waits (bind/gil.h).
class WaitHook {
  public:
    virtual void Leave() = 0;
    virtual void Enter() = 0;

  protected:
    ~WaitHook() = default;
};
// Sets the calling thread's hook (nullptr: none) and returns the one it replaces.
WaitHook* SetThreadWaitHook(WaitHook* hook);

}  // namespace nvk::vk
