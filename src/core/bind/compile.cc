// Bindings of the C++ half of the pipeline (interface B of the project):
//
//   ck = _core.compile(module, optimize=True, fastmath=False, max_push_bytes=128,
//                      narrow_ints=True, max_local_size=None, max_groups=None)
//   _core.disassemble(words) -> str
//   _core.validate(words)          raises SpirvCodegenError
//   _core.narrow_ints(module) -> a narrowed copy (tests); _core.count_wide_int_ops(module)
//
// `module` is the _core.KirModule the front end built (its class is declared in
// bind/kir.cc). Compile consumes its argument, so the binding copies the module:
// the caller keeps an intact CFG-form module it can print or compile again.
// Failures become Python exceptions only here, through bind/errors.h.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstring>

#include "bind/errors.h"
#include "../compile.h"  // not "compile.h": Python ships a header of that name
#include "kir/int_ranges.h"
#include "kir/loop_guard.h"
#include "kir/soft_rounding.h"
#include "kir/verifier.h"
#include "narrow/narrow.h"
#include "spirv/tools.h"

namespace nb = nanobind;

namespace nvk::bind {

namespace {

using WordsIn = nb::ndarray<const uint32_t, nb::ndim<1>, nb::c_contig, nb::device::cpu>;

// A NumPy uint32 array that owns a copy of `words`.
nb::ndarray<nb::numpy, uint32_t, nb::ndim<1>> WordsToNumpy(const std::vector<uint32_t>& words) {
    auto* data = new uint32_t[words.size() > 0 ? words.size() : 1];
    if (!words.empty()) std::memcpy(data, words.data(), words.size() * sizeof(uint32_t));
    nb::capsule owner(data, [](void* p) noexcept { delete[] static_cast<uint32_t*>(p); });
    size_t shape[1] = {words.size()};
    return nb::ndarray<nb::numpy, uint32_t, nb::ndim<1>>(data, 1, shape, owner);
}

std::vector<uint32_t> WordsFromNumpy(const WordsIn& words) {
    const uint32_t* p = words.data();
    return std::vector<uint32_t>(p, p + words.shape(0));
}

}  // namespace

void InitCompile(nb::module_& m) {
    nb::class_<CompiledKernel>(m, "CompiledKernel",
                               "The result of _core.compile: SPIR-V words and parameter layout.")
        .def_prop_ro("words",
                     [](const CompiledKernel& k) {
                         // An array owning a copy: nanobind's default for properties
                         // (reference_internal) cannot apply to an array with an owner.
                         return nb::cast(WordsToNumpy(k.words), nb::rv_policy::move);
                     },
                     "The SPIR-V module as a NumPy uint32 array (a copy).")
        .def_ro("entry", &CompiledKernel::entry)
        .def_ro("param_size", &CompiledKernel::param_size)
        .def_ro("params_in_buffer", &CompiledKernel::params_in_buffer)
        .def_ro("push_size", &CompiledKernel::push_size)
        .def_ro("capabilities", &CompiledKernel::capabilities)
        .def_ro("shared_bytes", &CompiledKernel::shared_bytes)
        .def_ro("dynamic_shared_itemsize", &CompiledKernel::dynamic_shared_itemsize)
        .def_ro("args", &CompiledKernel::args,
                "The arguments and hidden parameters (_core.ArgDecl), in declaration order.")
        .def_ro("promoted_elements", &CompiledKernel::promoted_elements,
                "Elements loops keep in registers while they run (spirv/loop_promotion.h).")
        .def_ro("guarded_loops", &CompiledKernel::guarded_loops,
                "Loops counted for a driver's loop cap (compile's loop_guard; kir/loop_guard.h).")
        .def_ro("kir", &CompiledKernel::kir)
        .def_ro("kir_narrowed", &CompiledKernel::kir_narrowed,
                "The KIR after integer narrowing, printed (equal to kir when it is off).")
        .def("__repr__", [](const CompiledKernel& k) {
            return "<_core.CompiledKernel " + std::to_string(k.words.size()) + " words, " +
                   std::to_string(k.param_size) + " parameter bytes>";
        });

    m.def(
        "compile",
        [](const kir::Module& module, bool optimize, bool fastmath, uint32_t max_push_bytes,
           std::vector<uint32_t> nan_preserve, std::vector<uint32_t> denorm_preserve,
           bool narrow_ints,
           std::optional<std::vector<uint32_t>> max_local_size,
           std::optional<std::vector<uint32_t>> max_groups, bool validate, int unroll,
           bool hide_float_zeros, bool divide_f32_in_f64, bool validate_emitted,
           unsigned hide_int_ranges, bool fused_fma, uint32_t divide_f32_test_ulps,
           bool divide_f32_exact_fma, unsigned soft_rounding,
           std::optional<std::string> loop_guard, uint32_t loop_guard_key, bool loop_guard_ballot,
           std::vector<std::string> loop_guard_bounded,
           std::vector<std::string> static_loops, bool promote_loop_elements) {
            CompileOptions options;
            options.promote_loop_elements = promote_loop_elements;
            options.static_loop_headers = std::move(static_loops);
            if (soft_rounding > (kir::kSoftRoundingF32 | kir::kSoftRoundingF64))
                throw nb::value_error("soft_rounding is a mask of 1 (float32) and 2 (float64)");
            options.soft_rounding = soft_rounding;
            if (loop_guard) {
                if (loop_guard->empty()) throw nb::value_error("loop_guard names the status parameter");
                options.loop_guard = kir::LoopGuardOptions{*loop_guard, loop_guard_key, loop_guard_ballot,
                                                           std::move(loop_guard_bounded)};
            }
            if (unroll < 1 || unroll > 8) throw nb::value_error("unroll must be 1 to 8");
            options.unroll_factor = unroll;
            options.hide_float_zeros = hide_float_zeros;
            options.divide_f32_in_f64 = divide_f32_in_f64;
            options.fused_fma = fused_fma;
            if (divide_f32_test_ulps > 64) throw nb::value_error("divide_f32_test_ulps must be 0 to 64");
            options.divide_f32_test_ulps = divide_f32_test_ulps;
            options.divide_f32_exact_fma = divide_f32_exact_fma;
            if (hide_int_ranges > kir::kHideAllIntRanges)
                throw nb::value_error("hide_int_ranges is a mask of 1, 2, 4, 8 and 16");
            options.hide_int_ranges = hide_int_ranges;
            options.validate = validate;
            options.validate_emitted = validate_emitted;
            options.narrow_ints = narrow_ints;
            auto limits = [](const std::optional<std::vector<uint32_t>>& in, uint32_t* out,
                             const char* name) {
                if (!in) return;
                if (in->size() != 3)
                    throw nb::value_error((std::string(name) + " must have 3 entries").c_str());
                for (int i = 0; i < 3; ++i) out[i] = (*in)[i];
            };
            limits(max_local_size, options.max_local_size, "max_local_size");
            limits(max_groups, options.max_groups, "max_groups");
            options.optimize = optimize;
            options.fastmath = fastmath;
            options.max_push_bytes = max_push_bytes;
            options.preserve_float_widths = std::move(nan_preserve);
            options.denorm_preserve_widths = std::move(denorm_preserve);
            kir::Module copy = module;
            util::Result<CompiledKernel> result = [&] {
                nb::gil_scoped_release release;
                return Compile(std::move(copy), options);
            }();
            return Unwrap(std::move(result));
        },
        nb::arg("module"), nb::kw_only(), nb::arg("optimize") = true,
        nb::arg("fastmath") = false, nb::arg("max_push_bytes") = 128,
        nb::arg("nan_preserve") = std::vector<uint32_t>(),
        nb::arg("denorm_preserve") = std::vector<uint32_t>(), nb::arg("narrow_ints") = true,
        nb::arg("max_local_size") = nb::none(), nb::arg("max_groups") = nb::none(),
        nb::arg("validate") = true, nb::arg("unroll") = 8, nb::arg("hide_float_zeros") = false,
        nb::arg("divide_f32_in_f64") = false,
        nb::arg("validate_emitted") = true, nb::arg("hide_int_ranges") = 0,
        nb::arg("fused_fma") = false, nb::arg("divide_f32_test_ulps") = 0,
        nb::arg("divide_f32_exact_fma") = false, nb::arg("soft_rounding") = 0,
        nb::arg("loop_guard") = nb::none(), nb::arg("loop_guard_key") = 0,
        nb::arg("loop_guard_ballot") = true, nb::arg("loop_guard_bounded") = std::vector<std::string>(),
        nb::arg("static_loops") = std::vector<std::string>(), nb::arg("promote_loop_elements") = true,
        "Compile a KIR module (CFG form) to a validated SPIR-V CompiledKernel. nan_preserve: "
        "the float widths for which the device keeps signed zeros, infinities and NaNs; "
        "denorm_preserve: those for which it keeps subnormals. "
        "narrow_ints: compute 64-bit integer ops in 32 bits where a range analysis proves "
        "the results identical. max_local_size, max_groups: the device's limits per axis "
        "(3 entries each), which bound the ids for that analysis. unroll: copies per unrolled "
        "iteration of counted single-block loops and of range loops (1: none); static_loops: the "
        "header names of the range loops whose trip counts are compile-time constants, left "
        "to the driver. hide_float_zeros: make float "
        "constants +0.0 a hidden parameter 'float.zero' set to 0 (lavapipe folds arithmetic "
        "on constant zeros wrongly; kir/float_zeros.h; not with fastmath). divide_f32_in_f64: "
        "float32 division computed in float64 and rounded once, for devices whose division "
        "may be inexact (kir/float_division.h; not with fastmath). fused_fma: the device's "
        "Fma rounds once: with divide_f32_in_f64, float32 division is computed with Fma "
        "where its operands are in a safe range, in float64 only in a branch for the others. "
        "divide_f32_test_ulps, divide_f32_exact_fma (tests on a device with an exact "
        "division and an Fma that rounds twice): the driver's reciprocal moved by up to that "
        "many ulps, and each Fma of that sequence computed exactly in float64. validate_emitted: "
        "validate the emitter's module before optimising it too (else only when the final "
        "module fails validation). hide_int_ranges: xor a hidden zero 'int.zero' into signed "
        "negations and abs (1), the operands (2) and results (4) of signed widenings, the results of bool and "
        "unsigned widenings (8), which "
        "NVIDIA's compiler takes as non-overflowing, and the constant side of 64-bit ordered "
        "comparisons with arithmetic (16), which it rewrites wrongly (kir/int_ranges.h). "
        "soft_rounding: Floor, Ceil and Trunc of float32 (1) and float64 (2) computed from the "
        "bits, for drivers whose rounding the self-test found wrong (kir/soft_rounding.h). "
        "loop_guard: the name of the status buffer's hidden parameter (added if the kernel has "
        "none): the invocations that start and those that leave every loop by its own exits "
        "are counted there, so that the host sees loops a driver's loop cap cut short "
        "(kir/loop_guard.h); loop_guard_key: the word naming the kernel; loop_guard_ballot: "
        "count finished invocations per subgroup (else one atomic each).");
    m.attr("LOOP_STARTED_WORD") = kir::kLoopStartedWord;
    m.attr("LOOP_FINISHED_WORD") = kir::kLoopFinishedWord;
    m.attr("LOOP_KERNEL_WORD") = kir::kLoopKernelWord;

    // The hide_int_ranges mask NVIDIA's compiler needs (launchers.hide_int_ranges).
    m.attr("HIDE_INT_RANGES_NVIDIA") = static_cast<unsigned>(kir::kHideNvidia);

    m.def(
        "narrow_ints",
        [](const kir::Module& module) {
            kir::Module copy = module;
            narrow::NarrowOptions options;
            options.ranges.params = narrow::ExtentParamRanges(copy);
            ThrowIfError(narrow::NarrowIntegers(copy, options));
            ThrowIfError(kir::Verify(copy));
            return copy;
        },
        nb::arg("module"),
        "A copy of a KIR module with the integer narrowing pass applied as compile applies "
        "it (array extents >= 0, no device limits), for tests that run both in the "
        "interpreter.");

    m.def(
        "count_wide_int_ops",
        [](const kir::Module& module) { return narrow::CountWideIntOps(module); },
        nb::arg("module"),
        "How many instructions of a KIR module compute on or move 64-bit integers "
        "(narrow::CountWideIntOps).");

    m.def(
        "disassemble",
        [](WordsIn words) { return spirv::Disassemble(WordsFromNumpy(words)); },
        nb::arg("words"), "The SPIR-V assembly text of a module given as uint32 words.");

    m.def(
        "validate",
        [](WordsIn words) { ThrowIfError(spirv::Validate(WordsFromNumpy(words))); },
        nb::arg("words"), "Run the SPIR-V validator; raises SpirvCodegenError on failure.");
}

}  // namespace nvk::bind
