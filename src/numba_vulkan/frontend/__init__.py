"""The front end: Numba's typed IR of a kernel -> KIR (CFG form), built through ``_core``.

The front end knows Python's semantics (floor division, negative indices,
truthiness, range loops) and expresses them with KIR's plain operations, so
the C++ backend only ever sees C-like, typed code.
"""

from dataclasses import dataclass

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
    """

    module: object
    argspecs: list
    param_size: int
    writes: tuple


def lower_kernel(func_ir, typemap, calltypes, argtypes, mode, name):
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

    Returns
    -------
    LoweredKernel

    Raises
    ------
    numba_vulkan.errors.VulkanUnsupportedError
        For a construct kernels cannot express; the error carries its source location.
    """
    lowerer = Lowerer(func_ir, typemap, calltypes, argtypes, mode, name)
    lowerer.run()
    writes = tuple(getattr(p, "written", False) for p in lowerer.params)
    return LoweredKernel(
        module=lowerer.module,
        argspecs=lowerer.argspecs,
        param_size=lowerer.module.param_block_size(),
        writes=writes,
    )


__all__ = ["LoweredKernel", "lower_kernel"]
