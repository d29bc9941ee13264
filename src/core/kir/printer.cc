#include "kir/printer.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>

namespace nvk::kir {
namespace {

// Loc annotations start at this column when the instruction is shorter.
constexpr size_t kLocColumn = 40;

bool IsBareChar(char c, bool first) {
    bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '.' ||
                 c == '$';
    return alpha || (!first && c >= '0' && c <= '9');
}

std::string Quote(std::string_view s) {
    std::string out = "\"";
    for (unsigned char c : s) {
        if (c == '"' || c == '\\') {
            out += '\\';
            out += static_cast<char>(c);
        } else if (c == '\n') {
            out += "\\n";
        } else if (c == '\t') {
            out += "\\t";
        } else if (c < 0x20 || c >= 0x7f) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\x%02x", c);
            out += buf;
        } else {
            out += static_cast<char>(c);
        }
    }
    return out + "\"";
}

// A name prints bare when it is an identifier, quoted otherwise.
std::string Name(std::string_view s) {
    bool bare = !s.empty();
    for (size_t i = 0; i < s.size() && bare; ++i) bare = IsBareChar(s[i], i == 0);
    return bare ? std::string(s) : Quote(s);
}

std::string Hex(uint64_t v) {
    char buf[24];
    std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
    return buf;
}

std::string ValueRef(ValueId v) { return v == kNone ? "%?" : "%" + std::to_string(v); }
std::string BlockRef(BlockId b) { return b == kNone ? "%b?" : "%b" + std::to_string(b); }

// A float constant prints as the shortest decimal that reads back to the same
// bits; infinities, NaNs, f16 and stray high bits print as the raw bit pattern.
template <typename F, typename Bits>
std::string FloatLiteral(uint64_t imm) {
    if constexpr (sizeof(Bits) < 8) {
        if (imm >> (8 * sizeof(Bits)) != 0) return Hex(imm);
    }
    Bits bits = static_cast<Bits>(imm);
    F f;
    std::memcpy(&f, &bits, sizeof f);
    if (!std::isfinite(f)) return Hex(imm);
    char buf[64];
    auto [end, ec] = std::to_chars(buf, buf + sizeof buf, f);
    if (ec != std::errc()) return Hex(imm);
    std::string s(buf, end);
    if (s.find_first_of(".en") == std::string::npos) s += ".0";
    return s;
}

std::string ConstLiteral(const Module& m, const Inst& inst) {
    if (inst.type >= m.types.size() || m.types[inst.type].kind != Type::Kind::kScalar)
        return Hex(inst.imm);
    ScalarKind k = m.types[inst.type].scalar;
    if (k == ScalarKind::kBool) {
        if (inst.imm <= 1) return inst.imm ? "true" : "false";
        return Hex(inst.imm);
    }
    if (k == ScalarKind::kF32) return FloatLiteral<float, uint32_t>(inst.imm);
    if (k == ScalarKind::kF64) return FloatLiteral<double, uint64_t>(inst.imm);
    if (k == ScalarKind::kF16) return Hex(inst.imm);
    if (IsSigned(k)) return std::to_string(static_cast<int64_t>(inst.imm));
    return std::to_string(inst.imm);
}

std::string LocText(const Loc& loc) {
    if (loc.file == kNone && loc.line == 0) return "";
    if (loc.file == 0) return "!" + std::to_string(loc.line);
    std::string file = loc.file == kNone ? "?" : std::to_string(loc.file);
    return "!" + file + ":" + std::to_string(loc.line);
}

std::string MergeText(const Merge& merge) {
    switch (merge.kind) {
        case Merge::Kind::kNone: return "";
        case Merge::Kind::kSelection: return " selection(merge " + BlockRef(merge.merge) + ")";
        case Merge::Kind::kLoop:
            return " loop(merge " + BlockRef(merge.merge) + ", continue " + BlockRef(merge.cont) +
                   ")";
    }
    return "";
}

const char* SpaceName(AddressSpace s) {
    switch (s) {
        case AddressSpace::kFunction: return "function";
        case AddressSpace::kGlobal: return "global";
        case AddressSpace::kWorkgroup: return "workgroup";
    }
    return "?";
}

std::string TypeNameDepth(const Module& m, TypeId id, int depth) {
    if (id >= m.types.size() || depth > 16) return "<type " + std::to_string(id) + "?>";
    const Type& t = m.types[id];
    switch (t.kind) {
        case Type::Kind::kVoid: return "void";
        case Type::Kind::kScalar: return ScalarName(t.scalar);
        case Type::Kind::kPointer:
            return std::string("ptr<") + SpaceName(t.space) + ", " +
                   TypeNameDepth(m, t.pointee, depth + 1) + ">";
        case Type::Kind::kCoopMatrix: {
            static const char* uses[] = {"a", "b", "acc"};
            return std::string("coopmat<") + uses[static_cast<int>(t.use)] + ", " +
                   std::to_string(t.rows) + "x" + std::to_string(t.cols) + ", " +
                   ScalarName(t.scalar) + ">";
        }
    }
    return "?";
}

}  // namespace

