#include "bind/numpy_args.h"

#include <algorithm>
#include <cstring>

namespace nvk::bind {

PyTypeObject* NdarrayType() {
    static PyTypeObject* type = [] {
        nb::module_ np = nb::module_::import_("numpy");
        return reinterpret_cast<PyTypeObject*>(nb::object(np.attr("ndarray")).release().ptr());
    }();
    return type;
}

NumpyArgs::~NumpyArgs() {
    for (size_t i = 0; i < count_; ++i) {
        args_[i].buffer.reset();  // back to its pool (takes the device's lock, never waits)
        args_[i].readback.reset();
        PyBuffer_Release(&args_[i].view);
    }
}

bool NumpyArgs::Take(PyObject* arg, const std::string& format, int ndim, bool written,
                     uint32_t addr_offset, int64_t* shape) {
    // ndarray itself only: subclasses (numpy.ma masked arrays, matrices) take the slow
    // path, which refuses or converts them.
    if (count_ >= kMax || Py_TYPE(arg) != NdarrayType()) return false;
    Arg& a = args_[count_];
    const int flags = PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | (written ? PyBUF_WRITABLE : 0);
    if (PyObject_GetBuffer(arg, &a.view, flags) != 0) {
        PyErr_Clear();  // not C-contiguous, or read-only where the kernel writes
        return false;
    }
    const bool fits = a.view.format != nullptr && format == a.view.format &&
                      a.view.ndim == ndim && a.view.len > 0 &&
                      static_cast<uint64_t>(a.view.len) <= kMaxBytes && a.view.shape != nullptr;
    if (!fits) {
        PyBuffer_Release(&a.view);
        return false;
    }
    for (int d = 0; d < ndim; ++d) shape[d] = a.view.shape[d];
    a.written = written;
    a.addr_offset = addr_offset;
    ++count_;
    return true;
}

bool NumpyArgs::any_written() const {
    for (size_t i = 0; i < count_; ++i) {
        if (args_[i].written) return true;
    }
    return false;
}

util::Status NumpyArgs::Upload(vk::Device& device, uint8_t* block, vk::Buffer** used,
                               bool* writes) {
    for (size_t i = 0; i < count_; ++i) {
        Arg& a = args_[i];
        const auto nbytes = static_cast<uint64_t>(a.view.len);
        NVK_ASSIGN_OR_RETURN(a.buffer, device.AllocateHostArg(nbytes, a.written ? 1 : 0));
        if (a.written && device.host_args_readback()) {
            NVK_ASSIGN_OR_RETURN(a.readback, device.AllocateHostArg(nbytes, 2));
        }
        std::memcpy(a.buffer->mapped, a.view.buf, nbytes);
        const uint64_t address = a.buffer->address;
        std::memcpy(block + a.addr_offset, &address, sizeof(address));
        used[i] = a.buffer.get();
        writes[i] = a.written;
    }
    return util::Status::Ok();
}

util::Result<uint64_t> NumpyArgs::Readback(vk::Device& device) {
    uint64_t value = 0;
    for (size_t i = 0; i < count_; ++i) {
        Arg& a = args_[i];
        if (!a.readback) continue;
        NVK_ASSIGN_OR_RETURN(uint64_t v, device.Copy(*a.buffer, 0, *a.readback, 0,
                                                     static_cast<uint64_t>(a.view.len),
                                                     /*host_reads=*/true));
        value = std::max(value, v);
    }
    return value;
}

void NumpyArgs::Download() {
    for (size_t i = 0; i < count_; ++i) {
        const Arg& a = args_[i];
        if (!a.written) continue;
        const vk::Buffer& from = a.readback ? *a.readback : *a.buffer;
        std::memcpy(a.view.buf, from.mapped, static_cast<uint64_t>(a.view.len));
    }
}

}  // namespace nvk::bind
