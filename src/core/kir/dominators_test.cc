#include "kir/dominators.h"

#include <gtest/gtest.h>

#include "kir/builder.h"

namespace nvk::kir {
namespace {

// entry -> header; header -> body | exit; body -> header (a while loop).
Module WhileLoop() {
    Module m;
    Builder b(m);
    BlockId entry = b.CreateBlock("entry");
    BlockId header = b.CreateBlock("header");
    BlockId body = b.CreateBlock("body");
    BlockId exit = b.CreateBlock("exit");
    b.SetBlock(entry);
    ValueId c = b.ConstInt(b.Scalar(ScalarKind::kBool), 1);
    b.Br(header);
    b.SetBlock(header);
    b.CondBr(c, body, exit);
    b.SetBlock(body);
    b.Br(header);
    b.SetBlock(exit);
    b.Ret();
    return m;
}

TEST(Dominators, WhileLoop) {
    Module m = WhileLoop();
    DomTree d = Dominators(m.function);
    EXPECT_EQ(d.rpo.front(), 0u);
    EXPECT_EQ(d.Idom(0), kNone);
    EXPECT_EQ(d.Idom(1), 0u);
    EXPECT_EQ(d.Idom(2), 1u);
    EXPECT_EQ(d.Idom(3), 1u);
    EXPECT_TRUE(d.Dominates(1, 2));
    EXPECT_TRUE(d.Dominates(0, 3));
    EXPECT_TRUE(d.Dominates(2, 2));
    EXPECT_FALSE(d.StrictlyDominates(2, 2));
    EXPECT_FALSE(d.Dominates(2, 3));
    EXPECT_FALSE(d.Dominates(3, 1));
    EXPECT_EQ(d.RpoIndex(0), 0u);
    EXPECT_LT(d.RpoIndex(1), d.RpoIndex(2));
    EXPECT_LT(d.RpoIndex(1), d.RpoIndex(3));
    EXPECT_EQ(d.Children(1).size(), 2u);
}

TEST(Dominators, PostDominatorsOfWhileLoop) {
    Module m = WhileLoop();
    DomTree p = PostDominators(m.function);
    EXPECT_EQ(p.root(), kVirtualExit);
    EXPECT_EQ(p.Idom(3), kVirtualExit);
    EXPECT_EQ(p.Idom(1), 3u);
    EXPECT_EQ(p.Idom(2), 1u);
    EXPECT_EQ(p.Idom(0), 1u);
    EXPECT_TRUE(p.Dominates(3, 0));
    EXPECT_FALSE(p.Dominates(2, 1));
}

TEST(Dominators, DiamondAndUnreachable) {
    Module m;
    Builder b(m);
    BlockId entry = b.CreateBlock("entry");
    BlockId then = b.CreateBlock("then");
    BlockId els = b.CreateBlock("else");
    BlockId join = b.CreateBlock("join");
    BlockId dead = b.CreateBlock("dead");
    b.SetBlock(entry);
    ValueId c = b.ConstInt(b.Scalar(ScalarKind::kBool), 0);
    b.CondBr(c, then, els);
    b.SetBlock(then);
    b.Br(join);
    b.SetBlock(els);
    b.Br(join);
    b.SetBlock(join);
    b.Ret();
    b.SetBlock(dead);
    b.Br(join);
    DomTree d = Dominators(m.function);
    EXPECT_EQ(d.Idom(join), entry);
    EXPECT_FALSE(d.Contains(dead));
    EXPECT_FALSE(d.Dominates(entry, dead));
    EXPECT_EQ(d.rpo.size(), 4u);
    EXPECT_EQ(ReversePostOrder(m.function), d.rpo);
    DomTree p = PostDominators(m.function);
    EXPECT_EQ(p.Idom(entry), join);
    EXPECT_EQ(p.Idom(dead), join);  // reaches the exit, so it is in the post tree
    auto preds = Predecessors(m.function);
    EXPECT_EQ(preds[join].size(), 3u);
    EXPECT_TRUE(preds[entry].empty());
}

TEST(Dominators, InfiniteLoopHasNoPostDominator) {
    Module m;
    Builder b(m);
    BlockId entry = b.CreateBlock("entry");
    BlockId spin = b.CreateBlock("spin");
    b.SetBlock(entry);
    b.Br(spin);
    b.SetBlock(spin);
    b.Br(spin);
    DomTree p = PostDominators(m.function);
    EXPECT_FALSE(p.Contains(spin));
    EXPECT_FALSE(p.Contains(entry));
    EXPECT_EQ(p.rpo.size(), 1u);
}

TEST(Dominators, StructuredDominatorsCountMergeEdges) {
    // entry (selection, merge %3) -> then | else, both return; %3 is reached
    // only through the merge annotation.
    Module m;
    Builder b(m);
    BlockId entry = b.CreateBlock("entry");
    BlockId then = b.CreateBlock("then");
    BlockId els = b.CreateBlock("else");
    BlockId merge = b.CreateBlock("merge");
    b.SetBlock(entry);
    b.CondBr(b.ConstInt(b.Scalar(ScalarKind::kBool), 1), then, els);
    b.SetBlock(then);
    b.Ret();
    b.SetBlock(els);
    b.Ret();
    b.SetBlock(merge);
    b.Unreachable();
    m.function.entry().merge = {Merge::Kind::kSelection, merge, kNone};
    EXPECT_FALSE(Dominators(m.function).Contains(merge));
    DomTree s = StructuredDominators(m.function);
    EXPECT_TRUE(s.Contains(merge));
    EXPECT_EQ(s.Idom(merge), entry);
}

}  // namespace
}  // namespace nvk::kir
