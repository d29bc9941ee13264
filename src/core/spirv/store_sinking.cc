#include "spirv/store_sinking.h"

#include <spirv/unified1/spirv.hpp11>

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>
#include <utility>

namespace nvk::spirv {
namespace {

using Words = std::vector<uint32_t>;

struct Inst {
    spv::Op op;
    Words words;  // the whole instruction, word 0 included
};

struct Block {
    uint32_t label = 0;
    std::vector<Inst> insts;  // after the OpLabel, the terminator last
};

spv::Op OpOf(uint32_t word) { return static_cast<spv::Op>(word & 0xFFFF); }

Inst Make(spv::Op op, std::initializer_list<uint32_t> operands) {
    Inst i{op, {}};
    i.words.push_back(static_cast<uint32_t>((operands.size() + 1) << 16) |
                      static_cast<uint32_t>(op));
    i.words.insert(i.words.end(), operands);
    return i;
}

bool IsBarrierLike(spv::Op op) {
    switch (op) {
        case spv::Op::OpControlBarrier:
        case spv::Op::OpMemoryBarrier:
        case spv::Op::OpFunctionCall:
        case spv::Op::OpCopyMemory:
        case spv::Op::OpCopyMemorySized:
            return true;
        default:
            break;
    }
    const uint32_t v = static_cast<uint32_t>(op);
    // OpAtomicLoad .. OpAtomicXor, OpAtomicFlagTestAndSet/Clear, the float and min/max ones.
    return (v >= 227 && v <= 242) || v == 318 || v == 319 ||
           op == spv::Op::OpAtomicFAddEXT || op == spv::Op::OpAtomicFMinEXT ||
           op == spv::Op::OpAtomicFMaxEXT;
}

// The function's blocks and what the module says about pointers into Workgroup memory.
class Sinker {
  public:
    explicit Sinker(const Words& words) : words_(words) {}

    // The rewritten module, or nullopt where nothing was sunk.
    std::optional<Words> Run(size_t* removed) {
        *removed = 0;
        if (!Parse()) return {};
        size_t count = 0;
        for (size_t b = 0; b < blocks_.size(); ++b) {
            // The last removable store of each block, retried while one sinks.
            for (size_t i = blocks_[b].insts.size(); i-- > 0;) {
                const Inst& s = blocks_[b].insts[i];
                if (s.op != spv::Op::OpStore || !base_.count(s.words[1])) continue;
                size_t n = TrySink(b, i);
                if (n) {
                    count += n;
                    i = blocks_[b].insts.size();
                }
            }
        }
        *removed = count;
        if (!count) return {};
        return Write();
    }

  private:
    bool Parse() {
        if (words_.size() < 5 || words_[0] != 0x07230203) return false;
        bound_ = words_[3];
        size_t at = 5, functions = 0;
        std::map<uint32_t, uint32_t> workgroup_pointer_types;  // type -> pointee
        while (at < words_.size()) {
            uint32_t count = words_[at] >> 16;
            if (count == 0 || at + count > words_.size()) return false;
            Inst inst{OpOf(words_[at]), Words(words_.begin() + at, words_.begin() + at + count)};
            at += count;
            const Words& w = inst.words;
            switch (inst.op) {
                case spv::Op::OpTypePointer:
                    if (w[2] == static_cast<uint32_t>(spv::StorageClass::Workgroup))
                        workgroup_pointer_types[w[1]] = w[3];
                    break;
                case spv::Op::OpVariable:
                    if (workgroup_pointer_types.count(w[1])) {
                        base_[w[2]] = w[2];
                        pointee_[w[2]] = workgroup_pointer_types[w[1]];
                    }
                    break;
                case spv::Op::OpAccessChain:
                case spv::Op::OpInBoundsAccessChain:
                    if (workgroup_pointer_types.count(w[1])) {
                        auto it = base_.find(w[3]);
                        // A chain from an unknown base points anywhere: base 0 aliases all.
                        base_[w[2]] = it == base_.end() ? 0 : it->second;
                        pointee_[w[2]] = workgroup_pointer_types[w[1]];
                    }
                    break;
                default:
                    if (w.size() > 2 && workgroup_pointer_types.count(w[1]) &&
                        inst.op != spv::Op::OpTypePointer) {
                        base_[w[2]] = 0;  // a Workgroup pointer of another kind (phi, select)
                        pointee_[w[2]] = workgroup_pointer_types[w[1]];
                    }
                    break;
            }
            if (inst.op == spv::Op::OpFunction) {
                if (++functions > 1) return false;  // kernels are one function
                in_function_ = true;
                prologue_.push_back(std::move(inst));
                continue;
            }
            if (inst.op == spv::Op::OpFunctionEnd) {
                in_function_ = false;
                epilogue_.push_back(std::move(inst));
                continue;
            }
            if (!in_function_) {
                (blocks_.empty() ? head_ : epilogue_).push_back(std::move(inst));
                continue;
            }
            if (inst.op == spv::Op::OpLabel) {
                blocks_.push_back(Block{w[1], {}});
                index_[w[1]] = blocks_.size() - 1;
                continue;
            }
            if (blocks_.empty()) {
                prologue_.push_back(std::move(inst));  // OpFunctionParameter
                continue;
            }
            blocks_.back().insts.push_back(std::move(inst));
        }
        if (!epilogue_.empty() && epilogue_.front().op != spv::Op::OpFunctionEnd) return false;
        for (const Block& b : blocks_) {
            if (b.insts.empty()) return false;
            for (uint32_t t : Successors(b)) preds_[t].push_back(b.label);
        }
        return !blocks_.empty();
    }

