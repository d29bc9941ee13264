// Test support for the structurizer's tests: a small program builder in the
// shape the Python front end produces (i32 variables, an output buffer,
// short-circuit conditions as branches), and a check that structurizing keeps
// the interpreter's results.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <random>
#include <string>
#include <vector>

#include "kir/builder.h"
#include "kir/interpret.h"
#include "kir/verifier.h"
#include "structurize/structurize.h"

namespace nvk::structurize::testing {

using namespace kir;

constexpr uint64_t kOutBase = 0x1000;
constexpr int kOutLen = 64;
constexpr int kNumVars = 4;

// A kernel with an output buffer (param 0) and kNumVars i32 variables
// initialised from params 1..kNumVars. Emit() appends a value to the output.
struct Program {
    Module m;
    Builder b{m};
    TypeId i32 = 0;
    std::vector<ValueId> vars;
    ValueId k = kNone;    // output cursor
    ValueId out = kNone;  // output address

    Program() {
        i32 = b.Scalar(ScalarKind::kI32);
        m.AddParam("out", ScalarKind::kU64);
        BlockId entry = b.CreateBlock("entry");
        b.SetBlock(entry);
        out = b.Param(0);
        k = b.Var(i32);
        b.Store(k, b.ConstInt(i32, 0));
        for (int i = 0; i < kNumVars; ++i) {
            m.AddParam("v" + std::to_string(i), ScalarKind::kI32);
            ValueId v = b.Var(i32);
            b.Store(v, b.Param(1 + i));
            vars.push_back(v);
        }
    }
    ValueId Get(int i) { return b.Load(vars[i]); }
    ValueId C(int64_t v) { return b.ConstInt(i32, v); }
    void Set(int i, ValueId v) { b.Store(vars[i], v); }
    void Emit(ValueId v) {
        ValueId kv = b.Load(k);
        ValueId idx = b.Binary(Op::kAnd, kv, C(kOutLen - 1));
        b.Store(b.ElemPtr(i32, out, idx), v);
        b.Store(k, b.Binary(Op::kAdd, kv, C(1)));
    }
    BlockId Block(const std::string& name) { return b.CreateBlock(name); }
    void At(BlockId block) { b.SetBlock(block); }
    // condbr (lhs op rhs)
    void BrIf(Op op, ValueId lhs, ValueId rhs, BlockId t, BlockId f) {
        b.CondBr(b.Compare(op, lhs, rhs), t, f);
    }
    // condbr (var[i] < c)
    void BrLt(int i, int64_t c, BlockId t, BlockId f) { BrIf(Op::kLt, Get(i), C(c), t, f); }
    // *var += 1
    void Increment(ValueId var) { b.Store(var, b.Binary(Op::kAdd, b.Load(var), C(1))); }
    void Finish() {
        if (!b.IsTerminated(b.current_block())) b.Ret();
    }
};

// A compact dump of the CFG (block ids, names, merges, terminators) for failures.
inline std::string DumpCfg(const Module& m) {
    std::string out;
    for (const kir::Block& b : m.function.blocks) {
        out += std::to_string(b.id) + " " + b.name + " [" + std::to_string(b.insts.size()) + "]";
        if (b.merge.kind != Merge::Kind::kNone)
            out += (b.merge.kind == Merge::Kind::kLoop ? " loop(m=" : " sel(m=") +
                   std::to_string(b.merge.merge) + " c=" + std::to_string(b.merge.cont) + ")";
        out += " ->";
        for (BlockId s : b.Successors()) out += " " + std::to_string(s);
        if (!b.insts.empty() && b.insts.back().op == Op::kRet) out += " ret";
        out += "\n";
    }
    return out;
}

inline Inputs MakeInputs(const std::vector<int32_t>& vals) {
    Inputs in;
    in.params.push_back(kOutBase);
    for (int32_t v : vals) in.params.push_back(static_cast<uint32_t>(v));
    MemoryRegion r;
    r.base = kOutBase;
    r.bytes.assign(kOutLen * 4, 0);
    in.memory.push_back(r);
    return in;
}

inline size_t CountMerges(const Module& m, Merge::Kind kind) {
    size_t n = 0;
    for (const Block& b : m.function.blocks) n += b.merge.kind == kind;
    return n;
}

inline const Block* FirstWithMerge(const Module& m, Merge::Kind kind) {
    for (const Block& b : m.function.blocks)
        if (b.merge.kind == kind) return &b;
    return nullptr;
}

inline size_t CountVars(const Module& m) {
    size_t n = 0;
    for (const Inst& i : m.function.entry().insts) n += i.op == Op::kVar;
    return n;
}

inline size_t CountInsts(const Module& m) {
    size_t n = 0;
    for (const kir::Block& b : m.function.blocks) n += b.insts.size();
    return n;
}

// Structurize a copy of `m`, verify it (structured rules included), and compare the
// interpreter's output on `runs` random inputs (values in [-lim, lim]).
// Returns the structured module.
inline Module StructurizeAndCompare(const Module& m, std::mt19937& rng, int runs, int lim = 6) {
    Module s = m;
    util::Status st = Structurize(s);
    EXPECT_TRUE(st.ok()) << st.message() << "\n" << DumpCfg(m);
    if (!st.ok()) return s;
    util::Status verified = kir::Verify(s);  // KIR's invariants and the structured rules
    EXPECT_TRUE(verified.ok()) << verified.message() << "\n" << DumpCfg(m);
    std::uniform_int_distribution<int> dist(-lim, lim);
    for (int r = 0; r < runs; ++r) {
        std::vector<int32_t> vals;
        for (int i = 0; i < kNumVars; ++i) vals.push_back(dist(rng));
        Inputs in = MakeInputs(vals);
        auto before = Interpret(m, in, 200000);
        EXPECT_TRUE(before.ok()) << before.status().message();
        if (!before.ok() || !before->finished) continue;
        auto after = Interpret(s, in, 2000000);
        EXPECT_TRUE(after.ok()) << after.status().message();
        if (!after.ok()) return s;
        EXPECT_TRUE(after->finished);
        EXPECT_EQ(before->memory[0].bytes, after->memory[0].bytes) << "inputs " << vals[0] << " "
                                                                   << vals[1] << " " << vals[2]
                                                                   << " " << vals[3];
        if (::testing::Test::HasFailure()) return s;
    }
    return s;
}

}  // namespace nvk::structurize::testing
