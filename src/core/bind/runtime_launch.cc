// _core.Kernel and _core.Launcher: the launch path from Python into a recorded
// dispatch.
//
// A Launcher is made once per (kernel specialisation, device) by the dispatcher,
// with a fixed description of the arguments (argspecs). launch() then only
// checks each argument against its spec, writes the parameter block in place and
// records the dispatch: no heap allocation, no Python attribute lookup, no
// descriptor work. An argument that does not match its spec makes launch()
// return False, so the dispatcher can take its slow path; only real failures
// (unsupported local size, Vulkan errors) raise.
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>

#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "bind/errors.h"
#include "bind/runtime_types.h"

namespace nvk::bind {

namespace {

struct ArgSpec {
    bool is_array = false;
    // array
    uint32_t code = 0;
    int ndim = 0;
    uint32_t addr_offset = 0;
    uint32_t extent_offsets[kMaxDims] = {};
    uint32_t stride_offsets[kMaxDims] = {};
    uint32_t index_bytes = 4;
    // scalar: the argument's exact type (a NumPy scalar type, and which Python
    // builtin values Numba types the same way), and its slot in the block
    PyObject* np_type = nullptr;  // e.g. numpy.int32
    char py_kind = 0;             // 'i' int64 ints, 'U' uint64 ints, 'f' float, 'b' bool, 0 none
    char kind = 0;                // slot: 'i', 'u', 'f', 'b'
    uint32_t nbytes = 0;          // slot: 4 or 8
    uint32_t offset = 0;
};

// The NumPy scalar type of a dtype name ("int32" -> numpy.int32), kept alive for good.
PyObject* NumpyScalarType(const std::string& dtype) {
    nb::module_ np = nb::module_::import_("numpy");
    return nb::object(np.attr("dtype")(dtype).attr("type")).release().ptr();
}

template <typename T>
void Put(uint8_t* block, uint32_t offset, T value) {
    std::memcpy(block + offset, &value, sizeof(T));
}

void PutInt(uint8_t* block, uint32_t offset, uint32_t nbytes, int64_t value) {
    if (nbytes == 8) {
        Put<int64_t>(block, offset, value);
    } else {
        Put<int32_t>(block, offset, static_cast<int32_t>(value));  // wraps, as narrowing does
    }
}

bool ReadTriple(PyObject* obj, uint32_t out[3]) {
    out[0] = out[1] = out[2] = 1;
    if (PyLong_Check(obj)) {
        out[0] = static_cast<uint32_t>(PyLong_AsUnsignedLong(obj));
        return !PyErr_Occurred();
    }
    if (!PyTuple_Check(obj) || PyTuple_GET_SIZE(obj) < 1 || PyTuple_GET_SIZE(obj) > 3) return false;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(obj); ++i) {
        out[i] = static_cast<uint32_t>(PyLong_AsUnsignedLong(PyTuple_GET_ITEM(obj, i)));
        if (PyErr_Occurred()) return false;
    }
    return true;
}

class Launcher {
  public:
    Launcher(vk::Device* device, nb::object kernel, nb::list argspecs, uint32_t param_size,
             bool params_in_buffer)
        : device_(device), kernel_obj_(std::move(kernel)), in_buffer_(params_in_buffer) {
        kernel_ = nb::cast<PyKernel&>(kernel_obj_).kernel.get();
        if (&kernel_->device() != device_) {
            Throw(util::InvalidArgument("the kernel was loaded on another device"));
        }
        param_size_ = param_size;
        block_.assign((param_size + 15u) & ~15u, 0);
        for (nb::handle h : argspecs) {
            nb::tuple t = nb::cast<nb::tuple>(h);
            std::string what = nb::cast<std::string>(t[0]);
            ArgSpec spec;
            auto check = [&](uint32_t off, uint32_t n) {
                if (off + n > param_size) {
                    Throw(util::InvalidArgument("argspec offset " + std::to_string(off) +
                                                " lies outside the parameter block of " +
                                                std::to_string(param_size) + " bytes"));
                }
            };
            if (what == "array") {
                spec.is_array = true;
                nb::object dtype = nb::module_::import_("numpy").attr("dtype")(t[1]);
                std::string kind = nb::cast<std::string>(dtype.attr("kind"));
                spec.code = DtypeCode(kind[0], nb::cast<uint32_t>(dtype.attr("itemsize")));
                spec.ndim = nb::cast<int>(t[2]);
                spec.addr_offset = nb::cast<uint32_t>(t[3]);
                spec.index_bytes = nb::cast<uint32_t>(t[6]);
                nb::tuple extents = nb::cast<nb::tuple>(t[4]), strides = nb::cast<nb::tuple>(t[5]);
                if (spec.ndim < 0 || spec.ndim > kMaxDims ||
                    nb::len(extents) != static_cast<size_t>(spec.ndim) ||
                    nb::len(strides) != static_cast<size_t>(spec.ndim) ||
                    (spec.index_bytes != 4 && spec.index_bytes != 8)) {
                    Throw(util::InvalidArgument("malformed array argspec"));
                }
                check(spec.addr_offset, 8);
                for (int i = 0; i < spec.ndim; ++i) {
                    spec.extent_offsets[i] = nb::cast<uint32_t>(extents[i]);
                    spec.stride_offsets[i] = nb::cast<uint32_t>(strides[i]);
                    check(spec.extent_offsets[i], spec.index_bytes);
                    check(spec.stride_offsets[i], spec.index_bytes);
                }
                ++array_count_;
            } else if (what == "scalar") {
                // ("scalar", dtype name, slot code, slot bytes, offset)
                std::string dtype = nb::cast<std::string>(t[1]);
                std::string code = nb::cast<std::string>(t[2]);
                spec.kind = code.empty() ? 0 : code[0];
                spec.nbytes = nb::cast<uint32_t>(t[3]);
                spec.offset = nb::cast<uint32_t>(t[4]);
                if (code.size() != 1 || !std::strchr("iufb", spec.kind) ||
                    (spec.nbytes != 4 && spec.nbytes != 8)) {
                    Throw(util::InvalidArgument("malformed scalar argspec"));
                }
                spec.np_type = NumpyScalarType(dtype);
                if (dtype == "int64") spec.py_kind = 'i';
                if (dtype == "uint64") spec.py_kind = 'U';
                if (dtype == "float64") spec.py_kind = 'f';
                if (dtype == "bool") spec.py_kind = 'b';
                check(spec.offset, spec.nbytes);
            } else {
                Throw(util::InvalidArgument("argspec kind must be 'array' or 'scalar'"));
            }
            specs_.push_back(spec);
        }
        used_.assign(array_count_, nullptr);
    }

