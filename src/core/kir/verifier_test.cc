#include "kir/verifier.h"

#include <gtest/gtest.h>

#include "kir/builder.h"
#include "kir/parse_test_util.h"
#include "kir/printer.h"

namespace nvk::kir {
namespace {

// The verifier's message for `text`, which must fail as kInternal.
std::string VerifyError(const std::string& text) {
    Module m = ParseOk(text);
    util::Status s = Verify(m);
    EXPECT_FALSE(s.ok()) << "expected a verifier failure for:\n" << text;
    EXPECT_EQ(s.code(), util::Code::kInternal);
    return s.message();
}

void ExpectValid(const std::string& text) {
    Module m = ParseOk(text);
    util::Status s = Verify(m);
    EXPECT_TRUE(s.ok()) << s.message();
}

// The first line of the verifier's message (the rest is the marked KIR).
std::string Headline(const std::string& text) {
    std::string msg = VerifyError(text);
    return msg.substr(0, msg.find('\n'));
}

// text with its first `from` replaced by `to` (which must be there).
std::string Edited(std::string text, const std::string& from, const std::string& to) {
    size_t at = text.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return at == std::string::npos ? text : text.replace(at, from.size(), to);
}

TEST(Verifier, RenderedMessageMarksTheLine) {
    std::string msg = VerifyError(R"(func f {
%b0:
  %0 = const 1 : i32
  %1 = const 1.0 : f32
  %2 = add %0, %1 : i32                 !12
  ret
}
)");
    EXPECT_EQ(msg,
              "kir verifier: %2 = add %0, %1 : i32: operand types differ (i32, f32)\n"
              "     1 | func f {\n"
              "     2 | %b0:\n"
              "     3 |   %0 = const 1 : i32\n"
              "     4 |   %1 = const 1.0 : f32\n"
              ">    5 |   %2 = add %0, %1 : i32                 !12\n"
              "       |   ^~~~~~~~~~~~~~~~~~~~~\n"
              "     6 |   ret\n"
              "     7 | }\n");
}

TEST(Verifier, BuilderModuleIsValid) {
    Module m;
    m.AddParam("n", ScalarKind::kI32);
    m.AddParam("a", ScalarKind::kU64);
    Builder b(m);
    BlockId entry = b.CreateBlock("entry");
    BlockId body = b.CreateBlock("body");
    BlockId done = b.CreateBlock("done");
    b.SetBlock(entry);
    TypeId i32 = b.Scalar(ScalarKind::kI32);
    ValueId i = b.Convert(i32, b.BuiltinId(Builtin::kGlobalId, 0));
    ValueId n = b.Param(0);
    b.CondBr(b.Compare(Op::kLt, i, n), body, done);
    b.SetBlock(body);
    ValueId p = b.ElemPtr(b.Scalar(ScalarKind::kF32), b.Param(1), i);
    ValueId x = b.Load(p);
    b.Store(p, b.Math(MathFn::kSqrt, {x}));
    b.Br(done);
    b.SetBlock(done);
    b.Ret();
    util::Status s = Verify(m);
    EXPECT_TRUE(s.ok()) << s.message();
}

TEST(Verifier, ValueRules) {
    EXPECT_EQ(Headline("func f {\n%b0:\n  br %b1\n%b1:\n  %0 = const 1 : i32\n  br %b2\n"
                       "%b2:\n  %1 = add %0, %0 : i32\n  ret\n}\n"),
              "kir verifier: %1 = add %0, %0 : i32: uses %0 from block %b1 (only entry-block "
              "values cross blocks)");
    EXPECT_EQ(Headline("func f {\n%b0:\n  %1 = add %0, %0 : i32\n  %0 = const 1 : i32\n  ret\n}\n"),
              "kir verifier: %1 = add %0, %0 : i32: uses %0 before its definition");
    EXPECT_EQ(Headline("func f {\n%b0:\n  %1 = neg %7 : i32\n  ret\n}\n"),
              "kir verifier: %1 = neg %7 : i32: uses %7, which is never defined");
    EXPECT_EQ(Headline("func f {\n%b0:\n  br %b1\n%b1:\n  %0 = var : ptr<function, i32>\n  ret\n}\n"),
              "kir verifier: %0 = var : ptr<function, i32>: may appear only in the entry block");
    EXPECT_EQ(Headline("func f {\n%b0:\n  ret\n  ret\n}\n"),
              "kir verifier: ret: terminator before the end of the block");
    EXPECT_EQ(Headline("func f {\n%b0:\n  %0 = const 1 : i32\n}\n"),
              "kir verifier: %0 = const 1 : i32: block does not end in a terminator");
    EXPECT_EQ(Headline("func f {\n%b0:\n  br %b5\n}\n"),
              "kir verifier: br %b5: branch to a block that does not exist");
    EXPECT_EQ(Headline("func f {\n%b0:\n  br %b1\n%b1:\n  br %b0\n}\n"),
              "kir verifier: br %b0: branch to the entry block");
}

TEST(Verifier, TypeRules) {
    auto one = [](const std::string& body) {
        return Headline("param a : u64 @0\nfunc f {\n%b0:\n  %0 = var : ptr<function, i32>\n"
                        "  %1 = const 1 : i32\n  %2 = const 1.0 : f32\n  %3 = param 0 : u64\n" +
                        body + "  ret\n}\n");
    };
    EXPECT_EQ(one("  store %0, %2\n"),
              "kir verifier: store %0, %2: stores f32 through ptr<function, i32>");
    EXPECT_EQ(one("  %4 = load %1 : i32\n"),
              "kir verifier: %4 = load %1 : i32: loads through a non-pointer");
    EXPECT_EQ(one("  %4 = load %0 : f32\n"),
              "kir verifier: %4 = load %0 : f32: result type should be i32");
    EXPECT_EQ(one("  %4 = elemptr %1, %1 : ptr<global, f32>\n"),
              "kir verifier: %4 = elemptr %1, %1 : ptr<global, f32>: the base must be a u64 address");
    EXPECT_EQ(one("  %4 = elemptr %3, %2 : ptr<global, f32>\n"),
              "kir verifier: %4 = elemptr %3, %2 : ptr<global, f32>: the index must be an integer");
    EXPECT_EQ(one("  %4 = lt %1, %1 : i32\n"),
              "kir verifier: %4 = lt %1, %1 : i32: a comparison gives bool");
    EXPECT_EQ(one("  %4 = add %1 : i32\n"),
              "kir verifier: %4 = add %1 : i32: takes 2 operand(s), has 1");
    EXPECT_EQ(one("  %4 = math sin %1 : i32\n"),
              "kir verifier: %4 = math sin %1 : i32: sin of i32");
    EXPECT_EQ(one("  %4 = math bitcount %3 : u64\n"),
              "kir verifier: %4 = math bitcount %3 : u64: bitcount of u64 (32-bit integers only)");
    EXPECT_EQ(one("  %4 = math findumsb %2 : f32\n"),
              "kir verifier: %4 = math findumsb %2 : f32: findumsb of f32 (32-bit integers only)");
    EXPECT_EQ(one("  %4 = bitcast %3 : f32\n"),
              "kir verifier: %4 = bitcast %3 : f32: bitcast between scalars of different widths");
    EXPECT_EQ(one("  %4 = param 3 : u64\n"),
              "kir verifier: %4 = param 3 : u64: no such parameter");
    EXPECT_EQ(one("  %4 = const 0xffffffff : i32\n"),
              "kir verifier: %4 = const 4294967295 : i32: constant is not sign-extended to 64 bits");
    EXPECT_EQ(Headline("func f {\n%b0:\n  %0 = const 1 : i32\n  condbr %0, %b1, %b1\n%b1:\n  ret\n}\n"),
              "kir verifier: condbr %0, %b1, %b1: branches on i32");
    EXPECT_EQ(Headline("param a : u64 @4\nfunc f {\n%b0:\n  ret\n}\n"),
              "kir verifier: offset 4 is not aligned to 8");
    ExpectValid("func f {\n%b0:\n  %0 = const 5 : i32\n  %1 = math findilsb %0 : i32\n"
                "  %2 = const 5 : u32\n  %3 = math bitcount %2 : u32\n  ret\n}\n");
}

TEST(Verifier, UnreachableBlocksAreAllowed) {
    ExpectValid("func f {\n%b0:\n  ret\n%b1 dead:\n  br %b2\n%b2:\n  ret\n}\n");
}

TEST(Verifier, IrreducibleControlFlow) {
    // Two entries into the cycle %b1 <-> %b2.
    EXPECT_EQ(Headline("func f {\n%b0:\n  %0 = const true : bool\n  condbr %0, %b1, %b2\n"
                       "%b1:\n  br %b2\n%b2:\n  br %b1\n}\n"),
              "kir verifier: br %b1: irreducible control flow: the edge to %b1 enters a loop other "
              "than through its header");
}

// ------------------------------------------------------------ structured form

const char* kIfElse = R"(func f structured {
%b0 entry selection(merge %b3):
  %0 = const true : bool
  condbr %0, %b1, %b2
%b1 then:
  br %b3
%b2 else:
  br %b3
%b3 merge:
  ret
}
)";

