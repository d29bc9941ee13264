// Emitter tests for issue 8's ops: shared and local arrays, atomics, barriers and
// the dynamic shared array's specialization constant. Every module is validated,
// optimised and validated again (EmitChecked); the KIR text round-trips through
// the printer and the parser.
#include <gtest/gtest.h>

#include "kir/builder.h"
#include "kir/parser.h"
#include "kir/printer.h"
#include "kir/verifier.h"
#include "spirv/emit.h"
#include "spirv/emit_test_util.h"
#include "structurize/structurize.h"

namespace nvk::spirv {
namespace {

using kir::AddressSpace;
using kir::AtomicOp;
using kir::BarrierKind;
using kir::ScalarKind;
using testing::EmitChecked;

kir::Module SyncKernel(ScalarKind k, bool dynamic) {
    kir::Module m;
    kir::Builder b(m);
    uint32_t p_out = m.AddParam("out", ScalarKind::kU64);
    b.CreateBlock("entry");
    kir::ValueId out = b.Param(p_out);
    kir::TypeId t = b.Scalar(k), u32 = b.Scalar(ScalarKind::kU32);
    kir::ValueId shared = b.ArrayVar(AddressSpace::kWorkgroup, t, dynamic ? 0 : 64);
    kir::ValueId local = b.ArrayVar(AddressSpace::kFunction, t, 8);
    kir::ValueId lid = b.BuiltinId(kir::Builtin::kLocalId, 0);
    kir::ValueId one = kir::IsFloat(k) ? b.ConstFloat(t, 1.0) : b.ConstInt(t, 1);
    b.Store(b.IndexPtr(local, b.ConstInt(u32, 3)), one);
    b.Store(b.IndexPtr(shared, lid), b.Load(b.IndexPtr(local, b.ConstInt(u32, 3))));
    b.Barrier(BarrierKind::kWorkgroup);
    kir::ValueId gptr = b.ElemPtr(t, out, lid);
    kir::ValueId sum = b.Atomic(AtomicOp::kAdd, {b.IndexPtr(shared, b.ConstInt(u32, 0)), one});
    b.Atomic(AtomicOp::kAdd, {gptr, sum});
    if (!kir::IsFloat(k)) {
        for (AtomicOp op : {AtomicOp::kSub, AtomicOp::kMin, AtomicOp::kMax, AtomicOp::kAnd,
                            AtomicOp::kOr, AtomicOp::kXor, AtomicOp::kExch})
            b.Atomic(op, {gptr, one});
        b.Atomic(AtomicOp::kCas, {b.IndexPtr(shared, lid), one, sum});
    }
    b.Barrier(BarrierKind::kFenceWorkgroup);
    b.Barrier(BarrierKind::kFenceDevice);
    b.Barrier(BarrierKind::kSubgroup);
    b.Ret();
    return m;
}

class SyncOps : public ::testing::TestWithParam<ScalarKind> {};

TEST_P(SyncOps, ValidAndRoundTrips) {
    for (bool dynamic : {false, true}) {
        kir::Module m = SyncKernel(GetParam(), dynamic);
        ASSERT_TRUE(kir::Verify(m).ok()) << kir::Verify(m).message();
        std::string text = kir::Print(m);
        auto parsed = kir::Parse(text);
        ASSERT_TRUE(parsed.ok()) << parsed.status().message() << "\n" << text;
        EXPECT_EQ(kir::Print(*parsed), text);
        testing::Emitted e = EmitChecked(std::move(m));
        EXPECT_NE(e.text.find("OpControlBarrier"), std::string::npos);
        EXPECT_NE(e.text.find("OpMemoryBarrier"), std::string::npos);
        EXPECT_NE(e.text.find("OpControlBarrier %uint_3 %uint_3"), std::string::npos);  // Subgroup
        EXPECT_NE(e.text.find("Workgroup"), std::string::npos);
        EXPECT_EQ(e.text.find("SpecId 3") != std::string::npos, dynamic) << e.text;
        bool is_float = kir::IsFloat(GetParam());
        EXPECT_EQ(e.text.find("OpAtomicFAddEXT") != std::string::npos, is_float);
        EXPECT_EQ(e.text.find("OpAtomicCompareExchange") != std::string::npos, !is_float);
        EXPECT_EQ(e.text.find("Int64Atomics") != std::string::npos,
                  !is_float && kir::BitWidth(GetParam()) == 64);
    }
}

INSTANTIATE_TEST_SUITE_P(Kinds, SyncOps,
                         ::testing::Values(ScalarKind::kI32, ScalarKind::kU32, ScalarKind::kI64,
                                           ScalarKind::kU64, ScalarKind::kF32, ScalarKind::kF64));

TEST(SyncVerifier, RejectsMisuse) {
    kir::Module m;
    kir::Builder b(m);
    b.CreateBlock("entry");
    kir::TypeId i8 = b.Scalar(ScalarKind::kI8), u32 = b.Scalar(ScalarKind::kU32);
    kir::ValueId local = b.ArrayVar(AddressSpace::kFunction, u32, 4);
    kir::ValueId shared8 = b.ArrayVar(AddressSpace::kWorkgroup, i8, 4);
    b.Atomic(AtomicOp::kAdd, {b.IndexPtr(local, b.ConstInt(u32, 0)), b.ConstInt(u32, 1)});
    b.Ret();
    EXPECT_NE(kir::Verify(m).message().find("global or workgroup"), std::string::npos);
    (void)shared8;
}

}  // namespace
}  // namespace nvk::spirv

