// Memory shared with other APIs as file descriptors (vk/external.cc), for
// runtime/cuda_interop.py: exportable buffers, their descriptors, and imports.
#include <nanobind/stl/string.h>

#include "bind/errors.h"
#include "bind/runtime_types.h"

namespace nvk::bind {

void InitRuntimeExternal(nb::module_& m) {
    m.def("vk_external_info",
          [](vk::Device& device) {
              nb::dict r;
              r["exports"] = device.exports_memory();
              r["reason"] = device.external_reason();
              const auto& u = device.uuid();
              r["uuid"] = nb::bytes(reinterpret_cast<const char*>(u.data()), u.size());
              return r;
          },
          nb::arg("device"),
          "{'exports': bool, 'reason': why not, 'uuid': the 16-byte deviceUUID}.");
    m.def("vk_allocate_exportable",
          [](vk::Device& device, uint64_t nbytes) {
              util::Result<vk::BufferRef> r = util::Status::Ok();
              {
                  nb::gil_scoped_release release;
                  r = device.AllocateExportable(nbytes);
              }
              return PyBuffer{Unwrap(std::move(r))};
          },
          nb::arg("device"), nb::arg("nbytes"),
          "A buffer in dedicated memory that can be exported as a file descriptor.");
    m.def("vk_external_size", [](PyBuffer& b) { return b.ref->external_size; },
          nb::arg("buffer"),
          "The size of an exportable or imported buffer's memory allocation; 0 for others.");
    m.def("vk_export_fd",
          [](PyBuffer& b) { return Unwrap(b.ref->device->ExportFd(*b.ref)); },
          nb::arg("buffer"),
          "A new OPAQUE_FD file descriptor for the buffer's memory; the caller owns it.");
    m.def("vk_import_fd",
          [](vk::Device& device, int fd, uint64_t nbytes, uint64_t memory_size) {
              util::Result<vk::BufferRef> r = device.ImportFd(fd, nbytes, memory_size);
              return PyBuffer{Unwrap(std::move(r))};
          },
          nb::arg("device"), nb::arg("fd"), nb::arg("nbytes"), nb::arg("memory_size"),
          "A buffer over memory exported as `fd`; takes the descriptor over when it "
          "succeeds (the caller still owns it after an error).");
}

}  // namespace nvk::bind
