#include "spirv/zero_one.h"

#include <spirv-tools/libspirv.h>

#include <spirv/unified1/spirv.hpp11>

#include <map>
#include <optional>
#include <unordered_map>
#include <utility>

namespace nvk::spirv {
namespace {

using Words = std::vector<uint32_t>;

struct Inst {
    spv::Op op;
    uint32_t type;    // result type id, 0 where none
    uint32_t result;  // result id, 0 where none
    size_t at;        // first word in the module
    size_t count;
};

// What makes a 0/1 value 1 (or a 0/-1 value -1, where `minus`): the bool `id`, its
// negation, or the integer `id` being nonzero.
struct Cond {
    enum Kind { kBool, kNotBool, kNonZero } kind;
    uint32_t id;
    bool minus = false;
};

class Rewriter {
  public:
    explicit Rewriter(const Words& words) : in_(words) {}

    bool Parse() {
        spv_context context = spvContextCreate(SPV_ENV_VULKAN_1_2);
        auto on_inst = [](void* user, const spv_parsed_instruction_t* p) -> spv_result_t {
            auto* self = static_cast<Rewriter*>(user);
            self->insts_.push_back({static_cast<spv::Op>(p->opcode), p->type_id, p->result_id,
                                    static_cast<size_t>(p->words - self->in_.data()), p->num_words});
            return SPV_SUCCESS;
        };
        spv_result_t result =
            spvBinaryParse(context, this, in_.data(), in_.size(), nullptr, on_inst, nullptr);
        spvContextDestroy(context);
        if (result != SPV_SUCCESS) return false;
        bound_ = in_[3];
        for (size_t i = 0; i < insts_.size(); ++i) {
            const Inst& inst = insts_[i];
            if (inst.result) {
                def_[inst.result] = i;
                type_of_[inst.result] = inst.type;
            }
            if (inst.op == spv::Op::OpTypeInt) int_width_[inst.result] = Word(inst, 2);
            if (inst.op == spv::Op::OpTypeBool) bool_type_ = inst.result;
            if (inst.op == spv::Op::OpFunction && !first_function_) first_function_ = i + 1;
            if (int_width_.count(inst.type) && inst.result) {
                if (inst.op == spv::Op::OpConstant) {
                    uint64_t v = Word(inst, 3);
                    if (inst.count > 4) v |= static_cast<uint64_t>(Word(inst, 4)) << 32;
                    Record(inst.type, v, inst.result);
                } else if (inst.op == spv::Op::OpConstantNull) {
                    Record(inst.type, 0, inst.result);
                }
            }
        }
        return first_function_ != 0;
    }

    // The replacement words of every instruction to rewrite; the module's new
    // globals (constants, a bool type) are in new_globals_.
    size_t Plan() {
        for (size_t i = first_function_; i < insts_.size(); ++i) {
            const Inst& inst = insts_[i];
            const bool is_and = inst.op == spv::Op::OpBitwiseAnd;
            if ((inst.op != spv::Op::OpIMul && !is_and) || !int_width_.count(inst.type)) continue;
            for (int side = 0; side < 2; ++side) {
                const uint32_t v = Word(inst, 4 - side), y = Word(inst, 3 + side);
                std::optional<Cond> cond = ZeroOne(v);
                if (!cond || !type_of_.count(y) || (is_and && IsConstant(y))) continue;
                replace_[i] = Select(inst, *cond, y, is_and);
                break;
            }
        }
        return replace_.size();
    }

    Words Write() const {
        Words out(in_.begin(), in_.begin() + 5);
        out[3] = bound_;
        for (size_t i = 0; i < insts_.size(); ++i) {
            if (i + 1 == first_function_) out.insert(out.end(), new_globals_.begin(), new_globals_.end());
            auto it = replace_.find(i);
            if (it != replace_.end()) {
                out.insert(out.end(), it->second.begin(), it->second.end());
                continue;
            }
            const Inst& inst = insts_[i];
            out.insert(out.end(), in_.begin() + inst.at, in_.begin() + inst.at + inst.count);
        }
        return out;
    }

  private:
    uint32_t Word(const Inst& inst, size_t k) const { return in_[inst.at + k]; }

