// KIR: the kernel IR of numba_vulkan.
//
// KIR is small, typed and target-neutral. A Module holds a type table, the
// kernel's parameter block and one Function. A Function is a list of basic
// blocks; each block is a list of instructions ending in one terminator.
//
// Two forms share these data structures:
//
//   CFG form         what the front end builds: blocks and branches, any shape
//                    a reducible control-flow graph can take.
//   structured form  what the structurizer produces and the SPIR-V emitter
//                    accepts: every block that ends in a conditional branch,
//                    and every loop header, carries a Merge annotation (the
//                    merge block and, for loops, the continue target), and
//                    the blocks are ordered so that each block comes after
//                    its dominators. This maps one to one onto SPIR-V's
//                    OpSelectionMerge / OpLoopMerge rules.
//
// Invariants (checked by the verifier, relied on by every pass):
//   - Block 0 is the entry block. It has no predecessors.
//   - Values are defined once. A value defined in the entry block may be used
//     in any block; any other value is used only in the block that defines it,
//     after its definition. Python variables are KIR local variables (Var,
//     Load, Store), so the front end never needs values across blocks, and a
//     pass may copy or move a non-entry block by renaming only its own values.
//   - Every block ends in exactly one terminator (Br, CondBr, Ret,
//     Unreachable) and has no other terminator.
//   - Var, Param and Builtin instructions appear only in the entry block.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace nvk::kir {

using TypeId = uint32_t;
using ValueId = uint32_t;
using BlockId = uint32_t;
inline constexpr uint32_t kNone = std::numeric_limits<uint32_t>::max();

// ---------------------------------------------------------------- types

// kBF16: bfloat16 (SPV_KHR_bfloat16), the element of a tile on the matrix units and the value
// of one of its elements; SPIR-V has no arithmetic on it, so a bf16 value is only loaded
// from or stored to a tile element, bitcast to or from a 16-bit integer (the front end
// rounds bfloat16 in software on those bits) and filled into a tile (the verifier).
enum class ScalarKind : uint8_t {
    kBool, kI8, kI16, kI32, kI64, kU8, kU16, kU32, kU64, kF16, kF32, kF64, kBF16
};

enum class AddressSpace : uint8_t {
    kFunction,   // a local variable of one invocation
    kGlobal,     // device memory reached through a buffer device address (PhysicalStorageBuffer)
    kWorkgroup,  // memory shared by a workgroup
};

// kCoopMatrix's use: SPIR-V's CooperativeMatrixUse (MatrixAKHR, MatrixBKHR, MatrixAccumulatorKHR).
enum class MatrixUse : uint8_t { kA, kB, kAccumulator };

struct Type {
    enum class Kind : uint8_t { kVoid, kScalar, kPointer, kCoopMatrix };
    Kind kind = Kind::kVoid;
    ScalarKind scalar = ScalarKind::kI32;      // kScalar; kCoopMatrix: the element
    AddressSpace space = AddressSpace::kFunction;  // kPointer
    TypeId pointee = kNone;                    // kPointer
    // kCoopMatrix: a rows x cols tile a subgroup holds together (SPIR-V's
    // OpTypeCooperativeMatrixKHR, subgroup scope), its elements spread over the
    // invocations in a way the device chooses.
    uint32_t rows = 0, cols = 0;
    MatrixUse use = MatrixUse::kA;

    bool operator==(const Type&) const = default;
};

bool IsInteger(ScalarKind k);
bool IsSigned(ScalarKind k);
bool IsFloat(ScalarKind k);
int BitWidth(ScalarKind k);  // kBool: 1
const char* ScalarName(ScalarKind k);  // "bool", "i32", "u64", "f32", ...

// ---------------------------------------------------------------- instructions

enum class Op : uint16_t {
    // Values with no operands. Only Const may appear outside the entry block.
    kConst,    // imm: the constant's bits (ints sign/zero-extended to 64, floats as their bit pattern)
    kParam,    // imm: index into Module::params
    kBuiltin,  // imm: Builtin; aux: axis 0..2. Result u32.
    kVar,      // result: pointer<function, T>; no initial value

    // Memory.
    kLoad,     // (ptr) -> pointee
    kStore,    // (ptr, value) -> no result
    kElemPtr,  // (base: u64 address, index: integer) -> pointer<global, T> to element `index`
               // of an array of T starting at `base`; T = the result's pointee

