// The verifier's local half: module, blocks, values and types. The order of
// the checks matters: each stage relies on what the earlier ones proved
// (type checks look up operand definitions; control-flow checks rely on every
// block ending in a terminator whose targets exist).
#include "kir/verifier.h"

#include <unordered_map>
#include <unordered_set>

#include "kir/abi.h"
#include "kir/printer.h"
#include "kir/verifier_state.h"

namespace nvk::kir {
namespace verifier_internal {

std::string BlockRefText(BlockId b) { return b == kNone ? "%b?" : "%b" + std::to_string(b); }

util::Status Fail(const Module& module, Site site, const std::string& message) {
    PrintedModule printed = PrintWithLines(module);
    uint32_t line = printed.func_line, col = 0, len = 0;
    std::string what;
    switch (site.kind) {
        case Site::Kind::kFunction: break;
        case Site::Kind::kParam: line = printed.param_lines.at(site.index); break;
        case Site::Kind::kBlock:
            line = printed.block_lines.at(site.index);
            what = BlockRefText(module.function.blocks[site.index].id) + ": ";
            break;
        case Site::Kind::kInst: {
            line = printed.inst_lines.at(site.index).at(site.inst);
            const Inst& inst = module.function.blocks[site.index].insts[site.inst];
            std::string text = PrintInst(module, inst);
            what = text + ": ";
            col = 2;
            len = static_cast<uint32_t>(text.size());
            break;
        }
    }
    return util::Internal("kir verifier: " + what + message + "\n" +
                          MarkLine(printed.text, line, col, len, ""));
}

}  // namespace verifier_internal

namespace {

using namespace verifier_internal;

bool HasResult(Op op) {
    return op != Op::kStore && op != Op::kBarrier && op != Op::kCoopStore && !IsTerminator(op);
}

int MathArity(MathFn fn) {
    switch (fn) {
        case MathFn::kMin: case MathFn::kMax: case MathFn::kPow: case MathFn::kAtan2: return 2;
        case MathFn::kFma: return 3;
        default: return 1;
    }
}

class Verifier {
  public:
    explicit Verifier(const Module& m) : m_(m), f_(m.function) {}

    util::Status Run() {
        NVK_RETURN_IF_ERROR(CheckModule());
        NVK_RETURN_IF_ERROR(CheckBlocks());
        NVK_RETURN_IF_ERROR(CheckDefinitions());
        for (uint32_t bp = 0; bp < f_.blocks.size(); ++bp)
            for (uint32_t i = 0; i < f_.blocks[bp].insts.size(); ++i)
                NVK_RETURN_IF_ERROR(CheckInst(bp, i));
        return VerifyControlFlow(m_);
    }

  private:
    util::Status CheckModule();
    util::Status CheckBlocks();
    util::Status CheckDefinitions();
    util::Status CheckInst(uint32_t bp, uint32_t i);
    util::Status CheckTypes(uint32_t bp, uint32_t i);
    util::Status CheckBFloat16(uint32_t bp, uint32_t i);

    const Type* TypeOf(TypeId t) const { return t < m_.types.size() ? &m_.types[t] : nullptr; }
    bool IsScalar(TypeId t) const {
        const Type* ty = TypeOf(t);
        return ty && ty->kind == Type::Kind::kScalar;
    }
    bool IsCoopMatrix(TypeId t) const {
        return t < m_.types.size() && m_.types[t].kind == Type::Kind::kCoopMatrix;
    }
    bool IsScalarKind(TypeId t, bool (*pred)(ScalarKind)) const {
        return IsScalar(t) && pred(m_.types[t].scalar);
    }
    bool Is(TypeId t, ScalarKind k) const { return IsScalar(t) && m_.types[t].scalar == k; }
    TypeId ValueType(ValueId v) const { return f_.values[v].type; }
    std::string Name(TypeId t) const { return TypeName(m_, t); }

