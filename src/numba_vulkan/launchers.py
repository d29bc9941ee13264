"""What a specialisation needs from a device: the device's facts that shape compilation
(push-constant room, float controls) and the C++ launcher that runs it there, with the
values of its hidden parameters (kir/abi.h)."""

from . import _core, compiler, config, hidden_args, packed_args
from .frontend import grid
from .frontend.mathlib import denormals
from .runtime import selftest

#: Vulkan's guaranteed maxPushConstantsSize; kernels compiled without a device
#: assume it, kernels for a device use that device's limit.
MIN_PUSH_BYTES = 128


def max_push(device):
    """Bytes of push constants a kernel may use on `device` (Vulkan's minimum without one)."""
    if device is None:
        return MIN_PUSH_BYTES
    return max(MIN_PUSH_BYTES, int(getattr(device.info, "max_push_constants", MIN_PUSH_BYTES)))


def codegen_controls(device):
    """What the code for `device` must allow for (compiler.CodegenControls); without a device,
    nothing is promised."""
    if device is None:
        return compiler.CodegenControls(promote_loop_elements=bool(config.PROMOTE))
    info = device.info
    denorm = tuple(getattr(info, "denorm_preserve", ()))
    forms = soft_forms(info)
    return compiler.CodegenControls(
        nan_preserve=tuple(info.nan_preserve),
        denorm_preserve=denorm,
        hide_float_zeros="float_zeros" in forms,
        soft_rounding=(1 if "rounding_f32" in forms else 0) | (2 if "rounding_f64" in forms else 0),
        subnormals=denormals.mode_for(denorm, config.SUBNORMALS32),
        # Without float64 the driver's quotient stays (docs/math.md).
        divide_f32_in_f64="division_f32" in forms and bool(getattr(info, "float64", False)),
        fused_fma=fused_fma(info, config.FMA),
        sqrt_one_step=sqrt_one_step(info, config.FMA),
        hide_int_ranges=hide_int_ranges(info, config.HIDE_INT_RANGES),
        loose_division=config.DRIVER_DIV == "loose",
        # lavapipe ends long loops early: each is counted, and a cut one raises (kir/loop_guard.h)
        guard_loops=info.loop_iteration_limit or 0,
        subgroup_ballot=info.subgroup_basic and info.subgroup_ballot,
        subgroup_partitioned=bool(getattr(info, "subgroup_partitioned", False)),
        promote_loop_elements=bool(config.PROMOTE),
        group_loop=group_loop(info, config.GROUP_LOOP),
        max_local_size=tuple(int(n) for n in info.max_local_size),
        max_groups=tuple(int(n) for n in info.max_groups),
        matrix_shapes=tuple(getattr(info, "matrix_shapes", ())),
    )


def soft_forms(info):
    """The software forms kernels for the device `info` are compiled with (runtime/selftest.py):
    those its self-test's verdicts call for and those NUMBA_VULKAN_SOFT_FORMS forces; none
    while the self-test itself compiles (selftest.RAW). Where the self-test has not run
    (NUMBA_VULKAN_SELFTEST=0, or the compiler was not loaded), guessed from the driver as
    before it existed: lavapipe folds float zeros, other devices with float64 may divide
    float32 inexactly."""
    if selftest.RAW.get():
        return ()
    if info.selftest:
        return tuple(info.soft_forms)
    guessed = {"float_zeros"} if folds_float_zeros(info) else {"division_f32"}
    guessed.update(selftest.forced_forms())
    return tuple(f for f in selftest.SOFT_FORMS if f in guessed)


#: Vendors whose Vulkan drivers compile GLSL.std.450 Fma to the hardware's fused multiply-add
#: (one rounding) on every GPU they ship (runtime/selftest.py).
FUSED_FMA_VENDORS = selftest.FUSED_FMA_VENDORS


