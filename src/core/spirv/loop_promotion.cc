#include "spirv/loop_promotion.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>
#include <utility>

#include "spirv/function_blocks.h"
#include "spirv/value_facts.h"

namespace nvk::spirv {
namespace {

constexpr uint32_t kAlignedOperand = static_cast<uint32_t>(spv::MemoryAccessMask::Aligned);
constexpr size_t kMaxGroups = 8;

// A load or store through a pointer made from a device address (OpConvertUToPtr).
struct Access {
    size_t block = 0, inst = 0;
    bool store = false;
    uint32_t type = 0;     // the value's type
    uint32_t bytes = 0;    // its size
    uint32_t align = 0;    // its Aligned operand (0: none)
    uint32_t address = 0;  // the u64 value converted to the pointer
    AddressKey key;
    bool plain = false;  // no memory operand but Aligned
    int group = -1;      // the promoted element it reads or writes
};

// A promoted element: its accesses' address and type, and the function variables that
// hold it while its loop runs.
struct Group {
    AddressKey key;
    uint32_t type = 0, bytes = 0, align = 0;
    uint32_t value = 0, valid = 0, dirty = 0, address = 0;  // variables
};

struct Loop {
    size_t header = 0;
    uint32_t merge = 0;       // the OpLoopMerge's merge block
    std::set<size_t> blocks;  // the loop construct's blocks, the header's included
    std::vector<size_t> groups;
};

// Instructions that reach memory other than by a plain OpLoad or OpStore, or order other
// invocations' accesses, or leave the function: a loop with one is left alone.
bool Opaque(spv::Op op) {
    switch (op) {
        case spv::Op::OpCooperativeMatrixStoreKHR: case spv::Op::OpCooperativeMatrixStoreNV:
        case spv::Op::OpCooperativeMatrixLoadKHR: case spv::Op::OpCooperativeMatrixLoadNV:
        case spv::Op::OpImageWrite: case spv::Op::OpImageRead: case spv::Op::OpReturn:
        case spv::Op::OpReturnValue: case spv::Op::OpKill: case spv::Op::OpTerminateInvocation:
            return true;
        default:
            return IsBarrierLike(op);
    }
}

class Promoter {
  public:
    explicit Promoter(FunctionBlocks f) : f_(std::move(f)), values_(f_) {}

    size_t Run(Words* out) {
        u64_ = values_.u64();
        bool_ = values_.bool_type();
        if (!u64_) return 0;
        ReadFunction();
        FindLoops();
        for (size_t l = 0; l < loops_.size(); ++l) ChooseGroups(l);
        if (groups_.empty()) return 0;
        Rewrite();
        *out = f_.Write();
        return groups_.size();
    }

  private:
    // ---- reading

    // The accesses through device addresses; the blocks with anything a loop cannot keep an
    // element across (Opaque, or an access of device memory of unknown address).
    void ReadFunction() {
        for (size_t b = 0; b < f_.blocks.size(); ++b) {
            const std::vector<Inst>& insts = f_.blocks[b].insts;
            for (size_t k = 0; k < insts.size(); ++k) {
                const Inst& i = insts[k];
                if (Opaque(i.op)) opaque_.insert(b);
                if (i.op != spv::Op::OpLoad && i.op != spv::Op::OpStore) continue;
                const bool store = i.op == spv::Op::OpStore;
                const uint32_t pointer = store ? i.words[1] : i.words[3];
                const uint32_t address = values_.AddressOf(pointer);
                const uint32_t type = store ? values_.TypeOf(i.words[2]) : i.words[1];
                const uint32_t bytes = values_.Bytes(type);
                if (!address || !bytes) {
                    if (values_.PointsToDeviceMemory(pointer)) opaque_.insert(b);
                    continue;
                }
                Access a;
                a.block = b, a.inst = k, a.store = store, a.type = type, a.bytes = bytes;
                a.address = address;
                a.key = values_.Key(address);
                const size_t operands = store ? 3 : 4;  // words before the memory operands
                a.plain = i.words.size() == operands ||
                          (i.words.size() == operands + 2 && i.words[operands] == kAlignedOperand);
                if (i.words.size() == operands + 2 && i.words[operands] == kAlignedOperand)
                    a.align = i.words[operands + 1];
                at_[{b, k}] = accesses_.size();
                accesses_.push_back(std::move(a));
            }
        }
    }

    static bool HasLoopMerge(const Block& b) {
        return b.insts.size() >= 2 && b.insts[b.insts.size() - 2].op == spv::Op::OpLoopMerge;
    }

