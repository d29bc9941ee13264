// Emitter tests, one KIR op family at a time: arithmetic on every scalar
// kind, comparisons, conversions between all pairs of kinds, math functions.
// Operands are loaded from global arrays so that nothing folds away, and
// every module goes through Validate, Optimize and Validate (EmitChecked).
#include <gtest/gtest.h>

#include "kir/builder.h"
#include "spirv/check_test_util.h"
#include "spirv/emit.h"
#include "spirv/emit_test_util.h"

namespace nvk::spirv {
namespace {

using kir::MathFn;
using kir::Op;
using kir::ScalarKind;
using testing::EmitChecked;

// A kernel with two global arrays `in` (of kind `in_kind`) and `out`; `body`
// computes values from in[0], in[1], in[2] and returns what to store in out[j].
struct OpKernel {
    kir::Module m;
    kir::Builder b{m};
    kir::ValueId in = 0, out = 0;
    kir::ValueId x = 0, y = 0, z = 0;
    ScalarKind in_kind;
    uint32_t next_out = 0;

    explicit OpKernel(ScalarKind kind) : in_kind(kind) {
        uint32_t p_in = m.AddParam("in", ScalarKind::kU64);
        uint32_t p_out = m.AddParam("out", ScalarKind::kU64);
        b.CreateBlock("entry");
        in = b.Param(p_in);
        out = b.Param(p_out);
        kir::TypeId t = b.Scalar(kind), u32 = b.Scalar(ScalarKind::kU32);
        x = b.Load(b.ElemPtr(t, in, b.ConstInt(u32, 0)));
        y = b.Load(b.ElemPtr(t, in, b.ConstInt(u32, 1)));
        z = b.Load(b.ElemPtr(t, in, b.ConstInt(u32, 2)));
    }
    // Stores v into the next element of an `out` array of v's type.
    void Keep(kir::ValueId v) {
        kir::TypeId u32 = b.Scalar(ScalarKind::kU32);
        b.Store(b.ElemPtr(b.TypeOf(v), out, b.ConstInt(u32, next_out++)), v);
    }
    kir::Module Finish() {
        b.Ret();
        return std::move(m);
    }
};

struct ArithCase {
    ScalarKind kind;
    const char* type;  // friendly name in the disassembly
    const char* checks;
};

class Arithmetic : public ::testing::TestWithParam<ArithCase> {};

TEST_P(Arithmetic, EveryOp) {
    const ArithCase& c = GetParam();
    OpKernel k(c.kind);
    for (Op op : {Op::kAdd, Op::kSub, Op::kMul, Op::kDiv, Op::kRem}) k.Keep(k.b.Binary(op, k.x, k.y));
    k.Keep(k.b.Unary(Op::kNeg, k.x));
    if (kir::IsInteger(c.kind)) {
        for (Op op : {Op::kAnd, Op::kOr, Op::kXor, Op::kShl, Op::kShr}) {
            k.Keep(k.b.Binary(op, k.x, k.y));
        }
        k.Keep(k.b.Unary(Op::kNot, k.x));
    }
    for (Op op : {Op::kEq, Op::kNe, Op::kLt, Op::kLe, Op::kGt, Op::kGe}) {
        k.Keep(k.b.Compare(op, k.x, k.y));
    }
    k.Keep(k.b.Select(k.b.Compare(Op::kLt, k.x, k.y), k.x, k.y));
    auto e = EmitChecked(k.Finish());
    EXPECT_EQ(CheckPatterns(e.text, c.checks), "") << ScalarName(c.kind);
}

INSTANTIATE_TEST_SUITE_P(
    Kinds, Arithmetic,
    ::testing::Values(
        // Signed add, sub, mul, negation and shift left on the unsigned type
        // (wrapping.cc; emit_wrapping_test.cc).
        ArithCase{ScalarKind::kI32, "int", R"(
            CHECK: OpIAdd %uint
            CHECK: OpISub %uint
            CHECK: OpIMul %uint
            CHECK: OpSDiv %int
            CHECK-NOT: OpSRem
            CHECK: OpUMod %uint
            CHECK: OpSelect %uint
            CHECK-NOT: OpSNegate
            CHECK: OpISub %uint %uint_0
            CHECK: OpBitwiseAnd %int
            CHECK: OpBitwiseOr %int
            CHECK: OpBitwiseXor %int
            CHECK: OpShiftLeftLogical %uint
            CHECK: OpShiftRightArithmetic %int
            CHECK: OpNot %int
            CHECK: OpIEqual %bool
            CHECK: OpINotEqual %bool
            CHECK: OpSLessThan %bool
            CHECK: OpSLessThanEqual %bool
            CHECK: OpSGreaterThan %bool
            CHECK: OpSGreaterThanEqual %bool
            CHECK: OpSelect %int
        )"},
        ArithCase{ScalarKind::kI64, "long", R"(
            CHECK-NOT: OpSDiv
            CHECK: OpUDiv %ulong
            CHECK-NOT: OpSRem
            CHECK: OpUMod %ulong
            CHECK: OpShiftRightArithmetic %long
            CHECK: OpSLessThan %bool
        )"},
        ArithCase{ScalarKind::kU32, "uint", R"(
            CHECK: OpUDiv %uint
            CHECK: OpUMod %uint
            CHECK: OpISub %uint %uint_0
            CHECK: OpShiftRightLogical %uint
            CHECK: OpULessThan %bool
            CHECK: OpULessThanEqual %bool
            CHECK: OpUGreaterThan %bool
            CHECK: OpUGreaterThanEqual %bool
        )"},
        ArithCase{ScalarKind::kU64, "ulong", R"(
            CHECK: OpUDiv %ulong
            CHECK: OpUMod %ulong
            CHECK: OpShiftRightLogical %ulong
        )"},
        ArithCase{ScalarKind::kF32, "float", R"(
            CHECK: OpFAdd %float
            CHECK: OpFSub %float
            CHECK: OpFMul %float
            CHECK: OpFDiv %float
            CHECK: OpFRem %float
            CHECK: OpFNegate %float
            CHECK: OpFOrdEqual %bool
            CHECK: OpFUnordNotEqual %bool
            CHECK: OpFOrdLessThan %bool
            CHECK: OpFOrdLessThanEqual %bool
            CHECK: OpFOrdGreaterThan %bool
            CHECK: OpFOrdGreaterThanEqual %bool
            CHECK: OpSelect %float
        )"},
        ArithCase{ScalarKind::kF64, "double", R"(
            CHECK: OpCapability Float64
            CHECK: OpFDiv %double
            CHECK: OpFRem %double
            CHECK: OpFUnordNotEqual %bool
        )"},
        ArithCase{ScalarKind::kI16, "short", R"(
            CHECK: OpCapability Int16
            CHECK: OpCapability StorageBuffer16BitAccess
            CHECK: OpSDiv %short
        )"},
        ArithCase{ScalarKind::kU8, "uchar", R"(
            CHECK: OpCapability Int8
            CHECK: OpCapability StorageBuffer8BitAccess
            CHECK: OpUMod %uchar
        )"}),
    [](const auto& info) { return std::string(kir::ScalarName(info.param.kind)); });

TEST(Emit, BoolLogic) {
    OpKernel k(ScalarKind::kI32);
    kir::ValueId p = k.b.Compare(Op::kLt, k.x, k.y), q = k.b.Compare(Op::kLt, k.y, k.z);
    for (Op op : {Op::kAnd, Op::kOr, Op::kXor}) k.Keep(k.b.Binary(op, p, q));
    k.Keep(k.b.Unary(Op::kNot, p));
    for (Op op : {Op::kEq, Op::kNe, Op::kLt}) k.Keep(k.b.Compare(op, p, q));
    auto e = EmitChecked(k.Finish());
    EXPECT_EQ(CheckPatterns(e.text, R"(
        CHECK: OpLogicalAnd %bool
        CHECK: OpLogicalOr %bool
        CHECK: OpLogicalNotEqual %bool
        CHECK: OpLogicalNot %bool
        CHECK: OpLogicalEqual %bool
        CHECK: OpLogicalNotEqual %bool
        CHECK: OpSelect %uint
        CHECK: OpSelect %uint
        CHECK: OpULessThan %bool
    )"), "");
}

TEST(Emit, FloatOpsOnBoolAreRejected) {
    OpKernel k(ScalarKind::kI32);
    kir::ValueId p = k.b.Compare(Op::kLt, k.x, k.y);
    k.Keep(k.b.Binary(Op::kAdd, p, p));
    kir::Module m = k.Finish();
    m.function.structured = true;
    auto r = Emit(m, {});
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), util::Code::kUnsupported);
    EXPECT_NE(r.status().message().find("add"), std::string::npos) << r.status().message();
}

// ---------------------------------------------------------------- conversions

constexpr ScalarKind kAllKinds[] = {
    ScalarKind::kBool, ScalarKind::kI8,  ScalarKind::kI16, ScalarKind::kI32,
    ScalarKind::kI64,  ScalarKind::kU8,  ScalarKind::kU16, ScalarKind::kU32,
    ScalarKind::kU64,  ScalarKind::kF16, ScalarKind::kF32, ScalarKind::kF64};

class Conversions : public ::testing::TestWithParam<ScalarKind> {};

TEST_P(Conversions, FromThisKindToEveryKind) {
    OpKernel k(GetParam());
    for (ScalarKind to : kAllKinds) k.Keep(k.b.Convert(k.b.Scalar(to), k.x));
    EmitChecked(k.Finish());  // validity is the check; the patterns are below
}

INSTANTIATE_TEST_SUITE_P(AllPairs, Conversions, ::testing::ValuesIn(kAllKinds),
                         [](const auto& info) { return std::string(kir::ScalarName(info.param)); });

// One conversion from a loaded `from` value to `to`; returns the disassembly.
std::string ConvertText(ScalarKind from, ScalarKind to) {
    OpKernel k(from);
    k.Keep(k.b.Convert(k.b.Scalar(to), k.x));
    return EmitChecked(k.Finish()).text;
}

TEST(Emit, ConversionPatterns) {
    const char* load_x = "CHECK: %[[x:\\w+]] = OpLoad %{{\\w+}} %{{\\w+}} Aligned";
    struct Case {
        ScalarKind from, to;
        std::string checks;
    } cases[] = {
        // Sign extension to 64 bits: zero extension and a shift pair (lavapipe mishandles
        // comparisons of OpSConvert results; see Emitter::Convert).
        {ScalarKind::kI32, ScalarKind::kU64,
         "CHECK: %[[u:\\w+]] = OpBitcast %uint %[[x]]\n"
         "CHECK-NEXT: %[[w:\\w+]] = OpUConvert %ulong %[[u]]\n"
         "CHECK-NEXT: OpShiftLeftLogical %ulong %[[w]]\n"
         "CHECK: %[[s:\\w+]] = OpShiftRightArithmetic %long\n"
         "CHECK-NEXT: OpBitcast %ulong %[[s]]"},
        {ScalarKind::kI16, ScalarKind::kI32, "CHECK: OpSConvert %int %[[x]]"},
        {ScalarKind::kU8, ScalarKind::kI32,
         "CHECK: %[[w:\\w+]] = OpUConvert %uint %[[x]]\nCHECK-NEXT: OpBitcast %int %[[w]]"},
        {ScalarKind::kI64, ScalarKind::kI16, "CHECK: OpSConvert %short %[[x]]"},
        {ScalarKind::kU32, ScalarKind::kI32, "CHECK: OpBitcast %int %[[x]]"},
        {ScalarKind::kF32, ScalarKind::kU16, "CHECK: OpConvertFToU %ushort %[[x]]"},
        // Float -> 64-bit integer: two exact 32-bit conversions (wrapping.cc).
        {ScalarKind::kF64, ScalarKind::kI64,
         "CHECK: OpExtInst %double %{{\\w+}} FAbs %[[x]]\n"
         "CHECK: OpConvertFToU %uint\nCHECK: OpConvertFToU %uint\n"
         "CHECK: OpSelect %ulong\nCHECK-NEXT: OpBitcast %long"},
        {ScalarKind::kU64, ScalarKind::kF32, "CHECK: OpConvertUToF %float %[[x]]"},
        {ScalarKind::kI8, ScalarKind::kF64, "CHECK: OpConvertSToF %double %[[x]]"},
        {ScalarKind::kF16, ScalarKind::kF64, "CHECK: OpFConvert %double %[[x]]"},
        {ScalarKind::kBool, ScalarKind::kF32,
         "CHECK: %[[b:\\w+]] = OpINotEqual %bool %[[x]]\n"
         "CHECK: OpSelect %float %[[b]] %float_1 %float_0"},
        {ScalarKind::kBool, ScalarKind::kI64, "CHECK: OpSelect %long %{{\\w+}} %long_1 %long_0"},
        {ScalarKind::kF64, ScalarKind::kBool, "CHECK: OpFUnordNotEqual %bool %[[x]] %double_0"},
        {ScalarKind::kI16, ScalarKind::kBool, "CHECK: OpINotEqual %bool %[[x]] %short_0"},
    };
    for (const Case& c : cases) {
        std::string text = ConvertText(c.from, c.to);
        std::string checks = std::string(load_x) + "\n" + c.checks;
        EXPECT_EQ(CheckPatterns(text, checks), "")
            << kir::ScalarName(c.from) << " -> " << kir::ScalarName(c.to);
    }
}

TEST(Emit, Bitcast) {
    OpKernel k(ScalarKind::kF32);
    k.Keep(k.b.Bitcast(k.b.Scalar(ScalarKind::kU32), k.x));
    auto e = EmitChecked(k.Finish());
    EXPECT_EQ(CheckPatterns(e.text, "CHECK: %[[x:\\w+]] = OpLoad %float\nCHECK: OpBitcast %uint %[[x]]"),
              "");
}

// bfloat16 tiles (SPV_KHR_bfloat16): loaded from and stored to 16-bit words, elements and
// fill values moved as bits, a float16 tile converted into one.
TEST(Emit, BFloat16Tiles) {
    OpKernel k(ScalarKind::kU16);
    kir::Builder& b = k.b;
    kir::TypeId bf16 = b.Scalar(ScalarKind::kBF16), u16 = b.Scalar(ScalarKind::kU16);
    kir::TypeId u32 = b.Scalar(ScalarKind::kU32);
    kir::TypeId tile = k.m.GetCoopMatrix(ScalarKind::kBF16, 16, 16, kir::MatrixUse::kA);
    kir::TypeId half = k.m.GetCoopMatrix(ScalarKind::kF16, 16, 16, kir::MatrixUse::kA);
    kir::ValueId var = b.Var(tile), stride = b.ConstInt(u32, 16);
    b.Store(var, b.Coop(Op::kCoopFill, tile, {b.Bitcast(bf16, k.x)}));
    kir::ValueId element = b.IndexPtr(var, b.ConstInt(u32, 1));
    k.Keep(b.Bitcast(u16, b.Load(element)));
    b.Store(element, b.Bitcast(bf16, k.y));
    kir::ValueId words = b.ElemPtr(u16, k.in, b.ConstInt(u32, 0));
    kir::ValueId loaded = b.Coop(Op::kCoopLoad, tile, {words, stride});
    kir::ValueId from_half = b.Convert(tile, b.Coop(Op::kCoopFill, half, {b.Convert(
        b.Scalar(ScalarKind::kF16), b.ConstFloat(b.Scalar(ScalarKind::kF32), 2.0))}));
    b.Coop(Op::kCoopStore, kir::kNone, {b.ElemPtr(u16, k.out, b.ConstInt(u32, 16)), loaded,
                                        stride});
    b.Coop(Op::kCoopStore, kir::kNone, {b.ElemPtr(u16, k.out, b.ConstInt(u32, 32)), from_half,
                                        stride});
    b.Coop(Op::kCoopStore, kir::kNone, {b.ElemPtr(u16, k.out, b.ConstInt(u32, 48)), b.Load(var),
                                        stride});
    auto e = EmitChecked(k.Finish());
    EXPECT_EQ(CheckPatterns(e.text, R"(
        CHECK: OpCapability BFloat16TypeKHR
        CHECK: OpCapability BFloat16CooperativeMatrixKHR
        CHECK: OpExtension "SPV_KHR_bfloat16"
        CHECK: %bfloat16 = OpTypeFloat 16 BFloat16KHR
        CHECK: %[[tile:\w+]] = OpTypeCooperativeMatrixKHR %bfloat16
        CHECK: OpBitcast %bfloat16
        CHECK: OpCompositeConstruct %[[tile]]
        CHECK: OpBitcast %ushort
        CHECK: OpCooperativeMatrixLoadKHR %[[tile]]
        CHECK: OpFConvert %[[tile]]
        CHECK: OpCooperativeMatrixStoreKHR
    )"), "");
}

TEST(Emit, Constants) {
    OpKernel k(ScalarKind::kI32);
    k.Keep(k.b.ConstFloat(k.b.Scalar(ScalarKind::kF32), 1.5));
    k.Keep(k.b.ConstFloat(k.b.Scalar(ScalarKind::kF64), -2.25));
    k.Keep(k.b.ConstInt(k.b.Scalar(ScalarKind::kI8), -3));
    k.Keep(k.b.ConstInt(k.b.Scalar(ScalarKind::kI64), -5000000000));
    k.Keep(k.b.ConstInt(k.b.Scalar(ScalarKind::kU16), 65535));
    auto e = EmitChecked(k.Finish());
    EXPECT_EQ(CheckPatterns(e.text, R"(
        CHECK: OpConstant %float 1.5
        CHECK: OpConstant %double -2.25
        CHECK: OpConstant %char -3
        CHECK: OpConstant %long -5000000000
        CHECK: OpConstant %ushort 65535
    )"), "");
}

// ---------------------------------------------------------------- math

TEST(Emit, MathF32) {
    OpKernel k(ScalarKind::kF32);
    for (MathFn fn : {MathFn::kFloor, MathFn::kCeil, MathFn::kTrunc, MathFn::kAbs, MathFn::kSqrt,
                      MathFn::kInverseSqrt, MathFn::kExp, MathFn::kLog, MathFn::kSin,
                      MathFn::kCos, MathFn::kTan, MathFn::kTanh}) {
        k.Keep(k.b.Math(fn, {k.x}));
    }
    for (MathFn fn : {MathFn::kMin, MathFn::kMax, MathFn::kPow, MathFn::kAtan2}) {
        k.Keep(k.b.Math(fn, {k.x, k.y}));
    }
    k.Keep(k.b.Math(MathFn::kFma, {k.x, k.y, k.z}));
    k.Keep(k.b.Math(MathFn::kIsNan, {k.x}));
    k.Keep(k.b.Math(MathFn::kIsInf, {k.x}));
    auto e = EmitChecked(k.Finish());
    EXPECT_EQ(CheckPatterns(e.text, R"(
        CHECK: %[[glsl:\w+]] = OpExtInstImport "GLSL.std.450"
        CHECK: OpExtInst %float %[[glsl]] Floor
        CHECK: OpExtInst %float %[[glsl]] Ceil
        CHECK: OpExtInst %float %[[glsl]] Trunc
        CHECK: OpExtInst %float %[[glsl]] FAbs
        CHECK: OpExtInst %float %[[glsl]] Sqrt
        CHECK: OpExtInst %float %[[glsl]] InverseSqrt
        CHECK: OpExtInst %float %[[glsl]] Exp
        CHECK: OpExtInst %float %[[glsl]] Log
        CHECK: OpExtInst %float %[[glsl]] Sin
        CHECK: OpExtInst %float %[[glsl]] Cos
        CHECK: OpExtInst %float %[[glsl]] Tan
        CHECK: OpExtInst %float %[[glsl]] Tanh
        CHECK: OpExtInst %float %[[glsl]] FMin
        CHECK: OpExtInst %float %[[glsl]] FMax
        CHECK: OpExtInst %float %[[glsl]] Pow
        CHECK: OpExtInst %float %[[glsl]] Atan2
        CHECK: OpExtInst %float %[[glsl]] Fma
        CHECK: OpIsNan %bool
        CHECK: OpIsInf %bool
    )"), "");
}

TEST(Emit, MathF64WhereGlslAllows) {
    OpKernel k(ScalarKind::kF64);
    for (MathFn fn : {MathFn::kFloor, MathFn::kCeil, MathFn::kTrunc, MathFn::kAbs, MathFn::kSqrt}) {
        k.Keep(k.b.Math(fn, {k.x}));
    }
    k.Keep(k.b.Math(MathFn::kMin, {k.x, k.y}));
    k.Keep(k.b.Math(MathFn::kMax, {k.x, k.y}));
    k.Keep(k.b.Math(MathFn::kFma, {k.x, k.y, k.z}));
    auto e = EmitChecked(k.Finish());
    EXPECT_EQ(CheckPatterns(e.text, R"(
        CHECK: OpExtInst %double %{{\w+}} Floor
        CHECK: OpExtInst %double %{{\w+}} Sqrt
        CHECK: OpExtInst %double %{{\w+}} FMax
        CHECK: OpExtInst %double %{{\w+}} Fma
    )"), "");
}

TEST(Emit, MathF64TranscendentalIsUnsupported) {
    for (MathFn fn : {MathFn::kExp, MathFn::kSin, MathFn::kTanh}) {
        OpKernel k(ScalarKind::kF64);
        k.Keep(k.b.Math(fn, {k.x}));
        kir::Module m = k.Finish();
        m.function.structured = true;
        auto r = Emit(m, {});
        ASSERT_FALSE(r.ok());
        EXPECT_EQ(r.status().code(), util::Code::kUnsupported);
        EXPECT_NE(r.status().message().find(kir::MathFnName(fn)), std::string::npos)
            << r.status().message();
    }
}

TEST(Emit, MathIntegers) {
    OpKernel s(ScalarKind::kI32);
    s.Keep(s.b.Math(MathFn::kAbs, {s.x}));
    s.Keep(s.b.Math(MathFn::kMin, {s.x, s.y}));
    s.Keep(s.b.Math(MathFn::kMax, {s.x, s.y}));
    auto e = EmitChecked(s.Finish());
    EXPECT_EQ(CheckPatterns(e.text, R"(
        CHECK-NOT: SAbs
        CHECK: OpISub %uint %uint_0
        CHECK: OpSelect %int
        CHECK: OpExtInst %int %{{\w+}} SMin
        CHECK: OpExtInst %int %{{\w+}} SMax
    )"), "");
    OpKernel u(ScalarKind::kU64);
    u.Keep(u.b.Math(MathFn::kAbs, {u.x}));
    u.Keep(u.b.Math(MathFn::kMin, {u.x, u.y}));
    u.Keep(u.b.Math(MathFn::kMax, {u.x, u.y}));
    auto f = EmitChecked(u.Finish());
    EXPECT_EQ(CheckPatterns(f.text, R"(
        CHECK-NOT: SAbs
        CHECK: OpExtInst %ulong %{{\w+}} UMin
        CHECK: OpExtInst %ulong %{{\w+}} UMax
    )"), "");
}

// Bit counts: 32-bit integers only (Vulkan), of either signedness.
TEST(Emit, BitCounts) {
    for (ScalarKind k : {ScalarKind::kU32, ScalarKind::kI32}) {
        OpKernel s(k);
        s.Keep(s.b.Math(MathFn::kBitCount, {s.x}));
        s.Keep(s.b.Math(MathFn::kFindUMsb, {s.x}));
        s.Keep(s.b.Math(MathFn::kFindILsb, {s.x}));
        auto e = EmitChecked(s.Finish());
        std::string t = k == ScalarKind::kU32 ? "%uint" : "%int";
        EXPECT_EQ(CheckPatterns(e.text, "CHECK: OpBitCount " + t + "\nCHECK: OpExtInst " + t +
                                            " %{{\\w+}} FindUMsb\nCHECK: OpExtInst " + t +
                                            " %{{\\w+}} FindILsb"),
                  "") << e.text;
    }
}

}  // namespace
}  // namespace nvk::spirv