def fused_fma(info, setting=""):
    """Whether the math library may take GLSL.std.450 Fma as rounding once on the device
    `info`. Vulkan does not promise it (Fma's precision is "inherited from OpFMul followed by
    OpFAdd"), so only for FUSED_FMA_VENDORS, and not where the self-test saw an Fma round
    twice; or where config.FMA = "fused" says so (lavapipe's Fma is not fused: there the fused
    forms can be checked only as compiled code); "off" never."""
    if setting in ("fused", "off"):
        return setting == "fused"
    if getattr(info, "vendor_id", 0) not in FUSED_FMA_VENDORS:
        return False
    verdicts = dict(getattr(info, "selftest", ()))
    return not any(verdicts.get(p, "").startswith("not fused") for p in ("fma_f32", "fma_f64"))


def sqrt_one_step(info, fma_setting=""):
    """Whether float32 sqrt may end after one correction step on the device `info`: its Fma
    rounds once and its self-test found the step correctly rounded on every float32 of the
    short path's range with its InverseSqrt (runtime/sqrt_probe.py)."""
    verdicts = dict(getattr(info, "selftest", ()))
    return fused_fma(info, fma_setting) and verdicts.get("sqrt_f32_one_step") == "holds"


NVIDIA = 0x10DE  # the PCI vendor id DeviceInfo.vendor_id gives NVIDIA's devices

#: Vendors whose Vulkan compilers take signed integer arithmetic as never overflowing,
#: against SPIR-V's wrapping semantics: NVIDIA (typed fuzzer, H200, driver 580).
RANGE_ASSUMING_VENDORS = (NVIDIA,)

#: kir/int_ranges.h's kHideNvidia (23): signed negations, abs and widenings (7), and the
#: constants of 64-bit ordered comparisons with arithmetic (16).
HIDE_ON_RANGE_ASSUMING_VENDORS = _core.HIDE_INT_RANGES_NVIDIA


def hide_int_ranges(info, setting=None):
    """The mask of kir/int_ranges.h to compile for the device `info` with:
    HIDE_ON_RANGE_ASSUMING_VENDORS on RANGE_ASSUMING_VENDORS, 0 elsewhere; config.HIDE_INT_RANGES
    (NUMBA_VULKAN_HIDE_INT_RANGES, 0 to 31) overrides it (tests run the pass on lavapipe)."""
    if setting is not None:
        return setting
    nvidia = getattr(info, "vendor_id", 0) in RANGE_ASSUMING_VENDORS
    return HIDE_ON_RANGE_ASSUMING_VENDORS if nvidia else 0


def group_loop(info, setting=None):
    """CodegenControls.group_loop for the device `info`: the group loop (frontend/grid.py)
    for light kernels on NVIDIA's drivers, whose workgroups of 128 or 256 invocations keep
    such kernels waiting (docs/corpus.md), nowhere else; config.GROUP_LOOP
    (NUMBA_VULKAN_GROUP_LOOP) overrides it: 1 every kernel that can take it on a device
    without a loop cap, 2 also with one (tests), 0 none."""
    if setting is None:
        nvidia = getattr(info, "vendor_id", 0) == NVIDIA
        return grid.LIGHT if nvidia and not info.loop_iteration_limit else False
    return setting == 2 or (setting == 1 and not info.loop_iteration_limit)


def folds_float_zeros(info):
    """Whether the device's compiler shortcuts float arithmetic on a constant +0.0 (x + 0,
    0 - x, x * 0, 0 / x, x / 0) against IEEE 754 even under SignedZeroInfNanPreserve:
    Mesa's lavapipe (llvmpipe; Mesa's vendor id 0x10005). Kernels compiled for it read
    such zeros from a hidden parameter instead (kir/float_zeros.h)."""
    name = str(getattr(info, "driver_name", "") or "").lower()
    return name in ("llvmpipe", "lavapipe") or getattr(info, "vendor_id", 0) == 0x10005


