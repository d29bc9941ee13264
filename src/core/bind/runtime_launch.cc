// _core.Launcher: the launch path from Python into a recorded dispatch (the
// loaded modules it launches, _core.Kernel, are in runtime_kernel.cc).
//
// A Launcher is made once per (kernel specialisation, device) by the dispatcher,
// with the kernel's argument declarations (_core.ArgDecl, kir/abi.h). launch() then only
// checks each argument against its spec, writes the parameter block in place and
// records the dispatch: no heap allocation, no Python attribute lookup, no
// descriptor work. An argument that does not match its spec makes launch()
// return False, so the dispatcher can take its slow path; only real failures
// (unsupported local size, Vulkan errors) raise.
//
// Threads: one Launcher serves every thread that launches its kernel, so
// launch() keeps the parameter block and the list of used buffers on its own
// stack (not in the Launcher), and the device marks the buffers as used under
// its lock. Only the copy kept for last_block() is shared, behind a mutex, and
// only when asked for (keep_last_block = True): launches pay nothing for it
// otherwise.
//
// Graphs: a launch on a stream that a graph captures goes into the graph
// (Capture) instead of the device; nothing else changes for other launches.
//
// Hazards: the launcher tells the device which of the used buffers the kernel
// may write (`writes`, from CompiledKernel.writes), so that the device records a
// barrier only before a launch that conflicts with earlier work (vk/batch.cc).
#include <nanobind/ndarray.h>
#include <nanobind/stl/array.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "bind/errors.h"
#include "bind/graph_capture.h"
#include "bind/launch_args.h"
#include "bind/numpy_args.h"
#include "bind/runtime_types.h"
#include "kir/abi.h"

namespace nvk::bind {

namespace {

class Launcher {
  public:
    Launcher(vk::Device* device, nb::object kernel, nb::list args, uint32_t param_size,
             bool params_in_buffer, nb::object hidden)
        : device_(device), kernel_obj_(std::move(kernel)), in_buffer_(params_in_buffer) {
        kernel_ = nb::cast<PyKernel&>(kernel_obj_).kernel.get();
        if (&kernel_->device() != device_) {
            Throw(util::InvalidArgument("the kernel was loaded on another device"));
        }
        param_size_ = param_size;
        block_bytes_ = (param_size + 15u) & ~15u;
        last_block_.assign(block_bytes_, 0);
        std::vector<bool> covered(param_size, false);  // bytes every launch writes
        auto cover = [&](uint32_t off, uint32_t n) {
            for (uint32_t k = off; k < off + n && k < param_size; ++k) covered[k] = true;
        };
        auto check = [&](const kir::ArgDecl& a, uint32_t off, uint32_t n) {
            if (off + n > param_size) {
                Throw(util::InvalidArgument("argument '" + a.name + "' at offset " +
                                            std::to_string(off) +
                                            " lies outside the parameter block of " +
                                            std::to_string(param_size) + " bytes"));
            }
            cover(off, n);
        };
        nb::dict values = hidden.is_none() ? nb::dict() : nb::cast<nb::dict>(hidden);
        for (nb::handle h : args) {
            const kir::ArgDecl& a = nb::cast<const kir::ArgDecl&>(h);
            if (a.kind == kir::ArgKind::kHidden) {
                AddHidden(a, values, check);
                continue;
            }
            ArgSpec spec;
            if (a.kind == kir::ArgKind::kArray) {
                spec.is_array = true;
                spec.code = DtypeCode(a.dtype_kind, a.itemsize, a.record_key);
                spec.ndim = static_cast<int>(a.ndim);
                spec.addr_offset = a.offset;
                spec.index_bytes = kir::MemoryBytes(a.index);
                if (spec.ndim > kMaxDims || a.extents.size() != a.ndim ||
                    a.strides.size() != a.ndim ||
                    (spec.index_bytes != 4 && spec.index_bytes != 8)) {
                    Throw(util::InvalidArgument("malformed array argument '" + a.name + "'"));
                }
                check(a, spec.addr_offset, 8);
                for (int i = 0; i < spec.ndim; ++i) {
                    spec.extent_offsets[i] = a.extents[i];
                    spec.stride_offsets[i] = a.strides[i];
                    check(a, spec.extent_offsets[i], spec.index_bytes);
                    check(a, spec.stride_offsets[i], spec.index_bytes);
                }
                spec.written = a.written;
                ++array_count_;
            } else {
                spec = ScalarSpec(a);
                if (spec.nbytes != 4 && spec.nbytes != 8) {
                    Throw(util::InvalidArgument("argument '" + a.name + "' has a " +
                                                kir::ScalarName(a.slot) +
                                                " slot; the launcher writes 4- and 8-byte slots"));
                }
                check(a, spec.offset, spec.nbytes);
            }
            specs_.push_back(spec);
        }
        if (fixed_.size() != nb::len(values)) {
            Throw(util::InvalidArgument("hidden values were given for parameters the kernel "
                                        "does not have"));
        }
        // Where every byte of the block is written per launch, launch() skips the
        // memset (the alignment padding past param_size is never read by a kernel).
        zero_block_ = std::find(covered.begin(), covered.end(), false) != covered.end();
    }

