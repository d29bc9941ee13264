// The launcher behind _core.Launcher (bindings: runtime_launch.cc): the launch path
// from Python into a recorded dispatch.
//
// A Launcher is made once per (kernel specialisation, device) by the dispatcher,
// with the kernel's argument declarations (_core.ArgDecl, kir/abi.h); launcher.cc
// turns them into argument specs (launch_args.h) and hidden values. Launch()
// (launch.cc) then only checks each argument against its spec, writes the
// parameter block in place and records the dispatch: no heap allocation, no Python
// attribute lookup, no descriptor work. An argument that does not match its spec
// makes Launch() return 0, so the dispatcher can take its slow path; only real
// failures (unsupported local size, Vulkan errors) raise.
//
//   Launch ─ checks, block ─┬─ RecordGrid   the device's open batch (with NumPy
//                           │               arguments: LaunchWithNumpy)
//                           ├─ EnqueueGrid  a stream
//                           └─ Capture      a graph capturing that stream
//                                           (launch_capture.cc, graph_capture.h)
//
// Grids: a grid larger than the device's max_groups along some axis goes out as
// several dispatches (SplitGrid). Work that outlives the launch (a stream's
// submission, a graph's commands) takes a copy of the block per piece (CopyPieces).
//
// Threads: one Launcher serves every thread that launches its kernel, so Launch()
// keeps the parameter block and the list of used buffers on its own stack (not in
// the Launcher), and the device marks the buffers as used under its lock. Only the
// copy kept for last_block() is shared, behind a mutex, and only when asked for
// (keep_last_block = True): launches pay nothing for it otherwise.
//
// Hazards: the launcher tells the device which of the used buffers the kernel may
// write (`writes`, from CompiledKernel.writes), so that the device records a
// barrier only before a launch that conflicts with earlier work (vk/batch.cc).
#pragma once

#include <nanobind/nanobind.h>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <vector>

#include "bind/launch_args.h"
#include "bind/runtime_types.h"
#include "kir/abi.h"
#include "util/status.h"

namespace nvk::bind {

class NumpyArgs;  // numpy_args.h

class Launcher {
  public:
    // `args`: the kernel's _core.ArgDecl list, hidden parameters included; `hidden`:
    // None or {name: int, Buffer or DeviceArray} for the hidden ones not the grid's.
    Launcher(vk::Device* device, nb::object kernel, nb::list args, uint32_t param_size,
             bool params_in_buffer, nb::object hidden);

    // 0: `args` do not fit (nothing done); 1: launched; 2: launched with NumPy arguments
    // the kernel may write, done and those copied back (the caller checks for kernel
    // reports, as after any copy to the host).
    int Launch(nb::handle groups, nb::handle local, nb::handle args, bool hold,
               PyStream* stream);

    // NumPy arguments: `formats` has one entry per argument, the buffer format of the
    // arrays the launcher may take for it directly (numpy_args.h), or None.
    void AllowNumpy(nb::list formats);
    // Device arrays: `layouts` has one entry per argument, "C" or "F" where the kernel
    // was typed so (its code may depend on that layout), or None: other arrays go to
    // the typed (slow) path, which specialises the kernel for them.
    void RequireLayouts(nb::list layouts);

    nb::bytes LastBlock() const;
    bool keep_last() const { return keep_last_.load(); }
    void set_keep_last(bool on) { keep_last_.store(on); }

  private:
    // The hidden grid parameters (frontend/grid.py), written per dispatch.
    struct GridSpec {
        bool has_base = false, has_groups = false, reads_ids = false;
        uint32_t base[3] = {}, groups[3] = {};
        uint32_t index_bytes = 4;
        // The kernel runs its workgroups along x as a loop (frontend/grid.py): the
        // dispatch has at most kGroupLoopGroups of them, their count written at `stride`.
        bool has_stride = false;
        uint32_t stride = 0;
    };
    // A hidden parameter with a fixed value (or a buffer's or device array's
    // address) given when the launcher is made; the buffer is also marked as used
    // by every launch, so that hazards and lifetimes cover it: as written always
    // for a Buffer, as the declaration says (ArgDecl.written) for a device array.
    struct FixedValue {
        uint32_t offset = 0, nbytes = 0;
        uint64_t value = 0;
        vk::BufferRef buffer;
        bool written = true;
    };
    // The pieces of one grid, each with its own copy of the parameter block.
    struct GridPieces {
        std::vector<std::vector<uint8_t>> blocks;
        std::vector<vk::DispatchPiece> dispatches;  // params: into `blocks`
    };

    // ---- making (launcher.cc) ----------------------------------------------------------
    template <typename Check>
    void AddHidden(const kir::ArgDecl& a, nb::dict values, Check& check);

    // ---- launching (launch.cc) ---------------------------------------------------------
    util::Result<uint64_t> LaunchWithNumpy(NumpyArgs& numpy, VkPipeline pipeline,
                                           const uint32_t g[3], uint8_t* block,
                                           vk::Buffer** used, size_t n_used, bool* writes);
    util::Result<uint64_t> RecordGrid(VkPipeline pipeline, const uint32_t g[3], uint8_t* block,
                                      vk::Buffer* const* used, size_t n_used,
                                      const bool* writes, bool hold, bool host_reads);
    util::Result<uint64_t> EnqueueGrid(vk::StreamState& stream, VkPipeline pipeline,
                                       const uint32_t g[3], uint8_t* block,
                                       vk::Buffer* const* used, size_t n_used,
                                       const bool* writes);
    util::Result<GridPieces> CopyPieces(const uint32_t g[3], uint8_t* block);
    template <typename Emit>
    util::Result<uint64_t> SplitGrid(const uint32_t g[3], uint8_t* block, Emit&& emit);

    // ---- capturing (launch_capture.cc) -------------------------------------------------
    void Capture(GraphCapture& capture, VkPipeline pipeline, const uint32_t g[3],
                 uint8_t* block, PyObject* tuple);

    vk::Device* device_;
    nb::object kernel_obj_;  // keeps the kernel alive
    vk::Kernel* kernel_ = nullptr;
    bool in_buffer_ = false;
    uint32_t param_size_ = 0;
    uint32_t block_bytes_ = 0;  // param_size_ rounded up to 16
    std::vector<ArgSpec> specs_;
    size_t array_count_ = 0;
    bool zero_block_ = true;  // some byte of the block is no argument's: zero it first
    std::atomic<bool> keep_last_{false};
    mutable std::mutex last_mutex_;
    std::vector<uint8_t> last_block_;  // the block of the last launch, for last_block()
    GridSpec grid_;
    std::vector<FixedValue> fixed_;  // hidden parameters with values given at construction
};

}  // namespace nvk::bind