def make_launcher(device, compiled):
    """The C++ launcher of ``compiled`` on ``device`` (interface C of the runtime)."""
    # runtime.Device is, or wraps as ._core, the C++ device that loads kernels.
    core_device = getattr(device, "_core", device)
    kernel_core = core_device.load_kernel(compiled.words, compiled.push_size)
    # The launcher writes the parameter block from the kernel's argument declarations
    # (kir/abi.h), including which arrays the kernel writes: the device puts barriers
    # only where a launch conflicts with earlier ones (vk/batch.cc).
    launcher = _core.Launcher(
        core_device, kernel_core, list(compiled.args), compiled.param_size,
        compiled.params_in_buffer, hidden=hidden_values(device, compiled),
    )
    # A specialisation typed with 'C' or 'F' arrays takes only arrays of that layout (the
    # code may depend on it: tile loads on the matrix units, views of a contiguous array);
    # an array of another layout goes to the slow path, which specialises for it.
    layouts = _layouts(compiled)
    if any(layouts):
        launcher.require_layouts(layouts)
    if packed_args.needs_adapter(compiled):  # tuples, complex: flattened (packed_args.py)
        return packed_args.AdaptedLauncher(launcher, compiled.argtypes)
    formats = numpy_formats(device, compiled)
    if formats is not None:
        launcher.allow_numpy(formats)
    return launcher


def _layouts(compiled):
    """Per flat argument declaration, the contiguity ('C', 'F') its array was typed with,
    or None: arrays, the arrays of a tuple of arrays, nothing for the rest."""
    from numba.core import types

    def of(ty):
        return ty.layout if isinstance(ty, types.Array) and ty.layout in ("C", "F") else None

    out = []
    for ty, group in zip(compiled.argtypes, compiled.by_position):
        items = ty.types if isinstance(ty, types.BaseTuple) and all(
            isinstance(t, types.Array) for t in ty.types) else (ty,)
        layouts = [of(t) for t in items]
        out += layouts if len(layouts) == len(group) else [None] * len(group)
    return out


def numpy_formats(device, compiled):
    """Per argument, the buffer format of the NumPy arrays the C++ launcher may take
    directly (vk/host_args.cc, bind/numpy_args.h), or None; None for the whole kernel
    if it takes none that way.

    Only arrays that the slow path would hand over unchanged: a dtype stored as
    itself on the device (not bool, which is stored as int32, nor a 64-bit type the
    device lacks), no records, no integers narrowed below their dtype (the slow path
    checks their values), and no kernel that raises or prints (the slow path then
    synchronises the device and reports).
    """
    import numpy as np
    from numba.core import types
    from numba.np import numpy_support

    from .runtime.array import storage_dtype

    if compiled.sites or not hasattr(device, "info"):
        return None
    decls = [a for a in compiled.args if a.kind != "hidden"]
    if len(decls) != len(compiled.argtypes):
        return None
    formats = []
    for argtype, decl in zip(compiled.argtypes, decls):
        fmt = None
        if isinstance(argtype, types.Array) and argtype.layout == "C" and decl.kind == "array":
            try:
                dtype = np.dtype(numpy_support.as_dtype(argtype.dtype))
            except Exception:  # noqa: BLE001 - a dtype NumPy has no plain form of
                dtype = None
            if (dtype is not None and dtype.kind in "iuf"
                    and storage_dtype(dtype, device.info) == dtype
                    and _core.memory_bytes(decl.compute) >= dtype.itemsize):  # fmt: skip
                fmt = memoryview(np.empty(1, dtype)).format
        formats.append(fmt)
    return formats if any(f is not None for f in formats) else None


def hidden_values(device, compiled):
    """{name: int, _core.Buffer or DeviceArray} for the kernel's hidden parameters other
    than the grid's (kir/abi.h): the one place where a new hidden parameter, declared by
    the front end with ``module.add_hidden_param`` (or by a C++ pass), gets its value on
    ``device`` (a Buffer's or DeviceArray's address is written and the buffer counts as
    used by every launch: see docs/runtime.md)."""

    names = {a.name for a in compiled.args if a.kind == "hidden"}
    values = {}
    if _core.FLOAT_ZERO_PARAM in names:  # lavapipe's zeros (kir/float_zeros.h)
        values[_core.FLOAT_ZERO_PARAM] = 0
    if _core.INT_ZERO_PARAM in names:  # NVIDIA's signed ranges (kir/int_ranges.h)
        values[_core.INT_ZERO_PARAM] = 0
    if compiled.hidden:  # global arrays and the status buffer (hidden_args.py)
        values.update(hidden_args.hidden_values(compiled, device, names))
    return values