    // Whether `a` is C- ('C') or F- ('F') contiguous (extents of 1 take any stride; an
    // empty array is both), as DeviceArray.is_contiguous and is_f_contiguous say.
    static bool HasLayout(const DeviceArrayBase& a, char layout) {
        for (int k = 0; k < a.ndim; ++k) {
            if (a.shape[k] == 0) return true;
        }
        int64_t step = static_cast<int64_t>(a.itemsize);
        for (int k = 0; k < a.ndim; ++k) {
            int d = layout == 'C' ? a.ndim - 1 - k : k;
            if (a.shape[d] != 1 && a.strides[d] != step) return false;
            step *= a.shape[d];
        }
        return true;
    }

    static bool FitsInt32Indices(const DeviceArrayBase& a) {
        return bind::FitsInt32Indices(a.ndim, a.shape.data(), a.strides.data(), a.itemsize);
    }

    // 0: `args` do not fit (nothing done); 1: launched; 2: launched with NumPy arguments
    // the kernel may write, done and those copied back (the caller checks for kernel
    // reports, as after any copy to the host).
    int Launch(nb::handle groups, nb::handle local, nb::handle args, bool hold,
               PyStream* stream) {
        if (stream != nullptr && &stream->device() != device_) {
            Throw(util::InvalidArgument("the stream belongs to another device than the kernel's "
                                        "launcher"));
        }
        PyObject* tuple = args.ptr();
        if (!PyTuple_Check(tuple) ||
            PyTuple_GET_SIZE(tuple) != static_cast<Py_ssize_t>(specs_.size())) {
            return 0;
        }
        uint32_t g[3], l[3];
        if (!ReadTriple(groups.ptr(), g) || !ReadTriple(local.ptr(), l)) {
            PyErr_Clear();
            Throw(util::InvalidArgument("groups and local_size must be tuples of 1 to 3 "
                                        "non-negative ints"));
        }
        // This call's own block and used-buffer list (see the top of the file):
        // on the stack when small, which they nearly always are.
        constexpr uint32_t kStackBlock = 512;
        constexpr size_t kStackUsed = 32;
        alignas(16) uint8_t stack_block[kStackBlock];
        vk::Buffer* stack_used[kStackUsed];
        bool stack_writes[kStackUsed];
        std::unique_ptr<uint8_t[]> heap_block;
        std::unique_ptr<vk::Buffer*[]> heap_used;
        std::unique_ptr<bool[]> heap_writes;
        uint8_t* block = stack_block;
        if (block_bytes_ > kStackBlock) {
            heap_block.reset(new uint8_t[block_bytes_]);
            block = heap_block.get();
        }
        vk::Buffer** used = stack_used;
        bool* writes = stack_writes;
        // NumPy arguments add their buffers to the list (at most one per array).
        const size_t n_buffers = 2 * array_count_ + fixed_.size();
        if (n_buffers > kStackUsed) {
            heap_used.reset(new vk::Buffer*[n_buffers]);
            heap_writes.reset(new bool[n_buffers]);
            used = heap_used.get();
            writes = heap_writes.get();
        }
        if (zero_block_) std::memset(block, 0, block_bytes_);
        // NumPy arguments taken directly (numpy_args.h); made only when there are some,
        // so that launches with device arrays do not pay for its ~2 KiB.
        std::optional<NumpyArgs> numpy;
        size_t n_used = 0;
        for (const FixedValue& f : fixed_) {
            if (f.nbytes == 8) Put<uint64_t>(block, f.offset, f.value);
            else Put<uint32_t>(block, f.offset, static_cast<uint32_t>(f.value));
            if (f.buffer) {
                writes[n_used] = f.written;
                used[n_used++] = f.buffer.get();
            }
        }
        for (size_t i = 0; i < specs_.size(); ++i) {
            const ArgSpec& spec = specs_[i];
            PyObject* arg = PyTuple_GET_ITEM(tuple, i);
            if (spec.is_array && !spec.numpy_format.empty() && stream == nullptr &&
                Py_TYPE(arg) == NdarrayType()) {  // subclasses: the slow path
                int64_t shape[kMaxDims], strides[kMaxDims];
                if (!numpy) numpy.emplace();
                if (!numpy->Take(arg, spec.numpy_format, spec.ndim, spec.written,
                                spec.addr_offset, shape)) {
                    return 0;
                }
                // C-contiguous strides, in elements; at most kMaxBytes, so 32-bit
                // indices always reach every element.
                int64_t step = 1;
                for (int d = spec.ndim - 1; d >= 0; --d) {
                    strides[d] = step;
                    step *= shape[d];
                }
                for (int d = 0; d < spec.ndim; ++d) {
                    PutInt(block, spec.extent_offsets[d], spec.index_bytes, shape[d]);
                    PutInt(block, spec.stride_offsets[d], spec.index_bytes, strides[d]);
                }
                continue;  // its address and buffer come with the upload
            } else if (spec.is_array) {
                DeviceArrayBase* a = nullptr;
                if (!nb::try_cast<DeviceArrayBase*>(nb::handle(arg), a) || !a) return 0;
                if (a->device != device_ || a->code != spec.code || a->ndim != spec.ndim) {
                    return 0;
                }
                if (spec.layout && !HasLayout(*a, spec.layout)) return 0;
                // 32-bit indices reach at most 2^31 - 1 elements from element 0: a
                // larger array needs the kernel's 64-bit-index specialisation.
                if (spec.index_bytes == 4 && !FitsInt32Indices(*a)) return 0;
                Put<uint64_t>(block, spec.addr_offset, a->buffer->address + a->offset);
                for (int d = 0; d < spec.ndim; ++d) {
                    PutInt(block, spec.extent_offsets[d], spec.index_bytes, a->shape[d]);
                    PutInt(block, spec.stride_offsets[d], spec.index_bytes,
                           a->strides[d] / static_cast<int64_t>(a->itemsize));
                }
                writes[n_used] = spec.written;
                used[n_used++] = a->buffer.get();
            } else if (!WriteScalar(spec, arg, block)) {
                return 0;
            }
        }
        // A grid whose ids 32 bits do not hold: the dispatcher then takes the
        // kernel's 64-bit specialisation.
        if (grid_.index_bytes == 4 && grid_.reads_ids && !FitsInt32Ids(g, l)) return 0;
        util::Result<VkPipeline> pipeline = kernel_->Pipeline(l);
        if (!pipeline.ok()) Throw(pipeline.status());
        if (stream != nullptr && stream->capture() != nullptr) {
            Capture(*stream->capture(), *pipeline, g, block, tuple);
            return 1;
        }
        util::Result<uint64_t> value = util::Status::Ok();
        if (numpy && numpy->size() > 0) {
            nb::gil_scoped_release release;  // the launch waits (and may wait for a slot)
            value = LaunchWithNumpy(*numpy, *pipeline, g, block, used, n_used, writes);
        } else {
            nb::gil_scoped_release release;  // the launch may wait for a slot
            value = DispatchGrid(*pipeline, g, block, used, n_used, writes, hold,
                                 stream ? &stream->state() : nullptr);
        }
        if (keep_last_.load(std::memory_order_relaxed)) {
            std::lock_guard<std::mutex> lock(last_mutex_);
            std::memcpy(last_block_.data(), block, param_size_);
        }
        if (!value.ok()) Throw(value.status());
        return numpy && numpy->any_written() ? 2 : 1;
    }