const char* kLoop = R"(func f structured {
%b0 entry:
  %0 = const true : bool
  br %b1
%b1 header loop(merge %b4, continue %b3):
  condbr %0, %b2, %b4
%b2 body selection(merge %b5):
  condbr %0, %b4, %b5
%b5 if.end:
  br %b3
%b3 latch:
  br %b1
%b4 exit:
  ret
}
)";

TEST(Verifier, StructuredValidShapes) {
    ExpectValid(kIfElse);
    ExpectValid(kLoop);
    // A loop whose continue construct ends in a conditional back edge (do-while).
    ExpectValid(R"(func f structured {
%b0:
  %0 = const true : bool
  br %b1
%b1 loop(merge %b3, continue %b2):
  br %b2
%b2:
  condbr %0, %b1, %b3
%b3:
  ret
}
)");
    // A continue from inside a selection of the body, and a selection whose
    // branches both return (its merge is unreachable).
    ExpectValid(R"(func f structured {
%b0:
  %0 = const true : bool
  br %b1
%b1 loop(merge %b6, continue %b5):
  br %b2
%b2 selection(merge %b4):
  condbr %0, %b5, %b3
%b3:
  br %b4
%b4:
  br %b5
%b5:
  br %b1
%b6 selection(merge %b9):
  condbr %0, %b7, %b8
%b7:
  ret
%b8:
  ret
%b9:
  unreachable
}
)");
}

