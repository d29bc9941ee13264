#include "spirv/module_builder.h"

#include <cstring>

namespace nvk::spirv {

namespace {
uint32_t W(spv::Capability c) { return static_cast<uint32_t>(c); }
}  // namespace

void InstList::Add(spv::Op op, const uint32_t* operands, size_t count) {
    uint32_t word_count = static_cast<uint32_t>(count + 1);
    words_.push_back((word_count << 16) | static_cast<uint32_t>(op));
    words_.insert(words_.end(), operands, operands + count);
}

void AppendString(std::vector<uint32_t>& words, std::string_view s) {
    // Bytes are packed little end first; the NUL terminator always fits
    // because the word count rounds (size + 1) up.
    size_t n = (s.size() + 1 + 3) / 4;
    size_t start = words.size();
    words.resize(start + n, 0);
    for (size_t i = 0; i < s.size(); ++i) {
        words[start + i / 4] |= static_cast<uint32_t>(static_cast<uint8_t>(s[i])) << (8 * (i % 4));
    }
}

Id ModuleBuilder::GlslStd450() {
    if (glsl_ == 0) glsl_ = NewId();
    return glsl_;
}

void ModuleBuilder::Name(Id target, std::string_view name) {
    if (name.empty()) return;
    std::vector<uint32_t> ops = {target};
    AppendString(ops, name);
    debug_.Add(spv::Op::OpName, ops);
}

void ModuleBuilder::MemberName(Id type, uint32_t member, std::string_view name) {
    if (name.empty()) return;
    std::vector<uint32_t> ops = {type, member};
    AppendString(ops, name);
    debug_.Add(spv::Op::OpMemberName, ops);
}

void ModuleBuilder::Decorate(Id target, spv::Decoration d, std::initializer_list<uint32_t> extra) {
    std::vector<uint32_t> ops = {target, static_cast<uint32_t>(d)};
    ops.insert(ops.end(), extra.begin(), extra.end());
    annotations_.Add(spv::Op::OpDecorate, ops);
}

void ModuleBuilder::MemberDecorate(Id type, uint32_t member, spv::Decoration d,
                                   std::initializer_list<uint32_t> extra) {
    std::vector<uint32_t> ops = {type, member, static_cast<uint32_t>(d)};
    ops.insert(ops.end(), extra.begin(), extra.end());
    annotations_.Add(spv::Op::OpMemberDecorate, ops);
}

// ---------------------------------------------------------------- types

namespace {
// The interning key of a type: its opcode followed by its operands.
std::vector<uint32_t> Key(spv::Op op, std::initializer_list<uint32_t> operands) {
    std::vector<uint32_t> k = {static_cast<uint32_t>(op)};
    k.insert(k.end(), operands.begin(), operands.end());
    return k;
}
}  // namespace

Id ModuleBuilder::TypeVoid() {
    auto key = Key(spv::Op::OpTypeVoid, {});
    if (auto it = type_ids_.find(key); it != type_ids_.end()) return it->second;
    Id id = NewId();
    types_.Add(spv::Op::OpTypeVoid, {id});
    return type_ids_[key] = id;
}

Id ModuleBuilder::TypeBool() {
    if (bool_type_ == 0) {
        bool_type_ = NewId();
        types_.Add(spv::Op::OpTypeBool, {bool_type_});
    }
    return bool_type_;
}

Id ModuleBuilder::TypeInt(uint32_t width, bool is_signed) {
    auto key = Key(spv::Op::OpTypeInt, {width, is_signed ? 1u : 0u});
    if (auto it = type_ids_.find(key); it != type_ids_.end()) return it->second;
    if (width == 8) AddCapability(spv::Capability::Int8);
    if (width == 16) AddCapability(spv::Capability::Int16);
    if (width == 64) AddCapability(spv::Capability::Int64);
    Id id = NewId();
    types_.Add(spv::Op::OpTypeInt, {id, width, is_signed ? 1u : 0u});
    int_widths_[id] = width;
    int_signed_[id] = is_signed;
    return type_ids_[key] = id;
}

Id ModuleBuilder::TypeFloat(uint32_t width) {
    auto key = Key(spv::Op::OpTypeFloat, {width});
    if (auto it = type_ids_.find(key); it != type_ids_.end()) return it->second;
    if (width == 16) AddCapability(spv::Capability::Float16);
    if (width == 64) AddCapability(spv::Capability::Float64);
    Id id = NewId();
    types_.Add(spv::Op::OpTypeFloat, {id, width});
    float_widths_[id] = width;
    return type_ids_[key] = id;
}

Id ModuleBuilder::TypeBFloat16() {
    if (bfloat16_type_ == 0) {
        bfloat16_type_ = NewId();
        types_.Add(spv::Op::OpTypeFloat,
                   {bfloat16_type_, 16, static_cast<uint32_t>(spv::FPEncoding::BFloat16KHR)});
        AddCapability(spv::Capability::BFloat16TypeKHR);
        AddExtension("SPV_KHR_bfloat16");
    }
    return bfloat16_type_;
}

Id ModuleBuilder::TypeVector(Id component, uint32_t count) {
    auto key = Key(spv::Op::OpTypeVector, {component, count});
    if (auto it = type_ids_.find(key); it != type_ids_.end()) return it->second;
    Id id = NewId();
    types_.Add(spv::Op::OpTypeVector, {id, component, count});
    return type_ids_[key] = id;
}

Id ModuleBuilder::TypePointer(spv::StorageClass storage, Id pointee) {
    auto key = Key(spv::Op::OpTypePointer, {static_cast<uint32_t>(storage), pointee});
    if (auto it = type_ids_.find(key); it != type_ids_.end()) return it->second;
    Id id = NewId();
    types_.Add(spv::Op::OpTypePointer, {id, static_cast<uint32_t>(storage), pointee});
    return type_ids_[key] = id;
}

Id ModuleBuilder::TypeArray(Id element, Id length) {
    auto key = Key(spv::Op::OpTypeArray, {element, length});
    if (auto it = type_ids_.find(key); it != type_ids_.end()) return it->second;
    Id id = NewId();
    types_.Add(spv::Op::OpTypeArray, {id, element, length});
    return type_ids_[key] = id;
}

Id ModuleBuilder::TypeCooperativeMatrix(Id component, uint32_t rows, uint32_t cols, uint32_t use) {
    // Scope, rows, columns and use are ids of constants, declared before the type.
    Id scope = ConstU32(static_cast<uint32_t>(spv::Scope::Subgroup));
    Id nrows = ConstU32(rows), ncols = ConstU32(cols), nuse = ConstU32(use);
    std::vector<uint32_t> ops = {component, scope, nrows, ncols, nuse};
    auto key = Key(spv::Op::OpTypeCooperativeMatrixKHR, {component, scope, nrows, ncols, nuse});
    if (auto it = type_ids_.find(key); it != type_ids_.end()) return it->second;
    Id id = NewId();
    ops.insert(ops.begin(), id);
    types_.Add(spv::Op::OpTypeCooperativeMatrixKHR, ops);
    AddCapability(spv::Capability::CooperativeMatrixKHR);
    AddExtension("SPV_KHR_cooperative_matrix");
    if (component == bfloat16_type_) AddCapability(spv::Capability::BFloat16CooperativeMatrixKHR);
    return type_ids_[key] = id;
}

Id ModuleBuilder::TypeFunction(Id return_type) {
    auto key = Key(spv::Op::OpTypeFunction, {return_type});
    if (auto it = type_ids_.find(key); it != type_ids_.end()) return it->second;
    Id id = NewId();
    types_.Add(spv::Op::OpTypeFunction, {id, return_type});
    return type_ids_[key] = id;
}

Id ModuleBuilder::TypeStruct(const std::vector<Id>& members) {
    Id id = NewId();
    std::vector<uint32_t> ops = {id};
    ops.insert(ops.end(), members.begin(), members.end());
    types_.Add(spv::Op::OpTypeStruct, ops);
    return id;
}

// ---------------------------------------------------------------- constants

Id ModuleBuilder::ConstBool(bool value) {
    Id& slot = value ? true_ : false_;
    if (slot == 0) {
        slot = NewId();
        types_.Add(value ? spv::Op::OpConstantTrue : spv::Op::OpConstantFalse, {TypeBool(), slot});
    }
    return slot;
}

Id ModuleBuilder::ConstScalar(Id type, uint64_t bits) {
    if (type == bool_type_ && bool_type_ != 0) return ConstBool(bits != 0);
    uint32_t width = 32;
    bool is_signed = false;
    if (auto it = int_widths_.find(type); it != int_widths_.end()) {
        width = it->second;
        is_signed = int_signed_[type];
    } else if (auto f = float_widths_.find(type); f != float_widths_.end()) {
        width = f->second;
    }
    if (width < 64) {
        uint64_t mask = (uint64_t{1} << width) - 1;
        bits &= mask;
        if (is_signed && width < 32 && (bits >> (width - 1)) & 1) bits |= ~mask & 0xffffffffu;
    }
    auto key = std::make_pair(type, bits);
    if (auto it = const_ids_.find(key); it != const_ids_.end()) return it->second;
    Id id = NewId();
    if (width == 64) {
        types_.Add(spv::Op::OpConstant,
                   {type, id, static_cast<uint32_t>(bits), static_cast<uint32_t>(bits >> 32)});
    } else {
        types_.Add(spv::Op::OpConstant, {type, id, static_cast<uint32_t>(bits)});
    }
    const_bits_[id] = bits & (width == 64 ? ~uint64_t{0} : (uint64_t{1} << width) - 1);
    return const_ids_[key] = id;
}

bool ModuleBuilder::IntConstBits(Id id, uint64_t* bits) const {
    auto it = const_bits_.find(id);
    if (it == const_bits_.end()) return false;
    *bits = it->second;
    return true;
}

Id ModuleBuilder::SpecConstU32(uint32_t default_value, uint32_t spec_id) {
    Id id = NewId();
    types_.Add(spv::Op::OpSpecConstant, {TypeInt(32, false), id, default_value});
    Decorate(id, spv::Decoration::SpecId, {spec_id});
    return id;
}

Id ModuleBuilder::SpecConstComposite(Id type, const std::vector<Id>& parts) {
    Id id = NewId();
    std::vector<uint32_t> ops = {type, id};
    ops.insert(ops.end(), parts.begin(), parts.end());
    types_.Add(spv::Op::OpSpecConstantComposite, ops);
    return id;
}

Id ModuleBuilder::GlobalVariable(Id pointer_type, spv::StorageClass storage) {
    Id id = NewId();
    types_.Add(spv::Op::OpVariable, {pointer_type, id, static_cast<uint32_t>(storage)});
    interface_.push_back(id);
    return id;
}

// ---------------------------------------------------------------- assembly

std::vector<uint32_t> ModuleBuilder::Finish(spv::AddressingModel addressing,
                                            spv::MemoryModel memory) {
    InstList head;
    for (spv::Capability c : capabilities_) head.Add(spv::Op::OpCapability, {W(c)});
    for (const std::string& e : extensions_) {
        std::vector<uint32_t> ops;
        AppendString(ops, e);
        head.Add(spv::Op::OpExtension, ops);
    }
    if (glsl_ != 0) {
        std::vector<uint32_t> ops = {glsl_};
        AppendString(ops, "GLSL.std.450");
        head.Add(spv::Op::OpExtInstImport, ops);
    }
    head.Add(spv::Op::OpMemoryModel,
             {static_cast<uint32_t>(addressing), static_cast<uint32_t>(memory)});
    if (entry_function_ != 0) {
        std::vector<uint32_t> ops = {static_cast<uint32_t>(spv::ExecutionModel::GLCompute),
                                     entry_function_};
        AppendString(ops, entry_name_);
        ops.insert(ops.end(), interface_.begin(), interface_.end());
        head.Add(spv::Op::OpEntryPoint, ops);
        auto [x, y, z] = local_size_;
        head.Add(spv::Op::OpExecutionMode,
                 {entry_function_, static_cast<uint32_t>(spv::ExecutionMode::LocalSize), x, y, z});
        for (const std::vector<uint32_t>& mode : execution_modes_) {
            std::vector<uint32_t> ops = {entry_function_};
            ops.insert(ops.end(), mode.begin(), mode.end());
            head.Add(spv::Op::OpExecutionMode, ops);
        }
    }

    std::vector<uint32_t> out = {0x07230203u, 0x00010500u /* SPIR-V 1.5 */, 0 /* generator */,
                                 next_id_ /* bound */, 0};
    for (const InstList* s : {&head, &debug_, &annotations_, &types_, &functions_}) {
        out.insert(out.end(), s->words().begin(), s->words().end());
    }
    return out;
}

}  // namespace nvk::spirv