    // Loops, outermost first, each with the blocks of its construct: those the header
    // reaches without passing its merge block (structured SPIR-V leaves a loop only through
    // its merge, or by a return or a kill, which Opaque marks).
    void FindLoops() {
        for (size_t h = 0; h < f_.blocks.size(); ++h) {
            const Block& header = f_.blocks[h];
            if (!HasLoopMerge(header)) continue;
            Loop loop;
            loop.header = h;
            loop.merge = header.insts[header.insts.size() - 2].words[1];
            std::vector<size_t> work{h};
            while (!work.empty()) {
                size_t b = work.back();
                work.pop_back();
                if (!loop.blocks.insert(b).second) continue;
                for (uint32_t s : Successors(f_.blocks[b])) {
                    if (s != loop.merge) work.push_back(f_.index.at(s));
                }
            }
            loops_.push_back(std::move(loop));
        }
        std::stable_sort(loops_.begin(), loops_.end(), [](const Loop& a, const Loop& b) {
            return a.blocks.size() > b.blocks.size();
        });
    }

    // The elements loop l can keep in registers, if it can keep any: the loop holds nothing
    // opaque, its merge block is entered, only from the loop, and is no loop header; no
    // enclosing loop keeps elements already.
    void ChooseGroups(size_t l) {
        Loop& loop = loops_[l];
        for (size_t b : loop.blocks) {
            if (opaque_.count(b) || promoted_.count(b)) return;
        }
        auto merge = f_.index.find(loop.merge);
        if (merge == f_.index.end() || HasLoopMerge(f_.blocks[merge->second]) ||
            f_.preds[loop.merge].empty())
            return;
        for (uint32_t p : f_.preds[loop.merge]) {
            if (!loop.blocks.count(f_.index.at(p))) return;
        }
        // Groups of plain accesses at invariant addresses, in block order.
        std::map<std::pair<AddressKey, uint32_t>, std::vector<size_t>> found;
        std::unordered_map<uint32_t, bool> invariant;  // of this loop's values
        std::vector<std::pair<AddressKey, uint32_t>> order;
        for (size_t i = 0; i < accesses_.size(); ++i) {
            const Access& a = accesses_[i];
            if (!a.plain || !loop.blocks.count(a.block)) continue;
            // The address itself, not its key's terms: a term's number may be a value
            // computed outside the loop from a value the loop changes.
            if (!values_.Invariant(a.address, loop.blocks, &invariant)) continue;
            auto& list = found[{a.key, a.type}];
            if (list.empty()) order.push_back({a.key, a.type});
            list.push_back(i);
        }
        std::vector<size_t> kept;
        for (const auto& k : order) {
            const std::vector<size_t>& list = found[k];
            bool loads = false, stores = false, splittable = true;
            uint32_t align = 0;
            for (size_t i : list) {
                const Access& a = accesses_[i];
                (a.store ? stores : loads) = true;
                if (!a.store && HasLoopMerge(f_.blocks[a.block])) splittable = false;
                align = std::max(align, a.align);
            }
            if (!loads || !stores || !splittable || kept.size() == kMaxGroups) continue;
            Group g{k.first, k.second, accesses_[list.front()].bytes, align};
            bool apart = true;
            for (size_t other : kept) {
                const Group& o = groups_[other];
                apart = apart && Apart(o.key, o.bytes, g.key, g.bytes);
            }
            if (!apart) continue;
            for (size_t i : list) accesses_[i].group = static_cast<int>(groups_.size());
            kept.push_back(groups_.size());
            groups_.push_back(std::move(g));
        }
        if (kept.empty()) return;
        // The other accesses compared with an element at run time: each costs about as much
        // as an access the element saves, so the loop keeps its elements only where they
        // save at least as many; and each splits its block, which a loop header's cannot be.
        size_t saved = 0, compared = 0;
        bool split_header = false;
        for (const Access& a : accesses_) {
            if (!loop.blocks.count(a.block)) continue;
            if (a.group >= 0) {
                ++saved;
                continue;
            }
            for (size_t gi : kept) {
                if (Apart(groups_[gi].key, groups_[gi].bytes, a.key, a.bytes)) continue;
                ++compared;
                split_header = split_header || HasLoopMerge(f_.blocks[a.block]);
            }
        }
        if (split_header || compared > saved) {
            for (Access& undo : accesses_) {
                if (undo.group >= static_cast<int>(kept.front())) undo.group = -1;
            }
            groups_.resize(kept.front());
            return;
        }
        loop.groups = std::move(kept);
        for (size_t b : loop.blocks) promoted_.insert(b);
    }