    // A launch with NumPy arguments (numpy_args.h), without the GIL: upload them,
    // record the dispatch and, if the kernel may write some, wait for it and copy
    // those back. `used` has room for them after its `n_used` entries.
    util::Result<uint64_t> LaunchWithNumpy(NumpyArgs& numpy, VkPipeline pipeline,
                                           const uint32_t g[3], uint8_t* block,
                                           vk::Buffer** used, size_t n_used, bool* writes) {
        NVK_RETURN_IF_ERROR(numpy.Upload(*device_, block, used + n_used, writes + n_used));
        n_used += numpy.size();
        const bool host_reads = numpy.any_written();
        // The host reads the kernel's writes in place, or copies of them (Readback).
        const bool in_place = host_reads && !device_->host_args_readback();
        NVK_ASSIGN_OR_RETURN(uint64_t value,
                             SplitGrid(g, block, [&](const uint32_t* piece) {
                                 return device_->RecordDispatch(
                                     *kernel_, pipeline, piece, block, param_size_, in_buffer_,
                                     used, n_used, writes, host_reads, in_place);
                             }));
        if (host_reads) {  // arrays only read: asynchronous, as on the Python path
            NVK_ASSIGN_OR_RETURN(uint64_t copied, numpy.Readback(*device_));
            NVK_RETURN_IF_ERROR(device_->WaitValue(std::max(value, copied)));
            numpy.Download();
        }
        return value;
    }

