// _core.Graph and _core.GraphExec: launch graphs (vk/graph.h) as numba_vulkan.graphs
// sees them. A Graph captures a stream between begin() and end() (the launcher,
// the stream's copies and its timestamps add to it, graph_capture.h); instantiate()
// makes a GraphExec, which replays on a stream and takes other arrays and scalars
// in place of its parameters (rebind): the new values are checked with the GIL
// held, then written into the parameter blocks under the graph's mutex without it,
// so that a replay waiting in another thread never holds up the interpreter.
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "bind/errors.h"
#include "bind/graph_capture.h"
#include "bind/runtime_types.h"

namespace nvk::bind {

namespace {

// numba_vulkan.errors.VulkanGraphError with `message`.
[[noreturn]] void ThrowGraphError(const std::string& message) {
    nb::object cls = nb::module_::import_("numba_vulkan.errors").attr("VulkanGraphError");
    PyErr_SetObject(cls.ptr(), nb::str(message.c_str()).ptr());
    throw nb::python_error();
}

struct PyGraph {
    std::shared_ptr<GraphCapture> capture;
};

struct PyGraphExec {
    std::unique_ptr<vk::Graph> graph;
    std::vector<GraphParam> params;
    std::vector<nb::object> bound;  // per parameter: the object bound now
    std::unordered_map<PyObject*, uint32_t> by_key;
    std::vector<nb::object> keep;   // kernels and captured objects
};

PyGraphExec Instantiate(GraphCapture& capture) {
    if (capture.open()) {
        ThrowGraphError("the graph is still capturing its stream: end the capture first");
    }
    PyGraphExec exec;
    exec.graph = Unwrap(capture.graph().Instantiate());
    exec.params = capture.params();
    for (uint32_t p = 0; p < exec.params.size(); ++p) {
        GraphParam& param = exec.params[p];
        if (param.is_array) param.copied = capture.Copied(exec.graph->buffer(param.entry).get());
        exec.bound.push_back(param.key);
        exec.by_key.emplace(param.key.ptr(), p);
    }
    exec.keep = capture.kept();
    return exec;
}

// Binds `value` in place of parameter `key` (see the top of the file).
void Rebind(PyGraphExec& exec, nb::handle key, nb::handle value) {
    auto found = exec.by_key.find(key.ptr());
    if (found == exec.by_key.end()) {
        ThrowGraphError("the object is no parameter of the graph: parameters are the device "
                        "arrays its launches took and the scalars declared before them, named "
                        "by the objects bound at capture");
    }
    const uint32_t p = found->second;
    const GraphParam& param = exec.params[p];
    std::vector<std::pair<uint32_t, std::vector<uint8_t>>> writes;  // (block offset, bytes)
    vk::BufferRef buffer;
    if (param.is_array) {
        DeviceArrayBase* a = nullptr;
        if (!nb::try_cast<DeviceArrayBase*>(value, a) || !a) {
            ThrowGraphError("an array parameter of a graph takes a device array, not " +
                            std::string(nb::type_name(value.type()).c_str()));
        }
        if (param.copied) {
            ThrowGraphError("a copy captured in the graph uses this array's memory, and "
                            "captured copies keep their memory: copy new values into the "
                            "array instead of binding another one");
        }
        bool same = a->device == &exec.graph->device() && a->code == param.code &&
                    a->ndim == param.ndim;
        for (int d = 0; same && d < a->ndim; ++d) {
            same = a->shape[d] == param.shape[d] && a->strides[d] == param.strides[d];
        }
        if (!same) {
            ThrowGraphError("a graph replays the shapes, dtypes, layouts and device it captured: "
                            "the array differs from the one captured (capture another graph "
                            "for it)");
        }
        buffer = a->buffer;
        const uint64_t address = a->address();
        for (const auto& [block, spec] : param.patches) {
            std::vector<uint8_t> bytes(8);
            std::memcpy(bytes.data(), &address, 8);
            writes.emplace_back(block + spec.addr_offset, std::move(bytes));
        }
    } else {
        for (const auto& [block, spec] : param.patches) {
            std::vector<uint8_t> scratch(spec.offset + 8, 0);
            if (!WriteScalar(spec, value.ptr(), scratch.data())) {
                if (value.type().is(param.key.type()) && spec.nbytes == 4) {
                    ThrowGraphError(
                        std::string(nb::str(value).c_str()) +
                        " does not fit the captured kernel's 32-bit parameter: a capture "
                        "whose int64 scalars fit int32 takes the kernel that passes them in "
                        "32 bits (as narrow='ints' does); capture with a value beyond int32 "
                        "for the 64-bit one");
                }
                ThrowGraphError("a scalar parameter of a graph takes a value of the type it "
                                "captured (" +
                                std::string(nb::type_name(param.key.type()).c_str()) +
                                ") that fits the kernel's parameter, not " +
                                std::string(nb::type_name(value.type()).c_str()));
            }
            writes.emplace_back(block + spec.offset,
                                std::vector<uint8_t>(scratch.begin() + spec.offset,
                                                     scratch.begin() + spec.offset + spec.nbytes));
        }
    }
    {
        nb::gil_scoped_release release;
        auto lock = exec.graph->Lock();
        for (const auto& [at, bytes] : writes) {
            std::memcpy(exec.graph->block(at), bytes.data(), bytes.size());
        }
        if (buffer) exec.graph->SetBuffer(param.entry, std::move(buffer));
        exec.graph->Changed();
    }
    exec.bound[p] = nb::borrow(value);
}

}  // namespace

// ---- GraphCapture (graph_capture.h) --------------------------------------------------

void GraphCapture::Declare(nb::handle value) {
    if (by_object_.count(value.ptr())) return;
    GraphParam param;
    param.key = nb::borrow(value);
    params_.push_back(std::move(param));
    by_object_.emplace(value.ptr(), static_cast<uint32_t>(params_.size() - 1));
}

uint32_t GraphCapture::ArrayParam(nb::handle obj, const DeviceArrayBase& a) {
    auto found = by_object_.find(obj.ptr());
    if (found != by_object_.end() && params_[found->second].is_array) return found->second;
    GraphParam param;
    param.key = nb::borrow(obj);
    param.is_array = true;
    param.entry = graph_->AddBuffer(a.buffer);
    param.code = a.code;
    param.ndim = a.ndim;
    param.shape = a.shape;
    param.strides = a.strides;
    params_.push_back(std::move(param));
    const uint32_t p = static_cast<uint32_t>(params_.size() - 1);
    by_object_[obj.ptr()] = p;
    return p;
}

int GraphCapture::ScalarParam(nb::handle obj) const {
    auto found = by_object_.find(obj.ptr());
    if (found == by_object_.end() || params_[found->second].is_array) return -1;
    return static_cast<int>(found->second);
}

uint32_t GraphCapture::FixedEntry(const vk::BufferRef& buffer) {
    auto [it, fresh] = fixed_.emplace(buffer.get(), 0);
    if (fresh) it->second = graph_->AddBuffer(buffer);
    return it->second;
}

void GraphCapture::AddCopy(const vk::BufferRef& src, const vk::BufferRef& dst,
                           const std::vector<VkBufferCopy>& regions) {
    const uint32_t s = FixedEntry(src), d = FixedEntry(dst);
    copied_.insert(src.get());
    copied_.insert(dst.get());
    graph_->AddCopy(s, d, regions.data(), regions.size());
}

void GraphCapture::Keep(nb::handle obj) {
    if (kept_ids_.insert(obj.ptr()).second) keep_.push_back(nb::borrow(obj));
}

// ---- bindings -------------------------------------------------------------------------

void InitRuntimeGraphs(nb::module_& m) {
    m.attr("GRAPH_INSTANCES") = vk::kGraphInstances;
    nb::class_<PyGraph>(m, "Graph", "The device side of graphs.Graph: a capture (vk/graph.h).")
        .def("__init__",
             [](PyGraph* self, vk::Device* device) {
                 new (self) PyGraph{std::make_shared<GraphCapture>(*device)};
             },
             nb::arg("device"))
        .def("begin",
             [](PyGraph& g, PyStream& s) {
                 if (&s.device() != &g.capture->device()) {
                     ThrowGraphError("the stream belongs to another device than the graph");
                 }
                 if (!g.capture->open()) {
                     ThrowGraphError("a graph captures once: make a new graph to capture again");
                 }
                 if (s.capture() != nullptr) {
                     ThrowGraphError("the stream is capturing a graph already");
                 }
                 s.handle->capture = g.capture;
             },
             nb::arg("stream"), "Capture the stream's launches, copies and timestamps.")
        .def("end",
             [](PyGraph& g, PyStream& s) {
                 if (s.capture() != g.capture.get()) {
                     ThrowGraphError("the stream is not capturing this graph");
                 }
                 s.handle->capture.reset();
                 g.capture->Close();
             },
             nb::arg("stream"), "End the capture of `stream`.")
        .def("declare", [](PyGraph& g, nb::handle value) { g.capture->Declare(value); },
             nb::arg("value"),
             "Make the scalar object `value` a parameter where launches take it.")
        .def_prop_ro("capturing", [](PyGraph& g) { return g.capture->open(); })
        .def_prop_ro("commands", [](PyGraph& g) { return g.capture->graph().command_count(); })
        .def("instantiate", [](PyGraph& g) { return Instantiate(*g.capture); },
             "An executable copy of the captured commands (GraphExec).");

    nb::class_<PyGraphExec>(m, "GraphExec", "The device side of graphs.GraphExec.")
        .def("replay",
             [](PyGraphExec& e, PyStream& s) {
                 if (&s.device() != &e.graph->device()) {
                     ThrowGraphError("the stream belongs to another device than the graph");
                 }
                 if (s.capture() != nullptr) {
                     ThrowGraphError("a graph cannot be replayed into a capture: capture its "
                                     "launches instead");
                 }
                 util::Result<uint64_t> value = util::Status::Ok();
                 {
                     nb::gil_scoped_release release;
                     value = e.graph->Replay(s.state());
                 }
                 return Unwrap(std::move(value));
             },
             nb::arg("stream"),
             "Submit the graph on `stream`; returns the stream's value it completes at.")
        .def("rebind", &Rebind, nb::arg("key"), nb::arg("value"),
             "Bind `value` in place of the parameter named by `key` (the object captured).")
        .def("bound",
             [](PyGraphExec& e, nb::handle key) -> nb::object {
                 auto found = e.by_key.find(key.ptr());
                 if (found == e.by_key.end()) return nb::none();
                 return e.bound[found->second];
             },
             nb::arg("key"), "The object bound now in place of `key` (None: no parameter).")
        .def_prop_ro("keys",
                     [](PyGraphExec& e) {
                         nb::list out;
                         for (const GraphParam& p : e.params) {
                             if (!p.patches.empty()) out.append(p.key);
                         }
                         return out;
                     },
                     "The parameters' objects, in the order the capture met them (declared "
                     "scalars that no launch took are none).")
        .def_prop_ro("commands", [](PyGraphExec& e) { return e.graph->command_count(); })
        .def_prop_ro("barriers", [](PyGraphExec& e) { return e.graph->barrier_count(); },
                     "Barriers the capture decided between its commands.")
        .def_prop_ro("records", [](PyGraphExec& e) { return e.graph->records(); },
                     "Times a command buffer was recorded (after a binding changed).");
}

}  // namespace nvk::bind
