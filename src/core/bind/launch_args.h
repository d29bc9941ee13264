// What the launcher knows of each argument (ArgSpec), and how it writes argument
// values into a parameter block: scalars checked against the specialisation's exact
// type and slot, integers wrapped to 32-bit slots as narrowing does, grid triples.
// The Launcher (launcher.h) builds the specs once and calls these per launch.
#pragma once

#include <nanobind/nanobind.h>

#include <cstdint>
#include <cstring>
#include <string>

#include "bind/runtime_types.h"
#include "kir/abi.h"

namespace nvk::bind {

namespace nb = nanobind;

struct ArgSpec {
    bool is_array = false;
    // array
    uint64_t code = 0;
    int ndim = 0;
    uint32_t addr_offset = 0;
    bool written = true;  // whether the kernel may write it (hazard tracking)
    // The buffer format of the NumPy arrays the launcher may take for it (empty:
    // none; numpy_args.h), set by allow_numpy().
    std::string numpy_format;
    // The layout a device array must have ('C' or 'F' contiguous; 0: any), set by
    // require_layouts() for arrays the specialisation was typed 'C' or 'F' with.
    char layout = 0;
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

// A scalar argument's spec: its exact type (a NumPy scalar type, and which Python
// builtin values Numba types the same way) and its slot in the block (kir/abi.h).
ArgSpec ScalarSpec(const kir::ArgDecl& a);

// The NumPy scalar type of a dtype name ("int32" -> numpy.int32), kept alive for good.
PyObject* NumpyScalarType(const std::string& dtype);

template <typename T>
void Put(uint8_t* block, uint32_t offset, T value) {
    std::memcpy(block + offset, &value, sizeof(T));
}

// An integer into a 4- or 8-byte slot (4: wrapped, as narrowing does).
void PutInt(uint8_t* block, uint32_t offset, uint32_t nbytes, int64_t value);

// A grid or workgroup size: an int or a tuple of 1 to 3 ints, the rest 1.
bool ReadTriple(PyObject* obj, uint32_t out[3]);

// Write a scalar argument whose type is exactly the specialisation's and whose value
// fits the slot; anything else answers false (the dispatcher's slow path decides).
bool WriteScalar(const ArgSpec& spec, PyObject* arg, uint8_t* block);

// The value of a Python int or NumPy integer, from -2^63 to 2^64 - 1.
bool ReadInteger(PyObject* arg, __int128* out);

}  // namespace nvk::bind