    static bool FitsInt32Indices(const DeviceArrayBase& a) {
        constexpr int64_t kMax = std::numeric_limits<int32_t>::max();
        int64_t span = 0;  // the largest linear offset, in elements
        for (int d = 0; d < a.ndim; ++d) {
            if (a.shape[d] > kMax) return false;
            if (a.shape[d] > 0) span += (a.shape[d] - 1) * std::abs(a.strides[d] / a.itemsize);
        }
        return span <= kMax;
    }

    bool Launch(nb::handle groups, nb::handle local, nb::handle args) {
        PyObject* tuple = args.ptr();
        if (!PyTuple_Check(tuple) ||
            PyTuple_GET_SIZE(tuple) != static_cast<Py_ssize_t>(specs_.size())) {
            return false;
        }
        uint32_t g[3], l[3];
        if (!ReadTriple(groups.ptr(), g) || !ReadTriple(local.ptr(), l)) {
            PyErr_Clear();
            Throw(util::InvalidArgument("groups and local_size must be tuples of 1 to 3 "
                                        "non-negative ints"));
        }
        uint8_t* block = block_.data();
        size_t n_used = 0;
        for (size_t i = 0; i < specs_.size(); ++i) {
            const ArgSpec& spec = specs_[i];
            PyObject* arg = PyTuple_GET_ITEM(tuple, i);
            if (spec.is_array) {
                DeviceArrayBase* a = nullptr;
                if (!nb::try_cast<DeviceArrayBase*>(nb::handle(arg), a) || !a) return false;
                if (a->device != device_ || a->code != spec.code || a->ndim != spec.ndim) {
                    return false;
                }
                // 32-bit indices reach at most 2^31 - 1 elements from element 0: a
                // larger array needs the kernel's 64-bit-index specialisation.
                if (spec.index_bytes == 4 && !FitsInt32Indices(*a)) return false;
                Put<uint64_t>(block, spec.addr_offset, a->buffer->address + a->offset);
                for (int d = 0; d < spec.ndim; ++d) {
                    PutInt(block, spec.extent_offsets[d], spec.index_bytes, a->shape[d]);
                    PutInt(block, spec.stride_offsets[d], spec.index_bytes,
                           a->strides[d] / static_cast<int64_t>(a->itemsize));
                }
                used_[n_used++] = a->buffer.get();
            } else if (!WriteScalar(spec, arg, block)) {
                return false;
            }
        }
        util::Result<VkPipeline> pipeline = kernel_->Pipeline(l);
        if (!pipeline.ok()) Throw(pipeline.status());
        const auto& max = device_->info().max_groups;
        if (g[0] > max[0] || g[1] > max[1] || g[2] > max[2]) {
            Throw(util::Unsupported("grid of (" + std::to_string(g[0]) + ", " +
                                    std::to_string(g[1]) + ", " + std::to_string(g[2]) +
                                    ") workgroups exceeds the device's maximum"));
        }
        util::Result<uint64_t> value = util::Status::Ok();
        {
            nb::gil_scoped_release release;  // the launch may wait for a slot
            value = device_->RecordDispatch(*kernel_, *pipeline, g, block, param_size_, in_buffer_);
        }
        if (!value.ok()) Throw(value.status());
        for (size_t i = 0; i < n_used; ++i) used_[i]->last_use = *value;
        return true;
    }

