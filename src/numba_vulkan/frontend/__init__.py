"""The front end: Numba's typed IR of a kernel -> KIR (CFG form), built through ``_core``.

The front end knows Python's semantics (floor division, negative indices,
truthiness, range loops) and expresses them with KIR's plain operations, so
the C++ backend only ever sees C-like, typed code.
"""

from dataclasses import dataclass, field

# exprs fills lower.EXPRESSIONS, the driver's table of expression handlers, when imported.
from . import divergence, exprs, grid, hidden, status  # noqa: F401
from .lower import Lowerer


@dataclass
class LoweredKernel:
    """The KIR of one kernel specialisation and what the launcher needs to call it.

    Attributes
    ----------
    module : numba_vulkan._core.KirModule
        The kernel in KIR, CFG form.
    args : list of numba_vulkan._core.ArgDecl
        The arguments and hidden parameters as the module declares them (kir/abi.h):
        kinds, slots, offsets, and which arrays the kernel writes.
    param_size : int
        Size of the parameter block in bytes.
    writes : tuple of bool
        Per argument: True when the kernel may store into that array.
    grid : tuple
        ``(base_offsets, groups_offsets, index_bytes)``: where the launcher
        writes the first workgroup of each dispatch and the whole grid's
        workgroup counts (three u32 each; None when the kernel does not read
        them), and the width of the kernel's ids (see frontend/grid.py).
    exact_math : bool
        True when the kernel calls the math library (frontend/mathlib), whose
        algorithms need exactly rounded float ops: the kernel is then emitted
        without fastmath's freedoms (docs/math.md, "fastmath").
    device_calls : list
        ``(jitted function, ir.Loc)`` of each device function inlined (frontend/inline.py).
    callees : list
        The TypedKernel of each device function inlined (for checks on the whole kernel).
    hidden : list
        ``(name, source)`` of each hidden array (global arrays read through a buffer:
        frontend/hidden.py), whose parameters ``name.addr``, ``name.shape[d]`` and
        ``name.strides[d]`` are hidden parameters in ``args`` (values: hidden_args.py).
        The last is the status buffer where the kernel has raise or print sites
        (``("status", ("status", None))``, one parameter ``status.addr``: frontend/status.py).
    sites : tuple
        The kernel's raise and print sites (numba_vulkan/sites.py).
    static_loops : tuple
        ``(header block names, iterations)``: the kernel's loops and a bound on the loop
        iterations one invocation runs in all, where every loop is a range loop with
        compile-time arguments (`static_loops`); iterations is None otherwise.
    """

    module: object
    args: list
    param_size: int
    writes: tuple
    grid: tuple = (None, None, 4)
    exact_math: bool = False
    device_calls: list = field(default_factory=list)
    callees: list = field(default_factory=list)
    hidden: list = field(default_factory=list)
    sites: tuple = ()
    barrier_guards: tuple = ()  # divergence.check(): barriers each launch must judge
    static_loops: tuple = ((), None)
    counted_loops: tuple = ()  # header names of the range loops with compile-time trip counts


