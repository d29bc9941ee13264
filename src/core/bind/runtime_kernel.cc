// _core.Kernel: a SPIR-V module loaded on a device (Device.load_kernel), what the
// driver reports of its pipelines (statistics), and Device.dispatch, the raw
// dispatch of such a module with push constants given as bytes. Kernels compiled
// by @nv.jit are launched through _core.Launcher instead (runtime_launch.cc).
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstring>
#include <string>
#include <vector>

#include "bind/errors.h"
#include "bind/launch_args.h"
#include "bind/runtime_types.h"

namespace nvk::bind {

void InitRuntimeKernels(nb::module_& m, nb::class_<vk::Device>& device_class) {
    nb::class_<PyKernel>(m, "Kernel", "A SPIR-V compute module loaded on one device.")
        .def_prop_ro("push_size", [](PyKernel& k) { return k.kernel->push_size(); })
        .def_prop_ro("pipeline_count", [](PyKernel& k) {
            ThrowIfError(k.kernel->device().Usable());  // before the kernel's lock (fork.h)
            return k.kernel->pipeline_count();
        })
        .def(
            "statistics",
            [](PyKernel& k, nb::handle local, bool representations) {
                uint32_t l[3];
                if (!ReadTriple(local.ptr(), l)) {
                    PyErr_Clear();
                    Throw(util::InvalidArgument("local_size must be 1-3 ints"));
                }
                vk::Kernel::Report report = Unwrap(k.kernel->Statistics(l, representations));
                nb::list stats, texts;
                for (const vk::Kernel::Statistic& s : report.statistics) {
                    nb::object value = s.integral ? nb::object(nb::int_(s.value_int))
                                                  : nb::object(nb::float_(s.value_float));
                    stats.append(nb::make_tuple(s.executable, s.name, s.description, value));
                }
                for (const vk::Kernel::Representation& r : report.representations) {
                    texts.append(nb::make_tuple(r.executable, r.name, r.description,
                                                nb::bytes(r.text.data(), r.text.size())));
                }
                return nb::make_tuple(stats, texts);
            },
            nb::arg("local_size"), nb::arg("representations") = false,
            "The driver's report on the pipeline for `local_size` "
            "(VK_KHR_pipeline_executable_properties): statistics as (executable, name, "
            "description, value) tuples and, if asked, its internal representations as "
            "(executable, name, description, bytes) tuples.");

    device_class.def(
            "load_kernel",
            [](vk::Device& d, nb::ndarray<const uint32_t, nb::ndim<1>, nb::c_contig> words,
               uint32_t push_size) {
                return PyKernel{Unwrap(vk::Kernel::Create(d, words.data(), words.shape(0),
                                                          push_size))};
            },
            nb::arg("words"), nb::arg("push_size"),
            "Load SPIR-V words (uint32 array, entry point 'main') with `push_size` bytes of "
            "push constants.")
        .def(
            "dispatch",
            [](vk::Device& d, PyKernel& k, nb::handle groups, nb::handle local, nb::bytes push,
               nb::list buffers, PyStream* stream) {
                if (stream != nullptr && &stream->device() != &d) {
                    Throw(util::InvalidArgument("the stream belongs to another device"));
                }
                uint32_t g[3], l[3];
                if (!ReadTriple(groups.ptr(), g) || !ReadTriple(local.ptr(), l)) {
                    PyErr_Clear();
                    Throw(util::InvalidArgument("groups and local_size must be 1-3 ints"));
                }
                const auto& max = d.info().max_groups;
                if (g[0] > max[0] || g[1] > max[1] || g[2] > max[2]) {
                    // A raw module has no grid parameters, so its grid cannot be split.
                    Throw(util::Unsupported(
                        "groups (" + std::to_string(g[0]) + ", " + std::to_string(g[1]) + ", " +
                        std::to_string(g[2]) + ") exceed the device's max_groups (" +
                        std::to_string(max[0]) + ", " + std::to_string(max[1]) + ", " +
                        std::to_string(max[2]) + "); kernels compiled by @nv.jit split such "
                        "grids, raw SPIR-V modules cannot"));
                }
                VkPipeline pipeline = Unwrap(k.kernel->Pipeline(l));
                uint32_t n = static_cast<uint32_t>(push.size());
                std::vector<uint8_t> block((n + 3u) & ~3u, 0);
                std::memcpy(block.data(), push.c_str(), n);
                std::vector<vk::BufferRef> refs;  // alive until recorded, whatever Python does
                std::vector<vk::Buffer*> used;
                for (nb::handle h : buffers) {
                    refs.push_back(nb::cast<PyBuffer&>(h).ref);
                    used.push_back(refs.back().get());
                }
                util::Result<uint64_t> value = util::Status::Ok();
                if (stream != nullptr) {
                    nb::gil_scoped_release release;
                    // Its accesses are unknown (see below): a barrier on both sides
                    // within the stream's open op.
                    vk::DispatchPiece piece{{g[0], g[1], g[2]}, block.data()};
                    value = d.StreamDispatch(stream->state(), *k.kernel, pipeline, &piece, 1,
                                             static_cast<uint32_t>(block.size()), false,
                                             used.data(), used.size(), nullptr,
                                             /*opaque=*/true);
                } else {
                    nb::gil_scoped_release release;
                    // A raw module may reach memory through addresses in `push` that
                    // `buffers` does not list: barriers on both sides, as before
                    // hazard tracking (the listed buffers count as written).
                    d.ForceBarrier();
                    value = d.RecordDispatch(*k.kernel, pipeline, g, block.data(),
                                             static_cast<uint32_t>(block.size()), false,
                                             used.data(), used.size());
                    d.ForceBarrier();
                }
                ThrowIfError(value.status());
            },
            nb::arg("kernel"), nb::arg("groups"), nb::arg("local_size"), nb::arg("push"),
            nb::arg("buffers"), nb::arg("stream").none() = nb::none(),
            "Record one dispatch with raw push constants; `buffers` are marked as used by it. "
            "`stream`: enqueue it on that stream instead.");
}

}  // namespace nvk::bind