    // The launch into a graph capturing its stream (graph_capture.h) instead of the
    // device: its pieces, the buffers they use, and where each device array and
    // declared scalar argument went in their blocks (for rebinding).
    void Capture(GraphCapture& capture, VkPipeline pipeline, const uint32_t g[3],
                 uint8_t* block, PyObject* tuple) {
        std::vector<std::pair<uint32_t, bool>> used;
        std::vector<std::pair<uint32_t, const ArgSpec*>> bound;  // (parameter, spec)
        for (const FixedValue& f : fixed_) {
            if (f.buffer) used.emplace_back(capture.FixedEntry(f.buffer), f.written);
        }
        for (size_t i = 0; i < specs_.size(); ++i) {
            const ArgSpec& spec = specs_[i];
            nb::handle arg(PyTuple_GET_ITEM(tuple, i));
            if (spec.is_array) {
                const uint32_t p = capture.ArrayParam(arg, *nb::cast<DeviceArrayBase*>(arg));
                used.emplace_back(capture.params()[p].entry, spec.written);
                bound.emplace_back(p, &spec);
            } else if (int p = capture.ScalarParam(arg); p >= 0) {
                bound.emplace_back(static_cast<uint32_t>(p), &spec);
            }
        }
        util::Result<uint64_t> done = SplitGrid(g, block, [&](const uint32_t* piece) {
            const uint32_t at = capture.graph().AddDispatch(*kernel_, pipeline, piece, block,
                                                            param_size_, in_buffer_, used);
            for (const auto& [p, spec] : bound) capture.AddPatch(p, at, *spec);
            return util::Result<uint64_t>(uint64_t{0});
        });
        if (!done.ok()) Throw(done.status());
        capture.Keep(kernel_obj_);
    }

    // NumPy arguments: `formats` has one entry per argument, the buffer format of the
    // arrays the launcher may take for it directly (numpy_args.h), or None.
    void AllowNumpy(nb::list formats) {
        if (nb::len(formats) != specs_.size()) {
            Throw(util::InvalidArgument("allow_numpy: one entry per argument"));
        }
        if (!device_->host_args()) return;  // NVK_VULKAN_HOST_ARGS=off
        for (size_t i = 0; i < specs_.size(); ++i) {
            nb::handle f = formats[i];
            if (f.is_none()) continue;
            if (!specs_[i].is_array) {
                Throw(util::InvalidArgument("allow_numpy: argument " + std::to_string(i) +
                                            " is no array"));
            }
            specs_[i].numpy_format = nb::cast<std::string>(f);
        }
    }