    void Record(uint32_t type, uint64_t value, uint32_t id) {
        const uint32_t width = int_width_.at(type);
        if (width < 64) value &= (uint64_t{1} << width) - 1;
        constants_.emplace(std::make_pair(type, value), id);
        value_[id] = value;
    }

    // The value of an integer constant, or of a shift or bitcast of constants (the emitter
    // sign-extends a 32-bit literal by a shift pair, which SPIRV-Tools leaves for 64 bits).
    std::optional<uint64_t> Value(uint32_t id) const {
        auto known = value_.find(id);
        if (known != value_.end()) return known->second;
        auto it = def_.find(id);
        if (it == def_.end() || !int_width_.count(insts_[it->second].type)) return {};
        const Inst& d = insts_[it->second];
        const uint32_t width = int_width_.at(d.type);
        if (d.op == spv::Op::OpBitcast) {
            auto from = def_.find(Word(d, 3));
            if (from != def_.end() && int_width_.count(insts_[from->second].type) &&
                int_width_.at(insts_[from->second].type) == width)
                return Value(Word(d, 3));
            return {};
        }
        const bool left = d.op == spv::Op::OpShiftLeftLogical, arithmetic = d.op == spv::Op::OpShiftRightArithmetic;
        if (!left && !arithmetic && d.op != spv::Op::OpShiftRightLogical) return {};
        std::optional<uint64_t> v = Value(Word(d, 3)), n = Value(Word(d, 4));
        if (!v || !n || *n >= width) return {};
        uint64_t r;
        if (left) {
            r = *v << *n;
        } else if (arithmetic) {
            const int64_t sv = static_cast<int64_t>(*v << (64 - width)) >> (64 - width);  // sign-extended
            r = static_cast<uint64_t>(sv >> *n);
        } else {
            r = *v >> *n;
        }
        return width < 64 ? r & ((uint64_t{1} << width) - 1) : r;
    }

    bool IsConstant(uint32_t id, uint64_t v) const {
        std::optional<uint64_t> value = Value(id);
        return value && *value == v;
    }

    bool IsConstant(uint32_t id) const { return Value(id).has_value(); }

    // How the non-constant integer `id` is known to be 0 or 1, if it is.
    std::optional<Cond> ZeroOne(uint32_t id) const {
        auto it = def_.find(id);
        if (it == def_.end() || it->second < first_function_) return {};
        const Inst& d = insts_[it->second];
        if (!int_width_.count(d.type)) return {};
        const uint64_t ones = AllOnes(d.type);
        switch (d.op) {
            case spv::Op::OpBitcast:
            case spv::Op::OpSConvert:  // keeps 0, 1 and -1
                return ZeroOne(Word(d, 3));
            case spv::Op::OpUConvert: {
                std::optional<Cond> c = ZeroOne(Word(d, 3));
                if (c && c->minus) return {};
                return c;
            }
            case spv::Op::OpSNegate: {
                std::optional<Cond> c = ZeroOne(Word(d, 3));
                if (c) c->minus = !c->minus;
                return c;
            }
            case spv::Op::OpSelect: {
                const uint32_t a = Word(d, 4), b = Word(d, 5);
                for (uint64_t one : {uint64_t{1}, ones}) {
                    if (IsConstant(a, one) && IsConstant(b, 0)) return Cond{Cond::kBool, Word(d, 3), one != 1};
                    if (IsConstant(a, 0) && IsConstant(b, one)) return Cond{Cond::kNotBool, Word(d, 3), one != 1};
                }
                return {};
            }
            case spv::Op::OpBitwiseAnd: {
                const uint32_t a = Word(d, 3), b = Word(d, 4);
                if ((IsConstant(a, 1) && !IsConstant(b)) || (IsConstant(b, 1) && !IsConstant(a)))
                    return Cond{Cond::kNonZero, id};
                return {};
            }
            case spv::Op::OpShiftRightArithmetic: {
                // (x << (w - 1)) >> (w - 1): the low bit of x as 0 or -1.
                const uint64_t last = int_width_.at(d.type) - 1;
                uint32_t shifted = Word(d, 3);
                auto shl = def_.find(shifted);
                while (shl != def_.end() && insts_[shl->second].op == spv::Op::OpBitcast) {
                    shifted = Word(insts_[shl->second], 3);
                    shl = def_.find(shifted);
                }
                if (!IsConstant(Word(d, 4), last) || shl == def_.end() || !int_width_.count(insts_[shl->second].type) ||
                    int_width_.at(insts_[shl->second].type) != last + 1)
                    return {};
                const Inst& l = insts_[shl->second];
                if (l.op != spv::Op::OpShiftLeftLogical || !IsConstant(Word(l, 4), last) || IsConstant(Word(l, 3)))
                    return {};
                return Cond{Cond::kNonZero, id, true};
            }
            default:
                return {};
        }
    }

