// The GIL around calls into the runtime that usually return at once.
#pragma once

#include <Python.h>

#include "vk/device.h"

namespace nvk::bind {

// Keeps the GIL through a call into the runtime (a launch, an allocation, a device copy)
// and hands it to other threads only while the call waits for the device (vk::WaitHook).
// Releasing it around every such call made each one a hand-over between threads: on an
// H100, Dask's threaded scheduler with four threads ran a 32-chunk pipeline on our chunks in
// 41.1 ms with the GIL released around launches, allocations and copies, 35.2 with it kept
// throughout them, waits included (medians of seven pairs of runs, each pair faster kept;
// docs/dask.md). Keeping it through a wait would stall every other Python thread for the
// device's time, so this form lets go of it there. Waiting calls (synchronize, reads and
// writes of host memory) release it for their whole length instead.
class GilReleasedWhileWaiting final : public vk::WaitHook {
  public:
    GilReleasedWhileWaiting() : previous_(vk::SetThreadWaitHook(this)) {}
    ~GilReleasedWhileWaiting() { vk::SetThreadWaitHook(previous_); }
    GilReleasedWhileWaiting(const GilReleasedWhileWaiting&) = delete;
    GilReleasedWhileWaiting& operator=(const GilReleasedWhileWaiting&) = delete;

    void Leave() override { state_ = PyEval_SaveThread(); }
    void Enter() override { PyEval_RestoreThread(state_); }

  private:
    vk::WaitHook* previous_;
    PyThreadState* state_ = nullptr;
};

}  // namespace nvk::bind
