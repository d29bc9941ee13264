// One launch (launcher.h): the arguments checked against their specs and written
// into a parameter block on this call's stack, then the grid recorded into the
// device's open batch, enqueued on a stream, or captured by a graph
// (launch_capture.cc), cut into pieces where it exceeds the device's max_groups.
#include <algorithm>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "bind/errors.h"
#include "bind/gil.h"
#include "bind/launcher.h"
#include "bind/numpy_args.h"

namespace nvk::bind {

namespace {

bool FitsInt32Indices(const DeviceArrayBase& a) {
    return bind::FitsInt32Indices(a.ndim, a.shape.data(), a.strides.data(), a.itemsize);
}

}  // namespace

int Launcher::Launch(nb::handle groups, nb::handle local, nb::handle args, bool hold,
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
    // This call's own block and used-buffer list (threads: launcher.h):
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
            if (spec.layout && !a->HasLayout(spec.layout)) return 0;
            // 32-bit indices reach at most 2^31 - 1 elements from element 0: a
            // larger array needs the kernel's 64-bit-index specialisation.
            if (spec.index_bytes == 4 && !FitsInt32Indices(*a)) return 0;
            Put<uint64_t>(block, spec.addr_offset, a->address());
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
    } else if (stream != nullptr) {
        GilReleasedWhileWaiting gil;  // released only if it waits for a slot
        value = EnqueueGrid(stream->state(), *pipeline, g, block, used, n_used, writes);
    } else {
        GilReleasedWhileWaiting gil;  // released only if it waits for a slot
        value = RecordGrid(*pipeline, g, block, used, n_used, writes, hold,
                           /*host_reads=*/false);
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
util::Result<uint64_t> Launcher::LaunchWithNumpy(NumpyArgs& numpy, VkPipeline pipeline,
                                                 const uint32_t g[3], uint8_t* block,
                                                 vk::Buffer** used, size_t n_used,
                                                 bool* writes) {
    NVK_RETURN_IF_ERROR(numpy.Upload(*device_, block, used + n_used, writes + n_used));
    n_used += numpy.size();
    const bool host_reads = numpy.any_written();
    // The host reads the kernel's writes in place, or copies of them (Readback). A
    // dispatch the host reads is held: the copies and the wait below submit it.
    const bool in_place = host_reads && !device_->host_args_readback();
    NVK_ASSIGN_OR_RETURN(uint64_t value, RecordGrid(pipeline, g, block, used, n_used, writes,
                                                    /*hold=*/host_reads, in_place));
    if (host_reads) {  // arrays only read: asynchronous, as on the Python path
        NVK_ASSIGN_OR_RETURN(uint64_t copied, numpy.Readback(*device_));
        NVK_RETURN_IF_ERROR(device_->WaitValue(std::max(value, copied)));
        numpy.Download();
    }
    return value;
}

// A kernel with the group loop gets at most kGroupLoopGroups workgroups along x, each
// looping over the grid's (grid.stride). On an H100, 1,056, 4,096 and 8,448 gave kernels
// that only store the same gain, and the kernels it slows less the more there were
// (docs/corpus.md, "Small workgroups on NVIDIA's Vulkan driver").
constexpr uint32_t kGroupLoopGroups = 4096;

// The grid `g` into the device's open batch (Device::RecordDispatch, whose `hold` and
// `host_reads` these are); returns the timeline value of its last piece.
util::Result<uint64_t> Launcher::RecordGrid(VkPipeline pipeline, const uint32_t g[3],
                                            uint8_t* block, vk::Buffer* const* used,
                                            size_t n_used, const bool* writes, bool hold,
                                            bool host_reads) {
    return SplitGrid(g, block, [&](const uint32_t* piece) {
        return device_->RecordDispatch(*kernel_, pipeline, piece, block, param_size_,
                                       in_buffer_, used, n_used, writes, hold, host_reads);
    });
}

// The grid `g` on `stream`: its pieces go into the stream's open op together
// (vk/stream_launch.cc). Returns the stream's value it completes at.
util::Result<uint64_t> Launcher::EnqueueGrid(vk::StreamState& stream, VkPipeline pipeline,
                                             const uint32_t g[3], uint8_t* block,
                                             vk::Buffer* const* used, size_t n_used,
                                             const bool* writes) {
    const auto& max = device_->info().max_groups;
    const uint32_t x = grid_.has_stride ? std::min(g[0], kGroupLoopGroups) : g[0];  // dispatched
    if (x <= max[0] && g[1] <= max[1] && g[2] <= max[2]) {
        // One piece: StreamDispatch takes its block before it returns, no copy needed.
        return SplitGrid(g, block, [&](const uint32_t* piece) {
            vk::DispatchPiece one{{piece[0], piece[1], piece[2]}, block};
            return device_->StreamDispatch(stream, *kernel_, pipeline, &one, 1, param_size_,
                                           in_buffer_, used, n_used, writes);
        });
    }
    NVK_ASSIGN_OR_RETURN(GridPieces pieces, CopyPieces(g, block));
    return device_->StreamDispatch(stream, *kernel_, pipeline, pieces.dispatches.data(),
                                   pieces.dispatches.size(), param_size_, in_buffer_, used,
                                   n_used, writes);
}

// The pieces of the grid `g` (SplitGrid), each with its own copy of `block`: for
// dispatches recorded after the launch returns (a stream's submission, a graph).
util::Result<Launcher::GridPieces> Launcher::CopyPieces(const uint32_t g[3], uint8_t* block) {
    GridPieces pieces;
    NVK_RETURN_IF_ERROR(SplitGrid(g, block, [&](const uint32_t* piece) {
        pieces.blocks.emplace_back(block, block + block_bytes_);
        pieces.dispatches.push_back({{piece[0], piece[1], piece[2]}, nullptr});
        return util::Result<uint64_t>(uint64_t{0});
    }).status());
    for (size_t i = 0; i < pieces.dispatches.size(); ++i) {
        pieces.dispatches[i].params = pieces.blocks[i].data();
    }
    return pieces;
}

// Calls emit(groups) for each piece of the grid `user` (the launch's; fewer
// workgroups along x for a group loop), with the grid parameters of that piece written
// into `block`; returns the last emit's result. The grid is one
// piece, or several where it exceeds the device's max_groups along some axis: each
// piece gets the index of its first workgroup in the whole grid (grid.base) and the
// whole grid's counts (grid.groups), which the kernel adds to WorkgroupId / reads
// for num_groups (frontend/grid.py).
template <typename Emit>
util::Result<uint64_t> Launcher::SplitGrid(const uint32_t user[3], uint8_t* block,
                                           Emit&& emit) {
    const auto& max = device_->info().max_groups;
    if (grid_.has_groups) {
        for (int a = 0; a < 3; ++a) Put<uint32_t>(block, grid_.groups[a], user[a]);
    }
    uint32_t g[3] = {user[0], user[1], user[2]};  // the grid dispatched
    if (grid_.has_stride) {
        g[0] = std::min(g[0], kGroupLoopGroups);
        Put<uint32_t>(block, grid_.stride, g[0]);
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

}  // namespace nvk::bind
