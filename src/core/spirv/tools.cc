#include "spirv/tools.h"

#include <spirv-tools/libspirv.hpp>
#include <spirv-tools/optimizer.hpp>
#include <spirv/unified1/spirv.hpp11>

namespace nvk::spirv {

namespace {

// SPIR-V 1.5 is the version of Vulkan 1.2; the runtime requires Vulkan 1.2.
constexpr spv_target_env kTargetEnv = SPV_ENV_VULKAN_1_2;

// Collects the messages SPIRV-Tools reports, one per line.
spvtools::MessageConsumer Collect(std::string& out) {
    return [&out](spv_message_level_t level, const char*, const spv_position_t& position,
                  const char* message) {
        const char* what = level <= SPV_MSG_ERROR ? "error" : level == SPV_MSG_WARNING ? "warning"
                                                                                       : "info";
        out += std::string(what) + " (word " + std::to_string(position.index) + "): " + message +
               "\n";
    };
}

util::Result<std::vector<uint32_t>> RunOptimizer(spvtools::Optimizer& optimizer,
                                                const std::string& messages,
                                                const std::vector<uint32_t>& words) {
    spvtools::OptimizerOptions run_options;
    run_options.set_run_validator(false);  // the caller validates the result
    std::vector<uint32_t> out;
    if (!optimizer.Run(words.data(), words.size(), &out, run_options)) {
        return util::CodegenError("SPIR-V optimisation failed:\n" + messages +
                                  "--- input disassembly ---\n" + Disassemble(words));
    }
    return out;
}

}  // namespace

util::Status Validate(const std::vector<uint32_t>& words) {
    spvtools::SpirvTools tools(kTargetEnv);
    std::string messages;
    tools.SetMessageConsumer(Collect(messages));
    spvtools::ValidatorOptions options;
    if (tools.Validate(words.data(), words.size(), options)) return util::Status::Ok();
    return util::CodegenError("SPIR-V validation failed:\n" + messages +
                              "--- disassembly ---\n" + Disassemble(words));
}

util::Result<std::vector<uint32_t>> Optimize(const std::vector<uint32_t>& words) {
    spvtools::Optimizer optimizer(kTargetEnv);
    std::string messages;
    optimizer.SetMessageConsumer(Collect(messages));
    // A shorter recipe than SPIRV-Tools' performance one (RegisterPerformancePasses),
    // for what our emitter leaves: function variables become SSA values (single
    // block/single store elimination, scalar replacement of local arrays and
    // records, access chains with constant indices, SSA rewrite), constant
    // propagation and folding, dead branches and dead code, selects for small
    // branches (if-conversion), block merging and common subexpressions. Left
    // out: merge-return (the structurizer leaves no return inside a loop, the one
    // place drivers need it), inlining (one function), loop unrolling (no Unroll
    // hints) and the performance recipe's repetitions of the same passes. On the
    // benchmark kernels the modules come out the same size, in two thirds of the
    // time (Black-Scholes 13.0 -> 8.6 ms, the five-function kernel 2.5 -> 1.9 ms:
    // benchmarks/results/history.json (run "python-native 2026-12-01 13:14 optimiser")). A second
    // simplification and dead-code pass after redundancy elimination changed none
    // of the golden corpus' and math kernels' 58 modules and took 8 % of the
    // time: left out too (python-native_2026-12-01_optimiser.txt).
    // It keeps PhysicalStorageBuffer accesses and their Aligned operands as they
    // are (tested in tools_test.cc).
    optimizer.RegisterPass(spvtools::CreateLocalSingleBlockLoadStoreElimPass())
        .RegisterPass(spvtools::CreateLocalSingleStoreElimPass())
        .RegisterPass(spvtools::CreateScalarReplacementPass(100))
        .RegisterPass(spvtools::CreateLocalAccessChainConvertPass())
        .RegisterPass(spvtools::CreateSSARewritePass())
        .RegisterPass(spvtools::CreateCCPPass())
        .RegisterPass(spvtools::CreateSimplificationPass())
        .RegisterPass(spvtools::CreateDeadBranchElimPass())
        .RegisterPass(spvtools::CreateIfConversionPass())
        .RegisterPass(spvtools::CreateAggressiveDCEPass())
        .RegisterPass(spvtools::CreateBlockMergePass())
        .RegisterPass(spvtools::CreateRedundancyEliminationPass());
    return RunOptimizer(optimizer, messages, words);
}

util::Result<std::vector<uint32_t>> PromoteVariables(const std::vector<uint32_t>& words) {
    spvtools::Optimizer optimizer(kTargetEnv);
    std::string messages;
    optimizer.SetMessageConsumer(Collect(messages));
    optimizer.RegisterPass(spvtools::CreateLocalSingleBlockLoadStoreElimPass())
        .RegisterPass(spvtools::CreateSSARewritePass())
        .RegisterPass(spvtools::CreateSimplificationPass())
        .RegisterPass(spvtools::CreateDeadBranchElimPass())
        .RegisterPass(spvtools::CreateAggressiveDCEPass())
        .RegisterPass(spvtools::CreateBlockMergePass());
    return RunOptimizer(optimizer, messages, words);
}

std::string Disassemble(const std::vector<uint32_t>& words) {
    spvtools::SpirvTools tools(kTargetEnv);
    std::string messages;
    tools.SetMessageConsumer(Collect(messages));
    std::string text;
    uint32_t options = SPV_BINARY_TO_TEXT_OPTION_FRIENDLY_NAMES | SPV_BINARY_TO_TEXT_OPTION_INDENT;
    if (!tools.Disassemble(words, &text, options)) {
        return "<the module cannot be disassembled: " + messages + ">";
    }
    return text;
}

std::vector<std::string> CapabilityNames(const std::vector<uint32_t>& words) {
    std::vector<std::string> names;
    auto add = [&](const char* name) {
        for (const std::string& n : names)
            if (n == name) return;
        names.push_back(name);
    };
    // Walk the instruction stream after the 5-word header; capabilities come first.
    for (size_t i = 5; i < words.size();) {
        uint32_t count = words[i] >> 16;
        auto op = static_cast<spv::Op>(words[i] & 0xffff);
        if (count == 0) break;
        if (op == spv::Op::OpCapability && i + 1 < words.size()) {
            switch (static_cast<spv::Capability>(words[i + 1])) {
                case spv::Capability::Int64: add("int64"); break;
                case spv::Capability::Float64: add("float64"); break;
                case spv::Capability::Int16: add("int16"); break;
                case spv::Capability::Int8: add("int8"); break;
                case spv::Capability::Float16: add("float16"); break;
                case spv::Capability::StorageBuffer8BitAccess: add("storage8"); break;
                case spv::Capability::StorageBuffer16BitAccess: add("storage16"); break;
                case spv::Capability::StoragePushConstant8: add("push_constant8"); break;
                case spv::Capability::StoragePushConstant16: add("push_constant16"); break;
                case spv::Capability::Int64Atomics: add("int64_atomics"); break;
                case spv::Capability::GroupNonUniform: add("subgroup_basic"); break;
                case spv::Capability::GroupNonUniformVote: add("subgroup_vote"); break;
                case spv::Capability::GroupNonUniformArithmetic: add("subgroup_arithmetic"); break;
                case spv::Capability::GroupNonUniformBallot: add("subgroup_ballot"); break;
                case spv::Capability::GroupNonUniformShuffle: add("subgroup_shuffle"); break;
                case spv::Capability::GroupNonUniformShuffleRelative:
                    add("subgroup_shuffle_relative");
                    break;
                case spv::Capability::GroupNonUniformPartitionedNV:
                    add("subgroup_partitioned");
                    break;
                case spv::Capability::AtomicFloat32AddEXT: add("float32_atomic_add"); break;
                case spv::Capability::AtomicFloat64AddEXT: add("float64_atomic_add"); break;
                case spv::Capability::BFloat16TypeKHR: add("bfloat16_type"); break;
                case spv::Capability::BFloat16CooperativeMatrixKHR: add("bfloat16_matrix"); break;
                default: break;
            }
        } else if (op != spv::Op::OpCapability) {
            break;
        }
        i += count;
    }
    return names;
}

}  // namespace nvk::spirv