    // Arithmetic on scalars of one type. Integer ops wrap. kDiv and kRem on
    // integers truncate toward zero (C semantics); the front end builds
    // Python's floor semantics from them. kRem on floats is C fmod. kDiv on
    // floats: aux is a DivPrecision.
    kAdd, kSub, kMul, kDiv, kRem,
    kNeg,                    // (a)
    kAnd, kOr, kXor, kNot,   // bitwise on integers, logical on bool; kNot is unary
    kShl, kShr,              // kShr: arithmetic for signed, logical for unsigned; shift < width
    // Comparisons: result bool. On floats all are ordered except kNe, which
    // is true when either operand is NaN (as in Python and NumPy).
    kEq, kNe, kLt, kLe, kGt, kGe,
    kConvert,  // (a) -> result type: between any two scalar kinds (float->int truncates)
    kBitcast,  // (a) -> result type of the same width
    kSelect,   // (cond: bool, a, b) -> a if cond else b
    kMath,     // imm: MathFn; operands per MathFn; result of the operands' type

    // Arrays in function or workgroup memory, atomics and barriers (issue 8).
    kArrayVar,  // imm: element count; result pointer<function|workgroup, T> to element 0.
                // Entry block only. imm 0: a workgroup array whose length the pipeline
                // sets at launch (dynamic shared memory, spirv/memory.cc).
    kIndexPtr,  // (base: a kArrayVar result, index: integer) -> pointer of base's type to
                // element `index` (in bounds: the front end's concern, as for kElemPtr)
    kAtomic,    // imm: AtomicOp; (ptr, value), or (ptr, expected, value) for kCas, with ptr
                // global or workgroup -> the value *ptr held before (its pointee type).
                // Integers of 32/64 bits; floats only for kAdd (the front end builds the
                // rest from kCas on the bits). Relaxed ordering, as CUDA's atomics.
    kBarrier,   // imm: BarrierKind; no operands, no result
    kSubgroup,  // imm: SubgroupOp; aux: its GroupOperation (reductions) or the ballot
                // word; operands and result per SubgroupOp (see there)

    // Cooperative matrices (values of a kCoopMatrix type; every invocation of the
    // subgroup executes them together, with the same operands). kConvert converts one
    // element-wise into a kCoopMatrix type of the same use and shape; a kIndexPtr whose
    // base is a function variable of a kCoopMatrix type points to element `index` of
    // the invocation's share (0 <= index < its kCoopLength).
    kCoopFill,    // (v: the element's scalar) -> the result type, every element v
    kCoopLoad,    // (ptr: global or workgroup pointer to the element, stride: u32) -> the
                  // result type; aux: MatrixLayout. Element (i, j) is at ptr + i * stride
                  // + j (row-major) or ptr + j * stride + i (column-major), in elements
    kCoopStore,   // (ptr, value, stride: u32), as kCoopLoad; no result
    kCoopMulAdd,  // (a, b, c) -> c's type: a @ b + c; aux: kMatrixSigned* bits
    kCoopLength,  // () -> u32: the elements an invocation holds of the type in imm

    // Terminators.
    kBr,           // targets[0]
    kCondBr,       // (cond: bool) targets[0] if true, targets[1] if false
    kRet,          // kernels return nothing
    kUnreachable,
};

enum class Builtin : uint8_t {
    kGlobalId,   // invocation index in the grid
    kLocalId,    // invocation index in the workgroup
    kGroupId,    // workgroup index
    kLocalSize,  // workgroup extent
    kNumGroups,  // grid extent in workgroups
};

// Math functions the backend maps to SPIR-V (GLSL.std.450 where a width allows).
enum class MathFn : uint8_t {
    kFloor, kCeil, kTrunc, kAbs, kMin, kMax,  // kAbs/kMin/kMax: ints (by signedness) and floats
    kSqrt, kFma,
    // float32 only in SPIR-V's extended set; the front end uses them only
    // where it knows the precision is acceptable (fastmath) or the type is f32.
    kExp, kLog, kPow, kSin, kCos, kTan, kAtan2, kTanh,
    kIsNan, kIsInf,  // result bool
    // 32-bit integers only (Vulkan's OpBitCount and GLSL.std.450 FindUMsb/FindILsb
    // take nothing else); result of the operand's type. kBitCount: the set bits;
    // kFindUMsb / kFindILsb: the index of the highest / lowest set bit, -1 (all
    // ones) for 0. The front end widens narrower values and splits 64-bit ones.
    kBitCount, kFindUMsb, kFindILsb,
    // 1/sqrt(x), the driver's (GLSL.std.450 InverseSqrt: Vulkan allows 2 ulp in float32):
    // the math library's float32 sqrt starts from it and corrects it exactly.
    kInverseSqrt,
};
constexpr MathFn kLastMathFn = MathFn::kInverseSqrt;