namespace nvk::spirv {
namespace {

// syncthreads orders global memory only where a global write can come before
// it (sync.cc): a store before the barrier, or after it in a loop back to it.
constexpr const char* kBarrierKernel = R"(param out.addr : u64 @0
func main {
%b0 entry:
  %0 = param 0 : u64
  %1 = builtin local_id 0 : u32
  %2 = var : ptr<function, u32>
  br %b1
%b1 body:
  %3 = const 7 : u32
  %4 = elemptr %0, %1 : ptr<global, u32>
  %BEFORE
  barrier workgroup
  %AFTER
  %5 = load %2 : u32
  %6 = const 1 : u32
  %7 = add %5, %6 : u32
  store %2, %7
  %8 = lt %7, %3 : bool
  condbr %8, %LOOP, %b2
%b2 exit:
  %9 = elemptr %0, %1 : ptr<global, u32>
  store %9, %3
  ret
}
)";

std::string BarrierLine(const char* before, const char* after, const char* loop) {
    std::string text = kBarrierKernel;
    for (auto [key, value] : {std::pair{"%BEFORE", before}, {"%AFTER", after}, {"%LOOP", loop}})
        text.replace(text.find(key), std::string(key).size(), value);
    auto parsed = kir::Parse(text);
    EXPECT_TRUE(parsed.ok()) << parsed.status().message() << "\n" << text;
    util::Status structured = structurize::Structurize(*parsed);
    EXPECT_TRUE(structured.ok()) << structured.message();
    testing::Emitted e = EmitChecked(std::move(*parsed));
    size_t at = e.text.find("OpControlBarrier");
    return e.text.substr(at, e.text.find('\n', at) - at);
}

TEST(BarrierSemantics, GlobalMemoryOnlyWhereAGlobalWriteCanPrecedeIt) {
    const char* workgroup_only = "OpControlBarrier %uint_2 %uint_2 %uint_264";
    const char* with_global = "OpControlBarrier %uint_2 %uint_2 %uint_328";
    EXPECT_EQ(BarrierLine("", "", "%b2"), workgroup_only);  // the write is after the last barrier
    EXPECT_EQ(BarrierLine("store %4, %3", "", "%b2"), with_global);
    EXPECT_EQ(BarrierLine("", "store %4, %3", "%b2"), workgroup_only);
    EXPECT_EQ(BarrierLine("", "store %4, %3", "%b1"), with_global);  // looped back to it
    EXPECT_EQ(BarrierLine("", "", "%b1"), workgroup_only);
    EXPECT_EQ(BarrierLine("%10 = atomic add %4, %3 : u32", "", "%b2"), with_global);
}

}  // namespace
}  // namespace nvk::spirv
