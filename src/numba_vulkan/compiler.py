"""The Python half of the pipeline: a Python function in, a CompiledKernel out.

compile_kernel
  1. type_kernel   (numba_vulkan.typing.pipeline) Numba's front half with our typing context: bytecode ->
                   IR -> untyped passes -> type inference. No SSA: the
                   front end maps Numba variables to KIR local variables,
                   so phi nodes would only get in its way.
  2. lower_kernel  numba_vulkan.frontend: typed IR -> KIR (CFG form).
  3. _core.compile the C++ half: verify, narrow proven 64-bit integer
                   ops to 32 bits (mode.prove), structurize, emit SPIR-V,
                   optimise, validate.
Each stage can be dumped (NUMBA_VULKAN_DUMP=kir,spirv).
"""

import gc
import itertools
import os
import typing

from . import config, errors
from .frontend.mathlib import denormals
from .typing.pipeline import annotate, check_device_calls, type_kernel_for_user


class CodegenControls(typing.NamedTuple):
    """What the device's compiler and arithmetic do, which the generated code depends on
(floats, and NVIDIA's signed ranges); part of every compiled kernel's cache key.

    nan_preserve, denorm_preserve: the float widths for which it can keep signed
    zeros, infinities and NaNs (``DeviceInfo.nan_preserve``), and subnormals
    (``DeviceInfo.denorm_preserve``); a kernel asks for both at the widths it uses
    unless ``fastmath`` is on. hide_float_zeros: hide float constants +0.0 from its
    compiler (lavapipe; kir/float_zeros.h). soft_rounding: floor, ceil and trunc of float32
    (1) and float64 (2) from the bits, where the driver's are wrong (kir/soft_rounding.h).
    subnormals: how the math library treats
    float32 subnormals (frontend/mathlib/denormals.py: PRESERVE, FLUSH or SIMULATE).
    divide_f32_in_f64: compute float32 division in float64 and round once, because the
    driver's may be 2.5 ulp off (Vulkan allows it; NVIDIA's is; kir/float_division.h).
    hide_int_ranges: a mask (kir/int_ranges.h) of the signed values whose ranges the
    device's compiler must not see, because it takes signed arithmetic as never
    overflowing (NVIDIA; launchers.hide_int_ranges).
    fused_fma: the device's GLSL.std.450 Fma rounds once (Vulkan lets it be a multiply and an
    add): the math library then builds its exact products from it (launchers.fused_fma), and
    with divide_f32_in_f64 a float32 division is computed in float32 with Fma where its
    operands are in a safe range, in float64 only in a branch for the others.
    sqrt_one_step: float32 sqrt where Fma rounds once ends after one correction step, without
    its exact rounding decision: the device's self-test checked every float32 of the short
    path's range and found the step correctly rounded with its InverseSqrt
    (runtime/sqrt_probe.py; frontend/mathlib/roots.py).
    divide_f32_test_ulps, divide_f32_exact_fma: tests of that division on lavapipe (whose 1/b
    is exact and whose Fma rounds twice): the driver's reciprocal moved by up to that many
    ulps, as loose as a driver's may be, and each Fma of the sequence computed exactly in
    float64 (kir/float_division.h).
    loose_division: tests (config.DRIVER_DIV = "loose"): the math library's own divisions,
    which take the driver's quotient (mathlib/dd.driver_div), are moved by 2 ulp, about as far
    as Vulkan lets a driver's be off, so that lavapipe (whose division is exact) checks the
    library's accuracy against a loose division.
    guard_loops: 0, or the cap of a driver that ends long loops early without an error
    (lavapipe: ``DeviceInfo.loop_iteration_limit``, 65,535 iterations): the invocations that
    start, and those that leave every loop by its exits, are counted, and the host raises
    VulkanLoopLimitError where they differ (kir/loop_guard.h); a kernel whose loops all have
    compile-time trip counts adding up to at most half the cap is left as it is
    (frontend.static_loops).
    subgroup_ballot: the device has subgroup ballots (basic and ballot operations): the loop
    guard counts finished invocations per subgroup with a ballot (else one atomic each), and
    ``syncthreads_count/and/or`` add one count per subgroup (frontend/sync.py).
    subgroup_partitioned: the device groups lanes by value in one instruction
    (VK_NV_shader_subgroup_partitioned): ``subgroup.partition`` is that instruction, else a
    loop of broadcasts and ballots (frontend/subgroups.py).
    matrix_shapes: the device's cooperative-matrix configurations (matrix_shapes.py); empty
    where it has none, and kernels emulate them (frontend/matrix.py).
    promote_loop_elements: elements a loop loads and stores at one address kept in registers
    while it runs (spirv/loop_promotion.h; config.PROMOTE, NUMBA_VULKAN_PROMOTE=0 turns it
    off to compare).
    group_loop: the kernel's workgroups along x run as a loop over at most 4,096 dispatched
    workgroups, each taking the launch's in turn (frontend/grid.py,
    "The group loop"; launchers.group_loop, config.GROUP_LOOP); kernels with barriers,
    shared memory or cooperative matrices are left as they are. frontend.grid.LIGHT
    (NVIDIA's default): light kernels only.
    max_local_size, max_groups: the device's limits per axis (``DeviceInfo``), which bound
    the ids the narrowing pass reasons about (local ids are never negative, so Numba's
    negative-index wrap of ``s[local_id(1), j]`` goes); empty: not known.
    """

    nan_preserve: tuple = ()
    denorm_preserve: tuple = ()
    hide_float_zeros: bool = False
    soft_rounding: int = 0
    subnormals: int = denormals.FLUSH  # no promise of subnormals: the flush-safe forms
    divide_f32_in_f64: bool = False
    fused_fma: bool = False  # no promise: Dekker's products
    sqrt_one_step: bool = False
    divide_f32_test_ulps: int = 0
    divide_f32_exact_fma: bool = False
    hide_int_ranges: int = 0
    loose_division: bool = False
    guard_loops: int = 0
    subgroup_ballot: bool = False
    subgroup_partitioned: bool = False
    promote_loop_elements: bool = True
    group_loop: bool | str = False  # or frontend.grid.LIGHT
    max_local_size: tuple = ()
    max_groups: tuple = ()
    matrix_shapes: tuple = ()


