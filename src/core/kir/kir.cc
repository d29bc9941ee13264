#include "kir/kir.h"

#include "kir/abi.h"

#include <algorithm>

namespace nvk::kir {

bool IsInteger(ScalarKind k) { return k != ScalarKind::kBool && !IsFloat(k); }
bool IsSigned(ScalarKind k) {
    return k == ScalarKind::kI8 || k == ScalarKind::kI16 || k == ScalarKind::kI32 ||
           k == ScalarKind::kI64;
}
bool IsFloat(ScalarKind k) {
    return k == ScalarKind::kF16 || k == ScalarKind::kF32 || k == ScalarKind::kF64 ||
           k == ScalarKind::kBF16;
}

int BitWidth(ScalarKind k) {
    switch (k) {
        case ScalarKind::kBool: return 1;
        case ScalarKind::kI8: case ScalarKind::kU8: return 8;
        case ScalarKind::kI16: case ScalarKind::kU16: case ScalarKind::kF16: case ScalarKind::kBF16:
            return 16;
        case ScalarKind::kI32: case ScalarKind::kU32: case ScalarKind::kF32: return 32;
        case ScalarKind::kI64: case ScalarKind::kU64: case ScalarKind::kF64: return 64;
    }
    return 0;
}

const char* ScalarName(ScalarKind k) {
    switch (k) {
        case ScalarKind::kBool: return "bool";
        case ScalarKind::kI8: return "i8";
        case ScalarKind::kI16: return "i16";
        case ScalarKind::kI32: return "i32";
        case ScalarKind::kI64: return "i64";
        case ScalarKind::kU8: return "u8";
        case ScalarKind::kU16: return "u16";
        case ScalarKind::kU32: return "u32";
        case ScalarKind::kU64: return "u64";
        case ScalarKind::kF16: return "f16";
        case ScalarKind::kF32: return "f32";
        case ScalarKind::kF64: return "f64";
        case ScalarKind::kBF16: return "bf16";
    }
    return "?";
}

bool IsTerminator(Op op) {
    return op == Op::kBr || op == Op::kCondBr || op == Op::kRet || op == Op::kUnreachable;
}

const char* OpName(Op op) {
    switch (op) {
        case Op::kConst: return "const";
        case Op::kParam: return "param";
        case Op::kBuiltin: return "builtin";
        case Op::kVar: return "var";
        case Op::kLoad: return "load";
        case Op::kStore: return "store";
        case Op::kElemPtr: return "elemptr";
        case Op::kAdd: return "add";
        case Op::kSub: return "sub";
        case Op::kMul: return "mul";
        case Op::kDiv: return "div";
        case Op::kRem: return "rem";
        case Op::kNeg: return "neg";
        case Op::kAnd: return "and";
        case Op::kOr: return "or";
        case Op::kXor: return "xor";
        case Op::kNot: return "not";
        case Op::kShl: return "shl";
        case Op::kShr: return "shr";
        case Op::kEq: return "eq";
        case Op::kNe: return "ne";
        case Op::kLt: return "lt";
        case Op::kLe: return "le";
        case Op::kGt: return "gt";
        case Op::kGe: return "ge";
        case Op::kConvert: return "convert";
        case Op::kBitcast: return "bitcast";
        case Op::kSelect: return "select";
        case Op::kMath: return "math";
        case Op::kArrayVar: return "arrayvar";
        case Op::kIndexPtr: return "indexptr";
        case Op::kAtomic: return "atomic";
        case Op::kBarrier: return "barrier";
        case Op::kSubgroup: return "subgroup";
        case Op::kCoopFill: return "coop_fill";
        case Op::kCoopLoad: return "coop_load";
        case Op::kCoopStore: return "coop_store";
        case Op::kCoopMulAdd: return "coop_muladd";
        case Op::kCoopLength: return "coop_length";
        case Op::kBr: return "br";
        case Op::kCondBr: return "condbr";
        case Op::kRet: return "ret";
        case Op::kUnreachable: return "unreachable";
    }
    return "?";
}

const char* BuiltinName(Builtin b) {
    switch (b) {
        case Builtin::kGlobalId: return "global_id";
        case Builtin::kLocalId: return "local_id";
        case Builtin::kGroupId: return "group_id";
        case Builtin::kLocalSize: return "local_size";
        case Builtin::kNumGroups: return "num_groups";
    }
    return "?";
}

const char* MathFnName(MathFn f) {
    switch (f) {
        case MathFn::kFloor: return "floor";
        case MathFn::kCeil: return "ceil";
        case MathFn::kTrunc: return "trunc";
        case MathFn::kAbs: return "abs";
        case MathFn::kMin: return "min";
        case MathFn::kMax: return "max";
        case MathFn::kSqrt: return "sqrt";
        case MathFn::kFma: return "fma";
        case MathFn::kExp: return "exp";
        case MathFn::kLog: return "log";
        case MathFn::kPow: return "pow";
        case MathFn::kSin: return "sin";
        case MathFn::kCos: return "cos";
        case MathFn::kTan: return "tan";
        case MathFn::kAtan2: return "atan2";
        case MathFn::kTanh: return "tanh";
        case MathFn::kIsNan: return "isnan";
        case MathFn::kIsInf: return "isinf";
        case MathFn::kBitCount: return "bitcount";
        case MathFn::kFindUMsb: return "findumsb";
        case MathFn::kFindILsb: return "findilsb";
        case MathFn::kInverseSqrt: return "inverse_sqrt";
    }
    return "?";
}

std::vector<BlockId> Block::Successors() const {
    std::vector<BlockId> out;
    if (insts.empty()) return out;
    const Inst& t = insts.back();
    if (t.op == Op::kBr) out.push_back(t.targets[0]);
    if (t.op == Op::kCondBr) {
        out.push_back(t.targets[0]);
        out.push_back(t.targets[1]);
    }
    return out;
}

uint32_t Function::BlockIndex(BlockId id) const {
    for (uint32_t i = 0; i < blocks.size(); ++i)
        if (blocks[i].id == id) return i;
    return kNone;
}

Block* Function::FindBlock(BlockId id) {
    uint32_t i = BlockIndex(id);
    return i == kNone ? nullptr : &blocks[i];
}

const Block* Function::FindBlock(BlockId id) const {
    uint32_t i = BlockIndex(id);
    return i == kNone ? nullptr : &blocks[i];
}

BlockId Function::NextBlockId() const {
    BlockId next = 0;
    for (const Block& b : blocks) next = std::max(next, b.id + 1);
    return next;
}

Inst Module::NewScalarInst(Op op, ScalarKind k, std::vector<ValueId> operands, BlockId block) {
    Inst inst;
    inst.op = op;
    inst.type = GetScalar(k);
    inst.result = function.NewValue(inst.type, block);
    inst.operands = std::move(operands);
    return inst;
}

ValueId Function::NewValue(TypeId type, BlockId block) {
    values.push_back({type, block});
    return static_cast<ValueId>(values.size() - 1);
}

static TypeId Intern(std::vector<Type>& types, const Type& t) {
    for (TypeId i = 0; i < types.size(); ++i)
        if (types[i] == t) return i;
    types.push_back(t);
    return static_cast<TypeId>(types.size() - 1);
}

TypeId Module::GetVoid() { return Intern(types, Type{}); }

TypeId Module::GetScalar(ScalarKind k) {
    Type t;
    t.kind = Type::Kind::kScalar;
    t.scalar = k;
    return Intern(types, t);
}

TypeId Module::GetPointer(AddressSpace space, TypeId pointee) {
    Type t;
    t.kind = Type::Kind::kPointer;
    t.space = space;
    t.pointee = pointee;
    return Intern(types, t);
}

TypeId Module::GetCoopMatrix(ScalarKind element, uint32_t rows, uint32_t cols, MatrixUse use) {
    Type t;
    t.kind = Type::Kind::kCoopMatrix;
    t.scalar = element;
    t.rows = rows;
    t.cols = cols;
    t.use = use;
    return Intern(types, t);
}

// One past the last byte any parameter uses.
static uint32_t ParamsEnd(const Module& m) {
    uint32_t end = 0;
    for (const ParamDecl& p : m.params)
        end = std::max(end, p.offset + MemoryBytes(m.type(p.type).scalar));
    return end;
}

uint32_t Module::AddParam(std::string name, ScalarKind k) {
    params.push_back({std::move(name), GetScalar(k), ParamOffset(ParamsEnd(*this), k)});
    return static_cast<uint32_t>(params.size() - 1);
}

uint32_t Module::ParamBlockSize() const { return (ParamsEnd(*this) + 7) / 8 * 8; }

uint32_t Module::AddFile(const std::string& path) {
    for (uint32_t i = 0; i < files.size(); ++i)
        if (files[i] == path) return i;
    files.push_back(path);
    return static_cast<uint32_t>(files.size() - 1);
}

const char* AtomicOpName(AtomicOp a) {
    switch (a) {
        case AtomicOp::kAdd: return "add";
        case AtomicOp::kSub: return "sub";
        case AtomicOp::kMin: return "min";
        case AtomicOp::kMax: return "max";
        case AtomicOp::kAnd: return "and";
        case AtomicOp::kOr: return "or";
        case AtomicOp::kXor: return "xor";
        case AtomicOp::kExch: return "exch";
        case AtomicOp::kCas: return "cas";
    }
    return "?";
}

const char* BarrierKindName(BarrierKind b) {
    switch (b) {
        case BarrierKind::kWorkgroup: return "workgroup";
        case BarrierKind::kFenceWorkgroup: return "fence_workgroup";
        case BarrierKind::kFenceDevice: return "fence_device";
        case BarrierKind::kSubgroup: return "subgroup";
    }
    return "?";
}

const char* SubgroupOpName(SubgroupOp s) {
    switch (s) {
        case SubgroupOp::kSize: return "size";
        case SubgroupOp::kLane: return "lane";
        case SubgroupOp::kId: return "id";
        case SubgroupOp::kCount: return "count";
        case SubgroupOp::kSum: return "sum";
        case SubgroupOp::kProd: return "prod";
        case SubgroupOp::kMin: return "min";
        case SubgroupOp::kMax: return "max";
        case SubgroupOp::kAny: return "any";
        case SubgroupOp::kAll: return "all";
        case SubgroupOp::kElect: return "elect";
        case SubgroupOp::kBallot: return "ballot";
        case SubgroupOp::kBallotCount: return "ballot_count";
        case SubgroupOp::kPartition: return "partition";
        case SubgroupOp::kBroadcast: return "broadcast";
        case SubgroupOp::kBroadcastFirst: return "broadcast_first";
        case SubgroupOp::kShuffle: return "shuffle";
        case SubgroupOp::kShuffleXor: return "shuffle_xor";
        case SubgroupOp::kShuffleUp: return "shuffle_up";
        case SubgroupOp::kShuffleDown: return "shuffle_down";
    }
    return "?";
}

}  // namespace nvk::kir