// bf16 (a tile's element on the matrix units) has no arithmetic; its tiles load from the
// 16-bit words bfloat16 arrays are stored as.
TEST(Verifier, BFloat16IsOnlyMoved) {
    auto kernel = [](bool add, ScalarKind pointee) {
        Module m;
        Builder b(m);
        uint32_t p = m.AddParam("a", ScalarKind::kU64);
        b.CreateBlock("entry");
        TypeId bf16 = b.Scalar(ScalarKind::kBF16), u16 = b.Scalar(ScalarKind::kU16);
        TypeId u32 = b.Scalar(ScalarKind::kU32);
        TypeId tile = m.GetCoopMatrix(ScalarKind::kBF16, 16, 16, MatrixUse::kA);
        ValueId var = b.Var(tile);
        ValueId words = b.ElemPtr(b.Scalar(pointee), b.Param(p), b.ConstInt(u32, 0));
        b.Store(var, b.Coop(Op::kCoopLoad, tile, {words, b.ConstInt(u32, 16)}));
        ValueId v = b.Load(b.IndexPtr(var, b.ConstInt(u32, 0)));
        if (add) v = b.Binary(Op::kAdd, v, v);
        b.Store(b.IndexPtr(var, b.ConstInt(u32, 1)), b.Bitcast(bf16, b.Bitcast(u16, v)));
        b.Store(var, b.Coop(Op::kCoopFill, tile, {v}));
        b.Ret();
        return Verify(m);
    };
    EXPECT_TRUE(kernel(false, ScalarKind::kU16).ok()) << kernel(false, ScalarKind::kU16).message();
    util::Status add = kernel(true, ScalarKind::kU16);
    EXPECT_NE(add.message().find("add of bf16 (bf16 values are only loaded, stored, bitcast and "
                                 "filled into tiles)"), std::string::npos) << add.message();
    util::Status half = kernel(false, ScalarKind::kF16);
    EXPECT_NE(half.message().find("the pointer must point to the tile's element type (u16 for "
                                  "bf16)"), std::string::npos) << half.message();
}

// Tiles of 8- and 16-bit elements load from u32 or u64 words they are packed in; stores,
// wider elements and other words keep the element's type.
TEST(Verifier, PackedTileLoads) {
    auto kernel = [](ScalarKind element, ScalarKind pointee, bool load) {
        Module m;
        Builder b(m);
        uint32_t p = m.AddParam("a", ScalarKind::kU64);
        b.CreateBlock("entry");
        TypeId u32 = b.Scalar(ScalarKind::kU32);
        TypeId tile = m.GetCoopMatrix(element, 16, 16, MatrixUse::kA);
        ValueId words = b.ElemPtr(b.Scalar(pointee), b.Param(p), b.ConstInt(u32, 0));
        ValueId stride = b.ConstInt(u32, 4);
        if (load) {
            ValueId var = b.Var(tile);
            b.Store(var, b.Coop(Op::kCoopLoad, tile, {words, stride}));
        } else {
            ValueId var = b.Var(tile);
            b.Coop(Op::kCoopStore, kNone, {words, b.Load(var), stride});
        }
        b.Ret();
        return Verify(m);
    };
    for (ScalarKind element : {ScalarKind::kF16, ScalarKind::kBF16, ScalarKind::kI8, ScalarKind::kU8})
        for (ScalarKind word : {ScalarKind::kU32, ScalarKind::kU64})
            EXPECT_TRUE(kernel(element, word, true).ok()) << kernel(element, word, true).message();
    const char* refused = "or for a load of 8- or 16-bit elements to u32 or u64 words";
    for (util::Status s : {kernel(ScalarKind::kF16, ScalarKind::kU32, false),
                           kernel(ScalarKind::kF32, ScalarKind::kU64, true),
                           kernel(ScalarKind::kF16, ScalarKind::kI32, true)})
        EXPECT_NE(s.message().find(refused), std::string::npos) << s.message();
}

