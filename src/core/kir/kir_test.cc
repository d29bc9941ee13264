#include <gtest/gtest.h>

#include "kir/builder.h"

namespace nvk::kir {
namespace {

TEST(Builder, VarsGoToEntry) {
    Module m;
    Builder b(m);
    BlockId entry = b.CreateBlock("entry");
    BlockId body = b.CreateBlock("body");
    b.SetBlock(entry);
    b.Br(body);
    b.SetBlock(body);
    ValueId v = b.Var(b.Scalar(ScalarKind::kI32));
    b.Ret();
    EXPECT_EQ(m.function.values[v].block, entry);
    EXPECT_EQ(m.function.entry().insts.front().op, Op::kVar);
    EXPECT_EQ(m.function.entry().insts.back().op, Op::kBr);
}

}  // namespace
}  // namespace nvk::kir
