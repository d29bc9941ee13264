"""The front end: Numba's typed IR of a kernel -> KIR (CFG form), built through ``_core``.

The front end knows Python's semantics (floor division, negative indices,
truthiness, range loops) and expresses them with KIR's plain operations, so
the C++ backend only ever sees C-like, typed code.
"""

from dataclasses import dataclass, field

from . import divergence, grid
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
    inlined_loops : bool
        Whether an inlined device function has loops (no static loop bound then).
    callees : list
        The TypedKernel of each device function inlined (for checks on the whole kernel).
    """

    module: object
    args: list
    param_size: int
    writes: tuple
    grid: tuple = (None, None, 4)
    exact_math: bool = False
    device_calls: list = field(default_factory=list)
    inlined_loops: bool = False
    callees: list = field(default_factory=list)


def lower_kernel(func_ir, typemap, calltypes, argtypes, mode, name, dynamic_shared_bytes=0):
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

    Returns
    -------
    LoweredKernel

    Raises
    ------
    numba_vulkan.errors.VulkanUnsupportedError
        For a construct kernels cannot express; the error carries its source location.
    """
    divergence.check(func_ir)  # barriers under id-dependent branches
    lowerer = Lowerer(func_ir, typemap, calltypes, argtypes, mode, name)
    lowerer.dynamic_shared_bytes = dynamic_shared_bytes
    lowerer.run()
    for p in lowerer.params:
        if getattr(p, "written", False):
            lowerer.module.mark_written(p.arg_index)
    writes = tuple(getattr(p, "written", False) for p in lowerer.params)
    return LoweredKernel(
        module=lowerer.module,
        args=lowerer.module.args,
        param_size=lowerer.module.param_block_size(),
        writes=writes,
        grid=grid.layout(lowerer),
        exact_math=getattr(lowerer, "exact_math", False),
        device_calls=lowerer.device_calls,
        inlined_loops=lowerer.inlined_loops,
        callees=lowerer.callees,
    )


__all__ = ["LoweredKernel", "lower_kernel"]