    nb::bytes LastBlock() const {
        return nb::bytes(reinterpret_cast<const char*>(block_.data()), param_size_);
    }

  private:
    // Write a scalar argument whose type is exactly the specialisation's (as
    // numba.typeof would type it) and whose value fits the slot; anything else
    // answers false, and the dispatcher's slow path picks or compiles another
    // specialisation, or raises OverflowError for a value a narrowed slot cannot hold.
    static bool WriteScalar(const ArgSpec& spec, PyObject* arg, uint8_t* block) {
        if (reinterpret_cast<PyObject*>(Py_TYPE(arg)) != spec.np_type) {
            const bool builtin_match =
                (spec.py_kind == 'b' && PyBool_Check(arg)) ||
                (spec.py_kind == 'f' && PyFloat_CheckExact(arg)) ||
                ((spec.py_kind == 'i' || spec.py_kind == 'U') && PyLong_CheckExact(arg));
            if (!builtin_match) return false;
        }
        if (spec.kind == 'b') {
            int truth = PyObject_IsTrue(arg);
            if (truth < 0) { PyErr_Clear(); return false; }
            Put<uint32_t>(block, spec.offset, truth ? 1u : 0u);
            return true;
        }
        if (spec.kind == 'f') {
            double v = PyFloat_AsDouble(arg);
            if (v == -1.0 && PyErr_Occurred()) { PyErr_Clear(); return false; }
            if (spec.nbytes == 8) Put<double>(block, spec.offset, v);
            else Put<float>(block, spec.offset, static_cast<float>(v));
            return true;
        }
        __int128 v = 0;
        if (!ReadInteger(arg, &v)) return false;
        // A Python int is an int64 below 2^63 and a uint64 from there (numba.typeof).
        if (spec.py_kind == 'i' && PyLong_CheckExact(arg) && v > INT64_MAX) return false;
        if (spec.py_kind == 'U' && PyLong_CheckExact(arg) && v <= INT64_MAX) return false;
        const int bits = static_cast<int>(spec.nbytes) * 8;
        const __int128 lo = spec.kind == 'i' ? -(static_cast<__int128>(1) << (bits - 1)) : 0;
        const __int128 hi = spec.kind == 'i' ? (static_cast<__int128>(1) << (bits - 1)) - 1
                                             : (static_cast<__int128>(1) << bits) - 1;
        if (v < lo || v > hi) return false;  // a narrowed slot: the slow path says so
        if (spec.nbytes == 8) Put<uint64_t>(block, spec.offset, static_cast<uint64_t>(v));
        else Put<uint32_t>(block, spec.offset, static_cast<uint32_t>(v));
        return true;
    }