def compile_kernel(*args, **kwargs):
    """Compile one specialisation of a kernel (see _compile_kernel), the cyclic garbage
    collector paused meanwhile.

    Typing a kernel and its device functions allocates tens of thousands of small
    objects, most of which survive (the typed IR is kept); the collector ran several
    times per first call and then, every twenty or so kernels, a full collection
    that took longer than the compilation itself (benchmarks/profile_first_call.py).
    Paused, it runs at most once afterwards, at the next allocation past its threshold;
    only cyclic garbage made meanwhile waits until then.
    """
    paused = gc.isenabled()
    if paused:
        gc.disable()
    try:
        return _compile_kernel(*args, **kwargs)
    finally:
        if paused:
            gc.enable()


def _compile_kernel(
    pyfunc, argtypes, options, mode, max_push_bytes=128, codegen_controls=CodegenControls(),
    dynamic_shared_bytes=0,
):
    """Compile one specialisation of a kernel.

    Parameters
    ----------
    pyfunc : function
        The kernel's Python function.
    argtypes : tuple of numba.core.types.Type
        Types of the arguments.
    options : Options
        Code generation options.
    mode : numba_vulkan.narrowing.Mode
        How 64-bit types are narrowed (depends on the device).
    max_push_bytes : int
        The push-constant limit; larger parameter blocks go in a buffer.
    codegen_controls : CodegenControls
        What the device does with floats (its NaN and subnormal widths, ...).
    dynamic_shared_bytes : int
        The launch's bytes for the dynamic shared array (``shared.array(0, dtype)``).

    Returns
    -------
    numba_vulkan.codegen.CompiledKernel
    """
    from . import _core, codegen, frontend, sites
    from .frontend import status

    if options.debug:
        raise errors.VulkanUnsupportedError(
            f"kernel {pyfunc.__name__!r}: debug=True is not supported yet (numba.cuda's "
            "debug=True adds debug information and exception checks inside kernels)"
        )
    name = pyfunc.__name__
    typed = type_kernel_for_user(pyfunc, argtypes, options)
    lowered = frontend.lower_kernel(
        typed.func_ir, typed.typemap, typed.calltypes, tuple(argtypes), mode, name,
        dynamic_shared_bytes=dynamic_shared_bytes,
        denormals=codegen_controls.subnormals,
        fused_fma=codegen_controls.fused_fma,
        sqrt_one_step=codegen_controls.sqrt_one_step,
        loose_division=codegen_controls.loose_division,
        matrix_shapes=codegen_controls.matrix_shapes,
        subgroup_ballot=codegen_controls.subgroup_ballot,
        subgroup_partitioned=codegen_controls.subgroup_partitioned,
        group_loop=codegen_controls.group_loop,
        fastmath=options.fastmath if options.fast_builtins is None else options.fast_builtins,
        boundscheck=options.boundscheck,
        error_model=options.error_model,
    )
    check_device_calls(name, options, lowered.device_calls)
    typed.callees = tuple(lowered.callees)
    # _core.compile copies the module, so this is the KIR exactly as the front end built it.
    loc = typed.func_ir.loc
    guard = sites.LoopSite(name, loc.filename or "?", loc.line or 0) if codegen_controls.guard_loops else None
    core = _core.compile(
        lowered.module,
        optimize=options.optimize,
        # The math library's exact building blocks (two_sum, rint, Dekker products) would be
        # folded away by fastmath's reassociation: kernels that use it keep exact float ops.
        fastmath=options.fastmath and not lowered.exact_math,
        max_push_bytes=max_push_bytes,
        nan_preserve=list(codegen_controls.nan_preserve),
        denorm_preserve=list(codegen_controls.denorm_preserve),
        narrow_ints=mode.prove,
        validate=bool(config.VALIDATE),
        # 2 (the tests): the emitter's module too, before optimisation (src/core/compile.cc)
        validate_emitted=config.VALIDATE >= 2,
        unroll=min(8, max(1, config.UNROLL)),
        hide_float_zeros=codegen_controls.hide_float_zeros,
        soft_rounding=codegen_controls.soft_rounding,
        divide_f32_in_f64=codegen_controls.divide_f32_in_f64,
        fused_fma=codegen_controls.fused_fma,
        divide_f32_test_ulps=codegen_controls.divide_f32_test_ulps,
        divide_f32_exact_fma=codegen_controls.divide_f32_exact_fma,
        hide_int_ranges=codegen_controls.hide_int_ranges,
        max_local_size=list(codegen_controls.max_local_size) or None,
        max_groups=list(codegen_controls.max_groups) or None,
        loop_guard=status.PARAM if guard else None,
        loop_guard_key=guard.key if guard else 0,
        loop_guard_ballot=codegen_controls.subgroup_ballot,
        loop_guard_bounded=_bounded_loops(lowered, codegen_controls.guard_loops),
        static_loops=list(lowered.counted_loops),
        promote_loop_elements=codegen_controls.promote_loop_elements,
    )
    hidden, kernel_sites = list(lowered.hidden), tuple(lowered.sites)
    if core.guarded_loops:  # the guard counts in the status buffer (runtime/reports.py)
        kernel_sites += (guard,)
        if status.lowered_entry() not in hidden:
            hidden.append(status.lowered_entry())
    kernel = codegen.CompiledKernel(
        name=name,
        core=core,
        argtypes=argtypes,
        mode=mode,
        typed=typed,
        hidden=hidden,
        sites=kernel_sites,
        barrier_guards=lowered.barrier_guards,
    )
    dump(kernel)
    return kernel