def lower_kernel(
    func_ir, typemap, calltypes, argtypes, mode, name, dynamic_shared_bytes=0, denormals=0,
    fastmath=False, fused_fma=False, sqrt_one_step=False, boundscheck=False, error_model="numpy",
    loose_division=False, matrix_shapes=(), subgroup_ballot=False, subgroup_partitioned=False,
    group_loop=False,
):
    """Translate the typed IR of a kernel into a KIR module.

    Parameters
    ----------
    func_ir : numba.core.ir.FunctionIR
        The kernel's IR after type inference, without phi nodes.
    typemap : dict
        Variable name -> Numba type, from type inference.
    calltypes : dict
        Call, operator and setitem nodes -> their Numba signatures.
    argtypes : tuple of numba types
        The argument types of this specialisation (arrays and scalars).
    mode : numba_vulkan.narrowing.Mode
        Which 64-bit types are computed in 32 bits.
    name : str
        The kernel's name in the module.
    dynamic_shared_bytes : int
        Bytes of the dynamic shared array, set by the launch (frontend/local_arrays.py).
    denormals : int
        How the math library treats float32 subnormals: mathlib.denormals.PRESERVE (the
        device keeps them), FLUSH (it may flush them: flush-safe forms) or SIMULATE.
    fused_fma : bool
        The device's GLSL.std.450 Fma rounds once (compiler.CodegenControls.fused_fma): the
        math library's exact products and polynomials use it.
    matrix_shapes : tuple of matrix_shapes.MatrixShape
        The device's cooperative-matrix configurations; empty: emulated (frontend/matrix.py).
    subgroup_ballot : bool
        The device has subgroup ballots: ``syncthreads_count`` adds per subgroup
        (frontend/sync.py).
    subgroup_partitioned : bool
        The device has OpGroupNonUniformPartitionNV: ``subgroup.partition`` is one
        instruction (frontend/subgroups.py).
    loose_division : bool
        Tests: the math library's driver divisions (dd.driver_div) moved by about as much as
        Vulkan allows (compiler.CodegenControls.loose_division).
    fastmath : bool
        The kernel's fastmath option: math calls use the driver's built-ins where they exist
        (mathlib/fast.py).
    group_loop : bool or grid.LIGHT
        Run the workgroups along x as a loop over fewer (frontend/grid.py, "The group
        loop"), unless the kernel has barriers, shared memory or cooperative matrices;
        grid.LIGHT: only if the kernel is light (grid.is_light).
    boundscheck : bool
        Check array indices (IndexError; frontend/exceptions.py).
    error_model : {"numpy", "python"}
        "python": a zero divisor raises ZeroDivisionError.

    Returns
    -------
    LoweredKernel

    Raises
    ------
    numba_vulkan.errors.VulkanUnsupportedError
        For a construct kernels cannot express; the error carries its source location.
    """
    # barriers under id-dependent branches: judged at each launch (divergence.py)
    barrier_guards = divergence.check(func_ir)
    # The Lowerer's settings (each its attribute of that name)
    options = dict(
        dynamic_shared_bytes=dynamic_shared_bytes, denormals=denormals,
        fused_fma=bool(fused_fma), sqrt_one_step=bool(sqrt_one_step),
        loose_division=bool(loose_division), matrix_shapes=tuple(matrix_shapes),
        subgroup_ballot=bool(subgroup_ballot), subgroup_partitioned=bool(subgroup_partitioned),
        fastmath=bool(fastmath), boundscheck=bool(boundscheck), error_model=error_model,
    )
    light = group_loop == grid.LIGHT  # the loop only if the kernel is light (grid.py)
    lowerer = _lower(func_ir, typemap, calltypes, argtypes, mode, name,
                     bool(group_loop) and not light, **options)
    if light and grid.is_light(lowerer):
        lowerer = _lower(func_ir, typemap, calltypes, argtypes, mode, name, True, **options)
    elif group_loop and not light and grid.needs_whole_groups(lowerer):
        lowerer = _lower(func_ir, typemap, calltypes, argtypes, mode, name, False, **options)
    for p in lowerer.params:
        for arr in _arrays(p):
            if arr.written:
                lowerer.module.mark_written(arr.arg_index)
    writes = tuple(any(arr.written for arr in _arrays(p)) for p in lowerer.params)
    hidden_arrays = hidden.lowered_hidden(lowerer)
    status_array = status.lowered(lowerer)
    if status_array is not None:  # the status buffer: a hidden array after the others
        hidden_arrays.append(status_array)
    return LoweredKernel(
        module=lowerer.module,
        args=lowerer.module.args,
        param_size=lowerer.module.param_block_size(),
        writes=writes,
        grid=grid.layout(lowerer),
        exact_math=getattr(lowerer, "exact_math", False),
        device_calls=lowerer.device_calls,
        callees=lowerer.callees,
        hidden=hidden_arrays,
        sites=tuple(lowerer.sites),
        barrier_guards=barrier_guards,
        static_loops=static_loops(lowerer),
        counted_loops=tuple(f"L{h}" for h, trips in lowerer.loop_trips.items()
                            if trips is not None),
    )


def _lower(func_ir, typemap, calltypes, argtypes, mode, name, group_loop, **options):
    """The Lowerer of the kernel with `options` (lower_kernel's), run."""
    lowerer = Lowerer(func_ir, typemap, calltypes, argtypes, mode, name)
    lowerer.group_loop = bool(group_loop)
    for key, value in options.items():
        setattr(lowerer, key, value)
    lowerer.run()
    status.finish(lowerer)  # the shared raise block, if some statement raises
    return lowerer


def static_loops(lowerer):
    """(header block names, iterations) of the kernel's loops (LoweredKernel.static_loops).

    Each loop of the kernel's IR (Numba's CFG) must be a range loop whose trip count the
    front end knew (frontend/loops.py); a loop's header runs (trips + 1) times per entry,
    and it is entered once per run of the body of each loop around it. A device
    function's loops, and the loops the front end writes itself (sum, array expressions),
    are not among them: the loop guard compares these names with the KIR's loops
    (kir/loop_guard.h), so any such loop keeps the guard.
    """
    from numba.core.analysis import compute_cfg_from_blocks

    loops = compute_cfg_from_blocks(lowerer.func_ir.blocks).loops()
    runs = {}
    for header in loops:
        trips = lowerer.loop_trips.get(header)
        if trips is None:
            return (), None
        runs[header] = trips + 1
    total = 0
    for header in loops:
        n = runs[header]
        for outer in loops.values():
            if outer.header != header and header in outer.body:
                n *= runs[outer.header] - 1  # the inner loop's entries: the outer's trips
        total += n
    return tuple(f"L{h}" for h in loops), total


def _arrays(param):
    """The ArrayArgs of argument `param`: itself, the items of a tuple of arrays ((tuple of
    ArrayArgs, type)), or none (a scalar or packed argument: (value, type))."""
    if isinstance(param, tuple):
        return param[0] if isinstance(param[0], tuple) and all(
            hasattr(item, "arg_index") for item in param[0]) else ()  # fmt: skip
    return (param,)
