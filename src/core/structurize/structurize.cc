// Structurize: CFG form -> structured form.
//
// Two steps. BuildTree (tree.h) reads the CFG as nested statements, without
// copying any block: `block`, `loop`, `if`, code, `br`, `ret`. Lower (here)
// writes those statements back as blocks in SPIR-V's structured shape:
//
//   if c {T} else {E}       header: selection(merge m); condbr c, t, e
//                           t: T; br m     e: E; br m     m: ...
//   loop L {B}              cur: br h
//   block L {B}             h: loop(merge m, continue k); br b
//                           b: B; br m     k: br h     m: ...
//
// Both `block` and `loop` become SPIR-V loops (a `block` is a loop that never
// continues), so that `br L` to the innermost one is a plain break (to m) or
// continue (to k), which SPIR-V allows from inside any number of selections.
// A `block` whose body is just a `loop` shares that loop: its label breaks,
// the loop's continues; this is how Python's `break` comes out.
//
// A branch to a label further out than the innermost construct (rare: a
// `continue` from inside a short-circuit join, say) stores the label in an
// i32 variable and breaks; after the construct's merge, a dispatch compares
// the variable with the labels of the enclosing construct and breaks or
// continues that one, or breaks again. A return outside every construct is
// OpReturn where it stands; inside one, it is a branch to a label outside them
// all (kReturnLabel), dispatched the same way until the outermost construct's
// merge returns. So no loop is left other than through its merge block, as
// drivers expect: lavapipe's loop cap ends a loop at its merge, and it lost
// stores of invocations that left a loop towards a wrapping construct's merge,
// the shape SPIRV-Tools' merge-return gives (control-flow fuzz seed 1747).
//
// Blocks come out in the order they are started: a header before its arms,
// a loop body before its continue target and merge; dominators first.
#include "structurize/structurize.h"

#include <set>
#include <unordered_map>

#include "kir/builder.h"
#include "kir/dominators.h"
#include "structurize/tree.h"

namespace nvk::structurize {

using kir::BlockId;
using kir::kNone;
using kir::ValueId;

namespace {

// The label of the function's exit: no construct has it (labels are >= 0).
constexpr int kReturnLabel = -2;

class Lowerer {
  public:
    explicit Lowerer(kir::Module& m) : m_(m), in_(m.function) {}

    kir::Function Run(const Seq& tree) {
        out_.name = in_.name;
        out_.values = in_.values;
        next_id_ = in_.NextBlockId();
        // The entry keeps its id and name: its code comes first (BuildTree starts with it).
        cur_ = in_.entry().id;
        Start(cur_, in_.entry().name);
        EmitSeq(tree);
        if (!dead_) Terminate(kir::Op::kUnreachable);
        out_.structured = true;
        return std::move(out_);
    }

  private:
    struct Construct {
        int block_label = -1;  // breaks go to merge
        int loop_label = -1;   // continues go to cont
        BlockId merge = kNone, cont = kNone;
        std::set<int> pending;  // outer labels that branches left this construct for
    };

    BlockId NewId() { return next_id_++; }

    kir::Block& Out(BlockId id) { return out_.blocks[index_.at(id)]; }

    void Start(BlockId id, std::string name = "") {
        kir::Block b;
        b.id = id;
        b.name = std::move(name);
        index_[id] = out_.blocks.size();
        out_.blocks.push_back(std::move(b));
        cur_ = id;
        dead_ = false;
    }

    // Start a block that was branched to, or mark it unreachable when nothing did.
    void StartJoin(BlockId id) {
        Start(id);
        if (preds_[id] == 0) {
            Terminate(kir::Op::kUnreachable);
        }
    }

    void Append(kir::Inst inst) { Out(cur_).insts.push_back(std::move(inst)); }

    void Terminate(kir::Op op, BlockId t0 = kNone, BlockId t1 = kNone, ValueId cond = kNone) {
        kir::Inst t;
        t.op = op;
        t.targets[0] = t0;
        t.targets[1] = t1;
        if (cond != kNone) t.operands = {cond};
        if (t0 != kNone) ++preds_[t0];
        if (t1 != kNone) ++preds_[t1];
        Append(std::move(t));
        dead_ = true;
    }

    ValueId NewValue(kir::TypeId type) { return out_.NewValue(type, cur_); }

    ValueId Const(int64_t v) {
        kir::Inst c;
        c.op = kir::Op::kConst;
        c.type = m_.GetScalar(kir::ScalarKind::kI32);
        c.imm = static_cast<uint64_t>(v);
        c.result = NewValue(c.type);
        ValueId r = c.result;
        Append(std::move(c));
        return r;
    }

    // An entry-block variable (the jump selector, saved conditions).
    ValueId EntryVar(kir::ScalarKind k) {
        kir::Inst v;
        v.op = kir::Op::kVar;
        v.type = m_.GetPointer(kir::AddressSpace::kFunction, m_.GetScalar(k));
        v.result = out_.NewValue(v.type, out_.blocks.front().id);
        ValueId r = v.result;
        auto& insts = out_.blocks.front().insts;
        insts.insert(insts.begin(), std::move(v));
        return r;
    }

