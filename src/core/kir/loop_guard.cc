#include "kir/loop_guard.h"

#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "kir/abi.h"
#include "kir/builder.h"
#include "kir/dominators.h"

namespace nvk::kir {

namespace {

using K = ScalarKind;

using Loops = std::unordered_map<BlockId, std::unordered_set<BlockId>>;

// The balance's change on the edge from -> to: loops entered minus loops left.
int64_t EdgeDelta(const Loops& loops, BlockId from, BlockId to) {
    int64_t d = 0;
    for (const auto& [header, body] : loops) {
        const bool in_from = body.count(from) != 0, in_to = body.count(to) != 0;
        if (to == header && !in_from) ++d;
        if (in_from && !in_to) --d;
    }
    return d;
}

// Removes the terminator of `block` and returns it, so that code can be appended before it.
Inst TakeTerminator(Function& f, BlockId block) {
    Block* b = f.FindBlock(block);
    Inst t = std::move(b->insts.back());
    b->insts.pop_back();
    return t;
}

void PutTerminator(Function& f, BlockId block, Inst t) { f.FindBlock(block)->insts.push_back(std::move(t)); }

// Whether `loops` are exactly the loops named in `bounded` (by their headers' names).
bool AllBounded(const Function& f, const Loops& loops, const std::vector<std::string>& bounded) {
    if (loops.size() != bounded.size()) return false;
    const std::unordered_set<std::string> names(bounded.begin(), bounded.end());
    if (names.size() != bounded.size()) return false;
    for (const auto& [header, body] : loops) {
        const Block* block = f.FindBlock(header);
        if (block == nullptr || names.count(block->name) == 0) return false;
    }
    return true;
}

uint32_t StatusParam(Module& m, const std::string& name) {
    for (const ArgDecl& a : m.args)
        if (a.kind == ArgKind::kHidden && a.name == name) return a.param;
    return AddHiddenParam(m, name, K::kU64);
}

}  // namespace

size_t GuardLoops(Module& m, const LoopGuardOptions& options) {
    Function& f = m.function;
    const Loops loops = NaturalLoops(f, Dominators(f));
    if (loops.empty() || AllBounded(f, loops, options.bounded_headers)) return 0;

    Builder b(m);
    const TypeId i32 = b.Scalar(K::kI32), u32 = b.Scalar(K::kU32);
    const BlockId entry = f.entry().id;
    const std::vector<BlockId> reachable = ReversePostOrder(f);
    std::vector<BlockId> returns;
    for (BlockId id : reachable)
        if (f.FindBlock(id)->terminator().op == Op::kRet) returns.push_back(id);

    // The entry: the balance starts at 0; invocation (0, 0, 0) of the workgroup counts the
    // workgroup as started and names the kernel, in a block of its own before the entry's
    // own branch (stores before a cut are kept).
    Inst entry_branch = TakeTerminator(f, entry);
    b.SetBlock(entry);
    const ValueId status = b.Param(StatusParam(m, options.status_param));
    const ValueId balance = b.Var(i32);
    ValueId first = kNone, local_count = kNone;
    for (uint32_t axis = 0; axis < 3; ++axis) {
        const ValueId zero = b.Compare(Op::kEq, b.BuiltinId(Builtin::kLocalId, axis), b.ConstInt(u32, 0));
        const ValueId size = b.BuiltinId(Builtin::kLocalSize, axis);
        first = first == kNone ? zero : b.Binary(Op::kAnd, first, zero);
        local_count = local_count == kNone ? size : b.Binary(Op::kMul, local_count, size);
    }
    b.Store(balance, b.ConstInt(i32, 0));
    const BlockId start = b.CreateBlock("loop_guard.start");
    const BlockId body = b.CreateBlock("loop_guard.body");
    b.CondBr(first, start, body);
    b.SetBlock(start);
    b.Atomic(AtomicOp::kAdd, {b.ElemPtr(u32, status, b.ConstInt(i32, kLoopStartedWord)), local_count});
    b.Store(b.ElemPtr(u32, status, b.ConstInt(i32, kLoopKernelWord)), b.ConstBits(u32, options.kernel_key));
    b.Br(body);
    PutTerminator(f, body, std::move(entry_branch));

    // Each edge that enters or leaves loops moves the balance, in the block it leaves.
    std::vector<BlockId> edges = reachable;
    edges[0] = body;  // the entry's branch is body's now
    for (BlockId id : edges) {
        const Inst& t = f.FindBlock(id)->terminator();
        const BlockId from = id == body ? entry : id;
        if (t.op != Op::kBr && t.op != Op::kCondBr) continue;
        const int64_t taken = EdgeDelta(loops, from, t.targets[0]);
        const int64_t other = t.op == Op::kCondBr ? EdgeDelta(loops, from, t.targets[1]) : taken;
        if (taken == 0 && other == 0) continue;
        Inst term = TakeTerminator(f, id);
        b.SetBlock(id);
        const ValueId delta = taken == other ? b.ConstInt(i32, taken)
                                             : b.Select(term.operands.at(0), b.ConstInt(i32, taken),
                                                        b.ConstInt(i32, other));
        b.Store(balance, b.Binary(Op::kAdd, b.Load(balance), delta));
        PutTerminator(f, id, std::move(term));
    }

    // One exit, where the invocations whose balance is 0 count as finished: one atomic per
    // subgroup, or per invocation.
    const BlockId exit = b.CreateBlock("loop_guard.exit");
    for (BlockId id : returns) {
        Inst& t = f.FindBlock(id)->terminator();
        t.op = Op::kBr;
        t.targets[0] = exit;
    }
    const BlockId count = b.CreateBlock("loop_guard.count");
    const BlockId done = b.CreateBlock("loop_guard.done");
    const ValueId counted = b.Var(u32);
    b.SetBlock(exit);
    const ValueId ok = b.Compare(Op::kEq, b.Load(balance), b.ConstInt(i32, 0));
    if (options.subgroup_ballot) {
        b.Store(counted, b.Subgroup(SubgroupOp::kBallotCount, u32, {ok}));
        b.CondBr(b.Subgroup(SubgroupOp::kElect, b.Scalar(K::kBool), {}), count, done);
    } else {
        b.Store(counted, b.ConstInt(u32, 1));
        b.CondBr(ok, count, done);
    }
    b.SetBlock(count);
    b.Atomic(AtomicOp::kAdd, {b.ElemPtr(u32, status, b.ConstInt(i32, kLoopFinishedWord)), b.Load(counted)});
    b.Br(done);
    b.SetBlock(done);
    b.Ret();
    return loops.size();
}

}  // namespace nvk::kir
