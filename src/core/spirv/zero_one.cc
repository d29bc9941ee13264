#include "spirv/zero_one.h"

#include <spirv/unified1/spirv.hpp11>

#include <map>
#include <optional>
#include <unordered_map>
#include <utility>

namespace nvk::spirv {
namespace {

using Words = std::vector<uint32_t>;

struct InstAt {
    spv::Op op;
    uint32_t type;    // result type id, 0 where none
    uint32_t result;  // result id, 0 where none
    size_t at;        // first word in the module
    size_t count;
};

constexpr size_t kNone = ~size_t{0};

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

    // One scan of the words (no SPIRV-Tools context: this runs on every compilation).
    bool Parse() {
        if (in_.size() < 5 || in_[0] != spv::MagicNumber) return false;
        bound_ = in_[3];
        def_.assign(bound_, kNone);
        for (size_t at = 5; at < in_.size();) {
            const uint32_t count = in_[at] >> 16;
            if (count == 0 || at + count > in_.size()) return false;
            const auto op = static_cast<spv::Op>(in_[at] & 0xFFFF);
            bool has_result = false, has_type = false;
            spv::HasResultAndType(op, &has_result, &has_type);
            InstAt inst{op, 0, 0, at, count};
            if (has_result && count > (has_type ? 2u : 1u)) {
                inst.type = has_type ? in_[at + 1] : 0;
                inst.result = in_[at + (has_type ? 2 : 1)];
                if (inst.result >= bound_) return false;
                def_[inst.result] = insts_.size();
            }
            at += count;
            if (op == spv::Op::OpTypeInt) int_width_[inst.result] = Word(inst, 2);
            if (op == spv::Op::OpTypeBool) bool_type_ = inst.result;
            if (op == spv::Op::OpFunction && !first_function_) first_function_ = insts_.size() + 1;
            if (int_width_.count(inst.type)) {
                if (op == spv::Op::OpConstant) {
                    uint64_t v = Word(inst, 3);
                    if (count > 4) v |= static_cast<uint64_t>(Word(inst, 4)) << 32;
                    Record(inst.type, v, inst.result);
                } else if (op == spv::Op::OpConstantNull) {
                    Record(inst.type, 0, inst.result);
                }
            }
            insts_.push_back(inst);
        }
        return first_function_ != 0;
    }

    // The replacement words of every instruction to rewrite; the module's new
    // globals (constants, a bool type) are in new_globals_.
    size_t Plan() {
        for (size_t i = first_function_; i < insts_.size(); ++i) {
            const InstAt& inst = insts_[i];
            const bool is_and = inst.op == spv::Op::OpBitwiseAnd;
            if ((inst.op != spv::Op::OpIMul && !is_and) || !int_width_.count(inst.type)) continue;
            for (int side = 0; side < 2; ++side) {
                const uint32_t v = Word(inst, 4 - side), y = Word(inst, 3 + side);
                std::optional<Cond> cond = ZeroOne(v);
                if (!cond || !Def(y) || (is_and && IsConstant(y))) continue;
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
            const InstAt& inst = insts_[i];
            out.insert(out.end(), in_.begin() + inst.at, in_.begin() + inst.at + inst.count);
        }
        return out;
    }

  private:
    uint32_t Word(const InstAt& inst, size_t k) const { return in_[inst.at + k]; }

    // The instruction that defines `id`, or null.
    const InstAt* Def(uint32_t id) const {
        return id < def_.size() && def_[id] != kNone ? &insts_[def_[id]] : nullptr;
    }

    // The width of the integer type `type`; 0 for any other type.
    uint32_t Width(uint32_t type) const {
        auto it = int_width_.find(type);
        return it == int_width_.end() ? 0 : it->second;
    }

    // The integer instruction that defines `id`, past bitcasts between integers; or null.
    const InstAt* IntDefPastBitcasts(uint32_t id) const {
        const InstAt* d = Def(id);
        while (d && d->op == spv::Op::OpBitcast && Width(d->type)) d = Def(Word(*d, 3));
        return d && Width(d->type) ? d : nullptr;
    }

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
        const InstAt* def = Def(id);
        const uint32_t width = def ? Width(def->type) : 0;
        if (!width) return {};
        const InstAt& d = *def;
        if (d.op == spv::Op::OpBitcast) {
            const InstAt* from = Def(Word(d, 3));
            if (from && Width(from->type) == width) return Value(Word(d, 3));
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
        const InstAt* def = Def(id);
        if (!def || def_[id] < first_function_ || !Width(def->type)) return {};  // in the function
        const InstAt& d = *def;
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
                const uint64_t last = Width(d.type) - 1;
                const InstAt* shl = IntDefPastBitcasts(Word(d, 3));
                if (!IsConstant(Word(d, 4), last) || !shl || shl->op != spv::Op::OpShiftLeftLogical ||
                    Width(shl->type) != last + 1 || !IsConstant(Word(*shl, 4), last) || IsConstant(Word(*shl, 3)))
                    return {};
                return Cond{Cond::kNonZero, id, true};
            }
            default:
                return {};
        }
    }

    uint64_t AllOnes(uint32_t type) const {
        const uint32_t width = Width(type);
        return width < 64 ? (uint64_t{1} << width) - 1 : ~uint64_t{0};
    }

    uint32_t Constant(uint32_t type, uint64_t value) {
        auto it = constants_.find({type, value});
        if (it != constants_.end()) return it->second;
        const uint32_t id = bound_++;
        Words operands{type, id, static_cast<uint32_t>(value)};
        if (Width(type) > 32) operands.push_back(static_cast<uint32_t>(value >> 32));
        Append(spv::Op::OpConstant, operands, &new_globals_);
        Record(type, value, id);
        return id;
    }

    static void Append(spv::Op op, const Words& operands, Words* out) {
        out->push_back(static_cast<uint32_t>((operands.size() + 1) << 16) | static_cast<uint32_t>(op));
        out->insert(out->end(), operands.begin(), operands.end());
    }

    // `inst` (y * v or y & v, v 0 or 1, or 0 or -1, by `cond`) as a select.
    Words Select(const InstAt& inst, Cond cond, uint32_t y, bool is_and) {
        const uint32_t t = inst.type;
        Words words;
        uint32_t c = cond.id;
        if (cond.kind == Cond::kNonZero) {
            if (!bool_type_) {
                bool_type_ = bound_++;
                Append(spv::Op::OpTypeBool, {bool_type_}, &new_globals_);
            }
            const uint32_t zero = Constant(Def(cond.id)->type, 0);
            c = bound_++;
            Append(spv::Op::OpINotEqual, {bool_type_, c, cond.id, zero}, &words);
        }
        if (Def(y)->type != t) {
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
    std::vector<InstAt> insts_;
    size_t first_function_ = 0;  // index of the first OpFunction, plus one
    uint32_t bound_ = 0;
    uint32_t bool_type_ = 0;
    std::vector<size_t> def_;  // result id -> index in insts_, kNone where none
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
