// Bindings of the KIR module and builder: how the Python front end builds KIR.
//
// The front end makes many small calls (one per instruction), so the surface is
// flat and cheap: values and blocks are plain ints, scalar kinds, ops, builtins
// and math functions are nanobind enums, and types are named by their scalar
// kind (the builder interns the type). Pointers only come from `var` and
// `elemptr`, whose pointee the caller names by kind.
//
//   m = _core.KirModule("kernel")
//   i = m.add_param("a.addr", _core.Kind.u64)
//   b = _core.KirBuilder(m)
//   entry = b.create_block("entry")
//   x = b.param(i)
//   ...
//   b.ret()
#include <optional>

#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include "bind/errors.h"
#include "kir/abi.h"
#include "kir/builder.h"
#include "kir/interpret.h"
#include "kir/kir.h"
#include "kir/printer.h"
#include "kir/traffic.h"
#include "kir/verifier.h"

namespace nb = nanobind;

namespace nvk::bind {

namespace {

using kir::Op;
using kir::ScalarKind;

// Checks shared by every builder call that names a value: a bad id would
// index past the value table in C++, so it becomes a Python ValueError.
void CheckValue(kir::Builder& b, kir::ValueId v) {
    if (v >= b.function().values.size())
        throw nb::value_error("KirBuilder: unknown value id");
}

ScalarKind KindOfValue(kir::Builder& b, kir::ValueId v) {
    CheckValue(b, v);
    const kir::Type& t = b.module().type(b.TypeOf(v));
    if (t.kind != kir::Type::Kind::kScalar)
        throw nb::value_error("KirBuilder: value is not a scalar");
    return t.scalar;
}

bool IsBinaryOp(Op op) {
    switch (op) {
        case Op::kAdd: case Op::kSub: case Op::kMul: case Op::kDiv: case Op::kRem:
        case Op::kAnd: case Op::kOr: case Op::kXor: case Op::kShl: case Op::kShr:
            return true;
        default:
            return false;
    }
}

bool IsCompareOp(Op op) {
    return op == Op::kEq || op == Op::kNe || op == Op::kLt || op == Op::kLe || op == Op::kGt ||
           op == Op::kGe;
}

void RequireBlock(kir::Builder& b) {
    if (b.current_block() == kir::kNone)
        throw nb::value_error("KirBuilder: create a block before adding instructions");
}

}  // namespace

void InitKir(nb::module_& m) {
    nb::enum_<ScalarKind>(m, "Kind", "Scalar kinds of KIR.")
        .value("bool", ScalarKind::kBool)
        .value("i8", ScalarKind::kI8)
        .value("i16", ScalarKind::kI16)
        .value("i32", ScalarKind::kI32)
        .value("i64", ScalarKind::kI64)
        .value("u8", ScalarKind::kU8)
        .value("u16", ScalarKind::kU16)
        .value("u32", ScalarKind::kU32)
        .value("u64", ScalarKind::kU64)
        .value("f16", ScalarKind::kF16)
        .value("f32", ScalarKind::kF32)
        .value("f64", ScalarKind::kF64)
        .value("bf16", ScalarKind::kBF16);

    nb::enum_<Op>(m, "Op", "KIR operations that the builder's generic calls take.")
        .value("add", Op::kAdd)
        .value("sub", Op::kSub)
        .value("mul", Op::kMul)
        .value("div", Op::kDiv)
        .value("rem", Op::kRem)
        .value("neg", Op::kNeg)
        .value("and_", Op::kAnd)
        .value("or_", Op::kOr)
        .value("xor", Op::kXor)
        .value("not_", Op::kNot)
        .value("shl", Op::kShl)
        .value("shr", Op::kShr)
        .value("eq", Op::kEq)
        .value("ne", Op::kNe)
        .value("lt", Op::kLt)
        .value("le", Op::kLe)
        .value("gt", Op::kGt)
        .value("ge", Op::kGe)
        .value("coop_fill", Op::kCoopFill)
        .value("coop_load", Op::kCoopLoad)
        .value("coop_store", Op::kCoopStore)
        .value("coop_muladd", Op::kCoopMulAdd)
        .value("coop_length", Op::kCoopLength);

    nb::enum_<kir::Builtin>(m, "Builtin", "Invocation ids the kernel can read.")
        .value("global_id", kir::Builtin::kGlobalId)
        .value("local_id", kir::Builtin::kLocalId)
        .value("group_id", kir::Builtin::kGroupId)
        .value("local_size", kir::Builtin::kLocalSize)
        .value("num_groups", kir::Builtin::kNumGroups);

    nb::enum_<kir::AtomicOp>(m, "AtomicOp", "Atomic read-modify-write operations.")
        .value("add", kir::AtomicOp::kAdd)
        .value("sub", kir::AtomicOp::kSub)
        .value("min", kir::AtomicOp::kMin)
        .value("max", kir::AtomicOp::kMax)
        .value("and_", kir::AtomicOp::kAnd)
        .value("or_", kir::AtomicOp::kOr)
        .value("xor", kir::AtomicOp::kXor)
        .value("exch", kir::AtomicOp::kExch)
        .value("cas", kir::AtomicOp::kCas);

    nb::enum_<kir::BarrierKind>(m, "BarrierKind", "Barriers and memory fences.")
        .value("workgroup", kir::BarrierKind::kWorkgroup)
        .value("fence_workgroup", kir::BarrierKind::kFenceWorkgroup)
        .value("fence_device", kir::BarrierKind::kFenceDevice)
        .value("subgroup", kir::BarrierKind::kSubgroup);

    nb::enum_<kir::SubgroupOp>(m, "SubgroupOp", "Subgroup operations.")
        .value("size", kir::SubgroupOp::kSize)
        .value("lane", kir::SubgroupOp::kLane)
        .value("id", kir::SubgroupOp::kId)
        .value("count", kir::SubgroupOp::kCount)
        .value("sum", kir::SubgroupOp::kSum)
        .value("prod", kir::SubgroupOp::kProd)
        .value("min", kir::SubgroupOp::kMin)
        .value("max", kir::SubgroupOp::kMax)
        .value("any", kir::SubgroupOp::kAny)
        .value("all", kir::SubgroupOp::kAll)
        .value("elect", kir::SubgroupOp::kElect)
        .value("ballot", kir::SubgroupOp::kBallot)
        .value("ballot_count", kir::SubgroupOp::kBallotCount)
        .value("partition", kir::SubgroupOp::kPartition)
        .value("broadcast", kir::SubgroupOp::kBroadcast)
        .value("broadcast_first", kir::SubgroupOp::kBroadcastFirst)
        .value("shuffle", kir::SubgroupOp::kShuffle)
        .value("shuffle_xor", kir::SubgroupOp::kShuffleXor)
        .value("shuffle_up", kir::SubgroupOp::kShuffleUp)
        .value("shuffle_down", kir::SubgroupOp::kShuffleDown);

    nb::enum_<kir::MathFn>(m, "MathFn", "Math functions the backend maps to SPIR-V.")
        .value("floor", kir::MathFn::kFloor)
        .value("ceil", kir::MathFn::kCeil)
        .value("trunc", kir::MathFn::kTrunc)
        .value("abs", kir::MathFn::kAbs)
        .value("min", kir::MathFn::kMin)
        .value("max", kir::MathFn::kMax)
        .value("sqrt", kir::MathFn::kSqrt)
        .value("inverse_sqrt", kir::MathFn::kInverseSqrt)
        .value("fma", kir::MathFn::kFma)
        .value("exp", kir::MathFn::kExp)
        .value("log", kir::MathFn::kLog)
        .value("pow", kir::MathFn::kPow)
        .value("sin", kir::MathFn::kSin)
        .value("cos", kir::MathFn::kCos)
        .value("tan", kir::MathFn::kTan)
        .value("atan2", kir::MathFn::kAtan2)
        .value("tanh", kir::MathFn::kTanh)
        .value("isnan", kir::MathFn::kIsNan)
        .value("isinf", kir::MathFn::kIsInf)
        .value("bit_count", kir::MathFn::kBitCount)
        .value("find_umsb", kir::MathFn::kFindUMsb)
        .value("find_ilsb", kir::MathFn::kFindILsb);

    nb::class_<kir::Module>(m, "KirModule", "A KIR module: parameter block, files, one kernel.")
        .def(
            "__init__",
            [](kir::Module* self, const std::string& name) {
                new (self) kir::Module();
                self->function.name = name;
            },
            nb::arg("name") = "kernel")
        .def_prop_ro("name", [](const kir::Module& mod) { return mod.function.name; })
        .def("add_param", &kir::Module::AddParam, nb::arg("name"), nb::arg("kind"),
             "Append a scalar parameter at the next aligned offset; returns its index.")
        .def("param_offset",
             [](const kir::Module& mod, uint32_t index) {
                 if (index >= mod.params.size()) throw nb::index_error("no such parameter");
                 return mod.params[index].offset;
             })
        .def("param_name",
             [](const kir::Module& mod, uint32_t index) {
                 if (index >= mod.params.size()) throw nb::index_error("no such parameter");
                 return mod.params[index].name;
             })
        .def("add_scalar_arg",
             [](kir::Module& mod, std::string name, ScalarKind type, ScalarKind compute,
                bool slot32) {
                 return kir::AddScalarArg(mod, std::move(name), type, compute, slot32);
             },
             nb::arg("name"), nb::arg("type"), nb::arg("compute"), nb::arg("slot32") = false,
             "Declare a scalar argument of kind `type` (numba.typeof's) computed as `compute`; "
             "its slot's kind and offset follow kir/abi.h (`slot32`: an int64 in an int32 "
             "slot). Returns its parameter's index.")
        .def("add_array_arg",
             [](kir::Module& mod, std::string name, const std::string& dtype_kind,
                uint32_t itemsize, ScalarKind compute, ScalarKind storage, uint32_t ndim,
                ScalarKind index, uint32_t record_key) {
                 if (dtype_kind.size() != 1) throw nb::value_error("dtype_kind: one character");
                 return kir::AddArrayArg(mod, std::move(name), dtype_kind[0], itemsize, compute,
                                         storage, ndim, index, record_key);
             },
             nb::arg("name"), nb::arg("dtype_kind"), nb::arg("itemsize"), nb::arg("compute"),
             nb::arg("storage"), nb::arg("ndim"), nb::arg("index"), nb::arg("record_key") = 0,
             "Declare an array argument (host dtype kind character and item size); returns the "
             "index of its first parameter: the address, then ndim extents and ndim strides.")
        .def("add_hidden_param",
             [](kir::Module& mod, std::string name, ScalarKind kind, ScalarKind index) {
                 return kir::AddHiddenParam(mod, std::move(name), kind, index);
             },
             nb::arg("name"), nb::arg("kind"), nb::arg("index") = ScalarKind::kI32,
             "Declare a parameter the launcher writes itself (kir/abi.h); returns its index.")
        .def("mark_written",
             [](kir::Module& mod, uint32_t arg) {
                 if (arg >= mod.args.size()) throw nb::index_error("no such argument");
                 mod.args[arg].written = true;
             },
             nb::arg("arg"), "Record that the kernel may write array argument `arg`.")
        .def_prop_ro("args", [](const kir::Module& mod) { return mod.args; },
                     "The arguments and hidden parameters (a copy), in declaration order.")
        .def_prop_ro("num_args", [](const kir::Module& mod) { return mod.args.size(); })
        .def_prop_ro("num_params", [](const kir::Module& mod) { return mod.params.size(); })
        .def("param_block_size", &kir::Module::ParamBlockSize)
        .def("add_file", &kir::Module::AddFile, nb::arg("path"))
        .def_prop_ro("files", [](const kir::Module& mod) { return mod.files; })
        .def_prop_ro("num_blocks",
                     [](const kir::Module& mod) { return mod.function.blocks.size(); })
        .def_prop_ro("num_values",
                     [](const kir::Module& mod) { return mod.function.values.size(); })
        .def(
            "block_ops",
            [](const kir::Module& mod, uint32_t index) {
                if (index >= mod.function.blocks.size()) throw nb::index_error("no such block");
                std::vector<std::string> ops;
                for (const kir::Inst& i : mod.function.blocks[index].insts)
                    ops.push_back(kir::OpName(i.op));
                return ops;
            },
            "Names of the ops of the block at position `index` (for tests).")
        .def(
            "traffic",
            [](const kir::Module& mod) {
                const kir::Traffic t = kir::InvocationTraffic(mod);
                return std::make_tuple(t.global_bytes, t.atomics, t.loops);
            },
            "(global bytes, atomics, loops) of one invocation's code (kir/traffic.h): the "
            "element sizes of its global loads and stores, each op once.")
        .def("print", [](const kir::Module& mod) { return kir::Print(mod); })
        .def("__str__", [](const kir::Module& mod) { return kir::Print(mod); })
        .def("verify", [](const kir::Module& mod) { ThrowIfError(kir::Verify(mod)); });

    nb::class_<kir::Builder>(m, "KirBuilder", "Appends KIR (CFG form) to a KirModule.")
        .def(nb::init<kir::Module&>(), nb::arg("module"), nb::keep_alive<1, 2>())
        .def("create_block", &kir::Builder::CreateBlock, nb::arg("name") = "")
        .def("set_block",
             [](kir::Builder& b, kir::BlockId block) {
                 if (b.function().FindBlock(block) == nullptr)
                     throw nb::value_error("KirBuilder: unknown block");
                 b.SetBlock(block);
             })
        .def_prop_ro("current_block", &kir::Builder::current_block)
        .def("is_terminated", &kir::Builder::IsTerminated)
        .def("set_loc",
             [](kir::Builder& b, uint32_t file, uint32_t line) { b.SetLoc({file, line}); })
        .def("kind", &KindOfValue, "The scalar kind of a value (ValueError for pointers).")
        .def("pointee_kind",
             [](kir::Builder& b, kir::ValueId v) {
                 CheckValue(b, v);
                 const kir::Type& t = b.module().type(b.TypeOf(v));
                 if (t.kind != kir::Type::Kind::kPointer)
                     throw nb::value_error("KirBuilder: value is not a pointer");
                 return b.module().type(t.pointee).scalar;
             })
        .def("const_int",
             [](kir::Builder& b, ScalarKind k, nb::int_ value) {
                 RequireBlock(b);
                 if (kir::IsFloat(k)) throw nb::value_error("const_int: float kind");
                 // Any Python int that fits 64 bits, signed or unsigned.
                 long long s = 0;
                 unsigned long long u = 0;
                 PyObject* o = value.ptr();
                 s = PyLong_AsLongLong(o);
                 if (s == -1 && PyErr_Occurred()) {
                     PyErr_Clear();
                     u = PyLong_AsUnsignedLongLong(o);
                     if (u == static_cast<unsigned long long>(-1) && PyErr_Occurred()) {
                         PyErr_Clear();
                         throw nb::value_error("const_int: value does not fit 64 bits");
                     }
                     s = static_cast<long long>(u);
                 }
                 return b.ConstInt(b.Scalar(k), s);
             })
        .def("const_float",
             [](kir::Builder& b, ScalarKind k, double value) {
                 RequireBlock(b);
                 if (!kir::IsFloat(k)) throw nb::value_error("const_float: not a float kind");
                 return b.ConstFloat(b.Scalar(k), value);
             })
        .def("param",
             [](kir::Builder& b, uint32_t index) {
                 RequireBlock(b);
                 if (index >= b.module().params.size()) throw nb::index_error("no such parameter");
                 return b.Param(index);
             })
        .def("builtin",
             [](kir::Builder& b, kir::Builtin builtin, uint32_t axis) {
                 RequireBlock(b);
                 if (axis > 2) throw nb::value_error("builtin: axis must be 0, 1 or 2");
                 return b.BuiltinId(builtin, axis);
             })
        .def("var",
             [](kir::Builder& b, ScalarKind k) {
                 RequireBlock(b);
                 return b.Var(b.Scalar(k));
             })
        .def("coop_type",
             [](kir::Builder& b, ScalarKind k, uint32_t rows, uint32_t cols, uint32_t use) {
                 if (use > 2 || rows == 0 || cols == 0)
                     throw nb::value_error("coop_type: use 0 (a), 1 (b) or 2 (acc), and a shape");
                 return b.module().GetCoopMatrix(k, rows, cols, static_cast<kir::MatrixUse>(use));
             },
             "The type id of a rows x cols tile of `kind` elements (kir.h kCoopMatrix).")
        .def("coop_var",
             [](kir::Builder& b, kir::TypeId tile) {
                 RequireBlock(b);
                 if (tile >= b.module().types.size() ||
                     b.module().type(tile).kind != kir::Type::Kind::kCoopMatrix)
                     throw nb::value_error("coop_var: not a tile type");
                 return b.Var(tile);
             },
             "A function variable holding a tile of type `tile` (a coop_type).")
        .def("coop",
             [](kir::Builder& b, Op op, std::optional<kir::TypeId> result,
                const std::vector<kir::ValueId>& operands, uint32_t aux, uint64_t imm) {
                 if (!kir::IsCoopOp(op))
                     throw nb::value_error("coop: not a cooperative-matrix op");
                 for (kir::ValueId v : operands) CheckValue(b, v);
                 kir::TypeId type = result ? *result : kir::kNone;
                 if (op == Op::kCoopLength) type = b.Scalar(ScalarKind::kU32);
                 return b.Coop(op, type, operands, aux, imm);
             },
             nb::arg("op"), nb::arg("result").none(), nb::arg("operands"), nb::arg("aux") = 0,
             nb::arg("imm") = 0,
             "A cooperative-matrix op (kir.h) with result type id `result` (None: a store; "
             "coop_length gives u32).")
        .def("coop_convert",
             [](kir::Builder& b, kir::TypeId tile, kir::ValueId x) {
                 CheckValue(b, x);
                 return b.Convert(tile, x);
             },
             "Tile `x` converted element-wise into tile type `tile`.")
        .def("load",
             [](kir::Builder& b, kir::ValueId ptr) {
                 CheckValue(b, ptr);
                 if (b.module().type(b.TypeOf(ptr)).kind != kir::Type::Kind::kPointer)
                     throw nb::value_error("load: not a pointer");
                 return b.Load(ptr);
             })
        .def("store",
             [](kir::Builder& b, kir::ValueId ptr, kir::ValueId value) {
                 CheckValue(b, ptr);
                 CheckValue(b, value);
                 b.Store(ptr, value);
             })
        .def("store_at_end",
             [](kir::Builder& b, kir::BlockId block, kir::ValueId ptr, kir::ValueId value) {
                 CheckValue(b, ptr);
                 CheckValue(b, value);
                 if (b.function().FindBlock(block) == nullptr)
                     throw nb::value_error("KirBuilder: unknown block");
                 b.StoreAtEnd(block, ptr, value);
             },
             "A store at the end of `block`, before its terminator (none for dead code).")
        .def("elemptr",
             [](kir::Builder& b, ScalarKind k, kir::ValueId base, kir::ValueId index) {
                 CheckValue(b, base);
                 CheckValue(b, index);
                 return b.ElemPtr(b.Scalar(k), base, index);
             })
        .def("array_var",
             [](kir::Builder& b, bool shared, ScalarKind k, uint64_t count) {
                 RequireBlock(b);
                 if (count == 0 && !shared)
                     throw nb::value_error("array_var: only shared arrays are sized at launch");
                 auto space = shared ? kir::AddressSpace::kWorkgroup : kir::AddressSpace::kFunction;
                 return b.ArrayVar(space, b.Scalar(k), count);
             },
             nb::arg("shared"), nb::arg("kind"), nb::arg("count"),
             "A shared (workgroup) or local (function) array of `count` elements; count 0: "
             "the shared array sized at launch.")
        .def("index_ptr",
             [](kir::Builder& b, kir::ValueId array, kir::ValueId index) {
                 CheckValue(b, array);
                 KindOfValue(b, index);
                 return b.IndexPtr(array, index);
             })
        .def("atomic",
             [](kir::Builder& b, kir::AtomicOp op, const std::vector<kir::ValueId>& operands) {
                 if (operands.size() != (op == kir::AtomicOp::kCas ? 3u : 2u))
                     throw nb::value_error("atomic: (ptr, value) or (ptr, expected, value)");
                 CheckValue(b, operands[0]);
                 if (b.module().type(b.TypeOf(operands[0])).kind != kir::Type::Kind::kPointer)
                     throw nb::value_error("atomic: not a pointer");
                 for (size_t i = 1; i < operands.size(); ++i) KindOfValue(b, operands[i]);
                 return b.Atomic(op, operands);
             })
        .def("barrier", [](kir::Builder& b, kir::BarrierKind kind) { b.Barrier(kind); })
        .def("subgroup",
             [](kir::Builder& b, kir::SubgroupOp op, ScalarKind result,
                const std::vector<kir::ValueId>& operands, uint32_t aux) {
                 for (kir::ValueId v : operands) KindOfValue(b, v);
                 return b.Subgroup(op, b.Scalar(result), operands, aux);
             },
             nb::arg("op"), nb::arg("result"), nb::arg("operands"), nb::arg("aux") = 0,
             "A subgroup operation (kir.h SubgroupOp) giving a scalar of kind `result`.")
        .def("binary",
             [](kir::Builder& b, Op op, kir::ValueId x, kir::ValueId y) {
                 if (!IsBinaryOp(op)) throw nb::value_error("binary: not a binary op");
                 if (KindOfValue(b, x) != KindOfValue(b, y))
                     throw nb::value_error("binary: operands of different kinds");
                 return b.Binary(op, x, y);
             })
        .def("driver_div",
             [](kir::Builder& b, kir::ValueId x, kir::ValueId y) {
                 ScalarKind k = KindOfValue(b, x);
                 if (!kir::IsFloat(k) || KindOfValue(b, y) != k)
                     throw nb::value_error("driver_div: operands not floats of one kind");
                 return b.Divide(x, y, kir::DivPrecision::kDriver);
             },
             nb::arg("x"), nb::arg("y"),
             "x / y as the driver's OpFDiv gives it (kir.h DivPrecision::kDriver: Vulkan's "
             "2.5 ulp on float32, no float64 rewrite, no divisor scaling), for divisors of "
             "magnitude within [2^-126, 2^126].")
        .def("compare",
             [](kir::Builder& b, Op op, kir::ValueId x, kir::ValueId y) {
                 if (!IsCompareOp(op)) throw nb::value_error("compare: not a comparison");
                 if (KindOfValue(b, x) != KindOfValue(b, y))
                     throw nb::value_error("compare: operands of different kinds");
                 return b.Compare(op, x, y);
             })
        .def("unary",
             [](kir::Builder& b, Op op, kir::ValueId x) {
                 if (op != Op::kNeg && op != Op::kNot) throw nb::value_error("unary: neg or not_");
                 CheckValue(b, x);
                 return b.Unary(op, x);
             })
        .def("convert",
             [](kir::Builder& b, ScalarKind k, kir::ValueId x) {
                 KindOfValue(b, x);
                 return b.Convert(b.Scalar(k), x);
             })
        .def("bitcast",
             [](kir::Builder& b, ScalarKind k, kir::ValueId x) {
                 if (kir::BitWidth(KindOfValue(b, x)) != kir::BitWidth(k))
                     throw nb::value_error("bitcast: widths differ");
                 return b.Bitcast(b.Scalar(k), x);
             })
        .def("select",
             [](kir::Builder& b, kir::ValueId c, kir::ValueId x, kir::ValueId y) {
                 if (KindOfValue(b, c) != ScalarKind::kBool)
                     throw nb::value_error("select: condition is not bool");
                 if (KindOfValue(b, x) != KindOfValue(b, y))
                     throw nb::value_error("select: operands of different kinds");
                 return b.Select(c, x, y);
             })
        .def("math",
             [](kir::Builder& b, kir::MathFn fn, const std::vector<kir::ValueId>& args) {
                 if (args.empty()) throw nb::value_error("math: no operands");
                 for (kir::ValueId v : args) KindOfValue(b, v);
                 return b.Math(fn, args);
             })
        .def("br", &kir::Builder::Br)
        .def("condbr",
             [](kir::Builder& b, kir::ValueId c, kir::BlockId t, kir::BlockId f) {
                 if (KindOfValue(b, c) != ScalarKind::kBool)
                     throw nb::value_error("condbr: condition is not bool");
                 b.CondBr(c, t, f);
             })
        .def("ret", &kir::Builder::Ret)
        .def("unreachable", &kir::Builder::Unreachable);

    // The KIR interpreter, for tests that run front-end output on the host.
    m.def(
        "interpret",
        [](const kir::Module& mod, const std::vector<uint64_t>& params,
           const std::vector<std::tuple<kir::Builtin, uint32_t, uint32_t>>& builtins,
           const std::vector<std::pair<uint64_t, nb::bytes>>& memory, size_t max_steps) {
            kir::Inputs in;
            in.params = params;
            for (const auto& [builtin, axis, value] : builtins)
                in.builtins[{builtin, axis}] = value;
            for (const auto& [base, bytes] : memory) {
                kir::MemoryRegion r;
                r.base = base;
                const auto* p = static_cast<const uint8_t*>(bytes.data());
                r.bytes.assign(p, p + bytes.size());
                in.memory.push_back(std::move(r));
            }
            kir::Trace t = Unwrap(kir::Interpret(mod, in, max_steps));
            std::vector<nb::bytes> out;
            for (const kir::MemoryRegion& r : t.memory)
                out.emplace_back(reinterpret_cast<const char*>(r.bytes.data()), r.bytes.size());
            return std::make_tuple(t.finished, t.steps, out);
        },
        nb::arg("module"), nb::arg("params"), nb::arg("builtins"), nb::arg("memory"),
        nb::arg("max_steps") = 1000000,
        "Run a module on the host: params as bit patterns, builtins as (Builtin, axis, value), "
        "memory as (base address, bytes). Returns (finished, steps, [bytes per region]).");
}

}  // namespace nvk::bind
