// The KIR text parser: one line at a time, with a tiny cursor-based lexer.
//
// The parser checks syntax only (and the few things the text itself must
// settle: a value or block defined twice, a file listed out of order). Types
// of operands, dangling ids and control-flow rules are the verifier's job, so
// that a test can write an invalid module as text and hand it to Verify.
#include "kir/parser.h"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <optional>
#include <unordered_map>
#include <unordered_set>

namespace nvk::kir {
namespace {

bool IsWordChar(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '_' || c == '.' || c == '$';
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

class Parser {
  public:
    explicit Parser(std::string_view text) : text_(text) {}

    util::Result<Module> Run();

  private:
    // ------------------------------------------------------------ lexing one line
    void SkipWs() {
        while (pos_ < line_.size() && (line_[pos_] == ' ' || line_[pos_] == '\t')) ++pos_;
    }
    // End of the meaningful part of the line (a ';' starts a comment).
    bool AtEnd() {
        SkipWs();
        return pos_ >= line_.size() || line_[pos_] == ';';
    }
    char Peek() {
        SkipWs();
        return pos_ < line_.size() ? line_[pos_] : '\0';
    }
    bool Accept(char c) {
        if (Peek() != c) return false;
        ++pos_;
        return true;
    }
    util::Status Expect(char c) {
        if (Accept(c)) return util::Status::Ok();
        return Error(std::string("expected '") + c + "'");
    }
    std::string_view Word() {
        SkipWs();
        size_t start = pos_;
        while (pos_ < line_.size() && IsWordChar(line_[pos_])) ++pos_;
        return line_.substr(start, pos_ - start);
    }
    util::Result<std::string_view> ExpectWord(const char* what) {
        std::string_view w = Word();
        if (w.empty()) return Error(std::string("expected ") + what);
        return w;
    }
    util::Result<uint64_t> Number(const char* what) {
        SkipWs();
        size_t start = pos_;
        while (pos_ < line_.size() && IsDigit(line_[pos_])) ++pos_;
        uint64_t v = 0;
        auto [p, ec] = std::from_chars(line_.data() + start, line_.data() + pos_, v);
        if (start == pos_ || ec != std::errc()) {
            pos_ = start;
            return Error(std::string("expected ") + what);
        }
        return v;
    }
    util::Result<uint32_t> Number32(const char* what) {
        size_t start = pos_;
        NVK_ASSIGN_OR_RETURN(uint64_t v, Number(what));
        if (v >= kNone) {
            pos_ = start;
            SkipWs();
            return Error(std::string(what) + " out of range");
        }
        return static_cast<uint32_t>(v);
    }
    util::Result<std::string> String();
    util::Result<std::string> Name(const char* what) {
        if (Peek() == '"') return String();
        NVK_ASSIGN_OR_RETURN(std::string_view w, ExpectWord(what));
        return std::string(w);
    }
    util::Result<TypeId> ParseType();
    util::Result<BlockId> ParseBlockRef();
    util::Result<Loc> ParseLoc();

    util::Status Error(std::string message) const {
        SkipWsConst();
        std::string out = std::to_string(line_no_ + 1) + ":" + std::to_string(err_col_ + 1) +
                          ": " + message + "\n  " + std::string(line_) + "\n  " +
                          std::string(err_col_, ' ') + "^";
        return util::InvalidArgument(std::move(out));
    }
    void SkipWsConst() const {
        err_col_ = pos_;
        while (err_col_ < line_.size() && (line_[err_col_] == ' ' || line_[err_col_] == '\t'))
            ++err_col_;
    }

    // ------------------------------------------------------------ lines
    util::Status HeaderLine();
    util::Status BlockLine();
    util::Status InstLine();
    util::Status ConstValue(Inst& inst, std::string_view literal, size_t literal_col);

    std::string_view text_;
    std::string_view line_;
    size_t pos_ = 0;
    mutable size_t err_col_ = 0;
    uint32_t line_no_ = 0;

    Module m_;
    enum class State { kHeader, kFunction, kDone } state_ = State::kHeader;
    std::unordered_set<BlockId> block_ids_;
    std::unordered_map<ValueId, std::pair<TypeId, BlockId>> defs_;
    std::unordered_map<std::string_view, Op> ops_;
};

util::Result<std::string> Parser::String() {
    if (!Accept('"')) return Error("expected a string");
    std::string out;
    while (pos_ < line_.size() && line_[pos_] != '"') {
        char c = line_[pos_++];
        if (c != '\\') {
            out += c;
            continue;
        }
        if (pos_ >= line_.size()) break;
        char e = line_[pos_++];
        if (e == 'n') {
            out += '\n';
        } else if (e == 't') {
            out += '\t';
        } else if (e == 'x' && pos_ + 2 <= line_.size()) {
            unsigned v = 0;
            auto [p, ec] = std::from_chars(line_.data() + pos_, line_.data() + pos_ + 2, v, 16);
            if (ec != std::errc() || p != line_.data() + pos_ + 2) {
                pos_ -= 2;
                return Error("bad \\x escape");
            }
            out += static_cast<char>(v);
            pos_ += 2;
        } else if (e == '"' || e == '\\') {
            out += e;
        } else {
            pos_ -= 2;
            return Error("unknown escape");
        }
    }
    if (pos_ >= line_.size()) return Error("unterminated string");
    ++pos_;
    return out;
}

util::Result<TypeId> Parser::ParseType() {
    SkipWs();
    size_t start = pos_;
    NVK_ASSIGN_OR_RETURN(std::string_view w, ExpectWord("a type"));
    if (w == "void") return m_.GetVoid();
    if (w == "ptr") {
        NVK_RETURN_IF_ERROR(Expect('<'));
        SkipWs();
        size_t space_col = pos_;
        NVK_ASSIGN_OR_RETURN(std::string_view s, ExpectWord("an address space"));
        AddressSpace space;
        if (s == "function") {
            space = AddressSpace::kFunction;
        } else if (s == "global") {
            space = AddressSpace::kGlobal;
        } else if (s == "workgroup") {
            space = AddressSpace::kWorkgroup;
        } else {
            pos_ = space_col;
            return Error("unknown address space '" + std::string(s) + "'");
        }
        NVK_RETURN_IF_ERROR(Expect(','));
        NVK_ASSIGN_OR_RETURN(TypeId pointee, ParseType());
        NVK_RETURN_IF_ERROR(Expect('>'));
        return m_.GetPointer(space, pointee);
    }
    for (int k = 0; k <= static_cast<int>(ScalarKind::kBF16); ++k)
        if (w == ScalarName(static_cast<ScalarKind>(k)))
            return m_.GetScalar(static_cast<ScalarKind>(k));
    pos_ = start;
    return Error("unknown type '" + std::string(w) + "'");
}

util::Result<BlockId> Parser::ParseBlockRef() {
    SkipWs();
    if (line_.substr(pos_, 2) != "%b") return Error("expected a block (%bN)");
    pos_ += 2;
    return Number32("a block number");
}

util::Result<Loc> Parser::ParseLoc() {
    Loc loc;
    if (Accept('?')) {
        loc.file = kNone;
        NVK_RETURN_IF_ERROR(Expect(':'));
        NVK_ASSIGN_OR_RETURN(loc.line, Number32("a line number"));
        return loc;
    }
    NVK_ASSIGN_OR_RETURN(uint32_t first, Number32("a line number"));
    if (Accept(':')) {
        loc.file = first;
        NVK_ASSIGN_OR_RETURN(loc.line, Number32("a line number"));
    } else {
        loc.file = 0;
        loc.line = first;
    }
    return loc;
}

// param NAME : TYPE @OFFSET | file N "PATH" | func NAME [structured] {
util::Status Parser::HeaderLine() {
    NVK_ASSIGN_OR_RETURN(std::string_view kw, ExpectWord("'param', 'file' or 'func'"));
    if (kw == "param") {
        ParamDecl p;
        NVK_ASSIGN_OR_RETURN(p.name, Name("a parameter name"));
        NVK_RETURN_IF_ERROR(Expect(':'));
        NVK_ASSIGN_OR_RETURN(p.type, ParseType());
        NVK_RETURN_IF_ERROR(Expect('@'));
        NVK_ASSIGN_OR_RETURN(p.offset, Number32("a byte offset"));
        m_.params.push_back(std::move(p));
    } else if (kw == "file") {
        SkipWs();
        size_t col = pos_;
        NVK_ASSIGN_OR_RETURN(uint64_t index, Number("a file index"));
        if (index != m_.files.size()) {
            pos_ = col;
            return Error("expected file " + std::to_string(m_.files.size()) +
                         " (files are listed in order)");
        }
        NVK_ASSIGN_OR_RETURN(std::string path, String());
        m_.files.push_back(std::move(path));
    } else if (kw == "func") {
        NVK_ASSIGN_OR_RETURN(m_.function.name, Name("a function name"));
        if (Peek() != '{') {
            NVK_ASSIGN_OR_RETURN(std::string_view flag, ExpectWord("'structured' or '{'"));
            if (flag != "structured") {
                pos_ -= flag.size();
                return Error("expected 'structured' or '{'");
            }
            m_.function.structured = true;
        }
        NVK_RETURN_IF_ERROR(Expect('{'));
        state_ = State::kFunction;
    } else {
        pos_ -= kw.size();
        return Error("expected 'param', 'file' or 'func'");
    }
    return util::Status::Ok();
}

// %bN [NAME] [selection(merge %bM) | loop(merge %bM, continue %bK)] :
util::Status Parser::BlockLine() {
    SkipWs();
    size_t col = pos_;
    Block b;
    NVK_ASSIGN_OR_RETURN(b.id, ParseBlockRef());
    if (!block_ids_.insert(b.id).second) {
        pos_ = col;
        return Error("block %b" + std::to_string(b.id) + " defined twice");
    }
    auto annotation_next = [&] {
        SkipWs();
        size_t save = pos_;
        std::string_view w = Word();
        bool ann = (w == "loop" || w == "selection") && Peek() == '(';
        pos_ = save;
        return ann;
    };
    if (Peek() != ':' && !annotation_next()) {
        NVK_ASSIGN_OR_RETURN(b.name, Name("a block name, a merge annotation or ':'"));
    }
    if (annotation_next()) {
        std::string_view kind = Word();
        NVK_RETURN_IF_ERROR(Expect('('));
        NVK_ASSIGN_OR_RETURN(std::string_view merge_kw, ExpectWord("'merge'"));
        if (merge_kw != "merge") {
            pos_ -= merge_kw.size();
            return Error("expected 'merge'");
        }
        NVK_ASSIGN_OR_RETURN(b.merge.merge, ParseBlockRef());
        if (kind == "loop") {
            b.merge.kind = Merge::Kind::kLoop;
            NVK_RETURN_IF_ERROR(Expect(','));
            NVK_ASSIGN_OR_RETURN(std::string_view cont_kw, ExpectWord("'continue'"));
            if (cont_kw != "continue") {
                pos_ -= cont_kw.size();
                return Error("expected 'continue'");
            }
            NVK_ASSIGN_OR_RETURN(b.merge.cont, ParseBlockRef());
        } else {
            b.merge.kind = Merge::Kind::kSelection;
        }
        NVK_RETURN_IF_ERROR(Expect(')'));
    }
    NVK_RETURN_IF_ERROR(Expect(':'));
    m_.function.blocks.push_back(std::move(b));
    return util::Status::Ok();
}

util::Status Parser::ConstValue(Inst& inst, std::string_view lit, size_t lit_col) {
    auto fail = [&](std::string msg) {
        pos_ = lit_col;
        return Error(std::move(msg));
    };
    const Type& t = m_.type(inst.type);
    if (t.kind != Type::Kind::kScalar) return fail("a constant must have a scalar type");
    const char* first = lit.data();
    const char* last = lit.data() + lit.size();
    if (lit.size() > 2 && lit[0] == '0' && (lit[1] == 'x' || lit[1] == 'X')) {
        auto [p, ec] = std::from_chars(first + 2, last, inst.imm, 16);
        if (ec != std::errc() || p != last) return fail("bad hexadecimal constant");
        return util::Status::Ok();
    }
    ScalarKind k = t.scalar;
    if (k == ScalarKind::kBool) {
        if (lit == "true" || lit == "false") {
            inst.imm = lit == "true";
            return util::Status::Ok();
        }
        return fail("expected true, false or a hexadecimal bit pattern");
    }
    bool ok = false;
    if (k == ScalarKind::kF32) {
        float f = 0;
        auto [p, ec] = std::from_chars(first, last, f);
        ok = ec == std::errc() && p == last;
        uint32_t bits;
        std::memcpy(&bits, &f, 4);
        inst.imm = bits;
    } else if (k == ScalarKind::kF64) {
        double d = 0;
        auto [p, ec] = std::from_chars(first, last, d);
        ok = ec == std::errc() && p == last;
        std::memcpy(&inst.imm, &d, 8);
    } else if (k == ScalarKind::kF16) {
        return fail("f16 constants are written as a hexadecimal bit pattern");
    } else if (IsSigned(k)) {
        int64_t v = 0;
        auto [p, ec] = std::from_chars(first, last, v);
        ok = ec == std::errc() && p == last;
        inst.imm = static_cast<uint64_t>(v);
    } else {
        auto [p, ec] = std::from_chars(first, last, inst.imm);
        ok = ec == std::errc() && p == last;
    }
    if (!ok) return fail("bad " + std::string(ScalarName(k)) + " constant '" + std::string(lit) + "'");
    return util::Status::Ok();
}

// [%N =] OP [immediates] [refs] [: TYPE] [!LOC]
util::Status Parser::InstLine() {
    if (m_.function.blocks.empty()) return Error("instruction outside a block");
    Inst inst;
    SkipWs();
    size_t def_col = pos_;
    if (Accept('%')) {
        NVK_ASSIGN_OR_RETURN(inst.result, Number32("a value number"));
        if (defs_.count(inst.result)) {
            pos_ = def_col;
            return Error("value %" + std::to_string(inst.result) + " defined twice");
        }
        NVK_RETURN_IF_ERROR(Expect('='));
    }
    SkipWs();
    size_t op_col = pos_;
    NVK_ASSIGN_OR_RETURN(std::string_view opname, ExpectWord("an instruction"));
    auto op = ops_.find(opname);
    if (op == ops_.end()) {
        pos_ = op_col;
        return Error("unknown instruction '" + std::string(opname) + "'");
    }
    inst.op = op->second;
    std::string_view literal;
    size_t literal_col = 0;
    switch (inst.op) {
        case Op::kConst: {
            SkipWs();
            literal_col = pos_;
            while (pos_ < line_.size() && (IsWordChar(line_[pos_]) || line_[pos_] == '-' ||
                                           line_[pos_] == '+'))
                ++pos_;
            literal = line_.substr(literal_col, pos_ - literal_col);
            if (literal.empty()) return Error("expected a constant");
            break;
        }
        case Op::kParam: {
            NVK_ASSIGN_OR_RETURN(inst.imm, Number("a parameter index"));
            break;
        }
        case Op::kBuiltin: {
            SkipWs();
            size_t col = pos_;
            NVK_ASSIGN_OR_RETURN(std::string_view name, ExpectWord("a builtin name"));
            bool found = false;
            for (int b = 0; b <= static_cast<int>(Builtin::kNumGroups) && !found; ++b)
                if (name == BuiltinName(static_cast<Builtin>(b))) inst.imm = b, found = true;
            if (!found) {
                pos_ = col;
                return Error("unknown builtin '" + std::string(name) + "'");
            }
            NVK_ASSIGN_OR_RETURN(inst.aux, Number32("an axis"));
            break;
        }
        case Op::kMath: {
            SkipWs();
            size_t col = pos_;
            NVK_ASSIGN_OR_RETURN(std::string_view name, ExpectWord("a math function"));
            bool found = false;
            for (int f = 0; f <= static_cast<int>(kLastMathFn) && !found; ++f)
                if (name == MathFnName(static_cast<MathFn>(f))) inst.imm = f, found = true;
            if (!found) {
                pos_ = col;
                return Error("unknown math function '" + std::string(name) + "'");
            }
            break;
        }
        case Op::kArrayVar: {
            NVK_ASSIGN_OR_RETURN(inst.imm, Number("an element count"));
            break;
        }
        case Op::kDiv: {  // an optional precision word before the operands
            if (Peek() != '%' && Peek() != ':' && !AtEnd()) {
                size_t col = pos_;
                NVK_ASSIGN_OR_RETURN(std::string_view name, ExpectWord("a division precision"));
                if (name != "driver") {
                    pos_ = col;
                    return Error("unknown division precision '" + std::string(name) + "'");
                }
                inst.aux = static_cast<uint32_t>(DivPrecision::kDriver);
            }
            break;
        }
        case Op::kSubgroup: {
            SkipWs();
            size_t col = pos_;
            NVK_ASSIGN_OR_RETURN(std::string_view name, ExpectWord("a subgroup op"));
            bool found = false;
            for (int k = 0; k <= static_cast<int>(kLastSubgroupOp) && !found; ++k)
                if (name == SubgroupOpName(static_cast<SubgroupOp>(k))) inst.imm = k, found = true;
            if (!found) {
                pos_ = col;
                return Error("unknown subgroup op '" + std::string(name) + "'");
            }
            NVK_ASSIGN_OR_RETURN(inst.aux, Number32("a group operation"));
            break;
        }
        case Op::kAtomic: case Op::kBarrier: {
            SkipWs();
            size_t col = pos_;
            NVK_ASSIGN_OR_RETURN(std::string_view name, ExpectWord("an atomic op or barrier kind"));
            bool found = false;
            if (inst.op == Op::kAtomic) {
                for (int a = 0; a <= static_cast<int>(AtomicOp::kCas) && !found; ++a)
                    if (name == AtomicOpName(static_cast<AtomicOp>(a))) inst.imm = a, found = true;
            } else {
                for (int k = 0; k <= static_cast<int>(kLastBarrierKind) && !found; ++k)
                    if (name == BarrierKindName(static_cast<BarrierKind>(k)))
                        inst.imm = k, found = true;
            }
            if (!found) {
                pos_ = col;
                return Error("unknown '" + std::string(name) + "'");
            }
            break;
        }
        default: break;
    }
    // Operands (%N) and branch targets (%bN), comma-separated.
    int ntargets = 0;
    if (Peek() == '%') {
        do {
            SkipWs();
            if (line_.substr(pos_, 2) == "%b") {
                if (ntargets == 2) return Error("at most two branch targets");
                NVK_ASSIGN_OR_RETURN(inst.targets[ntargets], ParseBlockRef());
                ++ntargets;
            } else {
                if (ntargets) return Error("operands come before branch targets");
                NVK_RETURN_IF_ERROR(Expect('%'));
                NVK_ASSIGN_OR_RETURN(ValueId v, Number32("a value number"));
                inst.operands.push_back(v);
            }
        } while (Accept(','));
    }
    if (Accept(':')) {
        NVK_ASSIGN_OR_RETURN(inst.type, ParseType());
    }
    if (inst.op == Op::kConst) {
        if (inst.type == kNone) return Error("a constant needs a type (': T')");
        NVK_RETURN_IF_ERROR(ConstValue(inst, literal, literal_col));
    }
    if (inst.result != kNone && inst.type == kNone) return Error("a result needs a type (': T')");
    if (Accept('!')) {
        NVK_ASSIGN_OR_RETURN(inst.loc, ParseLoc());
    }
    if (!AtEnd()) return Error("unexpected text at the end of the instruction");
    Block& b = m_.function.blocks.back();
    if (inst.result != kNone) defs_[inst.result] = {inst.type, b.id};
    b.insts.push_back(std::move(inst));
    return util::Status::Ok();
}

util::Result<Module> Parser::Run() {
    for (int op = 0; op <= static_cast<int>(Op::kUnreachable); ++op)
        ops_[OpName(static_cast<Op>(op))] = static_cast<Op>(op);
    for (size_t start = 0; start <= text_.size(); ++line_no_) {
        size_t end = text_.find('\n', start);
        if (end == std::string_view::npos) end = text_.size();
        line_ = text_.substr(start, end - start);
        if (!line_.empty() && line_.back() == '\r') line_.remove_suffix(1);
        pos_ = 0;
        start = end + 1;
        if (AtEnd()) continue;
        switch (state_) {
            case State::kHeader: NVK_RETURN_IF_ERROR(HeaderLine()); break;
            case State::kFunction:
                if (Accept('}')) {
                    state_ = State::kDone;
                } else if (line_.substr(pos_, 2) == "%b") {
                    NVK_RETURN_IF_ERROR(BlockLine());
                } else {
                    NVK_RETURN_IF_ERROR(InstLine());
                }
                break;
            case State::kDone: return Error("text after the end of the function");
        }
        if (!AtEnd()) return Error("unexpected text at the end of the line");
    }
    if (state_ != State::kDone) {
        line_ = "";
        pos_ = 0;
        --line_no_;
        return Error(state_ == State::kHeader ? "missing 'func'" : "missing '}'");
    }
    ValueId nvalues = 0;
    for (const auto& [v, def] : defs_) nvalues = std::max(nvalues, v + 1);
    m_.function.values.assign(nvalues, ValueInfo{});
    for (const auto& [v, def] : defs_) m_.function.values[v] = {def.first, def.second};
    return std::move(m_);
}

}  // namespace

util::Result<Module> Parse(std::string_view text) { return Parser(text).Run(); }

}  // namespace nvk::kir