// kDiv on floats (its aux): which quotient the front end needs.
enum class DivPrecision : uint8_t {
    // IEEE 754's quotient, rounded once, where the compiler can give it (on a
    // float32 division, kir/float_division.h; Vulkan's OpFDiv alone may be
    // 2.5 ulp off).
    kCorrect,
    // The driver's OpFDiv suffices: Vulkan's precision (float32: 2.5 ulp) for
    // a divisor of magnitude within [2^-126, 2^126], which the front end
    // promises (outside it the quotient may be anything and must go unused).
    // The math library's own divisions, which correct the quotient themselves
    // or need only a few good bits (mathlib/dd.py). Not rewritten into
    // float64, and the divisor is not scaled (spirv/wrapping.cc).
    kDriver,
};

enum class AtomicOp : uint8_t {
    kAdd, kSub, kMin, kMax,  // kMin/kMax by the type's signedness
    kAnd, kOr, kXor, kExch,
    kCas,  // stores value if *ptr == expected; always returns the old value
};

// kBarrier: what an invocation waits for and which writes it makes visible.
enum class BarrierKind : uint8_t {
    kWorkgroup,       // every invocation of the workgroup reaches it (syncthreads); workgroup
                      // and device memory written before it are visible after it in the group
    kFenceWorkgroup,  // memory fence, workgroup scope (threadfence_block)
    kFenceDevice,     // memory fence, device scope (threadfence)
    kSubgroup,        // the active invocations of the subgroup reach it (syncwarp); memory
                      // written before it is visible after it in the subgroup
};
constexpr BarrierKind kLastBarrierKind = BarrierKind::kSubgroup;

// kSubgroup operations (SPIR-V's OpGroupNonUniform*), over the active invocations
// of the calling subgroup.
enum class SubgroupOp : uint8_t {
    kSize, kLane, kId, kCount,  // () -> u32: width, index in the subgroup, subgroup index
                                // in the workgroup, subgroups per workgroup
    kSum, kProd, kMin, kMax,    // (v) -> v's type; aux: 0 reduce, 1 inclusive, 2 exclusive scan
    kAny, kAll,                 // (bool) -> bool
    kElect,                     // () -> bool: true in one active invocation
    kBallot,                    // (bool) -> u32: word `aux` (0..3) of the ballot
    kBallotCount,               // (bool) -> u32: invocations whose value is true
    kBroadcast,                 // (v, lane: u32, uniform) -> v of that lane
    kBroadcastFirst,            // (v) -> v of the lowest active lane
    kShuffle, kShuffleXor,      // (v, lane / mask: u32) -> v of that lane
    kShuffleUp, kShuffleDown,   // (v, delta: u32) -> v of lane - delta / lane + delta
    kPartition,                 // (v) -> u32: word `aux` (0..3) of the lanes whose v has this
                                // lane's bits (SPV_NV_shader_subgroup_partitioned; the
                                // emulation of devices without it is the front end's)
};
constexpr SubgroupOp kLastSubgroupOp = SubgroupOp::kPartition;

struct Loc {  // a source position, for error messages
    uint32_t file = kNone;  // index into Module::files
    uint32_t line = 0;
};

struct Inst {
    Op op = Op::kUnreachable;
    TypeId type = kNone;        // result type; kNone for no result
    ValueId result = kNone;     // kNone for no result
    std::vector<ValueId> operands;
    uint64_t imm = 0;           // see Op
    uint32_t aux = 0;           // see Op
    BlockId targets[2] = {kNone, kNone};
    Loc loc;
};

// kCoopLoad/kCoopStore aux.
enum class MatrixLayout : uint8_t { kRowMajor, kColumnMajor };
// kCoopMulAdd aux: which operands hold signed integers (SPIR-V's CooperativeMatrixOperands).
inline constexpr uint32_t kMatrixSignedA = 1, kMatrixSignedB = 2, kMatrixSignedC = 4,
                          kMatrixSignedResult = 8;

// kCoopFill ... kCoopLength.
inline bool IsCoopOp(Op op) { return op >= Op::kCoopFill && op <= Op::kCoopLength; }

// A float division marked DivPrecision::kDriver.
inline bool IsDriverDivision(const Inst& inst) {
    return inst.op == Op::kDiv && inst.aux == static_cast<uint32_t>(DivPrecision::kDriver);
}

bool IsTerminator(Op op);
const char* OpName(Op op);        // "add", "condbr", ...
const char* BuiltinName(Builtin b);
const char* MathFnName(MathFn f);
const char* AtomicOpName(AtomicOp a);        // "add", ..., "cas"
const char* BarrierKindName(BarrierKind b);  // "workgroup", "fence_workgroup", "fence_device"
const char* SubgroupOpName(SubgroupOp s);    // "size", "sum", "shuffle_xor", ...

