// The argument contract's rules (see abi.h): sizes, storage and slot kinds,
// parameter offsets, and declaring arguments.
#include "kir/abi.h"

#include <algorithm>

namespace nvk::kir {

uint32_t MemoryBytes(ScalarKind k) {
    return k == ScalarKind::kBool ? 4 : static_cast<uint32_t>(std::max(1, BitWidth(k) / 8));
}

ScalarKind StorageKind(ScalarKind k, bool int64, bool float64) {
    switch (k) {
        case ScalarKind::kBool: return ScalarKind::kI32;
        case ScalarKind::kI64: return int64 ? k : ScalarKind::kI32;
        case ScalarKind::kU64: return int64 ? k : ScalarKind::kU32;
        case ScalarKind::kF64: return float64 ? k : ScalarKind::kF32;
        default: return k;
    }
}

ScalarKind SlotKind(ScalarKind k) {
    switch (k) {
        case ScalarKind::kBool: case ScalarKind::kU8: case ScalarKind::kU16: return ScalarKind::kU32;
        case ScalarKind::kI8: case ScalarKind::kI16: return ScalarKind::kI32;
        default: return k;  // float16 arguments compute (and travel) as f32 already
    }
}

uint32_t ParamOffset(uint32_t end, ScalarKind k) {
    uint32_t size = MemoryBytes(k);
    return (end + size - 1) / size * size;
}

std::optional<ScalarKind> KindOfDtype(char kind, uint32_t itemsize) {
    switch (kind) {
        case 'b': if (itemsize == 1) return ScalarKind::kBool; break;
        case 'i':
            if (itemsize == 1) return ScalarKind::kI8;
            if (itemsize == 2) return ScalarKind::kI16;
            if (itemsize == 4) return ScalarKind::kI32;
            if (itemsize == 8) return ScalarKind::kI64;
            break;
        case 'u':
            if (itemsize == 1) return ScalarKind::kU8;
            if (itemsize == 2) return ScalarKind::kU16;
            if (itemsize == 4) return ScalarKind::kU32;
            if (itemsize == 8) return ScalarKind::kU64;
            break;
        case 'f':
            if (itemsize == 2) return ScalarKind::kF16;
            if (itemsize == 4) return ScalarKind::kF32;
            if (itemsize == 8) return ScalarKind::kF64;
            break;
        default: break;
    }
    return std::nullopt;
}

const char* DtypeName(ScalarKind k) {
    switch (k) {
        case ScalarKind::kBool: return "bool";
        case ScalarKind::kI8: return "int8";
        case ScalarKind::kI16: return "int16";
        case ScalarKind::kI32: return "int32";
        case ScalarKind::kI64: return "int64";
        case ScalarKind::kU8: return "uint8";
        case ScalarKind::kU16: return "uint16";
        case ScalarKind::kU32: return "uint32";
        case ScalarKind::kU64: return "uint64";
        case ScalarKind::kF16: return "float16";
        case ScalarKind::kF32: return "float32";
        case ScalarKind::kF64: return "float64";
        case ScalarKind::kBF16: return "bfloat16";
    }
    return "?";
}

uint32_t AddScalarArg(Module& m, std::string name, ScalarKind type, ScalarKind compute,
                      bool slot32) {
    ArgDecl a;
    a.kind = ArgKind::kScalar;
    a.type = type;
    a.compute = compute;
    a.slot = SlotKind(compute);
    if (slot32 && a.slot == ScalarKind::kI64) a.slot = ScalarKind::kI32;
    a.param = m.AddParam(name, a.slot);
    a.offset = m.params[a.param].offset;
    a.name = std::move(name);
    m.args.push_back(std::move(a));
    return m.args.back().param;
}

uint32_t AddArrayArg(Module& m, std::string name, char dtype_kind, uint32_t itemsize,
                     ScalarKind compute, ScalarKind storage, uint32_t ndim, ScalarKind index,
                     uint32_t record_key) {
    ArgDecl a;
    a.kind = ArgKind::kArray;
    a.type = a.compute = compute;
    a.slot = storage;
    a.dtype_kind = dtype_kind;
    a.itemsize = itemsize;
    a.record_key = record_key;
    a.ndim = ndim;
    a.index = index;
    a.param = m.AddParam(name + ".addr", ScalarKind::kU64);
    a.offset = m.params[a.param].offset;
    // Extents are named NAME.shape[k]: the narrowing pass knows them by that name.
    for (uint32_t k = 0; k < ndim; ++k)
        a.extents.push_back(m.params[m.AddParam(name + ".shape[" + std::to_string(k) + "]", index)].offset);
    for (uint32_t k = 0; k < ndim; ++k)
        a.strides.push_back(m.params[m.AddParam(name + ".strides[" + std::to_string(k) + "]", index)].offset);
    a.name = std::move(name);
    m.args.push_back(std::move(a));
    return m.args.back().param;
}

uint32_t AddHiddenParam(Module& m, std::string name, ScalarKind k, ScalarKind index) {
    ArgDecl a;
    a.kind = ArgKind::kHidden;
    a.type = a.compute = a.slot = k;
    a.index = index;
    a.param = m.AddParam(name, k);
    a.offset = m.params[a.param].offset;
    a.name = std::move(name);
    m.args.push_back(std::move(a));
    return m.args.back().param;
}

}  // namespace nvk::kir