    void Store(ValueId ptr, ValueId value) {
        kir::Inst s;
        s.op = kir::Op::kStore;
        s.operands = {ptr, value};
        Append(std::move(s));
    }

    ValueId Load(ValueId ptr, kir::ScalarKind k) {
        kir::Inst l;
        l.op = kir::Op::kLoad;
        l.type = m_.GetScalar(k);
        l.operands = {ptr};
        l.result = NewValue(l.type);
        ValueId r = l.result;
        Append(std::move(l));
        return r;
    }

    ValueId Compare(kir::Op op, ValueId a, ValueId b) {
        kir::Inst c;
        c.op = op;
        c.type = m_.GetScalar(kir::ScalarKind::kBool);
        c.operands = {a, b};
        c.result = NewValue(c.type);
        ValueId r = c.result;
        Append(std::move(c));
        return r;
    }

    // tail: seq ends the body of the innermost construct (falling off it leaves it).
    void EmitSeq(const Seq& seq, bool tail = false) {
        for (size_t i = 0; i < seq.size(); ++i) {
            if (dead_) return;  // code after a branch never runs
            Emit(seq[i], tail && i + 1 == seq.size());
        }
    }

    void Emit(const Stmt& s, bool tail) {
        switch (s.kind) {
            case Stmt::Kind::kCode: return EmitCode(s.block);
            case Stmt::Kind::kIf: return EmitIf(s, tail);
            case Stmt::Kind::kBlock:
                if (s.body.size() == 1 && s.body[0].kind == Stmt::Kind::kLoop)
                    return EmitConstruct(s.label, s.body[0].label, s.body[0].body);
                return EmitConstruct(s.label, -1, s.body);
            case Stmt::Kind::kLoop: return EmitConstruct(-1, s.label, s.body);
            case Stmt::Kind::kBr: return EmitBr(s.label);
            case Stmt::Kind::kRet:
                if (ctx_.empty()) return Terminate(kir::Op::kRet);
                return EmitBr(kReturnLabel);
            case Stmt::Kind::kUnreachable: return Terminate(kir::Op::kUnreachable);
        }
    }

    // Move a CFG block's instructions (all but its terminator) to the current block.
    void EmitCode(BlockId id) {
        kir::Block* b = in_.FindBlock(id);
        for (size_t i = 0; i + 1 < b->insts.size(); ++i) {
            kir::Inst inst = b->insts[i];
            if (inst.result != kNone) out_.values[inst.result].block = cur_;
            Append(std::move(inst));
        }
        defined_in_[id] = cur_;
    }

    // An `if` that ends a construct's body: its arms that fall through leave the
    // construct themselves, not from the `if`'s merge block. lavapipe (Mesa 22) let
    // invocations that left a loop from a selection's merge, after another arm had
    // continued, run the loop's later iterations (control-flow fuzz seed 10301: the
    // `else` of a `for` loop stored into the invocations that had broken out).
    void EmitIf(const Stmt& s, bool tail) {
        ValueId cond = s.cond;
        if (defined_in_.at(s.block) != cur_ && out_.values[cond].block != out_.blocks.front().id) {
            // Constructs opened between the condition and its branch: carry it in a variable.
            ValueId var = EntryVar(kir::ScalarKind::kBool);
            kir::Block& def = Out(out_.values[cond].block);
            kir::Inst st;
            st.op = kir::Op::kStore;
            st.operands = {var, cond};
            def.insts.insert(def.insts.end() - 1, std::move(st));
            cond = Load(var, kir::ScalarKind::kBool);
        }
        BlockId t = NewId(), e = NewId(), merge = NewId();
        BlockId fall = tail && !ctx_.empty() ? ctx_.back().merge : merge;
        Out(cur_).merge = {kir::Merge::Kind::kSelection, merge, kNone};
        Terminate(kir::Op::kCondBr, t, e, cond);
        Start(t);
        EmitSeq(s.body, tail);
        if (!dead_) Terminate(kir::Op::kBr, fall);
        Start(e);
        EmitSeq(s.orelse, tail);
        if (!dead_) Terminate(kir::Op::kBr, fall);
        StartJoin(merge);
    }

    void EmitConstruct(int block_label, int loop_label, const Seq& body) {
        BlockId header = NewId(), entry = NewId(), cont = NewId(), merge = NewId();
        Terminate(kir::Op::kBr, header);
        Start(header);
        Out(header).merge = {kir::Merge::Kind::kLoop, merge, cont};
        Terminate(kir::Op::kBr, entry);
        ctx_.push_back({block_label, loop_label, merge, cont, {}});
        Start(entry);
        EmitSeq(body, true);
        if (!dead_) Terminate(kir::Op::kBr, merge);  // falling off a body leaves it
        Construct done = ctx_.back();
        ctx_.pop_back();
        Start(cont);
        Terminate(kir::Op::kBr, header);
        StartJoin(merge);
        if (!dead_ && !done.pending.empty()) EmitDispatch(done.pending);
    }