    // ---- rewriting

    uint32_t FindOrAdd(spv::Op op, std::vector<uint32_t> operands_after_result,
                       uint32_t type = 0) {
        const size_t first = type ? 3 : 2;
        for (const Inst& i : f_.head) {
            if (i.op != op || (type && i.words[1] != type)) continue;
            if (i.words.size() != first + operands_after_result.size()) continue;
            if (std::equal(operands_after_result.begin(), operands_after_result.end(),
                           i.words.begin() + static_cast<std::ptrdiff_t>(first)))
                return i.words[first - 1];
        }
        const uint32_t id = f_.NewId();
        Inst inst{op, {0}};
        if (type) inst.words.push_back(type);
        inst.words.push_back(id);
        inst.words.insert(inst.words.end(), operands_after_result.begin(), operands_after_result.end());
        inst.words[0] = static_cast<uint32_t>(inst.words.size() << 16) | static_cast<uint32_t>(op);
        f_.head.push_back(std::move(inst));
        return id;
    }

    uint32_t PointerType(spv::StorageClass storage, uint32_t type) {
        return FindOrAdd(spv::Op::OpTypePointer, {static_cast<uint32_t>(storage), type});
    }

    uint32_t ConstU64(uint64_t v) {
        return FindOrAdd(spv::Op::OpConstant,
                         {static_cast<uint32_t>(v), static_cast<uint32_t>(v >> 32)}, u64_);
    }

    // Appends `op` with a new result id of `type` to the current block; returns the id.
    uint32_t Emit(spv::Op op, uint32_t type, std::initializer_list<uint32_t> operands) {
        const uint32_t id = f_.NewId();
        Inst i{op, {0, type, id}};
        i.words.insert(i.words.end(), operands);
        i.words[0] = static_cast<uint32_t>(i.words.size() << 16) | static_cast<uint32_t>(op);
        cur_.insts.push_back(std::move(i));
        return id;
    }

    void Put(Inst inst) { cur_.insts.push_back(std::move(inst)); }
    void Store(uint32_t var, uint32_t value) { Put(MakeInst(spv::Op::OpStore, {var, value})); }

    // Ends the current block with a selection on `cond`: `body` runs in a block of its own
    // when cond is `when`; the current block goes on in the selection's merge. Returns the
    // label the current block had.
    template <typename Body>
    uint32_t If(uint32_t cond, bool when, Body body) {
        const uint32_t then_label = f_.NewId(), join = f_.NewId();
        Put(MakeInst(spv::Op::OpSelectionMerge,
                     {join, static_cast<uint32_t>(spv::SelectionControlMask::MaskNone)}));
        Put(MakeInst(spv::Op::OpBranchConditional,
                     when ? std::initializer_list<uint32_t>{cond, then_label, join}
                          : std::initializer_list<uint32_t>{cond, join, then_label}));
        const uint32_t from = cur_.label;
        blocks_.push_back(std::move(cur_));
        cur_ = Block{then_label, {}};
        body();
        Put(MakeInst(spv::Op::OpBranch, {join}));
        blocks_.push_back(std::move(cur_));
        cur_ = Block{join, {}};
        return from;
    }

    // Stores group g's value to its address (the caller knows it dirty).
    void WriteBack(const Group& g) {
        const uint32_t address = Emit(spv::Op::OpLoad, u64_, {g.address});
        const uint32_t pointer = Emit(spv::Op::OpConvertUToPtr,
                                      PointerType(spv::StorageClass::PhysicalStorageBuffer, g.type),
                                      {address});
        const uint32_t value = Emit(spv::Op::OpLoad, g.type, {g.value});
        if (g.align)
            Put(MakeInst(spv::Op::OpStore, {pointer, value, kAlignedOperand, g.align}));
        else
            Put(MakeInst(spv::Op::OpStore, {pointer, value}));
    }