std::string TypeName(const Module& module, TypeId type) { return TypeNameDepth(module, type, 0); }

std::string PrintInst(const Module& m, const Inst& inst) {
    std::string s;
    if (inst.result != kNone) s += ValueRef(inst.result) + " = ";
    s += OpName(inst.op);
    std::vector<std::string> args;
    switch (inst.op) {
        case Op::kConst: args.push_back(ConstLiteral(m, inst)); break;
        case Op::kParam: args.push_back(std::to_string(inst.imm)); break;
        case Op::kBuiltin: {
            std::string name = inst.imm <= static_cast<uint64_t>(Builtin::kNumGroups)
                                   ? BuiltinName(static_cast<Builtin>(inst.imm))
                                   : "?" + std::to_string(inst.imm);
            args.push_back(name + " " + std::to_string(inst.aux));
            break;
        }
        case Op::kMath: {
            std::string name = inst.imm <= static_cast<uint64_t>(kLastMathFn)
                                   ? MathFnName(static_cast<MathFn>(inst.imm))
                                   : "?" + std::to_string(inst.imm);
            s += " " + name;
            break;
        }
        case Op::kArrayVar: args.push_back(std::to_string(inst.imm)); break;
        case Op::kDiv:  // `div driver %1, %2`; an unknown precision prints as a number
            if (inst.aux == static_cast<uint32_t>(DivPrecision::kDriver)) s += " driver";
            else if (inst.aux != 0) s += " ?" + std::to_string(inst.aux);
            break;
        case Op::kAtomic:
            s += " ";
            s += inst.imm <= static_cast<uint64_t>(AtomicOp::kCas)
                     ? AtomicOpName(static_cast<AtomicOp>(inst.imm))
                     : "?" + std::to_string(inst.imm);
            break;
        case Op::kSubgroup:
            s += " ";
            s += inst.imm <= static_cast<uint64_t>(kLastSubgroupOp)
                     ? SubgroupOpName(static_cast<SubgroupOp>(inst.imm))
                     : "?" + std::to_string(inst.imm);
            s += " " + std::to_string(inst.aux);
            break;
        case Op::kCoopLoad: case Op::kCoopStore:
            s += inst.aux == static_cast<uint32_t>(MatrixLayout::kColumnMajor) ? " col" : " row";
            break;
        case Op::kCoopMulAdd: s += " " + std::to_string(inst.aux); break;
        case Op::kCoopLength: s += " " + TypeName(m, static_cast<TypeId>(inst.imm)); break;
        case Op::kBarrier:
            s += " ";
            s += inst.imm <= static_cast<uint64_t>(kLastBarrierKind)
                     ? BarrierKindName(static_cast<BarrierKind>(inst.imm))
                     : "?" + std::to_string(inst.imm);
            break;
        default: break;
    }
    for (ValueId v : inst.operands) args.push_back(ValueRef(v));
    int ntargets = inst.op == Op::kBr ? 1 : inst.op == Op::kCondBr ? 2 : 0;
    for (int i = 0; i < ntargets; ++i) args.push_back(BlockRef(inst.targets[i]));
    // A leading immediate (const, param, builtin) is set off by a space, the
    // operands and targets by commas: `builtin global_id 0`, `condbr %3, %b1, %b2`.
    size_t nimm = (inst.op == Op::kConst || inst.op == Op::kParam || inst.op == Op::kBuiltin ||
                   inst.op == Op::kArrayVar);
    for (size_t i = 0; i < args.size(); ++i) {
        s += (i == 0 || i == nimm) ? " " : ", ";
        s += args[i];
    }
    if (inst.type != kNone) s += " : " + TypeName(m, inst.type);
    return s;
}