    void EmitBr(int label) {
        Construct& top = ctx_.back();
        if (top.block_label == label) return Terminate(kir::Op::kBr, top.merge);
        if (top.loop_label == label) return Terminate(kir::Op::kBr, top.cont);
        if (jump_ == kNone) {
            // Set to 0 on entry: the dispatches read it before any jump may have stored.
            jump_ = EntryVar(kir::ScalarKind::kI32);
            kir::Block& entry = out_.blocks.front();
            kir::Inst zero;
            zero.op = kir::Op::kConst;
            zero.type = m_.GetScalar(kir::ScalarKind::kI32);
            zero.result = out_.NewValue(zero.type, entry.id);
            kir::Inst init;
            init.op = kir::Op::kStore;
            init.operands = {jump_, zero.result};
            entry.insts.insert(entry.insts.begin() + 1, std::move(init));
            entry.insts.insert(entry.insts.begin() + 1, std::move(zero));
        }
        Store(jump_, Const(label + 1));
        top.pending.insert(label);
        Terminate(kir::Op::kBr, top.merge);
    }

    // After the merge of a construct that branches to outer labels left: hand
    // each such branch to the enclosing construct, which takes it or leaves too;
    // outside every construct, only a return can be left, and it returns.
    void EmitDispatch(const std::set<int>& pending) {
        ValueId v = Load(jump_, kir::ScalarKind::kI32);
        ValueId any = Compare(kir::Op::kNe, v, Const(0));
        BlockId handle = NewId(), after = NewId();
        Out(cur_).merge = {kir::Merge::Kind::kSelection, after, kNone};
        Terminate(kir::Op::kCondBr, handle, after, any);
        Start(handle);
        if (ctx_.empty()) {
            Terminate(kir::Op::kRet);
            return StartJoin(after);
        }
        Construct& outer = ctx_.back();
        std::vector<std::pair<int, BlockId>> cases;
        std::set<int> rest = pending;
        if (rest.erase(outer.block_label)) cases.push_back({outer.block_label, outer.merge});
        if (rest.erase(outer.loop_label)) cases.push_back({outer.loop_label, outer.cont});
        outer.pending.insert(rest.begin(), rest.end());
        EmitCases(cases, 0, !rest.empty());
        StartJoin(after);
    }

    // if v == label + 1 { clear the selector; branch to target } else { next case }
    void EmitCases(const std::vector<std::pair<int, BlockId>>& cases, size_t i, bool leave) {
        if (i == cases.size()) {
            if (leave) return Terminate(kir::Op::kBr, ctx_.back().merge);
            return Terminate(kir::Op::kUnreachable);
        }
        if (i + 1 == cases.size() && !leave) {  // the last possibility needs no test
            Store(jump_, Const(0));
            return Terminate(kir::Op::kBr, cases[i].second);
        }
        // Loaded again here: KIR values do not cross blocks.
        ValueId v = Load(jump_, kir::ScalarKind::kI32);
        ValueId hit = Compare(kir::Op::kEq, v, Const(cases[i].first + 1));
        BlockId yes = NewId(), no = NewId(), merge = NewId();
        Out(cur_).merge = {kir::Merge::Kind::kSelection, merge, kNone};
        Terminate(kir::Op::kCondBr, yes, no, hit);
        Start(yes);
        Store(jump_, Const(0));
        Terminate(kir::Op::kBr, cases[i].second);
        Start(no);
        EmitCases(cases, i + 1, leave);
        StartJoin(merge);  // unreachable: both arms leave
    }

    kir::Module& m_;
    kir::Function& in_;
    kir::Function out_;
    std::unordered_map<BlockId, size_t> index_;
    std::unordered_map<BlockId, int> preds_;
    std::unordered_map<BlockId, BlockId> defined_in_;
    std::vector<Construct> ctx_;
    BlockId cur_ = kNone;
    BlockId next_id_ = 0;
    bool dead_ = false;
    ValueId jump_ = kNone;
};

}  // namespace

util::Status Structurize(kir::Module& module) {
    kir::Function& f = module.function;
    if (f.structured) return util::Status::Ok();
    if (f.blocks.empty()) return util::InvalidArgument("structurize: the function has no blocks");
    for (const kir::Block& b : f.blocks) {
        if (b.insts.empty() || !kir::IsTerminator(b.insts.back().op))
            return util::InvalidArgument("structurize: block %b" + std::to_string(b.id) +
                                         " does not end in a terminator");
        for (BlockId s : b.Successors())
            if (f.FindBlock(s) == nullptr)
                return util::InvalidArgument("structurize: branch to a missing block");
    }
    NVK_ASSIGN_OR_RETURN(Seq tree, BuildTree(f));
    Simplify(tree);
    Lowerer lowerer(module);
    module.function = lowerer.Run(tree);
    return util::Status::Ok();
}

}  // namespace nvk::structurize
