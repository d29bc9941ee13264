// ArgSpec construction and argument writing (launch_args.h).
#include "bind/launch_args.h"

#include <nanobind/stl/string.h>  // NumpyScalarType passes a std::string to Python

#include <climits>

namespace nvk::bind {

ArgSpec ScalarSpec(const kir::ArgDecl& a) {
    ArgSpec spec;
    spec.np_type = NumpyScalarType(kir::DtypeName(a.type));
    if (a.type == kir::ScalarKind::kI64) spec.py_kind = 'i';
    if (a.type == kir::ScalarKind::kU64) spec.py_kind = 'U';
    if (a.type == kir::ScalarKind::kF64) spec.py_kind = 'f';
    if (a.type == kir::ScalarKind::kBool) spec.py_kind = 'b';
    spec.kind = a.type == kir::ScalarKind::kBool ? 'b'
                : kir::IsFloat(a.slot)           ? 'f'
                : kir::IsSigned(a.slot)          ? 'i'
                                                 : 'u';
    spec.nbytes = kir::MemoryBytes(a.slot);
    spec.offset = a.offset;
    return spec;
}

PyObject* NumpyScalarType(const std::string& dtype) {
    nb::module_ np = nb::module_::import_("numpy");
    return nb::object(np.attr("dtype")(dtype).attr("type")).release().ptr();
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

// Write a scalar argument whose type is exactly the specialisation's (as
// numba.typeof would type it) and whose value fits the slot; anything else
// answers false, and the dispatcher's slow path picks or compiles another
// specialisation, or raises OverflowError for a value a narrowed slot cannot hold.
bool WriteScalar(const ArgSpec& spec, PyObject* arg, uint8_t* block) {
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
bool ReadInteger(PyObject* arg, __int128* out) {
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


}  // namespace nvk::bind
