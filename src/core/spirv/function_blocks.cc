#include "spirv/function_blocks.h"

namespace nvk::spirv {

Inst MakeInst(spv::Op op, std::initializer_list<uint32_t> operands) {
    Inst i{op, {}};
    i.words.push_back(static_cast<uint32_t>((operands.size() + 1) << 16) |
                      static_cast<uint32_t>(op));
    i.words.insert(i.words.end(), operands);
    return i;
}

std::optional<FunctionBlocks> FunctionBlocks::Parse(const Words& words) {
    if (words.size() < 5 || words[0] != spv::MagicNumber) return {};
    FunctionBlocks f;
    f.header.assign(words.begin(), words.begin() + 5);
    f.bound = words[3];
    size_t at = 5, functions = 0;
    bool in_function = false;
    while (at < words.size()) {
        const uint32_t count = words[at] >> 16;
        if (count == 0 || at + count > words.size()) return {};
        Inst inst{OpOf(words[at]),
                  Words(words.begin() + at, words.begin() + at + count)};
        at += count;
        if (inst.op == spv::Op::OpFunction) {
            if (++functions > 1) return {};  // kernels are one function
            in_function = true;
            f.prologue.push_back(std::move(inst));
        } else if (inst.op == spv::Op::OpFunctionEnd) {
            in_function = false;
            f.epilogue.push_back(std::move(inst));
        } else if (!in_function) {
            (f.blocks.empty() ? f.head : f.epilogue).push_back(std::move(inst));
        } else if (inst.op == spv::Op::OpLabel) {
            f.blocks.push_back(Block{inst.words[1], {}});
        } else if (f.blocks.empty()) {
            f.prologue.push_back(std::move(inst));  // OpFunctionParameter
        } else {
            f.blocks.back().insts.push_back(std::move(inst));
        }
    }
    if (f.blocks.empty() || f.epilogue.empty() || f.epilogue.front().op != spv::Op::OpFunctionEnd)
        return {};
    for (const Block& b : f.blocks) {
        if (b.insts.empty()) return {};
    }
    f.Relink();
    return f;
}

void FunctionBlocks::Relink() {
    index.clear();
    preds.clear();
    for (size_t b = 0; b < blocks.size(); ++b) index[blocks[b].label] = b;
    for (const Block& b : blocks) {
        for (uint32_t t : Successors(b)) preds[t].push_back(b.label);
    }
}

Words FunctionBlocks::Write() const {
    Words out = header;
    out[3] = bound;
    auto put = [&out](const Inst& i) { out.insert(out.end(), i.words.begin(), i.words.end()); };
    for (const Inst& i : head) put(i);
    for (const Inst& i : prologue) put(i);
    for (const Block& b : blocks) {
        put(MakeInst(spv::Op::OpLabel, {b.label}));
        for (const Inst& i : b.insts) put(i);
    }
    for (const Inst& i : epilogue) put(i);
    return out;
}

std::vector<uint32_t> Successors(const Block& b) {
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

}  // namespace nvk::spirv
