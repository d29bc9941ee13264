// The C++ objects behind numba_vulkan.runtime, shared by the runtime_*.cc
// binding files.
#pragma once

#include <nanobind/nanobind.h>

#include <array>
#include <cstdint>
#include <memory>

#include "vk/device.h"
#include "vk/pipeline.h"

namespace nvk::bind {

namespace nb = nanobind;

inline constexpr int kMaxDims = 16;

// _core.Buffer: shared ownership of one pooled buffer.
struct PyBuffer {
    vk::BufferRef ref;
};

// _core.Timestamp: one recorded timestamp (an Event's mark).
struct PyTimestamp {
    vk::TimestampRef ref;
};

class GraphCapture;  // graph_capture.h

// _core.Stream: a stream of one device (vk/stream.cc); dropping the last
// reference gives it back to the device without waiting for its work.
struct StreamHandle {
    vk::Device* device = nullptr;
    vk::StreamState* state = nullptr;
    // The launch graph capturing the stream's work (graph_capture.h), if any: its
    // launches, copies and timestamps go there instead of to the device.
    std::shared_ptr<GraphCapture> capture;
    StreamHandle(vk::Device* d, vk::StreamState* s) : device(d), state(s) {}
    StreamHandle(const StreamHandle&) = delete;
    StreamHandle& operator=(const StreamHandle&) = delete;
    ~StreamHandle() { device->ReleaseStream(state); }
};
struct PyStream {
    std::shared_ptr<StreamHandle> handle;
    vk::Device& device() const { return *handle->device; }
    vk::StreamState& state() const { return *handle->state; }
    GraphCapture* capture() const { return handle->capture.get(); }
};

// _core.Kernel: a SPIR-V module loaded on one device.
struct PyKernel {
    std::unique_ptr<vk::Kernel> kernel;
};

// _core.DeviceArrayBase: what the launcher reads of a runtime.DeviceArray
// without Python attribute lookups. Strides are in bytes of the device's
// element type (bool is stored as int32, so its device itemsize is 4).
struct DeviceArrayBase {
    vk::Device* device = nullptr;
    vk::BufferRef buffer;
    uint64_t offset = 0;  // bytes from the buffer's start to element 0
    int ndim = 0;
    std::array<int64_t, kMaxDims> shape{};
    std::array<int64_t, kMaxDims> strides{};
    uint64_t code = 0;      // DtypeCode of the host dtype
    uint32_t itemsize = 0;  // bytes per element on the device

    // The device address of element 0 (what a kernel's array parameter holds).
    uint64_t address() const { return buffer->address + offset; }

    // Whether the elements lie one after the other, the last axis fastest ('C') or the
    // first ('F'): extents of 1 take any stride, an empty array is both. The launcher
    // matches layouts with it; DeviceArray.is_contiguous and is_f_contiguous ask it.
    bool HasLayout(char layout) const {
        for (int k = 0; k < ndim; ++k) {
            if (shape[k] == 0) return true;
        }
        int64_t step = static_cast<int64_t>(itemsize);
        for (int k = 0; k < ndim; ++k) {
            int d = layout == 'C' ? ndim - 1 - k : k;
            if (shape[d] != 1 && strides[d] != step) return false;
            step *= shape[d];
        }
        return true;
    }
};

// The element-type code the launcher compares: the dtype's kind character,
// item size, and for records a digest of their layout (runtime.array.record_key:
// two record dtypes of one size but different fields must not match).
inline uint64_t DtypeCode(char kind, uint32_t itemsize, uint32_t record_key = 0) {
    return (static_cast<uint64_t>(record_key) << 32) |
           (static_cast<uint64_t>(static_cast<unsigned char>(kind)) << 24) | (itemsize & 0xFFFFFFu);
}

// Whether every element of an array (extents, strides in bytes, item size)
// lies less than 2^31 elements from its first: what 32-bit indices reach
// (ARCHITECTURE.md decision 4). Both the launcher and, for NumPy arguments,
// the dispatcher ask this (as _core.fits_int32_indices).
inline bool FitsInt32Indices(int ndim, const int64_t* shape, const int64_t* strides,
                             int64_t itemsize) {
    constexpr int64_t kMax = 2147483647;
    if (itemsize <= 0) itemsize = 1;
    int64_t span = 0;  // the largest linear offset, in elements
    for (int d = 0; d < ndim; ++d) {
        if (shape[d] > kMax) return false;
        int64_t step = strides[d] / itemsize;
        if (shape[d] > 0) span += (shape[d] - 1) * (step < 0 ? -step : step);
        if (span > kMax) return false;
    }
    return true;
}

// The ids of a 32-bit-index specialisation (frontend/grid.py): every global id
// below 2^31 and fewer than 2^kGroupBits32 workgroups along each axis, so that the
// kernel may read group ids and group counts masked to kGroupBits32 bits. The
// mask tells the narrowing pass that `i * TILE` over a loop `for i in
// range(num_groups)` fits 32 bits. A grid past either bound takes the kernel's
// 64-bit specialisation. The launcher and the dispatcher both ask this (as
// _core.fits_int32_ids).
inline constexpr uint32_t kGroupBits32 = 26;
inline bool FitsInt32Ids(const uint32_t* groups, const uint32_t* local) {
    for (int a = 0; a < 3; ++a) {
        if (groups[a] >= (uint32_t{1} << kGroupBits32)) return false;
        if (uint64_t{groups[a]} * local[a] > (uint64_t{1} << 31)) return false;
    }
    return true;
}

nb::class_<vk::Device> InitRuntimeDevices(nb::module_& m);
void InitRuntimeArrays(nb::module_& m);
void InitRuntimeExternal(nb::module_& m);  // runtime_external.cc
void InitRuntimeStreams(nb::module_& m);
void InitRuntimeKernels(nb::module_& m, nb::class_<vk::Device>& device_class);  // runtime_kernel.cc
void InitRuntimeLaunch(nb::module_& m);  // runtime_launch.cc
void InitRuntimeGraphs(nb::module_& m);  // runtime_graph.cc

}  // namespace nvk::bind
