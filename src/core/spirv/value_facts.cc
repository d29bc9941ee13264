#include "spirv/value_facts.h"

#include <algorithm>
#include <map>

namespace nvk::spirv {
namespace {

constexpr int kMaxDepth = 16;
// Index arithmetic reaches 40 pure operations deep where NVIDIA's ranges are hidden
// (kir/int_ranges.h); each value is decided once, so the bound is only the stack's.
constexpr int kMaxInvariantDepth = 1024;

// Ops that compute a value from their operands alone: an address made of them is the same
// in every iteration of a loop where the operands are.
bool IsPure(spv::Op op) {
    switch (op) {
        case spv::Op::OpIAdd: case spv::Op::OpISub: case spv::Op::OpIMul:
        case spv::Op::OpBitcast: case spv::Op::OpUConvert: case spv::Op::OpSConvert:
        case spv::Op::OpShiftLeftLogical: case spv::Op::OpShiftRightLogical:
        case spv::Op::OpShiftRightArithmetic: case spv::Op::OpBitwiseAnd:
        case spv::Op::OpBitwiseOr: case spv::Op::OpBitwiseXor: case spv::Op::OpSelect:
        case spv::Op::OpSLessThan: case spv::Op::OpULessThan: case spv::Op::OpSGreaterThan:
        case spv::Op::OpUGreaterThan: case spv::Op::OpIEqual: case spv::Op::OpINotEqual:
        case spv::Op::OpSNegate: case spv::Op::OpNot: case spv::Op::OpLogicalAnd:
        case spv::Op::OpLogicalOr: case spv::Op::OpLogicalNot: case spv::Op::OpUDiv:
        case spv::Op::OpSDiv: case spv::Op::OpUMod: case spv::Op::OpSRem:
        case spv::Op::OpCompositeExtract:
            return true;
        default:
            return false;
    }
}

// Pure ops whose two operands may be swapped without changing the value.
bool Commutes(spv::Op op) {
    switch (op) {
        case spv::Op::OpIAdd: case spv::Op::OpIMul: case spv::Op::OpBitwiseAnd:
        case spv::Op::OpBitwiseOr: case spv::Op::OpBitwiseXor: case spv::Op::OpIEqual:
        case spv::Op::OpINotEqual: case spv::Op::OpLogicalAnd: case spv::Op::OpLogicalOr:
            return true;
        default:
            return false;
    }
}

// Divisions by zero have undefined results, which need not agree between two of them.
bool MayBeUndefined(spv::Op op) {
    return op == spv::Op::OpUDiv || op == spv::Op::OpSDiv || op == spv::Op::OpUMod ||
           op == spv::Op::OpSRem;
}

}  // namespace

bool Apart(const AddressKey& a, uint32_t a_bytes, const AddressKey& b, uint32_t b_bytes) {
    if (a.terms != b.terms) return false;
    const uint64_t gap = b.offset - a.offset;
    return gap >= a_bytes && -gap >= b_bytes;
}

// Storage classes whose memory a device address may reach.
bool MayBeDeviceMemory(uint32_t storage_class) {
    switch (static_cast<spv::StorageClass>(storage_class)) {
        case spv::StorageClass::Function:
        case spv::StorageClass::Private:
        case spv::StorageClass::Workgroup:
        case spv::StorageClass::Input:
        case spv::StorageClass::Output:
        case spv::StorageClass::PushConstant:
            return false;
        default:
            return true;
    }
}

ValueFacts::ValueFacts(const FunctionBlocks& f) {
    for (const Inst& i : f.head) {
        const Words& w = i.words;
        switch (i.op) {
            case spv::Op::OpTypeInt:
                scalar_bytes_[w[1]] = w[2] / 8;
                if (w[2] == 64 && w[3] == 0) u64_ = w[1];
                break;
            case spv::Op::OpTypeFloat: scalar_bytes_[w[1]] = w[2] / 8; break;
            case spv::Op::OpTypeVector: vectors_[w[1]] = {w[2], w[3]}; break;
            case spv::Op::OpTypeBool: bool_ = w[1]; break;
            case spv::Op::OpTypePointer: pointers_[w[1]] = {w[2], w[3]}; break;
            case spv::Op::OpConstant:
                if (w.size() == 4) constants_[w[2]] = w[3];
                if (w.size() == 5) constants_[w[2]] = w[3] | (uint64_t{w[4]} << 32);
                break;
            default:
                break;
        }
        Record(i, SIZE_MAX);
    }
    for (size_t b = 0; b < f.blocks.size(); ++b) {
        for (const Inst& i : f.blocks[b].insts) Record(i, b);
    }
    // Value numbers: blocks come in an order where a definition precedes its uses outside
    // phis, so every operand of a pure instruction has its number when the instruction does.
    std::map<std::vector<uint32_t>, uint32_t> computed;  // op, type, operands' numbers -> id
    for (const Block& block : f.blocks) {
        for (const Inst& i : block.insts) {
            if (!IsPure(i.op) || MayBeUndefined(i.op) || i.words.size() < 4) continue;
            std::vector<uint32_t> what{static_cast<uint32_t>(i.op), i.words[1]};
            for (size_t k = 3; k < i.words.size(); ++k) {
                // OpCompositeExtract's indices are literals, not ids
                const bool literal = i.op == spv::Op::OpCompositeExtract && k > 3;
                what.push_back(literal ? i.words[k] : Number(i.words[k]));
            }
            if (Commutes(i.op) && what.size() == 4 && what[2] > what[3])
                std::swap(what[2], what[3]);
            const uint32_t first = computed.emplace(std::move(what), i.words[2]).first->second;
            if (first != i.words[2]) numbers_[i.words[2]] = first;
        }
    }
}

uint32_t ValueFacts::Number(uint32_t id) const {
    auto n = numbers_.find(id);
    return n == numbers_.end() ? id : n->second;
}

void ValueFacts::Record(const Inst& i, size_t block) {
    bool has_result = false, has_type = false;
    spv::HasResultAndType(i.op, &has_result, &has_type);
    if (!has_result || i.words.size() < (has_type ? 3u : 2u)) return;
    const uint32_t result = i.words[has_type ? 2 : 1];
    defs_[result] = Def{block, &i};
    if (has_type) types_[result] = i.words[1];
}

uint32_t ValueFacts::Bytes(uint32_t type) const {
    auto s = scalar_bytes_.find(type);
    if (s != scalar_bytes_.end()) return s->second;
    auto v = vectors_.find(type);
    if (v != vectors_.end()) return v->second.second * Bytes(v->second.first);
    return 0;
}

uint32_t ValueFacts::TypeOf(uint32_t id) const {
    auto t = types_.find(id);
    return t == types_.end() ? 0 : t->second;
}

// The value of an integer computed from constants alone (the front end's sign
// extensions of constant offsets come as shifts the optimiser leaves), as its bits.
std::optional<uint64_t> ValueFacts::Constant(uint32_t id, int depth) const {
    auto d = defs_.find(id);
    if (d == defs_.end() || depth >= kMaxDepth) return {};
    const Inst& i = *d->second.inst;
    auto width = scalar_bytes_.find(i.words[1]);
    if (i.words.size() < 4 || width == scalar_bytes_.end()) return {};
    const uint32_t bits = width->second * 8;
    if (bits != 32 && bits != 64) return {};
    const uint64_t mask = bits == 64 ? ~uint64_t{0} : 0xFFFFFFFFu;
    if (i.op == spv::Op::OpConstant) return constants_.at(id) & mask;
    std::optional<uint64_t> a = Constant(i.words[3], depth + 1);
    if (!a) return {};
    auto in_bits = scalar_bytes_.find(TypeOf(i.words[3]));
    const uint32_t from = in_bits == scalar_bytes_.end() ? 0 : in_bits->second * 8;
    switch (i.op) {
        case spv::Op::OpBitcast:
            return from == bits ? std::optional<uint64_t>(*a) : std::nullopt;
        case spv::Op::OpUConvert: return *a & mask;
        case spv::Op::OpSConvert:
            if (from != 32 || bits != 64) return {};
            return static_cast<uint64_t>(static_cast<int64_t>(static_cast<int32_t>(*a)));
        default: break;
    }
    if (i.words.size() < 5) return {};
    std::optional<uint64_t> b = Constant(i.words[4], depth + 1);
    if (!b) return {};
    const auto sign = [&](uint64_t v) {
        return bits == 64 ? static_cast<int64_t>(v) : static_cast<int64_t>(static_cast<int32_t>(v));
    };
    switch (i.op) {
        case spv::Op::OpIAdd: return (*a + *b) & mask;
        case spv::Op::OpISub: return (*a - *b) & mask;
        case spv::Op::OpIMul: return (*a * *b) & mask;
        case spv::Op::OpShiftLeftLogical:
            return *b < bits ? std::optional<uint64_t>((*a << *b) & mask) : std::nullopt;
        case spv::Op::OpShiftRightLogical:
            return *b < bits ? std::optional<uint64_t>(*a >> *b) : std::nullopt;
        case spv::Op::OpShiftRightArithmetic:
            return *b < bits ? std::optional<uint64_t>(static_cast<uint64_t>(sign(*a) >> *b) & mask)
                             : std::nullopt;
        default: return {};
    }
}

AddressKey ValueFacts::Key(uint32_t id, int depth) const {
    AddressKey key;
    auto d = defs_.find(id);
    if (d != defs_.end() && depth < kMaxDepth) {
        const Inst& i = *d->second.inst;
        if (i.words[1] == u64_) {
            if (std::optional<uint64_t> c = Constant(id)) {
                key.offset = *c;
                return key;
            }
        }
        if (i.op == spv::Op::OpIAdd && i.words[1] == u64_) {
            AddressKey a = Key(i.words[3], depth + 1), b = Key(i.words[4], depth + 1);
            key.terms = std::move(a.terms);
            key.terms.insert(key.terms.end(), b.terms.begin(), b.terms.end());
            std::sort(key.terms.begin(), key.terms.end());
            key.offset = a.offset + b.offset;
            return key;
        }
    }
    key.terms = {Number(id)};
    return key;
}

// The u64 address a device pointer was made from, or 0.
uint32_t ValueFacts::AddressOf(uint32_t pointer) const {
    auto d = defs_.find(pointer);
    if (d == defs_.end() || d->second.inst->op != spv::Op::OpConvertUToPtr) return 0;
    return d->second.inst->words[3];
}

bool ValueFacts::PointsToDeviceMemory(uint32_t pointer) const {
    auto p = pointers_.find(TypeOf(pointer));
    return p == pointers_.end() || MayBeDeviceMemory(p->second.first);
}

bool ValueFacts::Invariant(uint32_t id, const std::set<size_t>& loop,
                           std::unordered_map<uint32_t, bool>* known, int depth) const {
    auto d = defs_.find(id);
    if (d == defs_.end() || d->second.block == SIZE_MAX || !loop.count(d->second.block))
        return true;
    if (auto k = known->find(id); k != known->end()) return k->second;
    const Inst& i = *d->second.inst;
    bool invariant = depth < kMaxInvariantDepth && IsPure(i.op);
    bool has_result = false, has_type = false;
    spv::HasResultAndType(i.op, &has_result, &has_type);
    const size_t first = (has_type ? 2 : 1) + 1;
    size_t last = i.words.size();
    if (i.op == spv::Op::OpCompositeExtract) last = first + 1;  // the literals are no ids
    for (size_t k = first; invariant && k < last; ++k) {
        invariant = Invariant(i.words[k], loop, known, depth + 1);
    }
    (*known)[id] = invariant;
    return invariant;
}

}  // namespace nvk::spirv