    static std::vector<uint32_t> Successors(const Block& b) {
        const Inst& t = b.insts.back();
        switch (t.op) {
            case spv::Op::OpBranch: return {t.words[1]};
            case spv::Op::OpBranchConditional: return {t.words[2], t.words[3]};
            case spv::Op::OpSwitch: {
                std::vector<uint32_t> s{t.words[2]};
                for (size_t k = 4; k < t.words.size(); k += 2) s.push_back(t.words[k]);
                return s;
            }
            default: return {};
        }
    }

    // The merge of block b's selection, if b ends with one (not a loop header, no switch).
    std::optional<uint32_t> SelectionMerge(const Block& b) const {
        if (b.insts.size() < 2 || b.insts.back().op != spv::Op::OpBranchConditional) return {};
        const Inst& m = b.insts[b.insts.size() - 2];
        if (m.op != spv::Op::OpSelectionMerge) return {};
        return m.words[1];
    }

    // Whether `inst` lets a store to `p` (base variable `base`) move past it; a store to p
    // itself is handled by the caller.
    bool Transparent(const Inst& inst, uint32_t p, uint32_t base) const {
        if (IsBarrierLike(inst.op)) return false;
        switch (inst.op) {
            case spv::Op::OpReturn:
            case spv::Op::OpReturnValue:
            case spv::Op::OpKill:
            case spv::Op::OpTerminateInvocation:
            case spv::Op::OpUnreachable:
            case spv::Op::OpLoopMerge:
            case spv::Op::OpSwitch:
                return false;
            case spv::Op::OpAccessChain:
            case spv::Op::OpInBoundsAccessChain:
                return true;  // address arithmetic only
            default:
                break;
        }
        // Anything else that names a pointer into the same variable (a load, a store to
        // another element, an extended instruction's out-pointer) reads or writes it. Words
        // are compared whole: a literal equal to such an id only makes this cautious.
        for (size_t k = 1; k < inst.words.size(); ++k) {
            auto it = base_.find(inst.words[k]);
            if (it == base_.end()) continue;
            if (it->second == 0 || base == 0 || it->second == base) {
                if (inst.op == spv::Op::OpStore && k == 1 && inst.words[1] == p) continue;
                return false;
            }
        }
        return true;
    }