    // Before another access of `bytes` at `address`: a dirty element it overlaps is written
    // back; returns the overlap (a bool id), or 0 where the keys say it never overlaps.
    uint32_t BeforeOther(const Group& g, uint32_t address, const AddressKey& key, uint32_t bytes) {
        if (Apart(g.key, g.bytes, key, bytes)) return 0;
        const uint32_t held = Emit(spv::Op::OpLoad, u64_, {g.address});
        const uint32_t dirty = Emit(spv::Op::OpLoad, bool_, {g.dirty});
        const uint32_t end = Emit(spv::Op::OpIAdd, u64_, {address, ConstU64(bytes)});
        const uint32_t held_end = Emit(spv::Op::OpIAdd, u64_, {held, ConstU64(g.bytes)});
        const uint32_t starts_before = Emit(spv::Op::OpULessThan, bool_, {held, end});
        const uint32_t ends_after = Emit(spv::Op::OpULessThan, bool_, {address, held_end});
        const uint32_t overlap = Emit(spv::Op::OpLogicalAnd, bool_, {starts_before, ends_after});
        const uint32_t write = Emit(spv::Op::OpLogicalAnd, bool_, {dirty, overlap});
        If(write, true, [&] { WriteBack(g); });
        const uint32_t apart = Emit(spv::Op::OpLogicalNot, bool_, {overlap});
        Store(g.dirty, Emit(spv::Op::OpLogicalAnd, bool_, {Emit(spv::Op::OpLoad, bool_, {g.dirty}), apart}));
        return overlap;
    }

    void Rewrite() {
        if (!bool_) bool_ = FindOrAdd(spv::Op::OpTypeBool, {});
        const uint32_t true_ = FindOrAdd(spv::Op::OpConstantTrue, {}, bool_);
        const uint32_t false_ = FindOrAdd(spv::Op::OpConstantFalse, {}, bool_);
        std::vector<Inst> variables;
        auto var = [&](uint32_t type) {
            const uint32_t id = f_.NewId();
            variables.push_back(MakeInst(spv::Op::OpVariable,
                                         {PointerType(spv::StorageClass::Function, type), id,
                                          static_cast<uint32_t>(spv::StorageClass::Function)}));
            return id;
        };
        for (Group& g : groups_) {
            g.value = var(g.type);
            g.valid = var(bool_);
            g.dirty = var(bool_);
            g.address = var(u64_);
        }
        // Which loop keeps elements in each block; whose merge each block is.
        std::unordered_map<size_t, size_t> loop_of;
        std::unordered_map<uint32_t, size_t> merge_of;
        for (size_t l = 0; l < loops_.size(); ++l) {
            if (loops_[l].groups.empty()) continue;
            for (size_t b : loops_[l].blocks) loop_of[b] = l;
            merge_of[loops_[l].merge] = l;
        }
        std::unordered_map<uint32_t, uint32_t> last_piece;  // label -> its last block's label
        for (size_t b = 0; b < f_.blocks.size(); ++b) {
            std::vector<Inst>& insts = f_.blocks[b].insts;
            cur_ = Block{f_.blocks[b].label, {}};
            size_t k = 0;
            while (k < insts.size() && insts[k].op == spv::Op::OpPhi) Put(std::move(insts[k++]));
            // A loop's merge: its dirty elements are written back.
            if (auto m = merge_of.find(cur_.label); m != merge_of.end()) {
                for (size_t gi : loops_[m->second].groups) {
                    const Group& g = groups_[gi];
                    If(Emit(spv::Op::OpLoad, bool_, {g.dirty}), true, [&] { WriteBack(g); });
                }
            }
            auto in_loop = loop_of.find(b);
            for (; k < insts.size(); ++k) {
                Inst& inst = insts[k];
                auto found = at_.find({b, k});
                if (in_loop == loop_of.end() || found == at_.end()) {
                    // The entries of a loop that keeps elements: they start empty.
                    if (k + 1 == insts.size()) EnterLoops(b, false_);
                    Put(std::move(inst));
                    continue;
                }
                const Access& a = accesses_[found->second];
                if (a.group >= 0) {
                    const Group& g = groups_[a.group];
                    if (a.store) {
                        Store(g.value, inst.words[2]);
                    } else {
                        const uint32_t result = inst.words[2];
                        const uint32_t valid = Emit(spv::Op::OpLoad, bool_, {g.valid});
                        const uint32_t held = Emit(spv::Op::OpLoad, g.type, {g.value});
                        const uint32_t loaded = f_.NewId();
                        inst.words[2] = loaded;
                        uint32_t miss = 0;
                        const uint32_t from = If(valid, false, [&] {
                            miss = cur_.label;
                            Put(std::move(inst));
                        });
                        Put(MakeInst(spv::Op::OpPhi, {g.type, result, held, from, loaded, miss}));
                        Store(g.value, result);
                    }
                    Store(g.valid, true_);
                    if (a.store) Store(g.dirty, true_);
                    Store(g.address, a.address);
                    continue;
                }
                // Another access: the loop's elements it may overlap are written back first;
                // after a store, those it overlaps are dropped.
                std::vector<std::pair<size_t, uint32_t>> overlaps;
                for (size_t gi : loops_[in_loop->second].groups) {
                    uint32_t o = BeforeOther(groups_[gi], a.address, a.key, a.bytes);
                    if (o) overlaps.push_back({gi, o});
                }
                Put(std::move(inst));
                if (!a.store) continue;
                for (auto [gi, o] : overlaps) {
                    const Group& g = groups_[gi];
                    const uint32_t apart = Emit(spv::Op::OpLogicalNot, bool_, {o});
                    Store(g.valid, Emit(spv::Op::OpLogicalAnd, bool_,
                                        {Emit(spv::Op::OpLoad, bool_, {g.valid}), apart}));
                }
            }
            if (cur_.label != f_.blocks[b].label) last_piece[f_.blocks[b].label] = cur_.label;
            blocks_.push_back(std::move(cur_));
        }
        // The edges that left a split block leave its last piece: the phis of its successors
        // name that piece (those of the pieces themselves name their own predecessors).
        std::unordered_map<uint32_t, size_t> index;
        for (size_t b = 0; b < blocks_.size(); ++b) index[blocks_[b].label] = b;
        for (const auto& [label, last] : last_piece) {
            for (uint32_t s : Successors(blocks_[index.at(last)])) {
                for (Inst& i : blocks_[index.at(s)].insts) {
                    if (i.op != spv::Op::OpPhi) break;
                    for (size_t k = 4; k < i.words.size(); k += 2) {
                        if (i.words[k] == label) i.words[k] = last;
                    }
                }
            }
        }
        std::vector<Inst>& entry = blocks_.front().insts;
        entry.insert(entry.begin(), std::make_move_iterator(variables.begin()),
                     std::make_move_iterator(variables.end()));
        f_.blocks = std::move(blocks_);
        f_.Relink();
    }