// ---------------------------------------------------------------- blocks, functions, module

// Structured-form annotation of a header block (SPIR-V's merge instructions).
struct Merge {
    enum class Kind : uint8_t { kNone, kSelection, kLoop };
    Kind kind = Kind::kNone;
    BlockId merge = kNone;
    BlockId cont = kNone;  // kLoop only: the continue target
};

struct Block {
    BlockId id = kNone;
    std::string name;  // for printing; unique within the function, may be empty
    std::vector<Inst> insts;  // the last one is the terminator
    Merge merge;

    const Inst& terminator() const { return insts.back(); }
    Inst& terminator() { return insts.back(); }
    // Successors in order (targets[0], then targets[1] for kCondBr).
    std::vector<BlockId> Successors() const;
};

struct ValueInfo {
    TypeId type = kNone;
    BlockId block = kNone;  // where it is defined
};

struct Function {
    std::string name;
    // blocks[i].id need not equal i after passes reorder blocks; use BlockIndex().
    std::vector<Block> blocks;
    std::vector<ValueInfo> values;  // indexed by ValueId
    bool structured = false;

    Block& entry() { return blocks.front(); }
    const Block& entry() const { return blocks.front(); }
    // Position of the block with this id in `blocks`, or kNone.
    uint32_t BlockIndex(BlockId id) const;
    Block* FindBlock(BlockId id);
    const Block* FindBlock(BlockId id) const;
    BlockId NextBlockId() const;  // one past the largest id in use
    ValueId NewValue(TypeId type, BlockId block);
};

// One scalar of the kernel's parameter block (push constants or a parameter buffer).
// Array arguments are flattened by the front end into an address (u64), extents
// and strides (in elements).
struct ParamDecl {
    std::string name;
    TypeId type = kNone;  // a scalar type
    uint32_t offset = 0;  // byte offset in the block, aligned to the type's size
};

// The argument contract (kir/abi.h has the rules and how to declare them).
enum class ArgKind : uint8_t { kScalar, kArray, kHidden };

// One argument of a kernel, or one hidden parameter.
struct ArgDecl {
    ArgKind kind = ArgKind::kScalar;
    std::string name;
    // scalar: the argument's own type (as numba.typeof types it); array: the
    // element's compute kind; hidden: the parameter's kind.
    ScalarKind type = ScalarKind::kI32;
    // scalar: the kind the kernel computes it in; array: the element's compute
    // kind; hidden: its kind.
    ScalarKind compute = ScalarKind::kI32;
    // scalar and hidden: the slot's kind; array: the element's storage kind.
    ScalarKind slot = ScalarKind::kI32;
    uint32_t offset = 0;  // scalar and hidden: the slot; array: its address (u64)
    uint32_t param = 0;   // index of its first parameter in Module::params
    // Arrays: the host dtype (NumPy kind character, item size), dimensions,
    // and the offsets of extents and strides (in elements), of kind `index`.
    char dtype_kind = 0;
    uint32_t itemsize = 0;
    uint32_t record_key = 0;  // records: a digest of their layout (runtime.array.record_key)
    uint32_t ndim = 0;
    ScalarKind index = ScalarKind::kI32;  // also the id width of the grid's hidden parameters
    std::vector<uint32_t> extents, strides;
    bool written = false;  // arrays: the kernel may write it (hazards, copies back)
};

struct Module {
    std::vector<Type> types;  // interned: use the Get* functions
    std::vector<ParamDecl> params;
    std::vector<ArgDecl> args;  // the kernel's arguments and hidden parameters (kir/abi.h)
    std::vector<std::string> files;  // source files named by Loc
    Function function;               // the kernel

    TypeId GetVoid();
    TypeId GetScalar(ScalarKind k);
    TypeId GetPointer(AddressSpace space, TypeId pointee);
    TypeId GetCoopMatrix(ScalarKind element, uint32_t rows, uint32_t cols, MatrixUse use);
    const Type& type(TypeId id) const { return types.at(id); }
    // An instruction with a new scalar result of kind `k` defined in `block`, for
    // passes to insert where they like (Builder appends to the CFG it builds).
    Inst NewScalarInst(Op op, ScalarKind k, std::vector<ValueId> operands, BlockId block);

    // Append a parameter at the next offset aligned to its size; returns its index.
    uint32_t AddParam(std::string name, ScalarKind k);
    uint32_t ParamBlockSize() const;  // bytes, rounded up to 8
    uint32_t AddFile(const std::string& path);  // index of the path, added once
};

}  // namespace nvk::kir
