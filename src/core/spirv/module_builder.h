// ModuleBuilder: the bookkeeping of a SPIR-V module, with no knowledge of KIR.
//
// A SPIR-V module is a header followed by sections in a fixed order
// (capabilities, extended-instruction imports, memory model, entry points,
// execution modes, debug names, decorations, types/constants/globals,
// functions). The builder keeps one word list per section and concatenates
// them in Finish(), so the emitter can add a capability, a name or a type at
// any moment without caring where it lands.
//
// Types and constants are interned: asking twice for `int 32 signed` or for
// the u32 constant 4 gives the same id. Declaring an 8/16/64-bit integer or a
// 16/64-bit float adds the matching capability (Int8, Int16, Int64, Float16,
// Float64), so the module always declares exactly what its types need.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include <spirv/unified1/spirv.hpp11>

namespace nvk::spirv {

using Id = uint32_t;

// Instruction words of one section.
class InstList {
  public:
    void Add(spv::Op op, std::initializer_list<uint32_t> operands) {
        Add(op, operands.begin(), operands.size());
    }
    void Add(spv::Op op, const std::vector<uint32_t>& operands) {
        Add(op, operands.data(), operands.size());
    }
    void Add(spv::Op op, const uint32_t* operands, size_t count);
    const std::vector<uint32_t>& words() const { return words_; }

  private:
    std::vector<uint32_t> words_;
};

// A literal string as SPIR-V words: UTF-8, NUL-terminated, padded to a word.
void AppendString(std::vector<uint32_t>& words, std::string_view s);

class ModuleBuilder {
  public:
    Id NewId() { return next_id_++; }

    // Capabilities are a set: adding one twice declares it once.
    void AddCapability(spv::Capability c) { capabilities_.insert(c); }
    void AddExtension(const std::string& name) { extensions_.insert(name); }
    Id GlslStd450();  // the "GLSL.std.450" import, created on first use

    // Debug names and decorations.
    void Name(Id target, std::string_view name);
    void MemberName(Id type, uint32_t member, std::string_view name);
    void Decorate(Id target, spv::Decoration d, std::initializer_list<uint32_t> extra = {});
    void MemberDecorate(Id type, uint32_t member, spv::Decoration d,
                        std::initializer_list<uint32_t> extra = {});

    // Types (interned, except structs: every struct is a new type).
    Id TypeVoid();
    Id TypeBool();
    Id TypeInt(uint32_t width, bool is_signed);
    Id TypeFloat(uint32_t width);
    // OpTypeFloat 16 BFloat16KHR (SPV_KHR_bfloat16): no constants, no arithmetic.
    Id TypeBFloat16();
    Id TypeVector(Id component, uint32_t count);
    Id TypePointer(spv::StorageClass storage, Id pointee);
    Id TypeFunction(Id return_type);  // no parameters
    Id TypeArray(Id element, Id length);  // length: the id of a u32 constant or spec constant
    // OpTypeCooperativeMatrixKHR of subgroup scope; use: 0 A, 1 B, 2 accumulator.
    Id TypeCooperativeMatrix(Id component, uint32_t rows, uint32_t cols, uint32_t use);
    Id TypeStruct(const std::vector<Id>& members);

    // Constants (interned). `bits` holds the value in its low `width` bits;
    // signed types narrower than 32 bits are sign-extended into their word, as
    // SPIR-V requires.
    Id ConstScalar(Id type, uint64_t bits);
    Id ConstBool(bool value);
    // The value bits (low `width` bits, no sign extension) of a constant made by
    // ConstScalar; false for any other id.
    bool IntConstBits(Id id, uint64_t* bits) const;
    Id ConstU32(uint32_t value) { return ConstScalar(TypeInt(32, false), value); }
    Id ConstU64(uint64_t value) { return ConstScalar(TypeInt(64, false), value); }
    Id SpecConstU32(uint32_t default_value, uint32_t spec_id);
    Id SpecConstComposite(Id type, const std::vector<Id>& parts);

    // A module-scope OpVariable. Every one is listed in the entry point's
    // interface (SPIR-V 1.4+ requires all referenced globals there).
    Id GlobalVariable(Id pointer_type, spv::StorageClass storage);

    void SetEntryPoint(Id function, std::string_view name) {
        entry_function_ = function;
        entry_name_ = name;
    }
    void SetLocalSize(uint32_t x, uint32_t y, uint32_t z) { local_size_ = {x, y, z}; }
    // An OpExecutionMode of the entry point besides LocalSize.
    void AddExecutionMode(spv::ExecutionMode mode, std::vector<uint32_t> literals) {
        literals.insert(literals.begin(), static_cast<uint32_t>(mode));
        execution_modes_.push_back(std::move(literals));
    }

    InstList& functions() { return functions_; }
    InstList& types() { return types_; }

    // The finished module: header and sections in SPIR-V's order.
    std::vector<uint32_t> Finish(spv::AddressingModel addressing, spv::MemoryModel memory);

  private:
    Id next_id_ = 1;
    std::set<spv::Capability> capabilities_;
    std::set<std::string> extensions_;
    Id glsl_ = 0;
    Id entry_function_ = 0;
    std::string entry_name_;
    std::tuple<uint32_t, uint32_t, uint32_t> local_size_{1, 1, 1};
    std::vector<Id> interface_;
    std::vector<std::vector<uint32_t>> execution_modes_;  // mode, then its literals

    InstList debug_;
    InstList annotations_;
    InstList types_;  // types, constants and global variables, in order of creation
    InstList functions_;

    // Interning tables. Keys: (opcode, operands...).
    std::map<std::vector<uint32_t>, Id> type_ids_;
    std::map<std::pair<Id, uint64_t>, Id> const_ids_;
    std::map<Id, uint64_t> const_bits_;    // constant id -> its value bits
    std::map<Id, uint32_t> int_widths_;    // int type id -> width
    std::map<Id, bool> int_signed_;        // int type id -> signedness
    std::map<Id, uint32_t> float_widths_;  // float type id -> width
    Id bool_type_ = 0;
    Id bfloat16_type_ = 0;  // a tile of it needs BFloat16CooperativeMatrixKHR
    Id true_ = 0, false_ = 0;
};

}  // namespace nvk::spirv