    // The value of a Python int or NumPy integer, from -2^63 to 2^64 - 1.
    static bool ReadInteger(PyObject* arg, __int128* out) {
        PyObject* index = PyNumber_Index(arg);
        if (!index) { PyErr_Clear(); return false; }
        int overflow = 0;
        long long v = PyLong_AsLongLongAndOverflow(index, &overflow);
        bool ok = !(v == -1 && PyErr_Occurred());
        if (ok && overflow > 0) {
            unsigned long long u = PyLong_AsUnsignedLongLong(index);
            ok = !(u == static_cast<unsigned long long>(-1) && PyErr_Occurred());
            *out = u;
        } else {
            ok = ok && overflow == 0;
            *out = v;
        }
        Py_DECREF(index);
        if (!ok) PyErr_Clear();
        return ok;
    }

    vk::Device* device_;
    nb::object kernel_obj_;  // keeps the kernel alive
    vk::Kernel* kernel_ = nullptr;
    bool in_buffer_ = false;
    uint32_t param_size_ = 0;
    std::vector<uint8_t> block_;
    std::vector<ArgSpec> specs_;
    size_t array_count_ = 0;
    std::vector<vk::Buffer*> used_;  // the buffers of the launch being recorded
};

}  // namespace

void InitRuntimeLaunch(nb::module_& m, nb::class_<vk::Device>& device_class) {
    nb::class_<PyKernel>(m, "Kernel", "A SPIR-V compute module loaded on one device.")
        .def_prop_ro("push_size", [](PyKernel& k) { return k.kernel->push_size(); })
        .def_prop_ro("pipeline_count", [](PyKernel& k) { return k.kernel->pipeline_count(); });

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
               nb::list buffers) {
                uint32_t g[3], l[3];
                if (!ReadTriple(groups.ptr(), g) || !ReadTriple(local.ptr(), l)) {
                    PyErr_Clear();
                    Throw(util::InvalidArgument("groups and local_size must be 1-3 ints"));
                }
                VkPipeline pipeline = Unwrap(k.kernel->Pipeline(l));
                uint32_t n = static_cast<uint32_t>(push.size());
                std::vector<uint8_t> block((n + 3u) & ~3u, 0);
                std::memcpy(block.data(), push.c_str(), n);
                util::Result<uint64_t> value = util::Status::Ok();
                {
                    nb::gil_scoped_release release;
                    value = d.RecordDispatch(*k.kernel, pipeline, g, block.data(),
                                             static_cast<uint32_t>(block.size()), false);
                }
                uint64_t v = Unwrap(std::move(value));
                for (nb::handle h : buffers) nb::cast<PyBuffer&>(h).ref->last_use = v;
            },
            nb::arg("kernel"), nb::arg("groups"), nb::arg("local_size"), nb::arg("push"),
            nb::arg("buffers"),
            "Record one dispatch with raw push constants; `buffers` are marked as used by it.");

    nb::class_<Launcher>(m, "Launcher", "The fast launch path of one kernel specialisation.")
        .def(nb::init<vk::Device*, nb::object, nb::list, uint32_t, bool>(), nb::arg("device"),
             nb::arg("kernel"), nb::arg("argspecs"), nb::arg("param_size"),
             nb::arg("params_in_buffer"))
        .def("launch", &Launcher::Launch, nb::arg("groups"), nb::arg("local_size"),
             nb::arg("args"))
        .def("last_block", &Launcher::LastBlock,
             "The parameter block of the last launch (for tests and debugging).");
}

}  // namespace nvk::bind
