// Test helpers shared by the emitter's tests: every module a test produces is
// validated, optimised and validated again, and failures are test failures.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "kir/kir.h"
#include "spirv/emit.h"
#include "spirv/tools.h"

namespace nvk::spirv::testing {

struct Emitted {
    std::vector<uint32_t> words;      // as emitted
    std::vector<uint32_t> optimized;  // after the optimiser
    std::string text;                 // disassembly of `words`
    std::string optimized_text;       // disassembly of `optimized`
};

// Emits `module` (marked structured) and runs Validate, Optimize, Validate.
inline Emitted EmitChecked(kir::Module module, EmitOptions options = {}) {
    module.function.structured = true;
    Emitted out;
    auto words = Emit(module, options);
    if (!words.ok()) {
        ADD_FAILURE() << "Emit failed: " << words.status().message();
        return out;
    }
    out.words = *words;
    out.text = Disassemble(out.words);
    if (util::Status s = Validate(out.words); !s.ok()) {
        ADD_FAILURE() << "emitted module invalid: " << s.message();
        return out;
    }
    auto optimized = Optimize(out.words);
    if (!optimized.ok()) {
        ADD_FAILURE() << "Optimize failed: " << optimized.status().message();
        return out;
    }
    out.optimized = *optimized;
    out.optimized_text = Disassemble(out.optimized);
    if (util::Status s = Validate(out.optimized); !s.ok()) {
        ADD_FAILURE() << "optimised module invalid: " << s.message();
    }
    return out;
}

}  // namespace nvk::spirv::testing
