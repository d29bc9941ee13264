#include "kir/builder.h"

#include <cstring>

namespace nvk::kir {

Builder::Builder(Module& module) : module_(module) {}

BlockId Builder::CreateBlock(std::string name) {
    Function& f = module_.function;
    Block b;
    b.id = f.NextBlockId();
    b.name = std::move(name);
    f.blocks.push_back(std::move(b));
    if (current_ == kNone) current_ = f.blocks.back().id;
    return f.blocks.back().id;
}

void Builder::SetBlock(BlockId block) { current_ = block; }

bool Builder::IsTerminated(BlockId block) const {
    const Block* b = module_.function.FindBlock(block);
    return b && !b->insts.empty() && kir::IsTerminator(b->insts.back().op);
}

ValueId Builder::Append(Inst inst, BlockId block) {
    Block* b = module_.function.FindBlock(block);
    // A block takes nothing after its terminator: code after a return or a
    // break in Python source is dead, and is dropped here.
    if (b == nullptr || (!b->insts.empty() && kir::IsTerminator(b->insts.back().op))) {
        if (inst.type != kNone) inst.result = module_.function.NewValue(inst.type, kNone);
        return inst.result;
    }
    inst.loc = loc_;
    if (inst.type != kNone) inst.result = module_.function.NewValue(inst.type, block);
    b->insts.push_back(std::move(inst));
    return b->insts.back().result;
}

ValueId Builder::AppendToEntry(Inst inst) {
    Block& entry = module_.function.entry();
    inst.loc = loc_;
    inst.result = module_.function.NewValue(inst.type, entry.id);
    auto pos = entry.insts.end();
    if (!entry.insts.empty() && kir::IsTerminator(entry.insts.back().op)) --pos;
    entry.insts.insert(pos, std::move(inst));
    return module_.function.values.size() - 1;
}

ValueId Builder::ConstBits(TypeId type, uint64_t bits) {
    Inst i;
    i.op = Op::kConst;
    i.type = type;
    i.imm = bits;
    return Append(std::move(i), current_);
}

ValueId Builder::ConstInt(TypeId type, int64_t value) {
    return ConstBits(type, static_cast<uint64_t>(value));
}

ValueId Builder::ConstFloat(TypeId type, double value) {
    ScalarKind k = module_.type(type).scalar;
    uint64_t bits = 0;
    if (k == ScalarKind::kF64) {
        std::memcpy(&bits, &value, 8);
    } else {
        // f32 (and f16, computed as f32): the bits of the nearest float.
        float f = static_cast<float>(value);
        uint32_t b32;
        std::memcpy(&b32, &f, 4);
        bits = b32;
    }
    return ConstBits(type, bits);
}

ValueId Builder::Param(uint32_t index) {
    Inst i;
    i.op = Op::kParam;
    i.type = module_.params.at(index).type;
    i.imm = index;
    return AppendToEntry(std::move(i));
}

ValueId Builder::BuiltinId(Builtin builtin, uint32_t axis) {
    Inst i;
    i.op = Op::kBuiltin;
    i.type = module_.GetScalar(ScalarKind::kU32);
    i.imm = static_cast<uint64_t>(builtin);
    i.aux = axis;
    return AppendToEntry(std::move(i));
}

ValueId Builder::Var(TypeId element) {
    Inst i;
    i.op = Op::kVar;
    i.type = module_.GetPointer(AddressSpace::kFunction, element);
    return AppendToEntry(std::move(i));
}

ValueId Builder::Load(ValueId ptr) {
    Inst i;
    i.op = Op::kLoad;
    i.type = module_.type(TypeOf(ptr)).pointee;
    i.operands = {ptr};
    return Append(std::move(i), current_);
}

void Builder::Store(ValueId ptr, ValueId value) {
    Inst i;
    i.op = Op::kStore;
    i.operands = {ptr, value};
    Append(std::move(i), current_);
}

void Builder::StoreAtEnd(BlockId block, ValueId ptr, ValueId value) {
    Block* b = module_.function.FindBlock(block);
    if (b == nullptr || module_.function.values.at(value).block == kNone) return;
    Inst i;
    i.op = Op::kStore;
    i.operands = {ptr, value};
    i.loc = loc_;
    auto pos = b->insts.end();
    if (!b->insts.empty() && kir::IsTerminator(b->insts.back().op)) --pos;
    b->insts.insert(pos, std::move(i));
}

ValueId Builder::ElemPtr(TypeId element, ValueId base, ValueId index) {
    Inst i;
    i.op = Op::kElemPtr;
    i.type = module_.GetPointer(AddressSpace::kGlobal, element);
    i.operands = {base, index};
    return Append(std::move(i), current_);
}

ValueId Builder::ArrayVar(AddressSpace space, TypeId element, uint64_t count) {
    Inst i;
    i.op = Op::kArrayVar;
    i.type = module_.GetPointer(space, element);
    i.imm = count;
    return AppendToEntry(std::move(i));
}

ValueId Builder::IndexPtr(ValueId array, ValueId index) {
    Inst i;
    i.op = Op::kIndexPtr;
    i.type = TypeOf(array);
    const Type& pointee = module_.type(module_.type(i.type).pointee);
    if (pointee.kind == Type::Kind::kCoopMatrix)  // an element of a tile
        i.type = Pointer(AddressSpace::kFunction, Scalar(pointee.scalar));
    i.operands = {array, index};
    return Append(std::move(i), current_);
}

ValueId Builder::Atomic(AtomicOp op, const std::vector<ValueId>& operands) {
    Inst i;
    i.op = Op::kAtomic;
    i.type = module_.type(TypeOf(operands.at(0))).pointee;
    i.imm = static_cast<uint64_t>(op);
    i.operands = operands;
    return Append(std::move(i), current_);
}

void Builder::Barrier(BarrierKind kind) {
    Inst i;
    i.op = Op::kBarrier;
    i.imm = static_cast<uint64_t>(kind);
    Append(std::move(i), current_);
}

ValueId Builder::Subgroup(SubgroupOp op, TypeId result, const std::vector<ValueId>& operands,
                          uint32_t aux) {
    Inst i;
    i.op = Op::kSubgroup;
    i.type = result;
    i.imm = static_cast<uint64_t>(op);
    i.aux = aux;
    i.operands = operands;
    return Append(std::move(i), current_);
}

ValueId Builder::Coop(Op op, TypeId result, const std::vector<ValueId>& operands, uint32_t aux,
                      uint64_t imm) {
    Inst i;
    i.op = op;
    i.type = result;
    i.imm = imm;
    i.aux = aux;
    i.operands = operands;
    return Append(std::move(i), current_);
}

ValueId Builder::Binary(Op op, ValueId a, ValueId b) {
    Inst i;
    i.op = op;
    i.type = TypeOf(a);
    i.operands = {a, b};
    return Append(std::move(i), current_);
}

ValueId Builder::Divide(ValueId a, ValueId b, DivPrecision precision) {
    Inst i;
    i.op = Op::kDiv;
    i.type = TypeOf(a);
    i.operands = {a, b};
    i.aux = static_cast<uint32_t>(precision);
    return Append(std::move(i), current_);
}

ValueId Builder::Compare(Op op, ValueId a, ValueId b) {
    Inst i;
    i.op = op;
    i.type = module_.GetScalar(ScalarKind::kBool);
    i.operands = {a, b};
    return Append(std::move(i), current_);
}

ValueId Builder::Unary(Op op, ValueId a) {
    Inst i;
    i.op = op;
    i.type = TypeOf(a);
    i.operands = {a};
    return Append(std::move(i), current_);
}

ValueId Builder::Convert(TypeId to, ValueId a) {
    Inst i;
    i.op = Op::kConvert;
    i.type = to;
    i.operands = {a};
    return Append(std::move(i), current_);
}

ValueId Builder::Bitcast(TypeId to, ValueId a) {
    Inst i;
    i.op = Op::kBitcast;
    i.type = to;
    i.operands = {a};
    return Append(std::move(i), current_);
}

ValueId Builder::Select(ValueId cond, ValueId a, ValueId b) {
    Inst i;
    i.op = Op::kSelect;
    i.type = TypeOf(a);
    i.operands = {cond, a, b};
    return Append(std::move(i), current_);
}

ValueId Builder::Math(MathFn fn, std::initializer_list<ValueId> args) {
    return Math(fn, std::vector<ValueId>(args));
}

ValueId Builder::Math(MathFn fn, const std::vector<ValueId>& args) {
    Inst i;
    i.op = Op::kMath;
    i.imm = static_cast<uint64_t>(fn);
    i.type = (fn == MathFn::kIsNan || fn == MathFn::kIsInf) ? module_.GetScalar(ScalarKind::kBool)
                                                           : TypeOf(args.at(0));
    i.operands = args;
    return Append(std::move(i), current_);
}

void Builder::Br(BlockId target) {
    Inst i;
    i.op = Op::kBr;
    i.targets[0] = target;
    Append(std::move(i), current_);
}

void Builder::CondBr(ValueId cond, BlockId if_true, BlockId if_false) {
    Inst i;
    i.op = Op::kCondBr;
    i.operands = {cond};
    i.targets[0] = if_true;
    i.targets[1] = if_false;
    Append(std::move(i), current_);
}

void Builder::Ret() {
    Inst i;
    i.op = Op::kRet;
    Append(std::move(i), current_);
}

void Builder::Unreachable() {
    Inst i;
    i.op = Op::kUnreachable;
    Append(std::move(i), current_);
}

}  // namespace nvk::kir
