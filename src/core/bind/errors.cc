#include "bind/errors.h"

#include <nanobind/nanobind.h>

namespace nb = nanobind;

namespace nvk::bind {

static nb::object ErrorClass(const char* name) {
    return nb::module_::import_("numba_vulkan.errors").attr(name);
}

void Throw(const util::Status& status) {
    const char* cls = nullptr;
    switch (status.code()) {
        case util::Code::kOk:
        case util::Code::kInternal: cls = "InternalCompilerError"; break;
        case util::Code::kInvalidArgument: throw nb::value_error(status.message().c_str());
        case util::Code::kOutOfMemory:
            PyErr_SetString(PyExc_MemoryError, status.message().c_str());
            throw nb::python_error();
        case util::Code::kUnsupported: cls = "VulkanSupportError"; break;
        case util::Code::kCodegen: cls = "SpirvCodegenError"; break;
        case util::Code::kVulkan: cls = "VulkanError"; break;
        case util::Code::kLoader: cls = "VulkanLoaderError"; break;
        case util::Code::kTimeout: cls = "VulkanTimeoutError"; break;
        case util::Code::kDeviceLost: cls = "VulkanDeviceLostError"; break;
        case util::Code::kForked: cls = "VulkanForkError"; break;
        case util::Code::kInterrupted:
            // The wait check left the exception of a signal handler (KeyboardInterrupt) set.
            if (!PyErr_Occurred()) PyErr_SetNone(PyExc_KeyboardInterrupt);
            throw nb::python_error();
    }
    nb::object type = ErrorClass(cls);
    PyErr_SetObject(type.ptr(), nb::str(status.message().c_str()).ptr());
    throw nb::python_error();
}

}  // namespace nvk::bind
