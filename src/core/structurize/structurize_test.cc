// Hand-made CFGs in the shapes the front end builds: each is structurized,
// checked against the structured-form rules, compared with the original under
// the interpreter on many inputs, and checked for the shape we expect.
#include <algorithm>
#include <cstring>

#include "structurize/test_support.h"

namespace nvk::structurize::testing {
namespace {

constexpr int kRuns = 200;

TEST(Structurize, IfGuardNeedsNothing) {
    // if v0 < 2: emit(v1)
    Program p;
    BlockId then = p.Block("then"), end = p.Block("end");
    p.BrLt(0, 2, then, end);
    p.At(then);
    p.Emit(p.Get(1));
    p.b.Br(end);
    p.At(end);
    p.Finish();
    std::mt19937 rng(1);
    Module s = StructurizeAndCompare(p.m, rng, kRuns);
    EXPECT_TRUE(s.function.structured);
    EXPECT_EQ(CountVars(s), CountVars(p.m));
    EXPECT_EQ(CountMerges(s, Merge::Kind::kLoop), 0u);
    EXPECT_EQ(CountMerges(s, Merge::Kind::kSelection), 1u);
    EXPECT_EQ(s.function.entry().merge.kind, Merge::Kind::kSelection);
    EXPECT_EQ(s.function.blocks.back().id, s.function.entry().merge.merge);  // the merge comes last
}

TEST(Structurize, IfElifElse) {
    Program p;
    BlockId t1 = p.Block("t1"), e1 = p.Block("e1"), t2 = p.Block("t2"), e2 = p.Block("e2");
    BlockId end = p.Block("end");
    p.BrLt(0, 0, t1, e1);
    p.At(t1);
    p.Emit(p.C(1));
    p.b.Br(end);
    p.At(e1);
    p.BrLt(1, 1, t2, e2);
    p.At(t2);
    p.Emit(p.C(2));
    p.b.Br(end);
    p.At(e2);
    p.Emit(p.C(3));
    p.b.Br(end);
    p.At(end);
    p.Emit(p.C(4));
    p.Finish();
    std::mt19937 rng(2);
    Module s = StructurizeAndCompare(p.m, rng, kRuns);
    EXPECT_EQ(CountVars(s), CountVars(p.m));
    EXPECT_EQ(s.function.entry().merge.kind, Merge::Kind::kSelection);
    EXPECT_EQ(CountMerges(s, Merge::Kind::kSelection), 2u);  // if, and the elif inside its else
    EXPECT_EQ(CountMerges(s, Merge::Kind::kLoop), 0u);
    // The inner test needs a merge of its own.
}

// for i in range(v0 & 7): if i == v1: break  else: emit(88)  (then emit(77))
// Control-flow fuzz seed 10301's shape: the loop is left by the break and by the
// exhausted range, through the `else`.
TEST(Structurize, ForElseLeavesFromTheArms) {
    Program p;
    ValueId i = p.b.Var(p.i32);
    p.b.Store(i, p.C(0));
    BlockId head = p.Block("head"), body = p.Block("body"), brk = p.Block("brk");
    BlockId incr = p.Block("incr"), els = p.Block("else"), exit = p.Block("exit");
    p.b.Br(head);
    p.At(head);
    p.BrIf(Op::kLt, p.b.Load(i), p.b.Binary(Op::kAnd, p.Get(0), p.C(7)), body, els);
    p.At(body);
    p.BrIf(Op::kEq, p.b.Load(i), p.Get(1), brk, incr);
    p.At(brk);
    p.b.Br(exit);
    p.At(incr);
    p.Increment(i);
    p.b.Br(head);
    p.At(els);
    p.Emit(p.C(88));
    p.b.Br(exit);
    p.At(exit);
    p.Emit(p.C(77));
    p.Finish();
    std::mt19937 rng(11);
    Module s = StructurizeAndCompare(p.m, rng, kRuns);
    ASSERT_EQ(CountMerges(s, Merge::Kind::kLoop), 1u);
    // Every branch to the loop's merge comes from an arm, none from a selection's
    // merge block (lavapipe let invocations that left that way run later iterations).
    const kir::Block* loop = FirstWithMerge(s, Merge::Kind::kLoop);
    std::vector<BlockId> selection_merges;
    for (const kir::Block& b : s.function.blocks)
        if (b.merge.kind == Merge::Kind::kSelection) selection_merges.push_back(b.merge.merge);
    int exits = 0;
    for (const kir::Block& b : s.function.blocks) {
        for (BlockId t : b.Successors()) {
            if (t != loop->merge.merge) continue;
            ++exits;
            EXPECT_EQ(std::count(selection_merges.begin(), selection_merges.end(), b.id), 0)
                << "%b" << b.id << " leaves the loop from a selection's merge";
        }
    }
    EXPECT_EQ(exits, 2);  // the break and the else
}

// for i in range(v0 & 7): if i == v1: break; if i == v2: continue; emit(i)
TEST(Structurize, ForWithBreakAndContinue) {
    Program p;
    ValueId i = p.b.Var(p.i32);
    p.b.Store(i, p.C(0));
    BlockId head = p.Block("head"), body = p.Block("body"), brk = p.Block("brk");
    BlockId b2 = p.Block("b2"), b3 = p.Block("b3"), incr = p.Block("incr"), exit = p.Block("exit");
    p.b.Br(head);
    p.At(head);
    p.BrIf(Op::kLt, p.b.Load(i), p.b.Binary(Op::kAnd, p.Get(0), p.C(7)), body, exit);
    p.At(body);
    p.BrIf(Op::kEq, p.b.Load(i), p.Get(1), brk, b2);
    p.At(brk);
    p.Emit(p.C(99));
    p.b.Br(exit);
    p.At(b2);
    p.BrIf(Op::kEq, p.b.Load(i), p.Get(2), incr, b3);
    p.At(b3);
    p.Emit(p.b.Load(i));
    p.b.Br(incr);
    p.At(incr);
    p.Increment(i);
    p.b.Br(head);
    p.At(exit);
    p.Emit(p.C(7));
    p.Finish();
    std::mt19937 rng(3);
    Module s = StructurizeAndCompare(p.m, rng, kRuns);
    EXPECT_EQ(CountVars(s), CountVars(p.m));  // one exit target: no selector
    // One loop: `break` leaves it directly, `continue` goes to its continue target.
    ASSERT_EQ(CountMerges(s, Merge::Kind::kLoop), 1u);
    const kir::Block* h = FirstWithMerge(s, Merge::Kind::kLoop);
    const kir::Block* cont = s.function.FindBlock(h->merge.cont);
    ASSERT_NE(cont, nullptr);
    EXPECT_EQ(cont->Successors(), std::vector<BlockId>{h->id});
}

// for i in range(4): for j in range(4): if j == v0: break; if i+j == v1: return; emit(j)
TEST(Structurize, NestedLoopsBreakAndReturnFromInner) {
    Program p;
    ValueId i = p.b.Var(p.i32), j = p.b.Var(p.i32);
    p.b.Store(i, p.C(0));
    BlockId oh = p.Block("oh"), ob = p.Block("ob"), ih = p.Block("ih"), ib = p.Block("ib");
    BlockId ib2 = p.Block("ib2"), ret = p.Block("ret"), ib3 = p.Block("ib3");
    BlockId iexit = p.Block("iexit"), oexit = p.Block("oexit");
    p.b.Br(oh);
    p.At(oh);
    p.BrIf(Op::kLt, p.b.Load(i), p.C(4), ob, oexit);
    p.At(ob);
    p.b.Store(j, p.C(0));
    p.b.Br(ih);
    p.At(ih);
    p.BrIf(Op::kLt, p.b.Load(j), p.C(4), ib, iexit);
    p.At(ib);
    p.BrIf(Op::kEq, p.b.Load(j), p.Get(0), iexit, ib2);
    p.At(ib2);
    p.BrIf(Op::kEq, p.b.Binary(Op::kAdd, p.b.Load(i), p.b.Load(j)), p.Get(1), ret, ib3);
    p.At(ret);
    p.Emit(p.C(55));
    p.b.Ret();
    p.At(ib3);
    p.Emit(p.b.Load(j));
    p.Increment(j);
    p.b.Br(ih);
    p.At(iexit);
    p.Increment(i);
    p.b.Br(oh);
    p.At(oexit);
    p.Emit(p.C(77));
    p.Finish();
    std::mt19937 rng(4);
    Module s = StructurizeAndCompare(p.m, rng, kRuns);
    // The return leaves both loops through their merge blocks (the verifier
    // refuses a ret inside a loop), told apart from the break by a selector.
    EXPECT_EQ(CountVars(s), CountVars(p.m) + 1);
    EXPECT_EQ(CountMerges(s, Merge::Kind::kLoop), 2u);
}

// while v0 < 5: v0 += 1; if v0 == v1: break (to A); if v0 == v2: (to B, another exit)
TEST(Structurize, LoopWithExitsToDifferentTargets) {
    Program p;
    BlockId head = p.Block("head"), body = p.Block("body"), b2 = p.Block("b2");
    BlockId a = p.Block("a"), bb = p.Block("bb"), exit = p.Block("exit"), end = p.Block("end");
    p.b.Br(head);
    p.At(head);
    p.BrLt(0, 5, body, exit);
    p.At(body);
    p.Set(0, p.b.Binary(Op::kAdd, p.Get(0), p.C(1)));
    p.BrIf(Op::kEq, p.Get(0), p.Get(1), a, b2);
    p.At(b2);
    p.BrIf(Op::kEq, p.Get(0), p.Get(2), bb, head);
    p.At(a);
    p.Emit(p.C(1));
    p.Emit(p.C(1));
    p.Emit(p.C(1));
    p.b.Br(end);
    p.At(bb);
    p.Emit(p.C(2));
    p.Emit(p.C(2));
    p.Emit(p.C(2));
    p.b.Br(end);
    p.At(exit);
    p.Emit(p.C(3));
    p.Emit(p.C(3));
    p.Emit(p.C(3));
    p.b.Br(end);
    p.At(end);
    p.Emit(p.Get(0));
    p.Finish();
    std::mt19937 rng(5);
    Module s = StructurizeAndCompare(p.m, rng, kRuns, 8);
    EXPECT_LE(CountVars(s), CountVars(p.m) + 1);  // at most one selector
    EXPECT_GE(CountMerges(s, Merge::Kind::kLoop), 1u);
}

// Short circuits: if (v0 < 1 and v1 < 2) or not (v2 < 0 and v3 < 1): X else: Y
void ShortCircuit(bool big_else, uint32_t seed) {
    Program p;
    BlockId c2 = p.Block("c2"), c3 = p.Block("c3"), c4 = p.Block("c4");
    BlockId x = p.Block("x"), y = p.Block("y"), end = p.Block("end");
    p.BrLt(0, 1, c2, c3);
    p.At(c2);
    p.BrLt(1, 2, x, c3);
    p.At(c3);
    p.BrLt(2, 0, c4, x);  // not (a and b): a false -> true
    p.At(c4);
    p.BrLt(3, 1, y, x);
    p.At(x);
    p.Emit(p.C(1));
    p.b.Br(end);
    p.At(y);
    for (int i = 0; i < (big_else ? 10 : 1); ++i) p.Emit(p.C(2 + i));
    p.b.Br(end);
    p.At(end);
    p.Emit(p.C(9));
    p.Finish();
    std::mt19937 rng(seed);
    Module s = StructurizeAndCompare(p.m, rng, kRuns, 3);
    for (const kir::Block& b : s.function.blocks) {
        if (b.terminator().op == Op::kCondBr) {
            EXPECT_NE(b.merge.kind, Merge::Kind::kNone);
        }
    }
}

TEST(Structurize, ShortCircuitSmallArms) { ShortCircuit(false, 6); }
TEST(Structurize, ShortCircuitLargeArm) { ShortCircuit(true, 7); }

TEST(Structurize, IrreducibleIsUnsupported) {
    Program p;
    BlockId a = p.Block("a"), b = p.Block("b");
    p.BrLt(0, 0, a, b);
    p.At(a);
    p.b.Br(b);
    p.At(b);
    p.b.Br(a);
    // a -> b, b -> a, entered at both: irreducible.
    util::Status st = Structurize(p.m);
    EXPECT_EQ(st.code(), util::Code::kUnsupported) << st.message();
}

TEST(Interpret, ArithmeticAndMemory) {
    Module m;
    Builder b(m);
    m.AddParam("out", ScalarKind::kU64);
    b.SetBlock(b.CreateBlock("entry"));
    TypeId i32 = b.Scalar(ScalarKind::kI32), f32 = b.Scalar(ScalarKind::kF32);
    ValueId out = b.Param(0);
    ValueId x = b.Binary(Op::kDiv, b.ConstInt(i32, -7), b.ConstInt(i32, 2));  // -3
    b.Store(b.ElemPtr(i32, out, b.ConstInt(i32, 0)), x);
    ValueId f = b.Convert(i32, b.Binary(Op::kMul, b.ConstFloat(f32, 2.5), b.ConstFloat(f32, 3)));
    b.Store(b.ElemPtr(i32, out, b.ConstInt(i32, 1)), f);  // 7
    b.Ret();
    Inputs in;
    in.params = {kOutBase};
    in.memory.push_back({kOutBase, std::vector<uint8_t>(8, 0)});
    auto t = Interpret(m, in, 100);
    ASSERT_TRUE(t.ok()) << t.status().message();
    int32_t vals[2];
    std::memcpy(vals, t->memory[0].bytes.data(), 8);
    EXPECT_EQ(vals[0], -3);
    EXPECT_EQ(vals[1], 7);
    in.memory[0].bytes.resize(4);  // out of bounds now
    EXPECT_FALSE(Interpret(m, in, 100).ok());
}

}  // namespace
}  // namespace nvk::structurize::testing