    // Device arrays: `layouts` has one entry per argument, "C" or "F" where the kernel
    // was typed so (its code may depend on that layout), or None: other arrays go to
    // the typed (slow) path, which specialises the kernel for them.
    void RequireLayouts(nb::list layouts) {
        if (nb::len(layouts) != specs_.size()) {
            Throw(util::InvalidArgument("require_layouts: one entry per argument"));
        }
        for (size_t i = 0; i < specs_.size(); ++i) {
            nb::handle l = layouts[i];
            if (l.is_none()) continue;
            std::string s = nb::cast<std::string>(l);
            if (!specs_[i].is_array || (s != "C" && s != "F")) {
                Throw(util::InvalidArgument("require_layouts: argument " + std::to_string(i) +
                                            " takes no layout '" + s + "'"));
            }
            specs_[i].layout = s[0];
        }
    }

    // The grid `g` as one dispatch, or as several where it exceeds the device's
    // max_groups along some axis: each piece gets the index of its first
    // workgroup in the whole grid (grid.base) and the whole grid's counts
    // (grid.groups), which the kernel adds to WorkgroupId / reads for
    // num_groups (frontend/grid.py). Returns the timeline value of the last piece.
    // On a stream, the pieces go out as one submission of the stream (vk/stream.cc).
    util::Result<uint64_t> DispatchGrid(VkPipeline pipeline, const uint32_t g[3],
                                        uint8_t* block, vk::Buffer* const* used, size_t n_used,
                                        const bool* writes, bool hold,
                                        vk::StreamState* stream = nullptr) {
        if (stream != nullptr) {
            std::vector<std::vector<uint8_t>> blocks;
            std::vector<vk::DispatchPiece> pieces;
            NVK_RETURN_IF_ERROR(SplitGrid(g, block, [&](const uint32_t* piece) {
                blocks.emplace_back(block, block + block_bytes_);
                pieces.push_back({{piece[0], piece[1], piece[2]}, nullptr});
                return util::Result<uint64_t>(uint64_t{0});
            }).status());
            for (size_t i = 0; i < pieces.size(); ++i) pieces[i].params = blocks[i].data();
            return device_->StreamDispatch(*stream, *kernel_, pipeline, pieces.data(),
                                           pieces.size(), param_size_, in_buffer_, used, n_used);
        }
        return SplitGrid(g, block, [&](const uint32_t* piece) {
            return device_->RecordDispatch(*kernel_, pipeline, piece, block, param_size_,
                                           in_buffer_, used, n_used, writes, hold);
        });
    }

    // Calls emit(groups) for each piece of the grid `g`, with the grid parameters of
    // that piece written into `block`; returns the last emit's result.
    template <typename Emit>
    util::Result<uint64_t> SplitGrid(const uint32_t g[3], uint8_t* block, Emit&& emit) {
        const auto& max = device_->info().max_groups;
        if (grid_.has_groups) {
            for (int a = 0; a < 3; ++a) Put<uint32_t>(block, grid_.groups[a], g[a]);
        }
        if (g[0] <= max[0] && g[1] <= max[1] && g[2] <= max[2]) {
            if (grid_.has_base) {
                for (int a = 0; a < 3; ++a) Put<uint32_t>(block, grid_.base[a], 0);
            }
            return emit(g);
        }
        uint64_t value = 0;
        uint32_t piece[3];
        for (uint64_t z = 0; z < g[2]; z += max[2]) {
            piece[2] = static_cast<uint32_t>(std::min<uint64_t>(max[2], g[2] - z));
            for (uint64_t y = 0; y < g[1]; y += max[1]) {
                piece[1] = static_cast<uint32_t>(std::min<uint64_t>(max[1], g[1] - y));
                for (uint64_t x = 0; x < g[0]; x += max[0]) {
                    piece[0] = static_cast<uint32_t>(std::min<uint64_t>(max[0], g[0] - x));
                    if (grid_.has_base) {
                        Put<uint32_t>(block, grid_.base[0], static_cast<uint32_t>(x));
                        Put<uint32_t>(block, grid_.base[1], static_cast<uint32_t>(y));
                        Put<uint32_t>(block, grid_.base[2], static_cast<uint32_t>(z));
                    }
                    NVK_ASSIGN_OR_RETURN(value, emit(piece));
                }
            }
        }
        return value;
    }