def _bounded_loops(lowered, cap):
    """The header names of the kernel's loops where their compile-time trip counts add up to
    at most half the driver's cap `cap` (the margin: the driver's count of an iteration is
    not specified); else none, and the loop guard counts every loop."""
    names, iterations = lowered.static_loops
    return list(names) if cap and iterations is not None and iterations <= cap // 2 else []


# ---------------------------------------------------------------- dumps

_dump_counter = itertools.count()


def dump(kernel):
    """Write the stages NUMBA_VULKAN_DUMP asks for into nvk_dump/<kernel>.<n>.<stage>."""
    stages = {s.strip() for s in config.DUMP.split(",") if s.strip()}
    if not stages:
        return
    root = config.CACHE_DIR or os.getcwd()
    folder = os.path.join(root, "nvk_dump")
    os.makedirs(folder, exist_ok=True)
    stem = os.path.join(folder, f"{kernel.name}.{next(_dump_counter)}")
    if "kir" in stages or "all" in stages:
        with open(stem + ".kir", "w") as f:
            f.write(kernel.kir)
    if "narrowed" in stages or "all" in stages:
        with open(stem + ".narrowed", "w") as f:
            f.write(kernel.kir_narrowed)
    if "spirv" in stages or "all" in stages:
        with open(stem + ".spvasm", "w") as f:
            f.write(kernel.disassemble())
    if "types" in stages or "all" in stages:
        with open(stem + ".types", "w") as f:
            f.write(annotate(kernel.typed))
