#include "kir/printer.h"

#include <gtest/gtest.h>

#include "kir/builder.h"
#include "kir/parser.h"

namespace nvk::kir {
namespace {

// Parse `text` and print it again; the text form must reproduce itself.
std::string RoundTrip(const std::string& text) {
    util::Result<Module> m = Parse(text);
    EXPECT_TRUE(m.ok()) << m.status().message();
    if (!m.ok()) return "";
    return Print(m.value());
}

TEST(Printer, HandWrittenLoopRoundTrips) {
    const std::string text = R"(param n : i32 @0
param a.addr : u64 @8
file 0 "kernel.py"
file 1 "with \"quotes\"\n.py"
func main structured {
%b0 entry:
  %0 = var : ptr<function, i32>
  %1 = param 0 : i32
  %2 = param 1 : u64
  %3 = builtin global_id 0 : u32
  %4 = const 0 : i32
  store %0, %4                          !3
  br %b1                                !4
%b1 header loop(merge %b3, continue %b2):
  %5 = load %0 : i32
  %6 = lt %5, %1 : bool                 !1:7
  condbr %6, %b4, %b3                   !?:7
%b4 body:
  %7 = elemptr %2, %5 : ptr<global, f32>
  %8 = const 1.5 : f32
  %9 = load %7 : f32
  %10 = math fma %9, %8, %8 : f32
  store %7, %10
  br %b2
%b2 latch:
  %11 = const 1 : i32
  %12 = add %5, %11 : i32
  store %0, %12
  br %b1
%b3 exit:
  ret
}
)";
    EXPECT_EQ(RoundTrip(text), text);
}

TEST(Printer, ConstantsPrintExactly) {
    const std::string text = R"(func "odd name" {
%b0 "block with space" selection(merge %b1):
  %0 = const -1 : i8
  %1 = const 18446744073709551615 : u64
  %2 = const true : bool
  %3 = const 0.1 : f32
  %4 = const 0.1 : f64
  %5 = const -0.0 : f64
  %6 = const 0x7ff8000000000001 : f64
  %7 = const 0x7f800000 : f32
  %8 = const 0x3c00 : f16
  %9 = const 1e+300 : f64
  %10 = const 0x100000000 : f32
  %11 = convert %3 : f64
  %12 = bitcast %11 : u64
  %13 = select %2, %4, %5 : f64
  %14 = builtin num_groups 2 : u32
  condbr %2, %b1, %b1
%b1:
  unreachable
}
)";
    EXPECT_EQ(RoundTrip(text), text);
}

TEST(Printer, FloatBitsSurviveRoundTrip) {
    Module m;
    Builder b(m);
    b.CreateBlock("entry");
    TypeId f32 = b.Scalar(ScalarKind::kF32), f64 = b.Scalar(ScalarKind::kF64);
    ValueId x = b.ConstFloat(f32, 3.14159265358979);
    ValueId y = b.ConstFloat(f64, 3.14159265358979);
    ValueId z = b.ConstFloat(f64, 1e-310);  // subnormal
    b.Ret();
    std::string text = Print(m);
    util::Result<Module> back = Parse(text);
    ASSERT_TRUE(back.ok()) << back.status().message();
    const auto& insts = back->function.entry().insts;
    EXPECT_EQ(insts[0].imm, m.function.entry().insts[0].imm);
    EXPECT_EQ(insts[1].imm, m.function.entry().insts[1].imm);
    EXPECT_EQ(insts[2].imm, m.function.entry().insts[2].imm);
    EXPECT_EQ(insts[0].result, x);
    EXPECT_EQ(insts[1].result, y);
    EXPECT_EQ(insts[2].result, z);
    EXPECT_EQ(Print(back.value()), text);
}

TEST(Printer, BuilderModuleRoundTrips) {
    Module m;
    m.AddParam("n", ScalarKind::kI64);
    m.AddParam("flag", ScalarKind::kBool);
    m.AddParam("x", ScalarKind::kF64);
    m.AddFile("k.py");
    Builder b(m);
    BlockId entry = b.CreateBlock("entry");
    BlockId then = b.CreateBlock("if.then");
    BlockId done = b.CreateBlock("if.end");
    b.SetBlock(entry);
    b.SetLoc({0, 10});
    ValueId n = b.Param(0);
    ValueId flag = b.Param(1);
    ValueId i = b.Convert(b.Scalar(ScalarKind::kI64), b.BuiltinId(Builtin::kGlobalId, 0));
    ValueId c = b.Compare(Op::kLt, i, n);
    ValueId both = b.Binary(Op::kAnd, c, b.Compare(Op::kNe, flag, b.ConstInt(b.Scalar(ScalarKind::kBool), 0)));
    b.CondBr(both, then, done);
    b.SetBlock(then);
    b.SetLoc({0, 11});
    ValueId x = b.Param(2);
    b.Math(MathFn::kSqrt, {x});
    b.Br(done);
    b.SetBlock(done);
    b.SetLoc({});
    b.Ret();
    std::string text = Print(m);
    EXPECT_EQ(RoundTrip(text), text);
    EXPECT_NE(text.find("param flag : bool @8\n"), std::string::npos) << text;
    EXPECT_NE(text.find("param x : f64 @16\n"), std::string::npos) << text;
    EXPECT_NE(text.find("%b1 if.then:\n"), std::string::npos) << text;
    EXPECT_NE(text.find("math sqrt %"), std::string::npos) << text;
    EXPECT_NE(text.find("!11\n"), std::string::npos) << text;
}

TEST(Printer, TypeNames) {
    Module m;
    TypeId f32 = m.GetScalar(ScalarKind::kF32);
    EXPECT_EQ(TypeName(m, f32), "f32");
    EXPECT_EQ(TypeName(m, m.GetPointer(AddressSpace::kWorkgroup, f32)), "ptr<workgroup, f32>");
    EXPECT_EQ(TypeName(m, m.GetVoid()), "void");
    EXPECT_EQ(TypeName(m, 99), "<type 99?>");
}

TEST(Printer, MalformedModulePrintsWithQuestionMarks) {
    Module m;
    Builder b(m);
    b.CreateBlock();
    b.Br(kNone);
    EXPECT_EQ(Print(m), "func \"\" {\n%b0:\n  br %b?\n}\n");
}

TEST(Printer, MarkLine) {
    std::string out = MarkLine("a\nbb bb\nc\n", 1, 3, 2, "here");
    EXPECT_EQ(out,
              "     1 | a\n"
              ">    2 | bb bb\n"
              "       |    ^~ here\n"
              "     3 | c\n");
}

}  // namespace
}  // namespace nvk::kir
