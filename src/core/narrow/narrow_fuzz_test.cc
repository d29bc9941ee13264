// Differential tests: every module of cases.h, and random programs of 64-bit
// integer math in the shapes the front end builds (parameters and ids widened
// to i64/u64, masks, divisions guarded against zero, range loops with
// accumulators, results stored wide or truncated), run under the interpreter
// before and after the pass on random inputs with boundary values.
// NVK_FUZZ_SEEDS=N runs N random programs from NVK_FUZZ_FIRST.
#include <cstdlib>

#include "kir/builder.h"
#include "narrow/cases.h"
#include "narrow/differential.h"

namespace nvk::narrow::testing {
namespace {

using namespace kir;

RangeOptions DeviceLimits() {
    RangeOptions o;
    for (int a = 0; a < 3; ++a) {
        o.max_local_size[a] = 1024;
        o.max_groups[a] = 65535;
    }
    return o;
}

TEST(NarrowDifferential, Cases) {
    for (const Case& c : AllCases()) {
        SCOPED_TRACE(c.name);
        Module m = ParseOk(c.text);
        for (bool limits : {false, true}) {
            NarrowOptions o;
            if (limits) o.ranges = DeviceLimits();
            Module n = Narrowed(m, o);
            int compared = CompareRuns(m, n, 600, 7, o.ranges);
            EXPECT_GE(compared, 150) << "too few runs finished";
            if (::testing::Test::HasFailure()) return;
        }
    }
}

class Generator {
  public:
    explicit Generator(uint32_t seed) : rng_(seed) {}

    Module Build() {
        Module m;
        Builder b(m);
        b_ = &b;
        m.AddParam("out.addr", ScalarKind::kU64);
        static const ScalarKind kinds[] = {ScalarKind::kI8,  ScalarKind::kU8,  ScalarKind::kI16,
                                           ScalarKind::kU16, ScalarKind::kI32, ScalarKind::kU32,
                                           ScalarKind::kI64, ScalarKind::kU64};
        int nparams = 2 + Rand(5);
        for (int i = 0; i < nparams; ++i)
            m.AddParam("p" + std::to_string(i), kinds[Rand(8)]);
        m.AddParam("a.shape[0]", ScalarKind::kI32);
        BlockId entry = b.CreateBlock("entry");
        b.SetBlock(entry);
        out_ = b.Param(0);
        for (uint32_t i = 1; i < m.params.size(); ++i) pool_.push_back(Widen(b.Param(i)));
        pool_.push_back(Widen(b.BuiltinId(Builtin::kGlobalId, 0)));
        pool_.push_back(Widen(b.BuiltinId(Builtin::kLocalId, 0)));
        for (int i = 0; i < 3; ++i) pool_.push_back(Const(Edge()));
        Exprs(4 + Rand(10));
        if (Rand(2)) Loop(static_cast<uint32_t>(m.params.size() - 1));
        for (int i = 0; i < 6; ++i) StoreOne(pool_[Rand(pool_.size())]);
        b.Ret();
        return m;
    }

  private:
    int Rand(size_t n) { return static_cast<int>(rng_() % n); }
    TypeId T(ScalarKind k) { return b_->Scalar(k); }
    ScalarKind KindOf(ValueId v) { return b_->module().type(b_->TypeOf(v)).scalar; }

    int64_t Edge() {
        static const int64_t e[] = {0, 1, -1, 3, 31, 32, 63, 255, 65535, (1ll << 31) - 1,
                                    -(1ll << 31), (1ll << 32) - 1, 1ll << 32, INT64_MAX, INT64_MIN};
        return Rand(3) ? e[Rand(sizeof(e) / sizeof(e[0]))] : Rand(200) - 100;
    }
    ValueId Const(int64_t v) {
        return b_->ConstInt(T(Rand(4) ? ScalarKind::kI64 : ScalarKind::kU64), v);
    }