    // The blocks of a selection headed by `head` (merge `merge`) in an order where each comes
    // after its predecessors in the region; nullopt where the region leaves other than
    // through the merge, has a loop or a switch, or holds an instruction p cannot pass.
    std::optional<std::vector<size_t>> Region(size_t head, uint32_t merge, uint32_t p,
                                               uint32_t base) const {
        std::vector<size_t> order;
        std::set<uint32_t> done, active;
        bool ok = true;
        // Depth-first, post-order; reversed at the end (a topological order of a DAG).
        std::vector<std::pair<uint32_t, size_t>> stack;
        for (uint32_t s : Successors(blocks_[head])) {
            if (s == merge || done.count(s)) continue;
            stack.push_back({s, 0});
            active.insert(s);
            while (!stack.empty() && ok) {
                auto& [label, next] = stack.back();
                auto it = index_.find(label);
                if (it == index_.end()) return {};
                const Block& b = blocks_[it->second];
                std::vector<uint32_t> succ = Successors(b);
                if (next == 0) {
                    for (const Inst& inst : b.insts) {
                        if (inst.op == spv::Op::OpSelectionMerge) continue;
                        if (!Transparent(inst, p, base)) ok = false;
                    }
                    if (succ.empty()) ok = false;  // returns or ends
                }
                if (!ok) break;
                if (next < succ.size()) {
                    uint32_t t = succ[next++];
                    if (t == merge || done.count(t)) continue;
                    if (active.count(t) || t == blocks_[head].label) return {};  // a cycle
                    stack.push_back({t, 0});
                    active.insert(t);
                    continue;
                }
                done.insert(label);
                active.erase(label);
                order.push_back(it->second);
                stack.pop_back();
            }
            if (!ok) return {};
        }
        std::reverse(order.begin(), order.end());
        // Every predecessor of a region block is in the region or the head.
        std::set<uint32_t> inside(done);
        inside.insert(blocks_[head].label);
        for (size_t b : order) {
            for (uint32_t pred : preds_.at(blocks_[b].label)) {
                if (!inside.count(pred)) return {};
            }
        }
        // ... and of the merge too: the chain's value meets there.
        for (uint32_t pred : preds_.at(merge)) {
            if (!inside.count(pred)) return {};
        }
        return order;
    }

    // The value stored to p on entry to `label`, given the values at the exits of the
    // blocks listed in `out`: one value, or a new OpPhi at the block's start.
    uint32_t Join(uint32_t label, const std::map<uint32_t, uint32_t>& out, uint32_t type) {
        const std::vector<uint32_t>& preds = preds_.at(label);
        uint32_t first = out.at(preds.front());
        bool same = std::all_of(preds.begin(), preds.end(),
                                [&](uint32_t q) { return out.at(q) == first; });
        if (same) return first;
        Inst phi{spv::Op::OpPhi, {0, type, bound_}};
        for (uint32_t q : preds) {
            phi.words.push_back(out.at(q));
            phi.words.push_back(q);
        }
        phi.words[0] = static_cast<uint32_t>(phi.words.size() << 16) |
                       static_cast<uint32_t>(spv::Op::OpPhi);
        std::vector<Inst>& insts = blocks_[index_.at(label)].insts;
        auto at = std::find_if(insts.begin(), insts.end(),
                               [](const Inst& i) { return i.op != spv::Op::OpPhi; });
        insts.insert(at, std::move(phi));
        return bound_++;
    }

