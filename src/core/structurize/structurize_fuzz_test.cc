// Random structured programs, lowered the way the Python front end lowers
// them (short circuits as branches, `while` with its test in the header,
// `for` with an increment block, break/continue/return anywhere), are
// structurized, checked against the structured-form rules, and run before and
// after on random inputs. NVK_FUZZ_SEEDS=N runs N seeds from NVK_FUZZ_FIRST.
#include <cstdlib>

#include "structurize/test_support.h"

namespace nvk::structurize::testing {
namespace {

class Generator {
  public:
    explicit Generator(uint32_t seed) : rng_(seed) {}

    void Build(Program& p) {
        p_ = &p;
        budget_ = 8 + Rand(30);
        Stmts(0);
        p.Finish();
    }

  private:
    struct LoopCtx {
        BlockId brk, cont;
    };

    int Rand(int n) { return static_cast<int>(rng_() % n); }

    void Stmts(int depth) {
        int n = 1 + Rand(4);
        for (int i = 0; i < n && budget_ > 0; ++i) Stmt(depth);
    }

    // Lower a random condition: jump to t when true, f when false.
    void Cond(int depth, BlockId t, BlockId f) {
        Program& p = *p_;
        int r = depth < 3 ? Rand(10) : 9;
        if (r == 0 || r == 1) {  // a and b
            BlockId mid = p.Block("and");
            Cond(depth + 1, mid, f);
            p.At(mid);
            Cond(depth + 1, t, f);
        } else if (r == 2 || r == 3) {  // a or b
            BlockId mid = p.Block("or");
            Cond(depth + 1, t, mid);
            p.At(mid);
            Cond(depth + 1, t, f);
        } else if (r == 4) {  // not a
            Cond(depth + 1, f, t);
        } else {
            static const Op ops[] = {Op::kLt, Op::kGt, Op::kEq, Op::kNe, Op::kLe};
            ValueId c = p.b.Compare(ops[Rand(5)], p.Get(Rand(kNumVars)), p.C(Rand(7) - 3));
            p.b.CondBr(c, t, f);
        }
    }

    void Stmt(int depth) {
        Program& p = *p_;
        --budget_;
        int r = Rand(depth < 3 ? 16 : 8);
        switch (r) {
            case 0: case 1: {  // v[i] = v[j] + c
                p.Set(Rand(kNumVars), p.b.Binary(Op::kAdd, p.Get(Rand(kNumVars)), p.C(Rand(5) - 2)));
                break;
            }
            case 2: case 3: p.Emit(p.Get(Rand(kNumVars))); break;
            case 4: {  // v[i] = a if cond else b
                BlockId t = p.Block("ct"), f = p.Block("cf"), j = p.Block("cj");
                int i = Rand(kNumVars);
                Cond(1, t, f);
                p.At(t);
                p.Set(i, p.C(Rand(9)));
                p.b.Br(j);
                p.At(f);
                p.Set(i, p.Get(Rand(kNumVars)));
                p.b.Br(j);
                p.At(j);
                break;
            }
            case 5:  // break / continue / return
                if (!loops_.empty() && Rand(3) != 0) {
                    p.Emit(p.C(100 + depth));
                    p.b.Br(Rand(2) ? loops_.back().brk : loops_.back().cont);
                    p.At(p.Block("dead"));
                } else if (Rand(3) == 0) {
                    p.Emit(p.C(200 + depth));
                    p.b.Ret();
                    p.At(p.Block("dead"));
                }
                break;
            case 6: case 7: case 8: case 9: {  // if / elif / else
                BlockId join = p.Block("endif");
                int arms = 1 + Rand(3);
                bool has_else = Rand(2);
                for (int a = 0; a < arms; ++a) {
                    BlockId then = p.Block("then");
                    BlockId next = (a + 1 < arms || has_else) ? p.Block("elif") : join;
                    Cond(0, then, next);
                    p.At(then);
                    Stmts(depth + 1);
                    p.b.Br(join);
                    p.At(next);
                }
                if (has_else) {
                    Stmts(depth + 1);
                    p.b.Br(join);
                }
                p.At(join);
                break;
            }
            case 10: case 11: case 12: {  // while cond: (bounded by a hidden counter)
                ValueId cnt = p.b.Var(p.i32);
                p.b.Store(cnt, p.C(0));
                BlockId head = p.Block("while"), body = p.Block("wbody"), exit = p.Block("wend");
                BlockId body2 = p.Block("wbody2");
                p.b.Br(head);
                p.At(head);
                Cond(1, body, exit);
                p.At(body);
                ValueId c = p.b.Binary(Op::kAdd, p.b.Load(cnt), p.C(1));
                p.b.Store(cnt, c);
                p.BrIf(Op::kGt, c, p.C(4), exit, body2);
                p.At(body2);
                loops_.push_back({exit, head});
                Stmts(depth + 1);
                loops_.pop_back();
                p.b.Br(head);
                p.At(exit);
                break;
            }
            default: {  // for i in range(n)
                ValueId iv = p.b.Var(p.i32);
                ValueId n = p.b.Binary(Op::kAnd, p.Get(Rand(kNumVars)), p.C(3));
                ValueId nv = p.b.Var(p.i32);
                p.b.Store(nv, n);
                p.b.Store(iv, p.C(0));
                BlockId head = p.Block("for"), body = p.Block("fbody"), incr = p.Block("fincr");
                BlockId exit = p.Block("fend");
                p.b.Br(head);
                p.At(head);
                p.BrIf(Op::kLt, p.b.Load(iv), p.b.Load(nv), body, exit);
                p.At(body);
                int t = Rand(kNumVars);
                p.Set(t, p.b.Binary(Op::kAdd, p.Get(t), p.b.Load(iv)));
                loops_.push_back({exit, incr});
                Stmts(depth + 1);
                loops_.pop_back();
                p.b.Br(incr);
                p.At(incr);
                p.Increment(iv);
                p.b.Br(head);
                p.At(exit);
                break;
            }
        }
    }

    std::mt19937 rng_;
    Program* p_ = nullptr;
    int budget_ = 0;
    std::vector<LoopCtx> loops_;
};

TEST(StructurizeFuzz, RandomPrograms) {
    int seeds = 500;
    if (const char* env = std::getenv("NVK_FUZZ_SEEDS")) seeds = std::atoi(env);
    int first = 0;
    if (const char* env = std::getenv("NVK_FUZZ_FIRST")) first = std::atoi(env);
    size_t blocks_before = 0, blocks_after = 0, insts_before = 0, insts_after = 0;
    for (int seed = first; seed < first + seeds; ++seed) {
        SCOPED_TRACE("seed " + std::to_string(seed));
        Program p;
        Generator(static_cast<uint32_t>(seed)).Build(p);
        std::mt19937 rng(seed * 7919 + 1);
        Module s = StructurizeAndCompare(p.m, rng, 12);
        blocks_before += p.m.function.blocks.size();
        blocks_after += s.function.blocks.size();
        insts_before += CountInsts(p.m);
        insts_after += CountInsts(s);
        if (::testing::Test::HasFailure()) break;
    }
    std::printf("fuzz: %d seeds, blocks %zu -> %zu, instructions %zu -> %zu\n", seeds,
                blocks_before, blocks_after, insts_before, insts_after);
}

}  // namespace
}  // namespace nvk::structurize::testing
