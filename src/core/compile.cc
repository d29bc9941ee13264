// The pipeline, step by step. Each step returns a Status; the first failure
// ends the compilation and is reported as it is (never downgraded to a warning).
#include "compile.h"

#include <algorithm>

#include "kir/abi.h"
#include "kir/float_division.h"
#include "kir/float_zeros.h"
#include "kir/int_ranges.h"
#include "kir/loop_guard.h"
#include "kir/printer.h"
#include "kir/soft_rounding.h"
#include "kir/verifier.h"
#include "narrow/narrow.h"
#include "spirv/emit.h"
#include "spirv/loop_promotion.h"
#include "spirv/store_sinking.h"
#include "spirv/tools.h"
#include "spirv/zero_one.h"
#include "structurize/structurize.h"
#include "unroll/unroll.h"

namespace nvk {

namespace {

// Shared memory: the bytes of the fixed-size workgroup arrays, and the
// element size of a dynamic one. Bools take 4 bytes (drivers store them so).
void SharedMemory(const kir::Module& module, CompiledKernel* out) {
    uint64_t bytes = 0;
    for (const kir::Inst& inst : module.function.entry().insts) {
        if (inst.op != kir::Op::kArrayVar) continue;
        const kir::Type& ptr = module.type(inst.type);
        if (ptr.space != kir::AddressSpace::kWorkgroup) continue;
        kir::ScalarKind k = module.type(ptr.pointee).scalar;
        uint32_t size = kir::MemoryBytes(k);
        if (inst.imm == 0) out->dynamic_shared_itemsize = size;
        bytes += inst.imm * size;
    }
    out->shared_bytes = static_cast<uint32_t>(std::min<uint64_t>(bytes, UINT32_MAX));
}

}  // namespace

util::Result<CompiledKernel> Compile(kir::Module module, const CompileOptions& options) {
    CompiledKernel out;
    out.kir = kir::Print(module);

    // 1. The front end's CFG must satisfy KIR's invariants before any pass relies on them.
    NVK_RETURN_IF_ERROR(kir::Verify(module));
    SharedMemory(module, &out);
    // 1b. Grid-stride loops unrolled under a trip-count guard (before narrowing,
    //     which then narrows the copies' index math like the original's).
    if (options.unroll_factor > 1) {
        unroll::UnrollOptions unroll_options;
        unroll_options.factor = options.unroll_factor;
        unroll_options.static_headers.insert(options.static_loop_headers.begin(),
                                             options.static_loop_headers.end());
        NVK_RETURN_IF_ERROR(unroll::UnrollCountedLoops(module, unroll_options).status());
        NVK_RETURN_IF_ERROR(kir::Verify(module));
    }
    // 2. 64-bit integer ops that provably fit are computed in 32 bits. Array
    //    extents are never negative (the front end names them NAME.shape[k]).
    if (options.narrow_ints) {
        narrow::NarrowOptions narrow_options;
        for (int axis = 0; axis < 3; ++axis) {
            narrow_options.ranges.max_local_size[axis] = options.max_local_size[axis];
            narrow_options.ranges.max_groups[axis] = options.max_groups[axis];
        }
        narrow_options.ranges.params = narrow::ExtentParamRanges(module);
        NVK_RETURN_IF_ERROR(narrow::NarrowIntegers(module, narrow_options));
        NVK_RETURN_IF_ERROR(kir::Verify(module));
    }
    // 2a. Rounding to integers from the bits where the driver's is wrong
    //     (kir/soft_rounding.h); before hiding zeros, whose constants it adds none of.
    if (options.soft_rounding != 0) {
        if (kir::SoftRounding(module, options.soft_rounding) > 0) NVK_RETURN_IF_ERROR(kir::Verify(module));
    }
    // 2b. Divisions by constant powers of two are multiplications (exact; float_division.h),
    //     then float32 division correctly rounded where the driver's may not be. Where
    //     Fma rounds once, in float32 and float64 only for rare operands: this adds
    //     blocks (kir/float_division.h).
    if (kir::DivideByPowersOfTwo(module) > 0) NVK_RETURN_IF_ERROR(kir::Verify(module));
    if (options.divide_f32_in_f64 && !options.fastmath) {
        kir::Float32DivisionOptions division;
        division.fused_fma = options.fused_fma;
        division.test_ulps = options.divide_f32_test_ulps;
        division.exact_fma = options.divide_f32_exact_fma;
        if (kir::DivideFloat32(module, division) > 0 && division.fused_fma)
            NVK_RETURN_IF_ERROR(kir::Verify(module));
    }
    // 3. lavapipe folds float arithmetic on constant zeros wrongly: hide them
    //    (this may add a hidden parameter, so the block's size is known after it).
    if (options.hide_float_zeros && !options.fastmath) {
        NVK_RETURN_IF_ERROR(kir::HideFloatZeros(module).status());
        NVK_RETURN_IF_ERROR(kir::Verify(module));
    }
    // 3b. NVIDIA misuses the ranges of signed values (kir/int_ranges.h).
    if (options.hide_int_ranges != 0) {
        NVK_RETURN_IF_ERROR(kir::HideIntegerRanges(module, options.hide_int_ranges).status());
        NVK_RETURN_IF_ERROR(kir::Verify(module));
    }
    // 3c. Loops a driver may cut short are counted (kir/loop_guard.h); last, so that the
    //     loops of every pass before it are among them. It may add a hidden parameter.
    if (options.loop_guard) {
        out.guarded_loops = static_cast<uint32_t>(kir::GuardLoops(module, *options.loop_guard));
        if (out.guarded_loops > 0) NVK_RETURN_IF_ERROR(kir::Verify(module));
    }
    out.kir_narrowed = kir::Print(module);
    out.param_size = module.ParamBlockSize();
    out.params_in_buffer = out.param_size > options.max_push_bytes;
    out.push_size = out.params_in_buffer ? 8 : out.param_size;
    out.args = module.args;
    // 4. Structured control flow; the emitter accepts only this form.
    NVK_RETURN_IF_ERROR(structurize::Structurize(module));
    NVK_RETURN_IF_ERROR(kir::Verify(module));
    // 5. SPIR-V, optimised and validated: a failure of the emitter's module
    //    points at the emitter, a failure after optimisation only at the
    //    optimiser. Validating costs about a third of what optimising does, so
    //    the emitter's module is validated up front only when asked
    //    (validate_emitted), else only when the final module fails.
    spirv::EmitOptions emit_options;
    emit_options.params_in_buffer = out.params_in_buffer;
    emit_options.fastmath = options.fastmath;
    emit_options.preserve_float_widths = options.preserve_float_widths;
    emit_options.denorm_preserve_widths = options.denorm_preserve_widths;
    NVK_ASSIGN_OR_RETURN(out.words, spirv::Emit(module, emit_options));
    const bool emitted_first = options.validate && (options.validate_emitted || !options.optimize);
    if (emitted_first) NVK_RETURN_IF_ERROR(spirv::Validate(out.words));
    if (options.optimize) {
        std::vector<uint32_t> emitted = std::move(out.words);
        util::Result<std::vector<uint32_t>> optimized =
            spirv::Optimize(emitted);
        if (!optimized.ok() && options.validate && !emitted_first) {
            NVK_RETURN_IF_ERROR(spirv::Validate(emitted));  // the emitter's fault, then
        }
        NVK_ASSIGN_OR_RETURN(out.words, std::move(optimized));
        // 5a. Elements a loop loads and stores at one address kept in registers while it
        //     runs (spirv/loop_promotion.h).
        if (options.promote_loop_elements &&
            (out.promoted_elements = spirv::PromoteLoopElements(&out.words)) > 0) {
            NVK_ASSIGN_OR_RETURN(out.words, spirv::PromoteVariables(out.words));
        }
        // 5b. One store per shared element where selections overwrite it (the tiled
        //     kernels' zero-then-load; spirv/store_sinking.h).
        spirv::SinkStores(&out.words);
        // 5c. Products and ands with a 0/1 integer as selects (NVIDIA got two
        //     wrong; spirv/zero_one.h).
        spirv::SelectZeroOneProducts(&out.words);
        if (options.validate) {
            util::Status final_status = spirv::Validate(out.words);
            if (!final_status.ok() && !emitted_first) {
                NVK_RETURN_IF_ERROR(spirv::Validate(emitted));
            }
            NVK_RETURN_IF_ERROR(final_status);
        }
    }
    // 6. What the device must support, read from the final module.
    out.capabilities = spirv::CapabilityNames(out.words);
    return out;
}

std::string DisassembleKernel(const CompiledKernel& kernel) { return spirv::Disassemble(kernel.words); }

}  // namespace nvk
