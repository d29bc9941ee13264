// An optimised kernel module as instructions, its one function as blocks: the form the
// passes that rewrite an optimised module's words work on (SinkStores, PromoteLoopElements).
#pragma once

#include <spirv/unified1/spirv.hpp11>

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <unordered_map>
#include <vector>

namespace nvk::spirv {

using Words = std::vector<uint32_t>;

struct Inst {
    spv::Op op;
    Words words;  // the whole instruction, word 0 included
};

inline spv::Op OpOf(uint32_t word) { return static_cast<spv::Op>(word & 0xFFFF); }

// An instruction of `op` with these operands (the word count is computed).
Inst MakeInst(spv::Op op, std::initializer_list<uint32_t> operands);

struct Block {
    uint32_t label = 0;
    std::vector<Inst> insts;  // after the OpLabel, the terminator last
};

struct FunctionBlocks {
    Words header;             // the module's first five words
    uint32_t bound = 0;       // the next free id (written back as the header's bound)
    std::vector<Inst> head;   // everything before the function
    std::vector<Inst> prologue;  // OpFunction and its parameters
    std::vector<Block> blocks;
    std::vector<Inst> epilogue;  // OpFunctionEnd and anything after it
    std::unordered_map<uint32_t, size_t> index;  // block label -> position in `blocks`
    std::unordered_map<uint32_t, std::vector<uint32_t>> preds;  // label -> predecessors

    // nullopt where the words are not a module of exactly one function with blocks.
    static std::optional<FunctionBlocks> Parse(const Words& words);
    Words Write() const;
    uint32_t NewId() { return bound++; }
    // Recomputes `index` and `preds` after blocks were added or their branches changed.
    void Relink();
};

// The blocks a block's terminator branches to (none for a return or an end).
std::vector<uint32_t> Successors(const Block& b);

// Barriers, atomics, calls and memory copies: instructions that may read or write memory
// other than through a plain load or store, or order other invocations' accesses.
bool IsBarrierLike(spv::Op op);

}  // namespace nvk::spirv
