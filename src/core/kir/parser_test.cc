#include "kir/parser.h"

#include <gtest/gtest.h>

#include "kir/printer.h"

namespace nvk::kir {
namespace {

std::string ParseError(const std::string& text) {
    util::Result<Module> m = Parse(text);
    EXPECT_FALSE(m.ok());
    if (m.ok()) return "";
    EXPECT_EQ(m.status().code(), util::Code::kInvalidArgument);
    return m.status().message();
}

TEST(Parser, FillsTheModule) {
    util::Result<Module> r = Parse(R"(
; a comment line, and blank lines, are skipped
param n : i32 @0
file 0 "k.py"
func main structured {
%b0 entry:
  %0 = param 0 : i32      ; trailing comment
  %1 = builtin local_id 1 : u32
  br %b1                  !7
%b1 loop(merge %b2, continue %b1):
  condbr %3, %b1, %b2     !2:9
%b2:
  %3 = const true : bool
  ret
}
)");
    ASSERT_TRUE(r.ok()) << r.status().message();
    const Module& m = r.value();
    ASSERT_EQ(m.params.size(), 1u);
    EXPECT_EQ(m.params[0].name, "n");
    EXPECT_EQ(m.files, std::vector<std::string>{"k.py"});
    const Function& f = m.function;
    EXPECT_EQ(f.name, "main");
    EXPECT_TRUE(f.structured);
    ASSERT_EQ(f.blocks.size(), 3u);
    EXPECT_EQ(f.blocks[0].name, "entry");
    EXPECT_EQ(f.blocks[1].merge.kind, Merge::Kind::kLoop);
    EXPECT_EQ(f.blocks[1].merge.merge, 2u);
    EXPECT_EQ(f.blocks[1].merge.cont, 1u);
    EXPECT_EQ(f.blocks[2].name, "");
    const Inst& builtin = f.blocks[0].insts[1];
    EXPECT_EQ(builtin.op, Op::kBuiltin);
    EXPECT_EQ(builtin.imm, static_cast<uint64_t>(Builtin::kLocalId));
    EXPECT_EQ(builtin.aux, 1u);
    EXPECT_EQ(f.blocks[0].insts[2].loc.file, 0u);
    EXPECT_EQ(f.blocks[0].insts[2].loc.line, 7u);
    const Inst& cb = f.blocks[1].insts[0];
    EXPECT_EQ(cb.operands, std::vector<ValueId>{3});
    EXPECT_EQ(cb.targets[0], 1u);
    EXPECT_EQ(cb.targets[1], 2u);
    EXPECT_EQ(cb.loc.file, 2u);
    EXPECT_EQ(cb.loc.line, 9u);
    ASSERT_EQ(f.values.size(), 4u);
    EXPECT_EQ(f.values[3].block, 2u);
    EXPECT_EQ(m.type(f.values[3].type).scalar, ScalarKind::kBool);
    EXPECT_EQ(f.values[2].block, kNone);  // never defined
}

TEST(Parser, ErrorsPointAtLineAndColumn) {
    EXPECT_EQ(ParseError("func f {\n%b0:\n  %0 = frob %1 : i32\n  ret\n}\n"),
              "3:8: unknown instruction 'frob'\n"
              "    %0 = frob %1 : i32\n"
              "         ^");
    EXPECT_EQ(ParseError("func f {\n%b0:\n  %0 = const 1 : i33\n}\n"),
              "3:18: unknown type 'i33'\n"
              "    %0 = const 1 : i33\n"
              "                   ^");
    EXPECT_EQ(ParseError("param x : i32 @0 junk\nfunc f {\n}\n"),
              "1:18: unexpected text at the end of the line\n"
              "  param x : i32 @0 junk\n"
              "                   ^");
}

TEST(Parser, Errors) {
    EXPECT_NE(ParseError("func f {\n%b0:\n  %0 = const 1 : i32\n  %0 = const 2 : i32\n}\n")
                  .find("4:3: value %0 defined twice"),
              std::string::npos);
    EXPECT_NE(ParseError("func f {\n%b0:\n  ret\n%b0:\n  ret\n}\n").find("4:1: block %b0 defined twice"),
              std::string::npos);
    EXPECT_NE(ParseError("func f {\n  ret\n}\n").find("2:3: instruction outside a block"),
              std::string::npos);
    EXPECT_NE(ParseError("func f {\n%b0:\n  ret\n").find("missing '}'"), std::string::npos);
    EXPECT_NE(ParseError("").find("missing 'func'"), std::string::npos);
    EXPECT_NE(ParseError("func f {\n%b0:\n  %0 = const 1.5 : i32\n}\n").find("3:14: bad i32 constant"),
              std::string::npos);
    EXPECT_NE(ParseError("func f {\n%b0:\n  %0 = const 2 : bool\n}\n").find("expected true, false"),
              std::string::npos);
    EXPECT_NE(ParseError("func f {\n%b0:\n  %0 = add %1, %2\n}\n").find("a result needs a type"),
              std::string::npos);
    EXPECT_NE(ParseError("func f {\n%b0:\n  br %b1, %b2, %b3\n}\n").find("at most two branch targets"),
              std::string::npos);
    EXPECT_NE(ParseError("file 1 \"a.py\"\nfunc f {\n}\n").find("1:6: expected file 0"),
              std::string::npos);
    EXPECT_NE(ParseError("func f {\n%b0:\n  %0 = var : ptr<heap, i32>\n}\n").find("unknown address space 'heap'"),
              std::string::npos);
    EXPECT_NE(ParseError("func f {\n%b0:\n  ret\n}\nret\n").find("5:1: text after the end"),
              std::string::npos);
    EXPECT_NE(ParseError("file 0 \"a\\q\"\nfunc f {\n}\n").find("unknown escape"), std::string::npos);
}

TEST(Parser, BlockNamedLikeAKeyword) {
    const std::string text =
        "func f structured {\n%b0 loop loop(merge %b1, continue %b0):\n  br %b0\n%b1 selection:\n  ret\n}\n";
    util::Result<Module> m = Parse(text);
    ASSERT_TRUE(m.ok()) << m.status().message();
    EXPECT_EQ(m->function.blocks[0].name, "loop");
    EXPECT_EQ(m->function.blocks[1].name, "selection");
    EXPECT_EQ(m->function.blocks[1].merge.kind, Merge::Kind::kNone);
    EXPECT_EQ(Print(m.value()), text);
}

}  // namespace
}  // namespace nvk::kir
