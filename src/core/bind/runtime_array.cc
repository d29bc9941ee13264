// _core.Buffer and _core.DeviceArrayBase: device memory as Python sees it.
#include <nanobind/ndarray.h>

#include "bind/errors.h"
#include "bind/gil.h"
#include "bind/runtime_types.h"

namespace nvk::bind {

namespace {

using HostBytes = nb::ndarray<nb::c_contig, nb::device::cpu>;
using ConstHostBytes = nb::ndarray<nb::ro, nb::c_contig, nb::device::cpu>;

util::Status Transfer(vk::Device& device, vk::Buffer& buffer, uint64_t offset, void* host,
                      uint64_t nbytes, bool to_device) {
    nb::gil_scoped_release release;  // a copy may wait for launches
    return to_device ? device.Write(buffer, offset, host, nbytes)
                     : device.Read(buffer, offset, host, nbytes);
}

}  // namespace

void InitRuntimeArrays(nb::module_& m) {
    nb::class_<PyBuffer>(m, "Buffer", "Device memory of one or more arrays (pooled).")
        .def_prop_ro("size", [](PyBuffer& b) { return b.ref->size; })
        .def_prop_ro("address", [](PyBuffer& b) { return b.ref->address; })
        .def_prop_ro("last_use", [](PyBuffer& b) { return b.ref->last_use.load(); })
        .def("write",
             [](PyBuffer& b, uint64_t offset, ConstHostBytes host) {
                 ThrowIfError(Transfer(*b.ref->device, *b.ref, offset,
                                       const_cast<void*>(host.data()), host.nbytes(), true));
             },
             nb::arg("offset"), nb::arg("host"),
             "Copy a C-contiguous host array's bytes to `offset`.")
        .def("read",
             [](PyBuffer& b, uint64_t offset, HostBytes host) {
                 ThrowIfError(Transfer(*b.ref->device, *b.ref, offset, host.data(), host.nbytes(),
                                       false));
             },
             nb::arg("offset"), nb::arg("out"),
             "Fill a C-contiguous host array with the bytes at `offset`.")
        .def_prop_ro("pinned", [](PyBuffer& b) { return b.ref->mapped != nullptr; })
        .def_prop_ro("idle",
                     [](PyBuffer& b) {
                         ThrowIfError(b.ref->device->Usable());
                         return b.ref->device->BufferIdle(*b.ref);
                     },
                     "Whether no launch, copy or stream uses the buffer now (never waits).")
        .def("host_view",
             [](nb::handle self) {
                 PyBuffer& b = nb::cast<PyBuffer&>(self);
                 if (!b.ref->mapped) {
                     Throw(util::InvalidArgument("the buffer is not mapped into the process"));
                 }
                 size_t shape[1] = {static_cast<size_t>(b.ref->size)};
                 // The array keeps this Buffer object (and so the memory) alive.
                 return nb::ndarray<nb::numpy, uint8_t, nb::ndim<1>>(b.ref->mapped, 1, shape,
                                                                     self);
             },
             "The mapped memory as a NumPy uint8 array that keeps the buffer alive. It "
             "does not wait: call wait() first where the device may still use the buffer "
             "(a new array's buffer too: it may come from the pool busy).")
        .def("wait",
             [](PyBuffer& b) {
                 util::Status s;
                 {
                     nb::gil_scoped_release release;
                     s = b.ref->device->WaitBuffer(*b.ref);
                 }
                 ThrowIfError(s);
             },
             "Wait until no launch uses the buffer.");

    m.def("vk_allocate",
          [](vk::Device& device, uint64_t nbytes) {
              util::Result<vk::BufferRef> r = util::Status::Ok();
              {
                  GilReleasedWhileWaiting gil;  // released only if it waits
                  r = device.Allocate(nbytes == 0 ? 1 : nbytes);
              }
              return PyBuffer{Unwrap(std::move(r))};
          },
          nb::arg("device"), nb::arg("nbytes"));
    m.def("vk_allocate_pinned",
          [](vk::Device& device, uint64_t nbytes) {
              util::Result<vk::BufferRef> r = util::Status::Ok();
              {
                  nb::gil_scoped_release release;
                  r = device.AllocatePinned(nbytes == 0 ? 1 : nbytes);
              }
              return PyBuffer{Unwrap(std::move(r))};
          },
          nb::arg("device"), nb::arg("nbytes"),
          "Host-visible, mapped memory the device copies to and from directly.");
    m.def("vk_copy",
          [](PyBuffer& src, uint64_t src_offset, PyBuffer& dst, uint64_t dst_offset,
             uint64_t nbytes) {
              if (src.ref->device != dst.ref->device) {
                  Throw(util::InvalidArgument("cannot copy between buffers of two devices"));
              }
              util::Status s;
              {
                  GilReleasedWhileWaiting gil;  // released only if it waits for a slot
                  s = src.ref->device->Copy(*src.ref, src_offset, *dst.ref, dst_offset, nbytes)
                          .status();
              }
              ThrowIfError(s);
          },
          "Device-side copy of `nbytes` bytes, ordered after earlier launches.");

    nb::class_<DeviceArrayBase>(m, "DeviceArrayBase",
                                "What the launcher reads of a runtime.DeviceArray.")
        .def(
            "__init__",
            [](DeviceArrayBase* self, vk::Device* device, PyBuffer& buffer, uint64_t offset,
               nb::tuple shape, nb::tuple strides, uint64_t code, uint32_t itemsize) {
                if (nb::len(shape) != nb::len(strides) || nb::len(shape) > kMaxDims) {
                    Throw(util::InvalidArgument("shape and strides must have the same length, "
                                                "at most " + std::to_string(kMaxDims)));
                }
                DeviceArrayBase a;
                a.device = device;
                a.buffer = buffer.ref;
                a.offset = offset;
                a.ndim = static_cast<int>(nb::len(shape));
                for (int i = 0; i < a.ndim; ++i) {
                    a.shape[i] = nb::cast<int64_t>(shape[i]);
                    a.strides[i] = nb::cast<int64_t>(strides[i]);
                }
                a.code = code;
                a.itemsize = itemsize;
                new (self) DeviceArrayBase(std::move(a));  // nothing may throw after this
            },
            nb::arg("device"), nb::arg("buffer"), nb::arg("offset"), nb::arg("shape"),
            nb::arg("strides"), nb::arg("code"), nb::arg("itemsize"))
        .def_prop_ro("_device_core", [](DeviceArrayBase& a) { return a.device; },
                     nb::rv_policy::reference)
        .def_prop_ro("_buffer", [](DeviceArrayBase& a) { return PyBuffer{a.buffer}; })
        .def_prop_ro("_offset", [](DeviceArrayBase& a) { return a.offset; })
        .def_prop_ro("_code", [](DeviceArrayBase& a) { return a.code; })
        .def_prop_ro("_itemsize", [](DeviceArrayBase& a) { return a.itemsize; })
        .def("_has_layout", [](DeviceArrayBase& a, char layout) { return a.HasLayout(layout); },
             nb::arg("layout"), "Whether the array is C- ('C') or F- ('F') contiguous.")
        .def_prop_ro("_dev_strides",
                     [](DeviceArrayBase& a) {
                         nb::list l;
                         for (int i = 0; i < a.ndim; ++i) l.append(a.strides[i]);
                         return nb::tuple(l);
                     })
        .def_prop_ro("shape", [](DeviceArrayBase& a) {
            nb::list l;
            for (int i = 0; i < a.ndim; ++i) l.append(a.shape[i]);
            return nb::tuple(l);
        });
}

}  // namespace nvk::bind
