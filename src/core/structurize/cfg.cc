#include "structurize/cfg.h"

#include <algorithm>

#include "kir/builder.h"

namespace nvk::structurize {

using kir::kNone;

bool DomTree::Dominates(uint32_t a, uint32_t b) const {
    if (!Reachable(a) || !Reachable(b)) return false;
    while (true) {
        if (a == b) return true;
        uint32_t up = idom[b];
        if (up == b) return false;
        b = up;
    }
}

static DomTree Dominators(const Succs& succs, const Succs& preds, uint32_t entry) {
    size_t n = succs.size();
    DomTree t;
    t.idom.assign(n, kNone);
    t.rpo_pos.assign(n, kNone);
    // Iterative DFS for the post-order.
    std::vector<uint32_t> post;
    std::vector<uint8_t> seen(n, 0);
    std::vector<std::pair<uint32_t, uint32_t>> stack{{entry, 0}};
    seen[entry] = 1;
    while (!stack.empty()) {
        auto& [node, next] = stack.back();
        if (next < succs[node].size()) {
            uint32_t s = succs[node][next++];
            if (!seen[s]) {
                seen[s] = 1;
                stack.push_back({s, 0});
            }
        } else {
            post.push_back(node);
            stack.pop_back();
        }
    }
    t.rpo.assign(post.rbegin(), post.rend());
    for (uint32_t i = 0; i < t.rpo.size(); ++i) t.rpo_pos[t.rpo[i]] = i;
    // Cooper, Harvey and Kennedy's iteration over the reverse post-order.
    t.idom[entry] = entry;
    auto intersect = [&](uint32_t a, uint32_t b) {
        while (a != b) {
            while (t.rpo_pos[a] > t.rpo_pos[b]) a = t.idom[a];
            while (t.rpo_pos[b] > t.rpo_pos[a]) b = t.idom[b];
        }
        return a;
    };
    for (bool changed = true; changed;) {
        changed = false;
        for (uint32_t i = 1; i < t.rpo.size(); ++i) {
            uint32_t b = t.rpo[i];
            uint32_t nd = kNone;
            for (uint32_t p : preds[b]) {
                if (t.idom[p] == kNone) continue;
                nd = nd == kNone ? p : intersect(p, nd);
            }
            if (nd != t.idom[b]) {
                t.idom[b] = nd;
                changed = true;
            }
        }
    }
    return t;
}

static Succs Reverse(const Succs& succs) {
    Succs preds(succs.size());
    for (uint32_t u = 0; u < succs.size(); ++u)
        for (uint32_t v : succs[u]) preds[v].push_back(u);
    return preds;
}

DomTree ComputeDominators(const Succs& succs, uint32_t entry) {
    return Dominators(succs, Reverse(succs), entry);
}

DomTree ComputePostDominators(const Succs& succs, uint32_t exit) {
    Succs preds = Reverse(succs);
    return Dominators(preds, succs, exit);
}

Cfg::Cfg(const kir::Function& f) {
    for (uint32_t i = 0; i < f.blocks.size(); ++i) {
        ids.push_back(f.blocks[i].id);
        index[f.blocks[i].id] = i;
    }
    succs.resize(ids.size());
    preds.resize(ids.size());
    for (uint32_t i = 0; i < f.blocks.size(); ++i) {
        for (kir::BlockId s : f.blocks[i].Successors()) {
            uint32_t j = Index(s);
            if (j == kNone) continue;
            succs[i].push_back(j);
            preds[j].push_back(i);
        }
    }
    dom = ComputeDominators(succs, 0);
}

uint32_t Cfg::Index(kir::BlockId id) const {
    auto it = index.find(id);
    return it == index.end() ? kNone : it->second;
}

kir::BlockId NewBlock(kir::Function& f, const std::string& name) {
    kir::Block b;
    b.id = f.NextBlockId();
    b.name = name + std::to_string(b.id);
    f.blocks.push_back(std::move(b));
    return f.blocks.back().id;
}

void Retarget(kir::Function& f, kir::BlockId block, kir::BlockId from, kir::BlockId to) {
    kir::Inst& t = f.FindBlock(block)->terminator();
    for (kir::BlockId& target : t.targets)
        if (target == from) target = to;
}

kir::BlockId CopyBlock(kir::Function& f, kir::BlockId block) {
    kir::BlockId id = NewBlock(f, "dup");
    kir::Block copy = *f.FindBlock(block);
    copy.id = id;
    copy.name = f.FindBlock(id)->name;
    copy.merge = {};
    std::unordered_map<kir::ValueId, kir::ValueId> remap;
    for (kir::Inst& inst : copy.insts) {
        for (kir::ValueId& v : inst.operands) {
            auto it = remap.find(v);
            if (it != remap.end()) v = it->second;
        }
        if (inst.result != kNone) {
            kir::ValueId fresh = f.NewValue(f.values[inst.result].type, id);
            remap[inst.result] = fresh;
            inst.result = fresh;
        }
    }
    *f.FindBlock(id) = std::move(copy);
    return id;
}

void SetBr(kir::Function& f, kir::BlockId block, kir::BlockId target) {
    kir::Inst i;
    i.op = kir::Op::kBr;
    i.targets[0] = target;
    f.FindBlock(block)->insts.push_back(i);
}

void SetUnreachable(kir::Function& f, kir::BlockId block) {
    kir::Inst i;
    i.op = kir::Op::kUnreachable;
    f.FindBlock(block)->insts.push_back(i);
}

void AppendStoreConst(kir::Module& m, kir::BlockId block, kir::ValueId var, int64_t value) {
    kir::Function& f = m.function;
    kir::TypeId i32 = m.GetScalar(kir::ScalarKind::kI32);
    kir::Inst c;
    c.op = kir::Op::kConst;
    c.type = i32;
    c.imm = static_cast<uint64_t>(value) & 0xffffffffu;
    c.result = f.NewValue(i32, block);
    kir::Inst s;
    s.op = kir::Op::kStore;
    s.operands = {var, c.result};
    kir::Block* b = f.FindBlock(block);
    auto pos = b->insts.end();
    if (!b->insts.empty() && kir::IsTerminator(b->insts.back().op)) --pos;
    pos = b->insts.insert(pos, c);
    b->insts.insert(pos + 1, s);
}

void SetDispatch(kir::Module& m, kir::BlockId block, kir::ValueId var, int64_t value,
                 kir::BlockId if_true, kir::BlockId if_false) {
    kir::Builder b(m);
    b.SetBlock(block);
    kir::TypeId i32 = m.GetScalar(kir::ScalarKind::kI32);
    kir::ValueId x = b.Load(var);
    kir::ValueId c = b.Compare(kir::Op::kEq, x, b.ConstInt(i32, value));
    b.CondBr(c, if_true, if_false);
}

kir::ValueId NewSelectorVar(kir::Module& m) {
    kir::Builder b(m);
    return b.Var(m.GetScalar(kir::ScalarKind::kI32));
}

}  // namespace nvk::structurize
