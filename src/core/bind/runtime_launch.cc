// _core.Launcher (launcher.h: the fast launch path of one kernel specialisation) and
// what the dispatcher asks of the launcher's rules before it makes one: dtype codes
// and whether a grid's ids or an array's elements fit a 32-bit-index
// specialisation (runtime_types.h). The loaded modules it launches, _core.Kernel,
// are in runtime_kernel.cc.
#include <nanobind/stl/array.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "bind/launcher.h"
#include "bind/runtime_types.h"

namespace nvk::bind {

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
