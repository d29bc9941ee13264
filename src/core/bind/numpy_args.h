// The C++ launcher's NumPy path: small NumPy array arguments taken directly,
// without device arrays or copy commands (vk/host_args.cc says how and where).
//
// As on the Python path, a launch with NumPy arguments that the kernel may write
// is synchronous: the launcher copies each array into a mapped buffer (Upload),
// records and waits for the dispatch, and copies those arrays back (Download);
// with arrays only read, it returns once the dispatch is recorded.
// Only arrays that the Python path would hand over unchanged are taken: NumPy
// arrays (or subclasses) that are C-contiguous, of the buffer format the
// specialisation expects (so of its dtype, native byte order), non-empty, at most
// kMaxBytes, writable if the kernel may write them. Anything else makes the
// launcher answer False and the dispatcher's slow path do the work.
//
// Threads and the GIL: Take and the destructor need the GIL (buffer exports);
// Upload and Download run without it: the exports keep the arrays' memory alive.
#pragma once

#include <nanobind/nanobind.h>

#include <cstdint>
#include <string>

#include "bind/runtime_types.h"
#include "util/status.h"

namespace nvk::bind {

class NumpyArgs {
  public:
    static constexpr size_t kMax = 16;              // NumPy arguments per launch
    static constexpr uint64_t kMaxBytes = 64 * 1024;  // per array

    struct Arg {
        Py_buffer view{};
        bool written = false;
        uint32_t addr_offset = 0;  // where its address goes in the parameter block
        vk::BufferRef buffer;
        vk::BufferRef readback;  // where a written one is copied back (Readback), if so
    };

    NumpyArgs() = default;
    NumpyArgs(const NumpyArgs&) = delete;
    NumpyArgs& operator=(const NumpyArgs&) = delete;
    ~NumpyArgs();

    // Takes `arg` if it is such an array of buffer format `format` and `ndim`
    // dimensions; its extents go to `shape`. False (no Python error set) otherwise.
    bool Take(PyObject* arg, const std::string& format, int ndim, bool written,
              uint32_t addr_offset, int64_t* shape);
    size_t size() const { return count_; }
    bool any_written() const;

    // Without the GIL: a buffer per array, the array copied in, its address
    // written into `block`; `used`/`writes` get one entry per array.
    util::Status Upload(vk::Device& device, uint8_t* block, vk::Buffer** used,
                        bool* writes);
    // Without the GIL, after the dispatch is recorded: where the device copies written
    // arrays back into host memory (Device::host_args_readback), record those copies.
    // Returns the timeline value they complete at (0: none).
    util::Result<uint64_t> Readback(vk::Device& device);
    // Without the GIL, after the launch (and Readback's copies) completed: the written
    // arrays copied out.
    void Download();

  private:
    Arg args_[kMax];
    size_t count_ = 0;
};

// numpy.ndarray (imported once).
PyTypeObject* NdarrayType();

}  // namespace nvk::bind