TEST(Verifier, StructuredRetInsideLoop) {
    // kLoop with its if.end returning instead of continuing: the loop is left
    // other than through its merge block.
    EXPECT_EQ(Headline(Edited(kLoop, "%b5 if.end:\n  br %b3", "%b5 if.end:\n  ret")),
              "kir verifier: ret: ret inside the loop construct of %b1: a loop must be left "
              "through its merge block");
}

TEST(Verifier, StructuredCondBrNeedsMerge) {
    EXPECT_EQ(Headline(Edited(kIfElse, " selection(merge %b3)", "")),
              "kir verifier: condbr %0, %b1, %b2: condbr without a merge annotation must break "
              "from, continue or close its innermost loop");
}

TEST(Verifier, StructuredMergeRules) {
    // Two headers naming one merge block.
    EXPECT_EQ(Headline(R"(func f structured {
%b0 selection(merge %b3):
  %0 = const true : bool
  condbr %0, %b1, %b3
%b1 selection(merge %b3):
  condbr %0, %b2, %b3
%b2:
  br %b3
%b3:
  ret
}
)"),
              "kir verifier: %b1: %b3 is already the merge block of %b0");
    // A selection header must end in condbr.
    EXPECT_EQ(Headline("func f structured {\n%b0 selection(merge %b1):\n  br %b1\n%b1:\n  ret\n}\n"),
              "kir verifier: %b0: a selection header must end in condbr");
    // Block order: a block printed before the block that dominates it.
    std::string text = kLoop;
    std::string if_end = "%b5 if.end:\n  br %b3\n";
    text.erase(text.find(if_end), if_end.size());
    text.insert(text.find("%b2 body"), if_end);
    EXPECT_EQ(Headline(text), "kir verifier: %b5: comes before its dominator %b2");
}

TEST(Verifier, StructuredBackEdgeRules) {
    // The back edge comes from the body, not from the continue construct.
    EXPECT_EQ(Headline(R"(func f structured {
%b0:
  %0 = const true : bool
  br %b1
%b1 loop(merge %b3, continue %b4):
  condbr %0, %b2, %b3
%b2:
  br %b1
%b4:
  br %b1
%b3:
  ret
}
)"),
              "kir verifier: br %b1: back edge to %b1 from outside its continue construct "
              "(continue target %b4)");
    // A loop without a loop merge annotation.
    EXPECT_EQ(Headline(R"(func f structured {
%b0:
  br %b1
%b1:
  br %b1
}
)"),
              "kir verifier: br %b1: back edge to %b1, which is not a loop header");
}

TEST(Verifier, StructuredExitRules) {
    // Branching from a nested selection straight to the outer selection's merge.
    EXPECT_EQ(Headline(R"(func f structured {
%b0 selection(merge %b4):
  %0 = const true : bool
  condbr %0, %b1, %b4
%b1 selection(merge %b3):
  condbr %0, %b2, %b3
%b2:
  br %b4
%b3:
  br %b4
%b4:
  ret
}
)"),
              "kir verifier: br %b4: the edge to %b4 leaves the selection construct of %b1 for a "
              "block other than its merge %b3");
    // Breaking out of two loops at once.
    EXPECT_EQ(Headline(R"(func f structured {
%b0:
  %0 = const true : bool
  br %b1
%b1 loop(merge %b6, continue %b5):
  br %b2
%b2 loop(merge %b4, continue %b3):
  condbr %0, %b6, %b4
%b3:
  br %b2
%b4:
  br %b5
%b5:
  br %b1
%b6:
  ret
}
)"),
              "kir verifier: condbr %0, %b6, %b4: the edge to %b6 leaves the loop construct of %b2 "
              "for a block other than its merge %b4 or the innermost loop's merge or continue");
    // Two back edges to one header, both from its continue construct.
    EXPECT_EQ(Headline(R"(func f structured {
%b0:
  %0 = const true : bool
  br %b1
%b1 loop(merge %b4, continue %b2):
  condbr %0, %b2, %b4
%b2 selection(merge %b3):
  condbr %0, %b3, %b1
%b3:
  br %b1
%b4:
  ret
}
)"),
              "kir verifier: br %b1: second back edge to the loop header %b1");
}

TEST(Verifier, RoundTripOfStructuredSamples) {
    for (const char* text : {kIfElse, kLoop}) {
        Module m = ParseOk(text);
        EXPECT_EQ(Print(m), text);
    }
}

}  // namespace
}  // namespace nvk::kir