    uint64_t AllOnes(uint32_t type) const {
        const uint32_t width = int_width_.at(type);
        return width < 64 ? (uint64_t{1} << width) - 1 : ~uint64_t{0};
    }

    uint32_t Constant(uint32_t type, uint64_t value) {
        auto it = constants_.find({type, value});
        if (it != constants_.end()) return it->second;
        const uint32_t id = bound_++;
        Words operands{type, id, static_cast<uint32_t>(value)};
        if (int_width_.at(type) > 32) operands.push_back(static_cast<uint32_t>(value >> 32));
        Append(spv::Op::OpConstant, operands, &new_globals_);
        Record(type, value, id);
        return id;
    }

    static void Append(spv::Op op, const Words& operands, Words* out) {
        out->push_back(static_cast<uint32_t>((operands.size() + 1) << 16) | static_cast<uint32_t>(op));
        out->insert(out->end(), operands.begin(), operands.end());
    }

    // `inst` (y * v or y & v, v 0 or 1, or 0 or -1, by `cond`) as a select.
    Words Select(const Inst& inst, Cond cond, uint32_t y, bool is_and) {
        const uint32_t t = inst.type;
        Words words;
        uint32_t c = cond.id;
        if (cond.kind == Cond::kNonZero) {
            if (!bool_type_) {
                bool_type_ = bound_++;
                Append(spv::Op::OpTypeBool, {bool_type_}, &new_globals_);
            }
            const uint32_t zero = Constant(type_of_.at(cond.id), 0);
            c = bound_++;
            Append(spv::Op::OpINotEqual, {bool_type_, c, cond.id, zero}, &words);
        }
        if (type_of_.at(y) != t) {
            const uint32_t cast = bound_++;
            Append(spv::Op::OpBitcast, {t, cast, y}, &words);
            y = cast;
        }
        if (is_and && !cond.minus) {  // y & 1
            const uint32_t bit = bound_++;
            Append(spv::Op::OpBitwiseAnd, {t, bit, y, Constant(t, 1)}, &words);
            y = bit;
        } else if (!is_and && cond.minus) {  // -y
            const uint32_t negated = bound_++;
            Append(spv::Op::OpISub, {t, negated, Constant(t, 0), y}, &words);
            y = negated;
        }
        const uint32_t zero = Constant(t, 0);
        if (cond.kind == Cond::kNotBool) {
            Append(spv::Op::OpSelect, {t, inst.result, c, zero, y}, &words);
        } else {
            Append(spv::Op::OpSelect, {t, inst.result, c, y, zero}, &words);
        }
        return words;
    }

    const Words& in_;
    std::vector<Inst> insts_;
    size_t first_function_ = 0;  // index of the first OpFunction, plus one
    uint32_t bound_ = 0;
    uint32_t bool_type_ = 0;
    std::unordered_map<uint32_t, size_t> def_;
    std::unordered_map<uint32_t, uint32_t> type_of_;
    std::unordered_map<uint32_t, uint32_t> int_width_;           // integer type -> width
    std::map<std::pair<uint32_t, uint64_t>, uint32_t> constants_;  // (type, value) -> id
    std::unordered_map<uint32_t, uint64_t> value_;               // integer constant -> value
    std::map<size_t, Words> replace_;
    Words new_globals_;
};

}  // namespace

size_t SelectZeroOneProducts(std::vector<uint32_t>* words) {
    if (words->size() < 5) return 0;
    Rewriter rewriter(*words);
    if (!rewriter.Parse()) return 0;
    const size_t n = rewriter.Plan();
    if (n) *words = rewriter.Write();
    return n;
}

}  // namespace nvk::spirv
