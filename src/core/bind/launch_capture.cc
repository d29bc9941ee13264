// A launch on a stream that a graph captures (graph_capture.h): Launch()
// (launch.cc) checks the arguments and writes the block as for any launch, then
// hands it here instead of to the device. The grid's pieces become the graph's
// dispatches; the buffers they use become entries of its buffer table (hidden
// buffers fixed, device arrays as parameters); and where each device array and
// declared scalar went in their blocks is kept, so that a GraphExec can bind other
// values in their place (runtime_graph.cc).
#include <utility>
#include <vector>

#include "bind/errors.h"
#include "bind/graph_capture.h"
#include "bind/launcher.h"

namespace nvk::bind {

void Launcher::Capture(GraphCapture& capture, VkPipeline pipeline, const uint32_t g[3],
                       uint8_t* block, PyObject* tuple) {
    std::vector<std::pair<uint32_t, bool>> used;              // (buffer table entry, written)
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
    const GridPieces pieces = Unwrap(CopyPieces(g, block));
    for (const vk::DispatchPiece& piece : pieces.dispatches) {
        const uint32_t at = capture.graph().AddDispatch(*kernel_, pipeline, piece.groups,
                                                        piece.params, param_size_, in_buffer_,
                                                        used);
        for (const auto& [p, spec] : bound) capture.AddPatch(p, at, *spec);
    }
    capture.Keep(kernel_obj_);
}

}  // namespace nvk::bind