    const Module& m_;
    const Function& f_;
    // Where each value is defined: (block position, instruction index).
    std::unordered_map<ValueId, std::pair<uint32_t, uint32_t>> defs_;
};

util::Status Verifier::CheckModule() {
    for (TypeId t = 0; t < m_.types.size(); ++t) {
        const Type& ty = m_.types[t];
        if (ty.kind != Type::Kind::kPointer) continue;
        const Type* pointee = TypeOf(ty.pointee);
        if (!pointee || pointee->kind == Type::Kind::kVoid)
            return Fail(m_, AtFunction(), "type " + std::to_string(t) + " (" + Name(t) +
                                              ") points at no valid type");
    }
    for (uint32_t p = 0; p < m_.params.size(); ++p) {
        const ParamDecl& decl = m_.params[p];
        if (!IsScalar(decl.type))
            return Fail(m_, AtParam(p), "parameter type must be a scalar");
        uint32_t size = MemoryBytes(m_.types[decl.type].scalar);
        if (decl.offset % size != 0)
            return Fail(m_, AtParam(p), "offset " + std::to_string(decl.offset) +
                                            " is not aligned to " + std::to_string(size));
        for (uint32_t q = 0; q < p; ++q) {
            const ParamDecl& other = m_.params[q];
            uint32_t osize = MemoryBytes(m_.types[other.type].scalar);
            if (decl.offset < other.offset + osize && other.offset < decl.offset + size)
                return Fail(m_, AtParam(p), "overlaps parameter " + std::to_string(q) + " (" +
                                                other.name + ")");
        }
    }
    // The argument list must describe the parameters it names (the launcher
    // writes the block from it alone).
    for (const ArgDecl& a : m_.args) {
        const uint32_t count = a.kind == ArgKind::kArray ? 1 + 2 * a.ndim : 1;
        bool ok = a.param + count <= m_.params.size() &&
                  m_.params[a.param].offset == a.offset &&
                  Is(m_.params[a.param].type, a.kind == ArgKind::kArray ? ScalarKind::kU64 : a.slot);
        for (uint32_t k = 0; ok && a.kind == ArgKind::kArray && k < a.ndim; ++k) {
            ok = a.extents.size() == a.ndim && a.strides.size() == a.ndim &&
                 m_.params[a.param + 1 + k].offset == a.extents[k] &&
                 m_.params[a.param + 1 + a.ndim + k].offset == a.strides[k] &&
                 Is(m_.params[a.param + 1 + k].type, a.index) &&
                 Is(m_.params[a.param + 1 + a.ndim + k].type, a.index);
        }
        if (!ok)
            return Fail(m_, AtFunction(), "argument '" + a.name +
                                              "' does not match the parameters it names");
    }
    return util::Status::Ok();
}

util::Status Verifier::CheckBlocks() {
    if (f_.blocks.empty()) return Fail(m_, AtFunction(), "the function has no blocks");
    std::unordered_set<BlockId> ids;
    std::unordered_set<std::string> names;
    for (uint32_t bp = 0; bp < f_.blocks.size(); ++bp) {
        const Block& b = f_.blocks[bp];
        if (b.id == kNone) return Fail(m_, AtBlock(bp), "block has no id");
        if (!ids.insert(b.id).second) return Fail(m_, AtBlock(bp), "block id used twice");
        if (!b.name.empty() && !names.insert(b.name).second)
            return Fail(m_, AtBlock(bp), "block name '" + b.name + "' used twice");
        if (b.insts.empty()) return Fail(m_, AtBlock(bp), "block has no terminator");
        for (uint32_t i = 0; i + 1 < b.insts.size(); ++i)
            if (IsTerminator(b.insts[i].op))
                return Fail(m_, AtInst(bp, i), "terminator before the end of the block");
        if (!IsTerminator(b.insts.back().op))
            return Fail(m_, AtInst(bp, b.insts.size() - 1), "block does not end in a terminator");
    }
    for (uint32_t bp = 0; bp < f_.blocks.size(); ++bp) {
        const Block& b = f_.blocks[bp];
        uint32_t last = static_cast<uint32_t>(b.insts.size() - 1);
        for (BlockId s : b.Successors()) {
            if (!f_.FindBlock(s))
                return Fail(m_, AtInst(bp, last), "branch to a block that does not exist");
            if (s == f_.entry().id)
                return Fail(m_, AtInst(bp, last), "branch to the entry block");
        }
        const Merge& mg = b.merge;
        if (mg.kind == Merge::Kind::kNone) continue;
        if (!f_.FindBlock(mg.merge))
            return Fail(m_, AtBlock(bp), "merge block " + BlockRefText(mg.merge) +
                                             " does not exist");
        if (mg.kind == Merge::Kind::kLoop && !f_.FindBlock(mg.cont))
            return Fail(m_, AtBlock(bp), "continue target " + BlockRefText(mg.cont) +
                                             " does not exist");
        if (mg.kind == Merge::Kind::kSelection && mg.cont != kNone)
            return Fail(m_, AtBlock(bp), "a selection has no continue target");
    }
    return util::Status::Ok();
}

util::Status Verifier::CheckDefinitions() {
    for (uint32_t bp = 0; bp < f_.blocks.size(); ++bp) {
        const Block& b = f_.blocks[bp];
        for (uint32_t i = 0; i < b.insts.size(); ++i) {
            const Inst& inst = b.insts[i];
            if (HasResult(inst.op) != (inst.result != kNone))
                return Fail(m_, AtInst(bp, i), HasResult(inst.op) ? "missing result"
                                                                  : "has a result");
            if ((inst.result != kNone) != (inst.type != kNone))
                return Fail(m_, AtInst(bp, i), "result and result type must come together");
            if (inst.result == kNone) continue;
            if (!TypeOf(inst.type)) return Fail(m_, AtInst(bp, i), "unknown result type");
            if (m_.types[inst.type].kind == Type::Kind::kVoid)
                return Fail(m_, AtInst(bp, i), "a result cannot be void");
            if (inst.result >= f_.values.size())
                return Fail(m_, AtInst(bp, i), "value id beyond function.values");
            if (!defs_.emplace(inst.result, std::make_pair(bp, i)).second)
                return Fail(m_, AtInst(bp, i), "value defined twice");
            const ValueInfo& info = f_.values[inst.result];
            if (info.type != inst.type || info.block != b.id)
                return Fail(m_, AtInst(bp, i),
                            "function.values says type " + Name(info.type) + " in block " +
                                BlockRefText(info.block));
        }
    }
    return util::Status::Ok();
}

util::Status Verifier::CheckInst(uint32_t bp, uint32_t i) {
    const Block& b = f_.blocks[bp];
    const Inst& inst = b.insts[i];
    auto fail = [&](const std::string& msg) { return Fail(m_, AtInst(bp, i), msg); };
    bool entry_only = inst.op == Op::kVar || inst.op == Op::kParam || inst.op == Op::kBuiltin ||
                      inst.op == Op::kArrayVar;
    if (entry_only && bp != 0) return fail("may appear only in the entry block");
    for (ValueId v : inst.operands) {
        auto def = defs_.find(v);
        std::string name = v == kNone ? "%?" : "%" + std::to_string(v);
        if (def == defs_.end()) return fail("uses " + name + ", which is never defined");
        auto [dbp, di] = def->second;
        if (dbp == 0 && bp != 0) continue;  // entry values reach every block
        if (dbp != bp)
            return fail("uses " + name + " from block " + BlockRefText(f_.blocks[dbp].id) +
                        " (only entry-block values cross blocks)");
        if (di >= i) return fail("uses " + name + " before its definition");
    }
    int ntargets = inst.op == Op::kBr ? 1 : inst.op == Op::kCondBr ? 2 : 0;
    for (int t = ntargets; t < 2; ++t)
        if (inst.targets[t] != kNone) return fail("has a branch target it does not use");
    NVK_RETURN_IF_ERROR(CheckBFloat16(bp, i));
    return CheckTypes(bp, i);
}

// SPIR-V has no arithmetic on bfloat16 (SPV_KHR_bfloat16): a bf16 scalar (or a pointer to
// one, an element of a tile) is only loaded, stored, bitcast and filled into a tile.
util::Status Verifier::CheckBFloat16(uint32_t bp, uint32_t i) {
    const Inst& inst = f_.blocks[bp].insts[i];
    auto bf16 = [&](TypeId t) {
        const Type* ty = TypeOf(t);
        if (ty && ty->kind == Type::Kind::kPointer) ty = TypeOf(ty->pointee);
        return ty && ty->kind == Type::Kind::kScalar && ty->scalar == ScalarKind::kBF16;
    };
    bool uses = inst.result != kNone && bf16(inst.type);
    for (ValueId v : inst.operands) uses = uses || bf16(ValueType(v));
    if (!uses) return util::Status::Ok();
    switch (inst.op) {
        case Op::kLoad: case Op::kStore: case Op::kBitcast: case Op::kIndexPtr: case Op::kCoopFill:
            return util::Status::Ok();
        default:
            return Fail(m_, AtInst(bp, i),
                        std::string(OpName(inst.op)) + " of bf16 (bf16 values are only loaded, "
                        "stored, bitcast and filled into tiles)");
    }
}

util::Status Verifier::CheckTypes(uint32_t bp, uint32_t i) {
    const Inst& inst = f_.blocks[bp].insts[i];
    auto fail = [&](const std::string& msg) { return Fail(m_, AtInst(bp, i), msg); };
    std::vector<TypeId> ops;
    for (ValueId v : inst.operands) ops.push_back(ValueType(v));
    auto arity = [&](size_t n) -> util::Status {
        if (ops.size() == n) return util::Status::Ok();
        return fail("takes " + std::to_string(n) + " operand(s), has " +
                    std::to_string(ops.size()));
    };
    auto same = [&](TypeId a, TypeId b) -> util::Status {
        if (a == b) return util::Status::Ok();
        return fail("operand types differ (" + Name(a) + ", " + Name(b) + ")");
    };
    auto result_is = [&](TypeId t) -> util::Status {
        if (inst.type == t) return util::Status::Ok();
        return fail("result type should be " + Name(t));
    };
    const Type* rt = TypeOf(inst.type);
    switch (inst.op) {
        case Op::kConst: {
            NVK_RETURN_IF_ERROR(arity(0));
            if (!IsScalar(inst.type)) return fail("a constant must be a scalar");
            ScalarKind k = rt->scalar;
            int w = BitWidth(k);
            uint64_t expect = inst.imm;
            if (k == ScalarKind::kBool) {
                if (inst.imm > 1) return fail("a bool constant is 0 or 1");
            } else if (w < 64 && IsFloat(k)) {
                if (inst.imm >> w) return fail("float constant has bits above its width");
            } else if (w < 64) {
                uint64_t low = inst.imm & ((uint64_t{1} << w) - 1);
                bool neg = IsSigned(k) && (low >> (w - 1)) & 1;
                expect = neg ? low | ~((uint64_t{1} << w) - 1) : low;
                if (expect != inst.imm)
                    return fail(std::string("constant is not ") +
                                (IsSigned(k) ? "sign" : "zero") + "-extended to 64 bits");
            }
            return util::Status::Ok();
        }
        case Op::kParam:
            NVK_RETURN_IF_ERROR(arity(0));
            if (inst.imm >= m_.params.size()) return fail("no such parameter");
            return result_is(m_.params[inst.imm].type);
        case Op::kBuiltin:
            NVK_RETURN_IF_ERROR(arity(0));
            if (inst.imm > static_cast<uint64_t>(Builtin::kNumGroups)) return fail("no such builtin");
            if (inst.aux > 2) return fail("axis must be 0, 1 or 2");
            if (!Is(inst.type, ScalarKind::kU32)) return fail("a builtin is u32");
            return util::Status::Ok();
        case Op::kVar:
            NVK_RETURN_IF_ERROR(arity(0));
            if (!rt || rt->kind != Type::Kind::kPointer || rt->space == AddressSpace::kGlobal)
                return fail("a variable is a function or workgroup pointer");
            return util::Status::Ok();
        case Op::kLoad: {
            NVK_RETURN_IF_ERROR(arity(1));
            const Type* pt = TypeOf(ops[0]);
            if (!pt || pt->kind != Type::Kind::kPointer) return fail("loads through a non-pointer");
            return result_is(pt->pointee);
        }
        case Op::kStore: {
            NVK_RETURN_IF_ERROR(arity(2));
            const Type* pt = TypeOf(ops[0]);
            if (!pt || pt->kind != Type::Kind::kPointer) return fail("stores through a non-pointer");
            if (pt->pointee != ops[1])
                return fail("stores " + Name(ops[1]) + " through " + Name(ops[0]));
            return util::Status::Ok();
        }
        case Op::kElemPtr:
            NVK_RETURN_IF_ERROR(arity(2));
            if (!Is(ops[0], ScalarKind::kU64)) return fail("the base must be a u64 address");
            if (!IsScalarKind(ops[1], IsInteger)) return fail("the index must be an integer");
            if (!rt || rt->kind != Type::Kind::kPointer || rt->space != AddressSpace::kGlobal)
                return fail("the result must be a global pointer");
            return util::Status::Ok();
        case Op::kAdd: case Op::kSub: case Op::kMul: case Op::kDiv: case Op::kRem:
            NVK_RETURN_IF_ERROR(arity(2));
            NVK_RETURN_IF_ERROR(same(ops[0], ops[1]));
            if (!IsScalar(ops[0]) || Is(ops[0], ScalarKind::kBool))
                return fail("arithmetic on " + Name(ops[0]));
            if (inst.op == Op::kDiv && inst.aux != 0 &&
                (inst.aux != static_cast<uint32_t>(DivPrecision::kDriver) ||
                 !IsScalarKind(ops[0], IsFloat)))
                return fail("a division precision other than 'driver', or on integers");
            return result_is(ops[0]);
        case Op::kAnd: case Op::kOr: case Op::kXor:
            NVK_RETURN_IF_ERROR(arity(2));
            NVK_RETURN_IF_ERROR(same(ops[0], ops[1]));
            if (!IsScalar(ops[0]) || IsScalarKind(ops[0], IsFloat))
                return fail("bitwise operation on " + Name(ops[0]));
            return result_is(ops[0]);
        case Op::kShl: case Op::kShr:
            // The shift amount may be any integer type (as in SPIR-V).
            NVK_RETURN_IF_ERROR(arity(2));
            if (!IsScalarKind(ops[0], IsInteger) || !IsScalarKind(ops[1], IsInteger))
                return fail("shifts take integers");
            return result_is(ops[0]);
        case Op::kNeg:
            NVK_RETURN_IF_ERROR(arity(1));
            if (!IsScalar(ops[0]) || Is(ops[0], ScalarKind::kBool)) return fail("negates a bool");
            return result_is(ops[0]);
        case Op::kNot:
            NVK_RETURN_IF_ERROR(arity(1));
            if (!IsScalar(ops[0]) || IsScalarKind(ops[0], IsFloat)) return fail("not of a float");
            return result_is(ops[0]);
        case Op::kEq: case Op::kNe: case Op::kLt: case Op::kLe: case Op::kGt: case Op::kGe: {
            NVK_RETURN_IF_ERROR(arity(2));
            NVK_RETURN_IF_ERROR(same(ops[0], ops[1]));
            if (!IsScalar(ops[0])) return fail("compares non-scalars");
            bool ordering = inst.op != Op::kEq && inst.op != Op::kNe;
            if (ordering && Is(ops[0], ScalarKind::kBool)) return fail("orders bools");
            if (!Is(inst.type, ScalarKind::kBool)) return fail("a comparison gives bool");
            return util::Status::Ok();
        }
        case Op::kConvert:
            NVK_RETURN_IF_ERROR(arity(1));
            if (IsCoopMatrix(ops[0]) && IsCoopMatrix(inst.type)) {  // element-wise
                const Type &a = m_.types[ops[0]], &r = m_.types[inst.type];
                if (a.rows != r.rows || a.cols != r.cols || a.use != r.use)
                    return fail("converts a tile into one of another use or shape");
                return util::Status::Ok();
            }
            if (!IsScalar(ops[0]) || !IsScalar(inst.type)) return fail("converts non-scalars");
            return util::Status::Ok();
        case Op::kBitcast:
            NVK_RETURN_IF_ERROR(arity(1));
            if (!IsScalar(ops[0]) || !IsScalar(inst.type) ||
                BitWidth(m_.types[ops[0]].scalar) != BitWidth(rt->scalar))
                return fail("bitcast between scalars of different widths");
            return util::Status::Ok();
        case Op::kSelect:
            NVK_RETURN_IF_ERROR(arity(3));
            if (!Is(ops[0], ScalarKind::kBool)) return fail("the condition must be bool");
            NVK_RETURN_IF_ERROR(same(ops[1], ops[2]));
            return result_is(ops[1]);
        case Op::kMath: {
            if (inst.imm > static_cast<uint64_t>(kLastMathFn)) return fail("no such function");
            MathFn fn = static_cast<MathFn>(inst.imm);
            NVK_RETURN_IF_ERROR(arity(MathArity(fn)));
            for (TypeId t : ops) NVK_RETURN_IF_ERROR(same(ops[0], t));
            if (fn == MathFn::kBitCount || fn == MathFn::kFindUMsb || fn == MathFn::kFindILsb) {
                if (!Is(ops[0], ScalarKind::kI32) && !Is(ops[0], ScalarKind::kU32))
                    return fail(std::string(MathFnName(fn)) + " of " + Name(ops[0]) +
                                " (32-bit integers only)");
                return result_is(ops[0]);
            }
            bool int_ok = fn == MathFn::kAbs || fn == MathFn::kMin || fn == MathFn::kMax;
            if (!IsScalarKind(ops[0], IsFloat) && !(int_ok && IsScalarKind(ops[0], IsInteger)))
                return fail(std::string(MathFnName(fn)) + " of " + Name(ops[0]));
            if (fn == MathFn::kIsNan || fn == MathFn::kIsInf) {
                if (!Is(inst.type, ScalarKind::kBool)) return fail("isnan/isinf give bool");
                return util::Status::Ok();
            }
            return result_is(ops[0]);
        }
        case Op::kArrayVar:
            NVK_RETURN_IF_ERROR(arity(0));
            if (!rt || rt->kind != Type::Kind::kPointer || rt->space == AddressSpace::kGlobal ||
                !IsScalar(rt->pointee))
                return fail("an array is a function or workgroup pointer to a scalar");
            if (inst.imm == 0 && rt->space != AddressSpace::kWorkgroup)
                return fail("only workgroup arrays are sized at launch");
            return util::Status::Ok();
        case Op::kIndexPtr: {
            NVK_RETURN_IF_ERROR(arity(2));
            auto def = defs_.find(inst.operands[0]);
            Op base = def == defs_.end() ? Op::kUnreachable
                                         : f_.blocks[def->second.first].insts[def->second.second].op;
            if (!IsScalarKind(ops[1], IsInteger)) return fail("the index must be an integer");
            const Type* bt = TypeOf(ops[0]);
            if (base == Op::kVar && bt && IsCoopMatrix(bt->pointee)) {  // an element of a tile
                if (!rt || rt->kind != Type::Kind::kPointer ||
                    rt->space != AddressSpace::kFunction ||
                    m_.types[rt->pointee].kind != Type::Kind::kScalar ||
                    m_.types[rt->pointee].scalar != m_.types[bt->pointee].scalar)
                    return fail("an element of a tile is a function pointer to its element type");
                return util::Status::Ok();
            }
            if (base != Op::kArrayVar) return fail("the base must be an arrayvar");
            return result_is(ops[0]);
        }
        case Op::kCoopFill:
            NVK_RETURN_IF_ERROR(arity(1));
            if (!IsCoopMatrix(inst.type) || !IsScalar(ops[0]) ||
                m_.types[ops[0]].scalar != m_.types[inst.type].scalar)
                return fail("fills a tile with a value of its element type");
            return util::Status::Ok();
        case Op::kCoopLoad: case Op::kCoopStore: {
            bool load = inst.op == Op::kCoopLoad;
            NVK_RETURN_IF_ERROR(arity(load ? 2 : 3));
            const Type* pt = TypeOf(ops[0]);
            TypeId tile = load ? inst.type : ops[1];
            if (!pt || pt->kind != Type::Kind::kPointer || pt->space == AddressSpace::kFunction)
                return fail("tiles are loaded from and stored to global or workgroup memory");
            // bfloat16 tiles come from the 16-bit words bfloat16 arrays are stored as: the
            // pointee may differ from the element (SPV_KHR_cooperative_matrix), and the
            // stride counts pointees, the same number for these two 16-bit types. Tiles of
            // 8- and 16-bit elements also load from u32 or u64 words they are packed in
            // (the stride then counts words).
            if (!IsCoopMatrix(tile)) return fail("loads or stores a tile");
            ScalarKind element = m_.types[tile].scalar;
            ScalarKind stored = element == ScalarKind::kBF16 ? ScalarKind::kU16 : element;
            ScalarKind pointee = m_.types[pt->pointee].scalar;
            bool packed = load && (pointee == ScalarKind::kU32 || pointee == ScalarKind::kU64) &&
                          MemoryBytes(stored) <= 2;
            if (pointee != stored && !packed)
                return fail("the pointer must point to the tile's element type (u16 for bf16), "
                            "or for a load of 8- or 16-bit elements to u32 or u64 words");
            if (!Is(ops[load ? 1 : 2], ScalarKind::kU32)) return fail("the stride must be u32");
            if (inst.aux > static_cast<uint32_t>(MatrixLayout::kColumnMajor))
                return fail("no such layout");
            if (!load && inst.type != kNone) return fail("a store has no result");
            return util::Status::Ok();
        }
        case Op::kCoopMulAdd: {
            NVK_RETURN_IF_ERROR(arity(3));
            for (TypeId t : ops)
                if (!IsCoopMatrix(t)) return fail("multiplies tiles");
            const Type &a = m_.types[ops[0]], &b = m_.types[ops[1]], &c = m_.types[ops[2]];
            if (a.use != MatrixUse::kA || b.use != MatrixUse::kB || c.use != MatrixUse::kAccumulator)
                return fail("operands of uses a, b and accumulator");
            if (a.rows != c.rows || b.cols != c.cols || a.cols != b.rows)
                return fail("shapes that do not chain");
            return result_is(ops[2]);
        }
        case Op::kCoopLength:
            NVK_RETURN_IF_ERROR(arity(0));
            if (inst.imm >= m_.types.size() || !IsCoopMatrix(static_cast<TypeId>(inst.imm)))
                return fail("the length of a tile type");
            if (!Is(inst.type, ScalarKind::kU32)) return fail("a length is u32");
            return util::Status::Ok();
        case Op::kAtomic: {
            if (inst.imm > static_cast<uint64_t>(AtomicOp::kCas)) return fail("no such atomic op");
            AtomicOp a = static_cast<AtomicOp>(inst.imm);
            NVK_RETURN_IF_ERROR(arity(a == AtomicOp::kCas ? 3 : 2));
            const Type* pt = TypeOf(ops[0]);
            if (!pt || pt->kind != Type::Kind::kPointer || pt->space == AddressSpace::kFunction)
                return fail("atomics act on global or workgroup pointers");
            for (size_t p = 1; p < ops.size(); ++p)
                if (ops[p] != pt->pointee) return fail("operand type differs from the pointee");
            ScalarKind k = m_.types[pt->pointee].scalar;
            bool ok = IsInteger(k) ? BitWidth(k) >= 32 : IsFloat(k) && a == AtomicOp::kAdd;
            if (!ok || BitWidth(k) < 32)
                return fail(std::string("atomic ") + AtomicOpName(a) + " of " + Name(ops[1]));
            return result_is(pt->pointee);
        }
        case Op::kSubgroup: {
            if (inst.imm > static_cast<uint64_t>(kLastSubgroupOp))
                return fail("no such subgroup op");
            auto s = static_cast<SubgroupOp>(inst.imm);
            size_t n = 1;
            if (s <= SubgroupOp::kCount || s == SubgroupOp::kElect) n = 0;
            if (s == SubgroupOp::kBroadcast ||
                (s >= SubgroupOp::kShuffle && s <= SubgroupOp::kShuffleDown))
                n = 2;
            NVK_RETURN_IF_ERROR(arity(n));
            if (!IsScalar(inst.type)) return fail("a subgroup op gives a scalar");
            if (n == 2 && !Is(ops[1], ScalarKind::kU32)) return fail("the lane must be u32");
            if (s >= SubgroupOp::kSum && s <= SubgroupOp::kMax) {
                if (inst.aux > 2) return fail("reduce, inclusive or exclusive scan");
                if (IsScalarKind(ops[0], [](ScalarKind k) { return k == ScalarKind::kBool; }))
                    return fail("arithmetic on bool");
            }
            return util::Status::Ok();
        }
        case Op::kBarrier:
            NVK_RETURN_IF_ERROR(arity(0));
            if (inst.imm > static_cast<uint64_t>(kLastBarrierKind))
                return fail("no such barrier");
            if (inst.type != kNone) return fail("a barrier has no result");
            return util::Status::Ok();
        case Op::kBr: case Op::kRet: case Op::kUnreachable: return arity(0);
        case Op::kCondBr:
            NVK_RETURN_IF_ERROR(arity(1));
            if (!Is(ops[0], ScalarKind::kBool)) return fail("branches on " + Name(ops[0]));
            return util::Status::Ok();
    }
    return fail("unknown op");
}

}  // namespace

util::Status Verify(const Module& module) { return Verifier(module).Run(); }

}  // namespace nvk::kir
