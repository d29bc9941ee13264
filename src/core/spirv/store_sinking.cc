#include "spirv/store_sinking.h"

#include "spirv/function_blocks.h"

#include <spirv/unified1/spirv.hpp11>

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>
#include <utility>

namespace nvk::spirv {
namespace {

// The function's blocks and what the module says about pointers into Workgroup memory.
class Sinker {
  public:
    explicit Sinker(const Words& words) : words_(words) {}

    // The rewritten module, or nullopt where nothing was sunk.
    std::optional<Words> Run(size_t* removed) {
        *removed = 0;
        if (!Parse()) return {};
        size_t count = 0;
        for (size_t b = 0; b < f_.blocks.size(); ++b) {
            // The last removable store of each block, retried while one sinks.
            for (size_t i = f_.blocks[b].insts.size(); i-- > 0;) {
                const Inst& s = f_.blocks[b].insts[i];
                if (s.op != spv::Op::OpStore || !base_.count(s.words[1])) continue;
                size_t n = TrySink(b, i);
                if (n) {
                    count += n;
                    i = f_.blocks[b].insts.size();
                }
            }
        }
        *removed = count;
        if (!count) return {};
        return f_.Write();
    }

  private:
    bool Parse() {
        std::optional<FunctionBlocks> f = FunctionBlocks::Parse(words_);
        if (!f) return false;
        f_ = std::move(*f);
        std::map<uint32_t, uint32_t> workgroup_pointer_types;  // type -> pointee
        auto track = [&](const Inst& inst) {
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
                    if (w.size() > 2 && workgroup_pointer_types.count(w[1])) {
                        base_[w[2]] = 0;  // a Workgroup pointer of another kind (phi, select)
                        pointee_[w[2]] = workgroup_pointer_types[w[1]];
                    }
                    break;
            }
        };
        for (const Inst& inst : f_.head) track(inst);
        for (const Block& b : f_.blocks) {
            for (const Inst& inst : b.insts) track(inst);
        }
        return true;
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
        for (uint32_t s : Successors(f_.blocks[head])) {
            if (s == merge || done.count(s)) continue;
            stack.push_back({s, 0});
            active.insert(s);
            while (!stack.empty() && ok) {
                auto& [label, next] = stack.back();
                auto it = f_.index.find(label);
                if (it == f_.index.end()) return {};
                const Block& b = f_.blocks[it->second];
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
                    if (active.count(t) || t == f_.blocks[head].label) return {};  // a cycle
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
        inside.insert(f_.blocks[head].label);
        for (size_t b : order) {
            for (uint32_t pred : f_.preds.at(f_.blocks[b].label)) {
                if (!inside.count(pred)) return {};
            }
        }
        // ... and of the merge too: the chain's value meets there.
        for (uint32_t pred : f_.preds.at(merge)) {
            if (!inside.count(pred)) return {};
        }
        return order;
    }

    // The value stored to p on entry to `label`, given the values at the exits of the
    // blocks listed in `out`: one value, or a new OpPhi at the block's start.
    uint32_t Join(uint32_t label, const std::map<uint32_t, uint32_t>& out, uint32_t type) {
        const std::vector<uint32_t>& preds = f_.preds.at(label);
        uint32_t first = out.at(preds.front());
        bool same = std::all_of(preds.begin(), preds.end(),
                                [&](uint32_t q) { return out.at(q) == first; });
        if (same) return first;
        const uint32_t id = f_.NewId();
        Inst phi{spv::Op::OpPhi, {0, type, id}};
        for (uint32_t q : preds) {
            phi.words.push_back(out.at(q));
            phi.words.push_back(q);
        }
        phi.words[0] = static_cast<uint32_t>(phi.words.size() << 16) |
                       static_cast<uint32_t>(spv::Op::OpPhi);
        std::vector<Inst>& insts = f_.blocks[f_.index.at(label)].insts;
        auto at = std::find_if(insts.begin(), insts.end(),
                               [](const Inst& i) { return i.op != spv::Op::OpPhi; });
        insts.insert(at, std::move(phi));
        return id;
    }

    // Sinks the store f_.blocks[b].insts[i]; returns the stores removed (0: left alone).
    size_t TrySink(size_t b, size_t i) {
        const uint32_t p = f_.blocks[b].insts[i].words[1];
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
            const std::vector<Inst>& insts = f_.blocks[cur].insts;
            std::optional<uint32_t> merge = SelectionMerge(f_.blocks[cur]);
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
                for (const Inst& inst : f_.blocks[r].insts) {
                    if (inst.op == spv::Op::OpStore && inst.words[1] == p) ++stores_later;
                }
            }
            chain.push_back({cur, std::move(*region)});
            auto next = f_.index.find(*merge);
            if (next == f_.index.end()) return 0;
            cur = next->second;
            from = 0;
            while (from < f_.blocks[cur].insts.size() &&
                   f_.blocks[cur].insts[from].op == spv::Op::OpPhi)
                ++from;
        }
        if (chain.empty() || stores_later == 0) return 0;

        // Rewrite: the value each block leaves p with, its stores removed.
        size_t removed = 0;
        auto take_stores = [&](size_t blk, size_t first, size_t last, uint32_t value) {
            std::vector<Inst>& insts = f_.blocks[blk].insts;
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
            std::vector<Inst>& insts = f_.blocks[blk].insts;
            size_t first = 0;
            if (s == 0) {
                value = insts[i].words[2];
                insts.erase(insts.begin() + i);
                ++removed;
                first = i;
            } else {
                value = Join(f_.blocks[blk].label, out, type);
                while (first < insts.size() && insts[first].op == spv::Op::OpPhi) ++first;
            }
            value = take_stores(blk, first, insts.size() - 2, value).first;
            out[f_.blocks[blk].label] = value;
            for (size_t r : chain[s].region) {
                uint32_t in = Join(f_.blocks[r].label, out, type);
                std::vector<Inst>& rinsts = f_.blocks[r].insts;
                size_t start = 0;
                while (start < rinsts.size() && rinsts[start].op == spv::Op::OpPhi) ++start;
                out[f_.blocks[r].label] = take_stores(r, start, rinsts.size() - 1, in).first;
            }
        }
        // The chain's end (a merge block, never a step of the chain): its new phi, if any,
        // moves the end point; its stores up to there are removed, then the store.
        std::vector<Inst>& last = f_.blocks[end_block].insts;
        const size_t before = last.size();
        value = Join(f_.blocks[end_block].label, out, type);
        const size_t at = end_at + (last.size() - before);
        size_t first = 0;
        while (first < last.size() && last[first].op == spv::Op::OpPhi) ++first;
        auto [v, stop] = take_stores(end_block, first, at, value);
        last.insert(last.begin() + static_cast<std::ptrdiff_t>(stop), MakeInst(spv::Op::OpStore, {p, v}));
        return removed;
    }

    const Words& words_;
    FunctionBlocks f_;
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