    // Before the terminator of block b (and its merge instruction, if any): where b enters a
    // loop that keeps elements from outside it, the loop's elements start empty.
    void EnterLoops(size_t b, uint32_t false_) {
        std::vector<Inst> resets;
        for (uint32_t s : Successors(f_.blocks[b])) {
            for (const Loop& loop : loops_) {
                if (loop.groups.empty() || f_.blocks[loop.header].label != s) continue;
                if (loop.blocks.count(b)) continue;  // the back edge
                for (size_t gi : loop.groups) {
                    resets.push_back(MakeInst(spv::Op::OpStore, {groups_[gi].valid, false_}));
                    resets.push_back(MakeInst(spv::Op::OpStore, {groups_[gi].dirty, false_}));
                }
            }
        }
        if (resets.empty()) return;
        // Before a merge instruction the current block may end with.
        size_t at = cur_.insts.size();
        if (at > 0 && (cur_.insts[at - 1].op == spv::Op::OpSelectionMerge ||
                       cur_.insts[at - 1].op == spv::Op::OpLoopMerge))
            --at;
        cur_.insts.insert(cur_.insts.begin() + static_cast<std::ptrdiff_t>(at),
                          std::make_move_iterator(resets.begin()), std::make_move_iterator(resets.end()));
    }

    FunctionBlocks f_;
    ValueFacts values_;  // of f_ as parsed: read before the rewriting changes it
    uint32_t u64_ = 0, bool_ = 0;
    std::vector<Access> accesses_;
    std::map<std::pair<size_t, size_t>, size_t> at_;  // (block, inst) -> access
    std::set<size_t> opaque_;                          // blocks a loop cannot keep elements across
    std::set<size_t> promoted_;                        // blocks of loops that keep elements
    std::vector<Loop> loops_;
    std::vector<Group> groups_;
    std::vector<Block> blocks_;  // the rewritten function's blocks, in order
    Block cur_;                  // the block being rewritten
};

}  // namespace

size_t PromoteLoopElements(std::vector<uint32_t>* words) {
    std::optional<FunctionBlocks> f = FunctionBlocks::Parse(*words);
    if (!f) return 0;
    Words out;
    const size_t promoted = Promoter(std::move(*f)).Run(&out);
    if (promoted) *words = std::move(out);
    return promoted;
}

}  // namespace nvk::spirv
