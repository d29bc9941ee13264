"""Classify the outcomes of scripts/run_cudapy.py by cause, and print the report.

The classes (docs/cuda-compat.md explains them): a test fails because numba_vulkan
lacks a numba.cuda name or a language feature that Vulkan could have ("missing"), because
Vulkan has no equivalent ("Vulkan cannot"), because the test inspects numba-cuda's own
compiler, driver or output (PTX, LLVM IR, its dispatcher's internals: "CUDA internals"),
because lavapipe lacks a device feature ("lavapipe"), or because we compute a wrong
result or crash ("our bug"; a wrong value is always a FAIL). The rules are regular
expressions on the error line, first match wins; anything unmatched is "unclassified",
which a reader should look at, not trust.
"""

import re

RULES = [
    ("CUDA internals: PTX/LLVM/asm inspection, dispatcher internals",
     r"not found in '; SPIR-V|: ; SPIR-V|__local_depot"),
    ("CUDA internals: numba-cuda's cache files and pickling",
     r"^FAIL AssertionError: 0 != 2 : \[\]|PicklingError|Can't pickle local object"),
    ("differs: a warning numba.cuda gives is not given", r"DID NOT WARN"),
    ("differs: a refusal in other words or another exception type",
     r"Can't create ForAll with negative|gufunc accepts \d+ positional|"
     r"'The following target options are not supported|outputs given both|"
     r"unknown option\(s\) \['nonexistent'\]|nopython=False|nopython kwarg"),
    ("lavapipe: subgroup size 8, not CUDA's warp of 32",
     r"!= 32 : CUDA semantics| laneid$|syncwarp synchronises a warp of 32 lanes"),
    ("differs: the error comes at the first launch (a signature does not compile eagerly)",
     r"TypingError not raised|^KeyError: \(Array\("),
    # numba.cuda refuses it too (a TypingError that the test matches against Numba's words)
    ("differs: a refusal in other words or another exception type",
     r"(does not match|not found in) .*is not supported in Vulkan kernels"),
    ("Vulkan cannot: __cuda_array_interface__ / IPC / CUDA pointers",
     r"No module named 'cuda'"),  # NVIDIA's cuda-python (cuda.core) imported by the test
    ("CUDA internals: numba-cuda debug dumps and private options",
     r"--ASSEMBLY|IR DUMP|CFG dominators|BINARY_OP|unknown option\(s\) '_"),
    ("missing: vectorize/guvectorize (numba's target='cuda' or cuda.vectorize)",
     r"cannot import name '(gu)?vectorize'|CudaSupportError|Error at driver init"),
    ("Vulkan cannot: grid sync / cooperative groups",
     r"grid-wide synchron|cooperative|this_grid|cuda\.cg\b|\bcg\b"),
    ("Vulkan cannot: CUDA C/PTX/LTO linking",
     r"link=|linking|LinkableCode|declare_device|nvjitlink|cudadevrt|CUDA C|\.cu\b|\.ptx\b"),
    ("Vulkan cannot: __cuda_array_interface__ / IPC / CUDA pointers",
     r"cuda_array_interface|ForeignArray|IPC|ipc_|CPointer|is a pointer|external_stream|driver API|"
     r"current_context"),
    ("CUDA internals: numba-cuda compiler/driver modules",
     r"No module named 'numba_vulkan\.cuda\.|cannot import name .* from '(_cudapy_core|"
     r"numba_vulkan\.cuda)|numba_vulkan\.cuda\.(cudadrv|driver|compile|compiler|simulator|"
     r"descriptor|codegen|cudadecl|cudaimpl|extending|flags|launchconfig|typeconv|"
     r"kernels|vector_types|bf16|_internal|libdevicefuncs|args|api|errors|misc|"
     r"deviceufunc|cgutils|utils|typing|compile_all|devicearray)\b|_cudapy_core"),
    ("CUDA internals: PTX/LLVM/asm inspection, dispatcher internals",
     r"inspect_(llvm|asm|sass|types|lineinfo)|ptx|PTX|llvm|LLVM|nvvm|NVVM|sass|"
     r"\.overloads|\.definitions|\.specializations|\.specialize|_cache|targetctx|typingctx|"
     r"get_regs_per_thread|get_shared_mem_per_block|get_local_mem|max_cooperative|"
     r"_numba_type_|has no stand-in|config\.|debuginfo|lineinfo|gpu_data|PicklingError"),
    ("timeout", r"Timeout|timeout after"),
    ("lavapipe: device feature",
     r"lavapipe|shaderFloat16|not supported by (this|the) device|device lacks|VK_ERROR"),
    ("missing: half/bfloat16/fp8 types", r"half-precision|float16|bfloat16|fp16|fp8|\bf2\b|ml_dtypes"),
    ("missing: literal arguments to device functions (a shape passed in)",
     r"not a compile-time constant"),
    ("missing: atomic variants (nanmin/nanmax, compare_and_swap, mixed index types)",
     r"atomic\.|\.real'|\.imag'"),
    ("missing: complex math (cmath, complex pow/log)", r"cmath|complex"),
    ("missing: records (struct arguments and fields)", r"record|type void"),
    ("missing: debug=True, print in kernels", r"debug=True|CalledProcessError|print"),
    ("missing: datetime/timedelta", r"datetime|timedelta"),
    ("missing: recursion", r"recursion"),
    ("missing: NumPy functions, array methods, other intrinsics",
     r"'numpy\.|the method|attribute '|'round'|math\.|does not exist in this version|"
     r"local\.array\(|iterating over|tuple|Tuple|order='F'"),
    ("missing: numba.cuda name not mapped",
     r"UnmappedNameError|not mapped to Vulkan yet|not mapped yet|has no attribute|"
     r"cannot import name"),
    ("missing: other feature refused by numba_vulkan",
     r"VulkanUnsupportedError|not supported|unsupported|Unsupported|refused|cannot be"),
    ("our bug: wrong result", r"^(FAIL|AssertionError)|AssertionError|not equal|Mismatch"),
    ("our bug: crash or compiler error",
     r"KeyError|IndexError|TypeError|ValueError|RuntimeError|NotImplementedError|"
     r"LoweringError|TypingError|AttributeError|process died"),
]


