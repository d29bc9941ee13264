"""The front end: Numba's typed IR of a kernel -> KIR (CFG form), built through ``_core``.

The front end knows Python's semantics (floor division, negative indices,
truthiness, range loops) and expresses them with KIR's plain operations, so
the C++ backend only ever sees C-like, typed code.
"""

from dataclasses import dataclass, field

from . import divergence, grid, hidden, status
from .lower import Lowerer


@dataclass
class LoweredKernel:
    """The KIR of one kernel specialisation and what the launcher needs to call it.

    Attributes
    ----------
    module : numba_vulkan._core.KirModule
        The kernel in KIR, CFG form.
    argspecs : list of tuple
        One launcher argspec per kernel argument, in order: ``("array", dtype,
        ndim, addr_offset, extent_offsets, stride_offsets, index_bytes)`` or
        ``("scalar", dtype name, slot code, slot bytes, offset)``: the argument's exact
        type (as ``numba.typeof`` gives it), and its slot ('i', 'u', 'f' or 'b', 4 or 8 bytes).
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
    inlined_loops : bool
        Whether an inlined device function has loops (no static loop bound then).
    callees : list
        The TypedKernel of each device function inlined (for checks on the whole kernel).
    hidden : list
        ``(argspec, written, source)`` of each hidden array (global arrays read through
        a buffer: frontend/hidden.py), which the launcher takes after the arguments.
        The last is the status buffer where the kernel has raise or print sites
        (source ``("status", None)``, written where the kernel prints: frontend/status.py).
    sites : tuple
        The kernel's raise and print sites (numba_vulkan/sites.py).
    """

    module: object
    argspecs: list
    param_size: int
    writes: tuple
    grid: tuple = (None, None, 4)
    exact_math: bool = False
    device_calls: list = field(default_factory=list)
    inlined_loops: bool = False
    callees: list = field(default_factory=list)
    hidden: list = field(default_factory=list)
    sites: tuple = ()
    barrier_guards: tuple = ()  # divergence.check(): barriers each launch must judge


def lower_kernel(
    func_ir, typemap, calltypes, argtypes, mode, name, dynamic_shared_bytes=0, denormals=0,
    fastmath=False, boundscheck=False, error_model="numpy",
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
    fastmath : bool
        The kernel's fastmath option: math calls use the driver's built-ins where they exist
        (mathlib/fast.py).
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
    lowerer = Lowerer(func_ir, typemap, calltypes, argtypes, mode, name)
    lowerer.dynamic_shared_bytes = dynamic_shared_bytes
    lowerer.denormals = denormals
    lowerer.fastmath = bool(fastmath)
    lowerer.boundscheck = bool(boundscheck)
    lowerer.error_model = error_model
    lowerer.run()
    status.finish(lowerer)  # the shared raise block, if some statement raises
    writes = tuple(_written(p) for p in lowerer.params)
    hidden_arrays = hidden.lowered_hidden(lowerer)
    status_spec = status.argspec(lowerer)
    if status_spec is not None:  # the status buffer: a hidden array after the others
        hidden_arrays.append((status_spec, bool(lowerer.prints), (status.SOURCE, None)))
    return LoweredKernel(
        module=lowerer.module,
        argspecs=lowerer.argspecs,
        param_size=lowerer.module.param_block_size(),
        writes=writes,
        grid=grid.layout(lowerer),
        exact_math=getattr(lowerer, "exact_math", False),
        device_calls=lowerer.device_calls,
        inlined_loops=lowerer.inlined_loops,
        callees=lowerer.callees,
        hidden=hidden_arrays,
        sites=tuple(lowerer.sites),
        barrier_guards=barrier_guards,
    )


def _written(param):
    """Whether the kernel may write argument `param` (an ArrayArg, or (value, type) where
    the value of a tuple of arrays is a tuple of ArrayArgs: written if any of them is)."""
    if isinstance(param, tuple) and isinstance(param[0], tuple):
        return any(getattr(item, "written", False) for item in param[0])
    return getattr(param, "written", False)


__all__ = ["LoweredKernel", "lower_kernel"]
