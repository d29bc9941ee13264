// The argument contract: how KIR scalars lie in memory and how a kernel's
// arguments travel to it. This file is the one place for these rules; the
// verifier, the SPIR-V emitter, the launcher (bind/launcher.h) and the
// Python side (through _core) all read them from here (issue 5, item 4).
//
// Memory. A scalar of kind k takes MemoryBytes(k) bytes wherever it is
// stored (device memory, shared memory, the parameter block): its width, and
// 4 bytes for bool (SPIR-V has no bool in memory; we store 32-bit integers).
// An array element of kind k lies in device memory as StorageKind(k, ...):
// bool as i32, 64-bit types as their 32-bit counterparts only on a device
// without them.
//
// The parameter block. Every parameter lies at the next offset aligned to its
// own size (ParamOffset); the block's size is rounded up to 8. A scalar
// argument's slot has SlotKind(compute kind): bool, 8- and 16-bit integers are
// widened to 32 bits (8- and 16-bit push constants are an optional feature).
//
// Arguments. Module::args lists, in order, the kernel's arguments and the
// hidden parameters the launcher writes itself, each with its parameters'
// offsets and kinds (ArgDecl, in kir.h). The front end declares them through
// AddScalarArg, AddArrayArg and AddHiddenParam; Compile copies the list into
// CompiledKernel::args, from which the launcher and the Python argument checks
// work. A hidden parameter is anything the kernel reads that is no argument:
// the grid's base and size (names "grid.base.{x,y,z}", "grid.groups.{x,y,z}",
// written per dispatch) and any other value or buffer address the launcher is
// given by name when it is made (Launcher(..., hidden={name: value})).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kir/kir.h"

namespace nvk::kir {

// Bytes a value of kind k takes in memory (bool: 4).
uint32_t MemoryBytes(ScalarKind k);

// The kind an array element of kind k is stored as, on a device that does
// (or does not) support 64-bit integers and floats in memory.
ScalarKind StorageKind(ScalarKind k, bool int64, bool float64);

// The kind of a scalar argument's slot in the parameter block, for an
// argument computed in kind k.
ScalarKind SlotKind(ScalarKind k);

// The offset of a parameter of kind k appended after `end` bytes.
uint32_t ParamOffset(uint32_t end, ScalarKind k);

// The kind of a NumPy dtype (kind character 'b', 'i', 'u', 'f' and item
// size); nullopt for other dtypes.
std::optional<ScalarKind> KindOfDtype(char kind, uint32_t itemsize);

// The NumPy dtype name of kind k ("bool", "int8", ..., "float64").
const char* DtypeName(ScalarKind k);

// Declare a scalar argument of type `type` computed as `compute`; returns its
// parameter's index. With `slot32`, an int64 travels in an int32 slot (the kernel
// widens it): the launcher takes only values that slot holds, and the dispatcher gives
// others to the kernel's 64-bit-index specialisation.
uint32_t AddScalarArg(Module& m, std::string name, ScalarKind type, ScalarKind compute,
                      bool slot32 = false);

// Declare an array argument: address (u64), `ndim` extents and strides of kind
// `index`; returns the index of its first parameter (the address).
uint32_t AddArrayArg(Module& m, std::string name, char dtype_kind, uint32_t itemsize,
                     ScalarKind compute, ScalarKind storage, uint32_t ndim, ScalarKind index,
                     uint32_t record_key = 0);

// Declare a hidden parameter of kind k; returns its parameter's index.
uint32_t AddHiddenParam(Module& m, std::string name, ScalarKind k,
                        ScalarKind index = ScalarKind::kI32);

}  // namespace nvk::kir
