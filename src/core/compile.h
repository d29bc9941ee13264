// Compile: the C++ half of the pipeline, KIR (CFG form) in, SPIR-V out.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kir/kir.h"
#include "kir/loop_guard.h"
#include "util/status.h"

namespace nvk {

struct CompileOptions {
    bool optimize = true;          // run the SPIRV-Tools optimiser
    bool validate = true;          // SPIRV-Tools validation (NUMBA_VULKAN_VALIDATE)
    // With `validate` and `optimize`: also validate the emitter's module before the
    // optimiser sees it (NUMBA_VULKAN_VALIDATE=2, the tests). Without it only the
    // final module is validated, once, and when that fails the emitter's module
    // is validated then, so the error still names the stage at fault.
    bool validate_emitted = true;
    bool fastmath = false;
    uint32_t max_push_bytes = 128;  // the device's push-constant limit
    std::vector<uint32_t> preserve_float_widths;  // see spirv::EmitOptions
    std::vector<uint32_t> denorm_preserve_widths;  // see spirv::EmitOptions
    // Compute 64-bit integer ops in 32 bits where a range analysis proves the
    // results identical (narrow/narrow.h). Independent of `optimize`: it
    // never changes a result, only speed; tests turn it off to compare.
    bool narrow_ints = true;
    // Elements a loop loads and stores at one address kept in registers while it runs
    // (spirv/loop_promotion.h). Never changes a result, only speed.
    bool promote_loop_elements = true;
    // Copies per unrolled iteration of counted single-block loops
    // (unroll/unroll.h); 1 leaves loops alone. Never changes a result.
    int unroll_factor = 8;
    // Header names of the range loops whose trip counts the front end knew: left to the
    // driver (unroll/unroll.h, static_headers).
    std::vector<std::string> static_loop_headers;
    // lavapipe: hide float constants +0.0 behind a hidden parameter, which its
    // code generator cannot fold wrongly (kir/float_zeros.h).
    bool hide_float_zeros = false;
    // Floor, Ceil and Trunc of these float widths computed from the bits
    // (kir/soft_rounding.h; a mask of kir::SoftRoundingWidths): devices whose
    // driver self-test found its rounding wrong.
    unsigned soft_rounding = 0;
    // Float32 division computed in float64 and rounded once (correctly rounded;
    // kir/float_division.h): devices with float64 whose OpFDiv may be 2.5 ulp
    // off (all but lavapipe), without fastmath.
    bool divide_f32_in_f64 = false;
    // With divide_f32_in_f64: the device's GLSL.std.450 Fma rounds once (NVIDIA,
    // AMD), so the quotient is computed in float32 with Fma where the operands
    // are in a safe range, in float64 only in a branch for the others.
    bool fused_fma = false;
    // Tests of that sequence on lavapipe (exact 1/b, an Fma that rounds twice):
    // the driver's reciprocal moved by up to this many ulps, and each Fma
    // computed exactly in float64 (kir::Float32DivisionOptions).
    uint32_t divide_f32_test_ulps = 0;
    bool divide_f32_exact_fma = false;
    // NVIDIA: signed values whose ranges its compiler would misuse are xored with
    // a hidden zero (kir/int_ranges.h; a mask of kir::HideIntRanges; 0: none).
    unsigned hide_int_ranges = 0;
    // Drivers that end long loops early without an error (lavapipe): count the
    // invocations that start and finish every loop (kir/loop_guard.h); none: off.
    std::optional<kir::LoopGuardOptions> loop_guard;
    // Device limits per axis that bound the builtins for that analysis;
    // UINT32_MAX: unknown (ids are then any u32).
    uint32_t max_local_size[3] = {UINT32_MAX, UINT32_MAX, UINT32_MAX};
    uint32_t max_groups[3] = {UINT32_MAX, UINT32_MAX, UINT32_MAX};
};

// What the runtime needs to run a kernel, and what users inspect.
struct CompiledKernel {
    std::vector<uint32_t> words;  // the SPIR-V module
    std::string entry = "main";
    uint32_t param_size = 0;        // bytes of the parameter block
    bool params_in_buffer = false;  // true: push constants hold only the block's address
    uint32_t push_size = 0;         // bytes of push constants the pipeline declares
    // What a device must support beyond Vulkan 1.2 compute with buffer device
    // addresses: "int64", "float64", "int16", "int8", "float16", "storage8",
    // "storage16", "push_constant8", "push_constant16", "bfloat16_type", "bfloat16_matrix"
    // (see spirv/tools.h).
    std::vector<std::string> capabilities;
    // Bytes of the kernel's fixed-size workgroup arrays (shared memory).
    uint32_t shared_bytes = 0;
    // Bytes per element of its dynamic shared array (sized at launch through
    // spirv::kDynamicSharedSpecId); 0: the kernel has none.
    uint32_t dynamic_shared_itemsize = 0;
    // The arguments and hidden parameters, with their slots (kir/abi.h): what
    // the launcher and the Python argument checks work from.
    std::vector<kir::ArgDecl> args;
    std::string kir;                // the KIR the front end built, printed
    uint32_t promoted_elements = 0;  // elements spirv/loop_promotion.h kept in registers
    uint32_t guarded_loops = 0;     // loops kir/loop_guard.h counted (0: none, or not asked)
    std::string kir_narrowed;       // the KIR after integer narrowing and, on lavapipe, hiding float zeros
};

util::Result<CompiledKernel> Compile(kir::Module module, const CompileOptions& options);

// The kernel's SPIR-V as text (friendly names, indented), for inspect_spirv.
std::string DisassembleKernel(const CompiledKernel& kernel);

}  // namespace nvk