    // Sinks the store blocks_[b].insts[i]; returns the stores removed (0: left alone).
    size_t TrySink(size_t b, size_t i) {
        const uint32_t p = blocks_[b].insts[i].words[1];
        const uint32_t base = base_.at(p);
        const uint32_t type = pointee_.at(p);
        // Plan the chain without changing anything: the selections it passes (each head
        // block with its region's blocks) and where the final store goes.
        struct Step {
            size_t block;                // ends with the selection
            std::vector<size_t> region;  // the selection's blocks, in order
        };
        std::vector<Step> chain;
        size_t cur = b, from = i + 1, stores_later = 0;
        size_t end_block = b, end_at = 0;
        while (true) {
            const std::vector<Inst>& insts = blocks_[cur].insts;
            std::optional<uint32_t> merge = SelectionMerge(blocks_[cur]);
            size_t stop = merge ? insts.size() - 2 : insts.size() - 1;
            size_t k = from;
            for (; k < stop; ++k) {
                if (!Transparent(insts[k], p, base)) break;
                if (insts[k].op == spv::Op::OpStore && insts[k].words[1] == p) ++stores_later;
            }
            end_block = cur;
            end_at = k;
            if (k < stop || !merge) break;
            std::optional<std::vector<size_t>> region = Region(cur, *merge, p, base);
            if (!region) break;
            for (size_t r : *region) {
                for (const Inst& inst : blocks_[r].insts) {
                    if (inst.op == spv::Op::OpStore && inst.words[1] == p) ++stores_later;
                }
            }
            chain.push_back({cur, std::move(*region)});
            auto next = index_.find(*merge);
            if (next == index_.end()) return 0;
            cur = next->second;
            from = 0;
            while (from < blocks_[cur].insts.size() &&
                   blocks_[cur].insts[from].op == spv::Op::OpPhi)
                ++from;
        }
        if (chain.empty() || stores_later == 0) return 0;

        // Rewrite: the value each block leaves p with, its stores removed.
        size_t removed = 0;
        auto take_stores = [&](size_t blk, size_t first, size_t last, uint32_t value) {
            std::vector<Inst>& insts = blocks_[blk].insts;
            for (size_t k = first; k < last;) {
                if (insts[k].op == spv::Op::OpStore && insts[k].words[1] == p) {
                    value = insts[k].words[2];
                    insts.erase(insts.begin() + k);
                    --last;
                    ++removed;
                    continue;
                }
                ++k;
            }
            return std::make_pair(value, last);
        };
        uint32_t value = 0;
        std::map<uint32_t, uint32_t> out;  // block label -> value of p at its exit
        for (size_t s = 0; s < chain.size(); ++s) {
            const size_t blk = chain[s].block;
            std::vector<Inst>& insts = blocks_[blk].insts;
            size_t first = 0;
            if (s == 0) {
                value = insts[i].words[2];
                insts.erase(insts.begin() + i);
                ++removed;
                first = i;
            } else {
                value = Join(blocks_[blk].label, out, type);
                while (first < insts.size() && insts[first].op == spv::Op::OpPhi) ++first;
            }
            value = take_stores(blk, first, insts.size() - 2, value).first;
            out[blocks_[blk].label] = value;
            for (size_t r : chain[s].region) {
                uint32_t in = Join(blocks_[r].label, out, type);
                std::vector<Inst>& rinsts = blocks_[r].insts;
                size_t start = 0;
                while (start < rinsts.size() && rinsts[start].op == spv::Op::OpPhi) ++start;
                out[blocks_[r].label] = take_stores(r, start, rinsts.size() - 1, in).first;
            }
        }
        // The chain's end (a merge block, never a step of the chain): its new phi, if any,
        // moves the end point; its stores up to there are removed, then the store.
        std::vector<Inst>& last = blocks_[end_block].insts;
        const size_t before = last.size();
        value = Join(blocks_[end_block].label, out, type);
        const size_t at = end_at + (last.size() - before);
        size_t first = 0;
        while (first < last.size() && last[first].op == spv::Op::OpPhi) ++first;
        auto [v, stop] = take_stores(end_block, first, at, value);
        last.insert(last.begin() + static_cast<std::ptrdiff_t>(stop), Make(spv::Op::OpStore, {p, v}));
        return removed;
    }

    Words Write() const {
        Words out(words_.begin(), words_.begin() + 5);
        out[3] = bound_;
        auto put = [&out](const Inst& i) { out.insert(out.end(), i.words.begin(), i.words.end()); };
        for (const Inst& i : head_) put(i);
        for (const Inst& i : prologue_) put(i);
        for (const Block& b : blocks_) {
            put(Make(spv::Op::OpLabel, {b.label}));
            for (const Inst& i : b.insts) put(i);
        }
        for (const Inst& i : epilogue_) put(i);
        return out;
    }

    const Words& words_;
    uint32_t bound_ = 0;
    bool in_function_ = false;
    std::vector<Inst> head_, prologue_, epilogue_;
    std::vector<Block> blocks_;
    std::unordered_map<uint32_t, size_t> index_;
    std::unordered_map<uint32_t, std::vector<uint32_t>> preds_;
    std::unordered_map<uint32_t, uint32_t> base_;     // Workgroup pointer -> its variable
    std::unordered_map<uint32_t, uint32_t> pointee_;  // Workgroup pointer -> pointee type
};

// Whether the module declares a pointer into Workgroup memory (else nothing to do: most
// kernels, skipped without building the blocks).
bool HasWorkgroupPointers(const std::vector<uint32_t>& words) {
    for (size_t at = 5; at < words.size();) {
        const uint32_t count = words[at] >> 16;
        if (count == 0) return false;
        if (OpOf(words[at]) == spv::Op::OpTypePointer && at + 2 < words.size() &&
            words[at + 2] == static_cast<uint32_t>(spv::StorageClass::Workgroup))
            return true;
        if (OpOf(words[at]) == spv::Op::OpFunction) return false;  // types come first
        at += count;
    }
    return false;
}

}  // namespace

size_t SinkStores(std::vector<uint32_t>* words) {
    if (words->size() < 5 || !HasWorkgroupPointers(*words)) return 0;
    size_t removed = 0;
    std::optional<Words> out = Sinker(*words).Run(&removed);
    if (out) *words = std::move(*out);
    return removed;
}

}  // namespace nvk::spirv