    // An integer value as i64 or u64, as Numba widens operands.
    ValueId Widen(ValueId v) {
        ScalarKind k = KindOf(v);
        ScalarKind to = (k == ScalarKind::kU64 || (!IsSigned(k) && Rand(2))) ? ScalarKind::kU64
                                                                             : ScalarKind::kI64;
        return k == to ? v : b_->Convert(T(to), v);
    }
    ValueId As(ValueId v, ScalarKind k) { return KindOf(v) == k ? v : b_->Convert(T(k), v); }
    ValueId Pick() { return pool_[Rand(pool_.size())]; }

    ValueId Expr() {
        Builder& b = *b_;
        ValueId x = Pick(), y = As(Pick(), KindOf(x));
        ScalarKind k = KindOf(x);
        static const Op arith[] = {Op::kAdd, Op::kSub, Op::kMul, Op::kAnd, Op::kOr, Op::kXor};
        switch (Rand(12)) {
            case 0: case 1: case 2: return b.Binary(arith[Rand(6)], x, y);
            case 3: {  // a mask, to make small ranges
                static const int64_t masks[] = {1, 7, 63, 255, 65535, 0x7fffffff, 0xffffffff};
                return b.Binary(Op::kAnd, x, b.ConstInt(T(k), masks[Rand(7)]));
            }
            case 4: {  // division guarded against zero
                ValueId zero = b.ConstInt(T(k), 0), one = b.ConstInt(T(k), 1);
                ValueId d = b.Select(b.Compare(Op::kEq, y, zero), one, y);
                return b.Binary(Rand(2) ? Op::kDiv : Op::kRem, x, d);
            }
            case 5: {  // shift by a masked or constant count
                static const int64_t masks[] = {7, 15, 31, 63};
                ValueId c = Rand(2) ? b.Binary(Op::kAnd, y, b.ConstInt(T(k), masks[Rand(4)]))
                                    : b.ConstInt(T(k), Rand(64));
                return b.Binary(Rand(2) ? Op::kShl : Op::kShr, x, c);
            }
            case 6: return b.Unary(Rand(2) ? Op::kNeg : Op::kNot, x);
            case 7: {
                static const MathFn fns[] = {MathFn::kMin, MathFn::kMax, MathFn::kAbs};
                MathFn fn = fns[Rand(3)];
                if (fn == MathFn::kAbs) return b.Math(fn, {x});
                return b.Math(fn, {x, y});
            }
            case 8: {
                static const Op cmps[] = {Op::kLt, Op::kLe, Op::kGt, Op::kGe, Op::kEq, Op::kNe};
                ValueId c = b.Compare(cmps[Rand(6)], x, y);
                return Rand(2) ? b.Convert(T(k), c) : b.Select(c, x, As(Pick(), k));
            }
            case 9: {  // truncate and widen again, or switch signedness
                static const ScalarKind narrow[] = {ScalarKind::kI32, ScalarKind::kU32,
                                                    ScalarKind::kI16, ScalarKind::kU8};
                if (Rand(3) == 0)
                    return As(x, k == ScalarKind::kI64 ? ScalarKind::kU64 : ScalarKind::kI64);
                return Widen(b.Convert(T(narrow[Rand(4)]), x));
            }
            default: return b.Binary(Op::kAdd, x, b.ConstInt(T(k), Edge()));
        }
    }

    void Exprs(int n) {
        for (int i = 0; i < n; ++i) pool_.push_back(Expr());
    }

    void StoreOne(ValueId v) {
        Builder& b = *b_;
        int slot = next_slot_++ % 64;
        if (Rand(2)) {
            b.Store(b.ElemPtr(T(KindOf(v)), out_, b.ConstInt(T(ScalarKind::kI32), slot)), v);
        } else {  // observed only through truncation
            static const ScalarKind narrow[] = {ScalarKind::kI32, ScalarKind::kU32,
                                                ScalarKind::kI16, ScalarKind::kU8};
            ScalarKind k = narrow[Rand(4)];
            int index = slot * 8 / (BitWidth(k) / 8);
            b.Store(b.ElemPtr(T(k), out_, b.ConstInt(T(ScalarKind::kI32), index)),
                    b.Convert(T(k), v));
        }
    }

