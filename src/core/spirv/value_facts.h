// What an optimised kernel module says about its values, for the passes that rewrite its
// words (PromoteLoopElements): the types' sizes, the integers computed from constants, each
// value's definition, and device addresses as sums of values and a constant.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <set>
#include <unordered_map>
#include <utility>
#include <vector>

#include "spirv/function_blocks.h"

namespace nvk::spirv {

// An address as a sum: the SSA values added (sorted) and a constant.
struct AddressKey {
    std::vector<uint32_t> terms;
    uint64_t offset = 0;
    bool operator<(const AddressKey& o) const {
        return terms != o.terms ? terms < o.terms : offset < o.offset;
    }
    bool operator==(const AddressKey& o) const { return terms == o.terms && offset == o.offset; }
};

// Whether accesses at keys a and b (of a_bytes and b_bytes) never overlap: the same sum
// with constants at least a size apart (modulo 2^64, as addresses wrap).
bool Apart(const AddressKey& a, uint32_t a_bytes, const AddressKey& b, uint32_t b_bytes);

// Storage classes whose memory a device address may reach.
bool MayBeDeviceMemory(uint32_t storage_class);

// The values of a module's one function. Holds pointers into `f`'s instructions: valid while
// `f` is not changed.
class ValueFacts {
  public:
    explicit ValueFacts(const FunctionBlocks& f);

    uint32_t u64() const { return u64_; }        // OpTypeInt 64 0, or 0
    uint32_t bool_type() const { return bool_; }  // OpTypeBool, or 0
    // The size in bytes of a scalar or vector type (0: another type).
    uint32_t Bytes(uint32_t type) const;
    // The result type of a value (0: none known).
    uint32_t TypeOf(uint32_t id) const;
    // The value of an integer computed from constants alone, as its bits.
    std::optional<uint64_t> Constant(uint32_t id, int depth = 0) const;
    // The first value computed by the same pure operation from operands of the same
    // numbers as `id` (`id` itself where none was): two values of one number are equal.
    uint32_t Number(uint32_t id) const;
    // A u64 value as a sum of values (their numbers) and a constant, through additions.
    AddressKey Key(uint32_t id, int depth = 0) const;
    // The u64 address a device pointer was made from (OpConvertUToPtr), or 0.
    uint32_t AddressOf(uint32_t pointer) const;
    // Whether a pointer may reach device memory (by its storage class; unknown: yes).
    bool PointsToDeviceMemory(uint32_t pointer) const;
    // Whether a value is the same in every iteration of the loop made of blocks `loop`:
    // defined outside it, or computed there by pure operations from such values. `known`
    // keeps the answers for values of that loop between calls.
    bool Invariant(uint32_t id, const std::set<size_t>& loop,
                   std::unordered_map<uint32_t, bool>* known, int depth = 0) const;

  private:
    struct Def {
        size_t block;  // SIZE_MAX: outside the function
        const Inst* inst;
    };

    void Record(const Inst& i, size_t block);

    uint32_t u64_ = 0, bool_ = 0;
    std::unordered_map<uint32_t, uint32_t> scalar_bytes_;
    std::unordered_map<uint32_t, std::pair<uint32_t, uint32_t>> vectors_;   // component, count
    std::unordered_map<uint32_t, std::pair<uint32_t, uint32_t>> pointers_;  // class, pointee
    std::unordered_map<uint32_t, uint64_t> constants_;
    std::unordered_map<uint32_t, Def> defs_;
    std::unordered_map<uint32_t, uint32_t> types_;
    std::unordered_map<uint32_t, uint32_t> numbers_;  // ids whose number is another's
};

}  // namespace nvk::spirv
