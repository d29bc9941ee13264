// A launch graph while it captures a stream (_core.Graph, runtime_graph.cc): what the
// launcher (launch_capture.cc) and the stream's copies and timestamps (runtime.cc)
// add to it instead of submitting, and which Python objects each command took, so
// that an instantiated graph can be given other arrays and scalars (bindings).
//
// Bindings: every device array a captured launch takes is a parameter, named by
// the array object itself (the same object in several launches: one parameter);
// scalars are parameters only where declared before the launches took them
// (Graph.declare). A parameter's patches are the places in the parameter blocks
// its value was written to (its ArgSpec's offsets), so rebinding rewrites those
// bytes in C++ without the launches' Python work. Runs with the GIL held.
#pragma once

#include <nanobind/nanobind.h>

#include <array>
#include <memory>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "bind/launch_args.h"
#include "bind/runtime_types.h"
#include "vk/graph.h"

namespace nvk::bind {

struct GraphParam {
    nb::object key;    // the object a captured launch took (names the parameter)
    bool is_array = false;
    uint32_t entry = 0;  // arrays: the buffer table entry (vk/graph.h)
    bool copied = false;  // arrays: a captured copy uses its memory too (not rebindable)
    // arrays: what another array must match to be bound in its place
    uint64_t code = 0;
    int ndim = 0;
    std::array<int64_t, kMaxDims> shape{}, strides{};
    std::vector<std::pair<uint32_t, ArgSpec>> patches;  // (block offset, the argument's spec)
};

class GraphCapture {
  public:
    explicit GraphCapture(vk::Device& device)
        : device_(&device), graph_(std::make_unique<vk::Graph>(device)) {}

    vk::Device& device() const { return *device_; }
    vk::Graph& graph() { return *graph_; }
    bool open() const { return open_; }
    void Close() { open_ = false; }

    // A scalar object the launches will take as a parameter.
    void Declare(nb::handle value);
    // The parameter of the device array `obj` (`a`), made on first use.
    uint32_t ArrayParam(nb::handle obj, const DeviceArrayBase& a);
    // The parameter of a declared scalar, or -1 (a constant).
    int ScalarParam(nb::handle obj) const;
    // The buffer table entry of a buffer that is no parameter (copies, hidden arguments).
    uint32_t FixedEntry(const vk::BufferRef& buffer);
    void AddPatch(uint32_t param, uint32_t block, const ArgSpec& spec) {
        params_[param].patches.emplace_back(block, spec);
    }
    // A captured copy between two buffers (never rebound).
    void AddCopy(const vk::BufferRef& src, const vk::BufferRef& dst,
                 const std::vector<VkBufferCopy>& regions);
    // Keeps `obj` alive as long as the graph and its executables (kernels).
    void Keep(nb::handle obj);

    const std::vector<GraphParam>& params() const { return params_; }
    const std::vector<nb::object>& kept() const { return keep_; }
    bool Copied(vk::Buffer* buffer) const { return copied_.count(buffer) != 0; }

  private:
    vk::Device* device_;
    std::unique_ptr<vk::Graph> graph_;
    bool open_ = true;
    std::vector<GraphParam> params_;
    std::unordered_map<PyObject*, uint32_t> by_object_;  // parameters by their object
    std::unordered_map<vk::Buffer*, uint32_t> fixed_;
    std::unordered_set<vk::Buffer*> copied_;
    std::vector<nb::object> keep_;
    std::unordered_set<PyObject*> kept_ids_;
};

}  // namespace nvk::bind