    // for k in range(stop): acc_j = f(acc_j, k, ...) as the front end lowers it
    // (iternext stores k < stop in a bool variable before the branch).
    void Loop(uint32_t extent_param) {
        Builder& b = *b_;
        TypeId i64 = T(ScalarKind::kI64), boolean = T(ScalarKind::kBool);
        ValueId cursor = b.Var(i64), valid = b.Var(boolean), item = b.Var(i64);
        ValueId x = Pick();
        ValueId stop = Rand(2) ? b.Binary(Op::kAnd, x, b.ConstInt(T(KindOf(x)), 15))
                               : b.Convert(i64, b.Param(extent_param));
        stop = As(stop, ScalarKind::kI64);
        std::vector<ValueId> accs;
        for (int i = 0; i < 1 + Rand(3); ++i) {
            ValueId v = Pick();
            ValueId acc = b.Var(b.TypeOf(v));
            b.Store(acc, v);
            accs.push_back(acc);
        }
        b.Store(cursor, b.ConstInt(i64, Rand(3) - 1));
        BlockId head = b.CreateBlock("head"), body = b.CreateBlock("body"),
                exit = b.CreateBlock("exit");
        b.Br(head);
        b.SetBlock(head);
        ValueId cur = b.Load(cursor);
        ValueId ok = b.Compare(Op::kLt, cur, stop);
        b.Store(cursor, b.Binary(Op::kAdd, cur, b.ConstInt(i64, 1 + Rand(2))));
        b.Store(item, cur);
        b.Store(valid, ok);
        b.CondBr(b.Load(valid), body, exit);
        b.SetBlock(body);
        std::vector<ValueId> saved = pool_;
        pool_.push_back(b.Load(item));
        for (ValueId acc : accs) pool_.push_back(b.Load(acc));
        Exprs(2 + Rand(5));
        for (ValueId acc : accs) {
            ValueId v = As(Pick(), KindOf(b.Load(acc)));
            b.Store(acc, v);
        }
        b.Br(head);
        b.SetBlock(exit);
        pool_ = saved;
        for (ValueId acc : accs) pool_.push_back(b.Load(acc));
        pool_.push_back(b.Load(cursor));
    }

    std::mt19937 rng_;
    Builder* b_ = nullptr;
    ValueId out_ = kNone;
    std::vector<ValueId> pool_;
    int next_slot_ = 0;
};

TEST(NarrowDifferential, RandomPrograms) {
    const char* n_env = std::getenv("NVK_FUZZ_SEEDS");
    const char* first_env = std::getenv("NVK_FUZZ_FIRST");
    uint32_t n = n_env ? static_cast<uint32_t>(std::atoi(n_env)) : 300;
    uint32_t first = first_env ? static_cast<uint32_t>(std::atoi(first_env)) : 1;
    size_t before = 0, after = 0;
    int compared = 0;
    for (uint32_t seed = first; seed < first + n; ++seed) {
        SCOPED_TRACE("seed " + std::to_string(seed));
        Module m = Generator(seed).Build();
        util::Status v = Verify(m);
        ASSERT_TRUE(v.ok()) << v.message();
        for (bool limits : {false, true}) {
            NarrowOptions o;
            if (limits) o.ranges = DeviceLimits();
            Module narrowed = Narrowed(m, o);
            if (::testing::Test::HasFailure()) return;
            compared += CompareRuns(m, narrowed, 60, seed, o.ranges);
            if (::testing::Test::HasFailure()) return;
            before += CountWideIntOps(m);
            after += CountWideIntOps(narrowed);
        }
    }
    EXPECT_GE(compared, static_cast<int>(n) * 2 * 60 / 2) << "too few runs finished";
    EXPECT_LT(after, before);  // the pass does narrow something in these programs
    std::printf("random programs: %u, runs compared: %d, 64-bit ops %zu -> %zu\n", n, compared,
                before, after);
}

}  // namespace
}  // namespace nvk::narrow::testing