# Failures that only the test's name tells apart (their error line is a bare assertion).
BY_TEST = {
    "test_record_alignment_error":
        "differs: accepted where numba.cuda refuses (the computation is right)",
    "test_negative_strided_copy_to_host":
        "differs: accepted where numba.cuda refuses (the computation is right)",
    "test_target_cuda_nopython": "differs: a warning numba.cuda gives is not given",
    "test_selp": "CUDA internals: PTX/LLVM/asm inspection, dispatcher internals",  # counts bra
    # looks for '.local' in the PTX
    "TestCudaLocalMem.test_local_array": "CUDA internals: PTX/LLVM/asm inspection, dispatcher internals",
    "test_undefined_var": "differs: a warning numba.cuda gives is not given",
    "test_missing_source": "differs: a warning numba.cuda gives is not given",
    "test_user_exception": "differs: a refusal in other words or another exception type",
    # ary.shape[-x] out of range under debug=True: numba.cuda raises IndexError, we do not
    # check a tuple's run-time index (the statement's value is unused)
    "TestException.test_exception": "differs: a tuple index out of range is not checked",
    # f[1, 1]() of a device function: launched as a kernel where numba.cuda refuses
    # round(float32, n): numba.njit rounds x * 10^n to float32 before rounding it to an
    # integer, numba.cuda does not; kernels follow numba.njit (docs/cuda-compat.md)
    "test_round_to_f4_halfway": "differs: numba.njit's value where numba.cuda's differs",
    "test_device_func_as_kernel_disallowed":
        "differs: accepted where numba.cuda refuses (the computation is right)",
    # rec.j[:, :] = np.ones((3, 2)) into a record's sub-array field: an expected failure on
    # numba.cuda that computes here what the test's host reference computes
    "TestNestedArrays.test_set_array":
        "differs: accepted where numba.cuda refuses (the computation is right)",
    # cache files counted in __pycache__ and hits across processes; test_recompile expects
    # the stale cache entry of a kernel whose global changed (Z = 10): our cache key holds
    # the globals' values (cache.py), so the kernel is compiled anew and gives 15, not 6
    "CUDACachingTest.test_recompile": "CUDA internals: numba-cuda's cache files and pickling",
    "CUDACachingTest.test_closure": "CUDA internals: numba-cuda's cache files and pickling",
    "CUDAAndCPUCachingTest.test_cpu_and_cuda_targets":
        "CUDA internals: numba-cuda's cache files and pickling",
    "CUDAAndCPUCachingTest.test_cpu_and_cuda_reuse":
        "CUDA internals: numba-cuda's cache files and pickling",
}


def classify(kind, reason, test=""):
    if kind == "PASS":
        return ""
    for name, cls in BY_TEST.items():
        if kind == "FAIL" and test.endswith(name):
            return cls
    if kind == "SKIP" or reason.startswith("Skipped: "):
        if "CUDA toolkit" in reason:
            return "skip: needs the CUDA toolkit"
        if "simulator" in reason:
            return "skip: simulator only"
        return "skip: the test's own condition"
    text = reason if kind == "ERROR" else "FAIL " + reason
    if "laneid" in test and kind == "FAIL":
        text += " laneid"  # lanes of 32 expected: lavapipe's subgroups have 8
    for name, pattern in RULES:
        if re.search(pattern, text):
            return name
    return "unclassified"


def print_report(classified):
    """Per-file counts, totals, and the failure classes with an example each."""
    totals, classes = {}, {}
    print("\nper file: PASS FAIL ERROR SKIP")
    for name, tests in classified.items():
        counts = {k: 0 for k in ("PASS", "FAIL", "ERROR", "SKIP")}
        for test, (kind, reason, cls) in tests.items():
            counts[kind] += 1
            totals[kind] = totals.get(kind, 0) + 1
            if cls:
                entry = classes.setdefault(cls, [0, f"{test}: {reason[:160]}"])
                entry[0] += 1
        print(f"  {name:45} {counts['PASS']:4} {counts['FAIL']:4} {counts['ERROR']:5} "
              f"{counts['SKIP']:4}")
    print(f"\ntotal: {totals}")
    print("\nclasses (count, example):")
    for cls, (n, example) in sorted(classes.items(), key=lambda kv: -kv[1][0]):
        print(f"  {n:5}  {cls}\n         e.g. {example}")
    print(f"\n{totals.get('PASS', 0)} passed, {totals.get('FAIL', 0) + totals.get('ERROR', 0)} "
          f"failed, {totals.get('SKIP', 0)} skipped")
