// The tests of the passes that rewrite an optimised module's words (SinkStores,
// SelectZeroOneProducts, PromoteLoopElements): a hand-written module assembled, the pass run
// on it, the input and the output validated.
#pragma once

#include <gtest/gtest.h>

#include <spirv-tools/libspirv.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "spirv/tools.h"

namespace nvk::spirv {

using WordsPass = size_t (*)(std::vector<uint32_t>*);

// `text` assembled for Vulkan 1.2 (the test fails where it does not assemble).
inline std::vector<uint32_t> AssembleModule(const std::string& text) {
    spvtools::SpirvTools tools(SPV_ENV_VULKAN_1_2);
    std::vector<uint32_t> words;
    EXPECT_TRUE(tools.Assemble(text, &words)) << text;
    return words;
}

struct PassRun {
    std::string text;  // the output's disassembly
    size_t count = 0;  // what the pass returned
};

// `pass` on the valid module `in`; the output must validate.
inline PassRun RunPass(WordsPass pass, const std::vector<uint32_t>& in) {
    EXPECT_TRUE(Validate(in).ok());
    PassRun run;
    std::vector<uint32_t> out = in;
    run.count = pass(&out);
    run.text = Disassemble(out);
    util::Status status = Validate(out);
    EXPECT_TRUE(status.ok()) << status.message();
    return run;
}

// How many times `what` occurs in `text`.
inline size_t Count(const std::string& text, const std::string& what) {
    size_t n = 0;
    for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
}

// `in` is valid and `pass` leaves it as it is.
inline void ExpectPassLeavesAlone(WordsPass pass, const std::vector<uint32_t>& in) {
    ASSERT_TRUE(Validate(in).ok());
    std::vector<uint32_t> out = in;
    EXPECT_EQ(pass(&out), 0u);
    EXPECT_EQ(out, in);
}

}  // namespace nvk::spirv
