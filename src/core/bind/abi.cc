// _core.ArgDecl and the argument contract's rules (kir/abi.h), for Python.
//
// ArgDecl objects are read-only: the front end declares arguments through
// KirModule.add_scalar_arg / add_array_arg / add_hidden_param, compile copies
// them into CompiledKernel.args, and the launcher and numba_vulkan's argument
// checks read them. They pickle (the disk cache keeps them).
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include "kir/abi.h"
#include "kir/float_zeros.h"
#include "kir/int_ranges.h"

namespace nb = nanobind;

namespace nvk::bind {

namespace {

using kir::ArgDecl;
using kir::ArgKind;
using kir::ScalarKind;

const char* ArgKindName(ArgKind k) {
    switch (k) {
        case ArgKind::kScalar: return "scalar";
        case ArgKind::kArray: return "array";
        case ArgKind::kHidden: return "hidden";
    }
    return "?";
}

// The integers a slot of kind k holds, as Python ints (None for floats and bool).
nb::object SlotRange(ScalarKind k) {
    if (!kir::IsInteger(k)) return nb::none();
    const int bits = kir::BitWidth(k);
    nb::object one = nb::int_(1);
    nb::object top = one.attr("__lshift__")(nb::int_(kir::IsSigned(k) ? bits - 1 : bits));
    if (kir::IsSigned(k)) return nb::make_tuple(-top, top - one);
    return nb::make_tuple(nb::int_(0), top - one);
}

}  // namespace

void InitAbi(nb::module_& m) {
    nb::class_<ArgDecl>(m, "ArgDecl",
                        "One kernel argument or hidden parameter and its place in the parameter "
                        "block (kir/abi.h). Read-only.")
        .def_prop_ro("kind", [](const ArgDecl& a) { return ArgKindName(a.kind); },
                     "'scalar', 'array' or 'hidden'.")
        .def_ro("name", &ArgDecl::name)
        .def_ro("type", &ArgDecl::type,
                "scalar: the argument's own kind (numba.typeof's); array: the element's compute "
                "kind; hidden: its kind.")
        .def_ro("compute", &ArgDecl::compute, "The kind the kernel computes the value in.")
        .def_ro("slot", &ArgDecl::slot,
                "scalar, hidden: the kind of its slot; array: the element's kind in memory.")
        .def_ro("offset", &ArgDecl::offset,
                "Byte offset of the slot (scalar, hidden) or of the address (array).")
        .def_prop_ro("slot_bytes", [](const ArgDecl& a) { return kir::MemoryBytes(a.slot); })
        .def_prop_ro("slot_range", [](const ArgDecl& a) { return SlotRange(a.slot); },
                     "(lowest, highest) integer the slot holds, or None.")
        .def_prop_ro("dtype",
                     [](const ArgDecl& a) {
                         return a.kind == ArgKind::kArray
                                    ? nb::make_tuple(std::string(1, a.dtype_kind), a.itemsize)
                                    : nb::make_tuple(std::string(kir::DtypeName(a.type)),
                                                     kir::MemoryBytes(a.type));
                     },
                     "Arrays: the host dtype's (NumPy kind character, item size); scalars: the "
                     "NumPy dtype name of their type and its size in memory.")
        .def_ro("record_key", &ArgDecl::record_key,
                "Arrays of records: a digest of the record's layout (0 otherwise).")
        .def_ro("ndim", &ArgDecl::ndim)
        .def_ro("index", &ArgDecl::index, "Kind of an array's extents and strides.")
        .def_ro("extents", &ArgDecl::extents, "Offsets of an array's extents.")
        .def_ro("strides", &ArgDecl::strides, "Offsets of an array's strides (in elements).")
        .def_ro("written", &ArgDecl::written, "Whether the kernel may write the array.")
        .def("__getstate__",
             [](const ArgDecl& a) {
                 return nb::make_tuple(static_cast<int>(a.kind), a.name, a.type, a.compute,
                                       a.slot, a.offset, a.param, std::string(1, a.dtype_kind),
                                       a.itemsize, a.ndim, a.index, a.extents, a.strides,
                                       a.written, a.record_key);
             })
        .def("__setstate__",
             [](ArgDecl& a, const nb::tuple& t) {
                 new (&a) ArgDecl();
                 a.kind = static_cast<ArgKind>(nb::cast<int>(t[0]));
                 a.name = nb::cast<std::string>(t[1]);
                 a.type = nb::cast<ScalarKind>(t[2]);
                 a.compute = nb::cast<ScalarKind>(t[3]);
                 a.slot = nb::cast<ScalarKind>(t[4]);
                 a.offset = nb::cast<uint32_t>(t[5]);
                 a.param = nb::cast<uint32_t>(t[6]);
                 a.dtype_kind = nb::cast<std::string>(t[7])[0];
                 a.itemsize = nb::cast<uint32_t>(t[8]);
                 a.ndim = nb::cast<uint32_t>(t[9]);
                 a.index = nb::cast<ScalarKind>(t[10]);
                 a.extents = nb::cast<std::vector<uint32_t>>(t[11]);
                 a.strides = nb::cast<std::vector<uint32_t>>(t[12]);
                 a.written = nb::cast<bool>(t[13]);
                 a.record_key = nb::cast<uint32_t>(t[14]);
             })
        .def("__repr__", [](const ArgDecl& a) {
            std::string s = std::string("<ArgDecl ") + ArgKindName(a.kind) + " " + a.name + ": ";
            if (a.kind == ArgKind::kArray) {
                s += std::string(1, a.dtype_kind) + std::to_string(a.itemsize) + " " +
                     std::to_string(a.ndim) + "-d, stored " + kir::ScalarName(a.slot) +
                     ", address at " + std::to_string(a.offset) + ", index " +
                     kir::ScalarName(a.index);
            } else {
                s += std::string(kir::ScalarName(a.type)) + " in a " + kir::ScalarName(a.slot) +
                     " slot at " + std::to_string(a.offset);
            }
            return s + ">";
        });

    m.attr("FLOAT_ZERO_PARAM") = kir::kFloatZeroParam;
    m.attr("INT_ZERO_PARAM") = kir::kIntZeroParam;
    m.def("memory_bytes", &kir::MemoryBytes, nb::arg("kind"),
          "Bytes a value of this kind takes in memory (bool: 4).");
    m.def("storage_kind", &kir::StorageKind, nb::arg("kind"), nb::kw_only(), nb::arg("int64"),
          nb::arg("float64"),
          "The kind an array element is stored as on a device with (or without) 64-bit "
          "integers and floats.");
    m.def("slot_kind", &kir::SlotKind, nb::arg("kind"),
          "The kind of a scalar argument's slot, for an argument computed in `kind`.");
    m.def("kind_of_dtype",
          [](const std::string& kind, uint32_t itemsize) -> std::optional<ScalarKind> {
              if (kind.size() != 1) return std::nullopt;
              return kir::KindOfDtype(kind[0], itemsize);
          },
          nb::arg("kind"), nb::arg("itemsize"),
          "The kind of a NumPy dtype (its kind character and item size), or None.");
    m.def("kind_range", &SlotRange, nb::arg("kind"),
          "(lowest, highest) integer a kind holds, or None for bool and floats.");
    m.def("dtype_name", &kir::DtypeName, nb::arg("kind"),
          "The NumPy dtype name of a kind ('bool', 'int8', ..., 'float64').");
}

}  // namespace nvk::bind