PrintedModule PrintWithLines(const Module& m) {
    PrintedModule out;
    uint32_t line = 0;
    auto emit = [&](const std::string& text) {
        out.text += text;
        out.text += '\n';
        return line++;
    };
    for (const ParamDecl& p : m.params) {
        out.param_lines.push_back(emit("param " + Name(p.name) + " : " + TypeName(m, p.type) +
                                       " @" + std::to_string(p.offset)));
    }
    for (size_t i = 0; i < m.files.size(); ++i)
        out.file_lines.push_back(emit("file " + std::to_string(i) + " " + Quote(m.files[i])));
    const Function& f = m.function;
    out.func_line =
        emit("func " + Name(f.name) + (f.structured ? " structured" : "") + " {");
    for (const Block& b : f.blocks) {
        std::string head = BlockRef(b.id);
        if (!b.name.empty()) head += " " + Name(b.name);
        out.block_lines.push_back(emit(head + MergeText(b.merge) + ":"));
        std::vector<uint32_t>& lines = out.inst_lines.emplace_back();
        for (const Inst& inst : b.insts) {
            std::string text = "  " + PrintInst(m, inst);
            std::string loc = LocText(inst.loc);
            if (!loc.empty()) {
                text.append(text.size() + 2 < kLocColumn ? kLocColumn - text.size() : 2, ' ');
                text += loc;
            }
            lines.push_back(emit(text));
        }
    }
    emit("}");
    return out;
}

std::string Print(const Module& module) { return PrintWithLines(module).text; }

std::string MarkLine(std::string_view text, uint32_t line, uint32_t col, uint32_t len,
                     std::string_view note) {
    std::vector<std::string_view> lines;
    for (size_t pos = 0; pos < text.size();) {
        size_t end = text.find('\n', pos);
        if (end == std::string_view::npos) end = text.size();
        lines.push_back(text.substr(pos, end - pos));
        pos = end + 1;
    }
    // Show everything for modules of a readable size, a window otherwise.
    constexpr uint32_t kWhole = 400, kContext = 15;
    uint32_t first = 0, last = static_cast<uint32_t>(lines.size());
    if (lines.size() > kWhole) {
        first = line > kContext ? line - kContext : 0;
        last = std::min<uint32_t>(last, line + kContext + 1);
    }
    std::string out;
    char buf[32];
    if (first > 0) out += "      ...\n";
    for (uint32_t i = first; i < last; ++i) {
        std::snprintf(buf, sizeof buf, "%c%5u | ", i == line ? '>' : ' ', i + 1);
        out += buf;
        out += lines[i];
        out += '\n';
        if (i != line) continue;
        uint32_t width = static_cast<uint32_t>(lines[i].size());
        uint32_t start = std::min(col, width);
        uint32_t n = len ? len : (width > start ? width - start : 1);
        out += "       | " + std::string(start, ' ') + "^" + std::string(n > 1 ? n - 1 : 0, '~');
        if (!note.empty()) out += " " + std::string(note);
        out += '\n';
    }
    if (last < lines.size()) out += "      ...\n";
    return out;
}

}  // namespace nvk::kir
