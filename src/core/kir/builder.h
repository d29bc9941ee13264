// Builder: the one way to create KIR in CFG form (used by the Python front end
// through the bindings, and by C++ tests).
//
// The builder appends instructions at the end of the current block. It keeps
// the invariants of kir.h where it can: Var, Param and Builtin always go into
// the entry block (before its terminator, if it has one), and a block takes
// no instruction after its terminator.
#pragma once

#include <initializer_list>

#include "kir/kir.h"

namespace nvk::kir {

class Builder {
  public:
    explicit Builder(Module& module);

    Module& module() { return module_; }
    Function& function() { return module_.function; }

    // Blocks. The first block created is the entry block.
    BlockId CreateBlock(std::string name = "");
    void SetBlock(BlockId block);
    BlockId current_block() const { return current_; }
    bool IsTerminated(BlockId block) const;
    void SetLoc(Loc loc) { loc_ = loc; }

    // Types (shorthands for the module's interning).
    TypeId Scalar(ScalarKind k) { return module_.GetScalar(k); }
    TypeId Pointer(AddressSpace s, TypeId pointee) { return module_.GetPointer(s, pointee); }

    // Values.
    ValueId ConstBits(TypeId type, uint64_t bits);
    ValueId ConstInt(TypeId type, int64_t value);  // integer or bool type
    ValueId ConstFloat(TypeId type, double value);  // float type
    ValueId Param(uint32_t index);
    ValueId BuiltinId(Builtin builtin, uint32_t axis);
    ValueId Var(TypeId element);  // pointer<function, element>, in the entry block

    ValueId Load(ValueId ptr);
    void Store(ValueId ptr, ValueId value);
    // A store at the end of `block` (before its terminator, if it has one): the front end
    // keeps a Numba variable as a value while only its block uses it, and stores it where
    // it was defined once another block reads it. Nothing where `value` is dead code.
    void StoreAtEnd(BlockId block, ValueId ptr, ValueId value);
    ValueId ElemPtr(TypeId element, ValueId base, ValueId index);
    // An array of `count` elements in function or workgroup memory (entry block);
    // count 0: a workgroup array sized at launch.
    ValueId ArrayVar(AddressSpace space, TypeId element, uint64_t count);
    ValueId IndexPtr(ValueId array, ValueId index);
    // (ptr, value) or, for kCas, (ptr, expected, value); returns the old value.
    ValueId Atomic(AtomicOp op, const std::vector<ValueId>& operands);
    void Barrier(BarrierKind kind);
    ValueId Subgroup(SubgroupOp op, TypeId result, const std::vector<ValueId>& operands,
                     uint32_t aux = 0);
    // A cooperative-matrix op (kCoopFill ... kCoopLength; kir.h): `result` kNone for a
    // store. IndexPtr on a function variable of a tile type points to one of its elements.
    ValueId Coop(Op op, TypeId result, const std::vector<ValueId>& operands, uint32_t aux = 0,
                 uint64_t imm = 0);

    ValueId Binary(Op op, ValueId a, ValueId b);   // arithmetic, bitwise, shifts
    ValueId Divide(ValueId a, ValueId b, DivPrecision precision);  // floats (kir.h)
    ValueId Compare(Op op, ValueId a, ValueId b);  // result bool
    ValueId Unary(Op op, ValueId a);               // kNeg, kNot
    ValueId Convert(TypeId to, ValueId a);
    ValueId Bitcast(TypeId to, ValueId a);
    ValueId Select(ValueId cond, ValueId a, ValueId b);
    ValueId Math(MathFn fn, std::initializer_list<ValueId> args);
    ValueId Math(MathFn fn, const std::vector<ValueId>& args);

    // Terminators.
    void Br(BlockId target);
    void CondBr(ValueId cond, BlockId if_true, BlockId if_false);
    void Ret();
    void Unreachable();

    TypeId TypeOf(ValueId v) const { return module_.function.values.at(v).type; }

  private:
    ValueId Append(Inst inst, BlockId block);
    ValueId AppendToEntry(Inst inst);

    Module& module_;
    BlockId current_ = kNone;
    Loc loc_;
};

}  // namespace nvk::kir