    nb::bytes LastBlock() const {
        if (!keep_last_.load()) {
            Throw(util::InvalidArgument("set keep_last_block = True before launching to keep "
                                        "the parameter block of the last launch"));
        }
        std::lock_guard<std::mutex> lock(last_mutex_);
        return nb::bytes(reinterpret_cast<const char*>(last_block_.data()), param_size_);
    }

    bool keep_last() const { return keep_last_.load(); }
    void set_keep_last(bool on) { keep_last_.store(on); }

  private:
    // The hidden grid parameters (frontend/grid.py), written per dispatch.
    struct GridSpec {
        bool has_base = false, has_groups = false, reads_ids = false;
        uint32_t base[3] = {}, groups[3] = {};
        uint32_t index_bytes = 4;
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

    // One hidden parameter: a grid one by its name, any other from `values`.
    template <typename Check>
    void AddHidden(const kir::ArgDecl& a, nb::dict values, Check& check) {
        const uint32_t nbytes = kir::MemoryBytes(a.slot);
        check(a, a.offset, nbytes);
        static const char* kAxes[3] = {"x", "y", "z"};
        for (int axis = 0; axis < 3; ++axis) {
            if (nbytes != 4) break;
            if (a.name == std::string("grid.base.") + kAxes[axis]) {
                grid_.has_base = grid_.reads_ids = true;
                grid_.base[axis] = a.offset;
                grid_.index_bytes = kir::MemoryBytes(a.index);
                return;
            }
            if (a.name == std::string("grid.groups.") + kAxes[axis]) {
                grid_.has_groups = grid_.reads_ids = true;
                grid_.groups[axis] = a.offset;
                grid_.index_bytes = kir::MemoryBytes(a.index);
                return;
            }
        }
        nb::str key(a.name.c_str());
        if (!values.contains(key)) {
            Throw(util::InvalidArgument("the kernel has a hidden parameter '" + a.name +
                                        "': give its value (hidden={name: value})"));
        }
        nb::handle v = values[key];
        FixedValue fixed;
        fixed.offset = a.offset;
        fixed.nbytes = nbytes;
        PyBuffer* buffer = nullptr;
        DeviceArrayBase* array = nullptr;
        if (nb::try_cast<DeviceArrayBase*>(v, array) && array) {
            // A hidden array (global arrays, the status buffer): the address of its
            // element 0; its extents and strides are hidden parameters of their own.
            if (nbytes != 8 || array->device != device_) {
                Throw(util::InvalidArgument("hidden parameter '" + a.name +
                                            "': a device array of this device needs a u64 "
                                            "slot"));
            }
            fixed.buffer = array->buffer;
            fixed.value = array->buffer->address + array->offset;
            fixed.written = a.written;
        } else if (nb::try_cast<PyBuffer*>(v, buffer) && buffer) {
            if (nbytes != 8 || buffer->ref->device != device_) {
                Throw(util::InvalidArgument("hidden parameter '" + a.name +
                                            "': a buffer of this device needs a u64 slot"));
            }
            fixed.buffer = buffer->ref;
            fixed.value = buffer->ref->address;
        } else if (nbytes == 4 || nbytes == 8) {
            fixed.value = nb::cast<uint64_t>(v);  // raises for a negative or too large int
            if (nbytes == 4 && fixed.value > UINT32_MAX) {
                Throw(util::InvalidArgument("hidden parameter '" + a.name +
                                            "': the value does not fit its 32-bit slot"));
            }
        } else {
            Throw(util::InvalidArgument("hidden parameter '" + a.name + "': 4- or 8-byte slots"));
        }
        fixed_.push_back(std::move(fixed));
    }

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

}  // namespace

void InitRuntimeLaunch(nb::module_& m) {

    m.def("dtype_code",
          [](const std::string& kind, uint32_t itemsize, uint32_t record_key) {
              if (kind.size() != 1) throw nb::value_error("kind: one character");
              return DtypeCode(kind[0], itemsize, record_key);
          },
          nb::arg("kind"), nb::arg("itemsize"), nb::arg("record_key") = 0,
          "The element-type code a DeviceArrayBase carries and the launcher compares with an "
          "array argument's declared dtype (kind, item size, record layout digest).");
    m.attr("GROUP_BITS_32") = kGroupBits32;
    m.def("fits_int32_ids",
          [](const std::array<uint32_t, 3>& groups, const std::array<uint32_t, 3>& local) {
              return FitsInt32Ids(groups.data(), local.data());
          },
          nb::arg("groups"), nb::arg("local_size"),
          "Whether the ids of a grid fit a 32-bit-index specialisation (global ids below "
          "2^31, fewer than 2^GROUP_BITS_32 groups per axis).");
    m.def("fits_int32_indices",
          [](const std::vector<int64_t>& shape, const std::vector<int64_t>& strides,
             int64_t itemsize) {
              if (shape.size() != strides.size() || shape.size() > kMaxDims)
                  throw nb::value_error("shape and strides must have one entry per dimension");
              return FitsInt32Indices(static_cast<int>(shape.size()), shape.data(),
                                      strides.data(), itemsize);
          },
          nb::arg("shape"), nb::arg("strides"), nb::arg("itemsize"),
          "Whether 32-bit indices reach every element (strides in bytes); else the kernel "
          "needs its 64-bit-index specialisation.");

    nb::class_<Launcher>(m, "Launcher", "The fast launch path of one kernel specialisation.")
        .def(nb::init<vk::Device*, nb::object, nb::list, uint32_t, bool, nb::object>(),
             nb::arg("device"), nb::arg("kernel"), nb::arg("args"), nb::arg("param_size"),
             nb::arg("params_in_buffer"), nb::arg("hidden") = nb::none(),
             "`args`: the kernel's _core.ArgDecl list (CompiledKernel.args), hidden parameters "
             "included; `hidden`: {name: int, Buffer or DeviceArray} for each hidden parameter "
             "that is not the grid's (a Buffer's or DeviceArray's address is written, and its "
             "buffer counts as used by every launch: written always for a Buffer, where the "
             "declaration says so for a DeviceArray).")
        .def_prop_rw(
            "keep_last_block", [](Launcher& l) { return l.keep_last(); },
            [](Launcher& l, bool on) { l.set_keep_last(on); },
            "Keep a copy of each launch's parameter block for last_block() (off: free).")
        .def("launch",
             [](Launcher& l, nb::handle groups, nb::handle local, nb::handle args, bool hold,
                PyStream* stream) -> nb::object {
                 const int done = l.Launch(groups, local, args, hold, stream);
                 if (done == 2) return nb::int_(2);
                 return nb::bool_(done == 1);
             },
             nb::arg("groups"), nb::arg("local_size"),
             nb::arg("args"), nb::arg("hold") = false, nb::arg("stream").none() = nb::none(),
             "Record a launch; False if `args` do not fit this specialisation, True if "
             "launched, 2 if launched with NumPy arguments that were waited for and copied "
             "back (allow_numpy: the caller then reports as after a copy). `hold`: "
             "leave it unsubmitted for now (copies of its results follow, and their wait "
             "submits all at once). `stream`: enqueue it on that stream instead.")
        .def("require_layouts", &Launcher::RequireLayouts, nb::arg("layouts"),
             "Per argument, 'C' or 'F': the contiguity a device array must have for this "
             "launcher to take it (else the launch returns 0 for the typed path), or None.")
        .def("allow_numpy", &Launcher::AllowNumpy, nb::arg("formats"),
             "Let launch() take small NumPy arrays directly (vk/host_args.cc): `formats` "
             "has, per argument, the buffer format (memoryview(a).format) of the arrays it "
             "may take, or None. No-op under NVK_VULKAN_HOST_ARGS=off.")
        .def("last_block", &Launcher::LastBlock,
             "The parameter block of the last launch (for tests and debugging).");
}

}  // namespace nvk::bind
