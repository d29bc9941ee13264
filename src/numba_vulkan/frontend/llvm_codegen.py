"""Running a ``numba.extending.intrinsic``'s code generator without a back end.

An ``@intrinsic`` is typed like any Numba template (its typer gives the
signature); its *codegen* writes LLVM IR with an llvmlite ``IRBuilder``. We
have no LLVM back end, so the code generator is run here into a scratch
``llvmlite.ir.Function`` whose parameters have the LLVM types of the call's
signature, and frontend/llvm_intrinsics.py translates the instructions it
wrote into KIR.

The ``context`` argument a code generator receives is a ``CodegenContext``: it
answers the questions code generators ask about types and constants
(``get_value_type``, ``get_constant``, ``cast``, ``make_tuple`` ...) with Numba's
CPU target context, whose data model is Numba's for every target (an int64 is
an ``i64``, a UniTuple an LLVM array, a bool an ``i1``). What would compile or
call other code (``compile_internal``, ``get_function``, the calling convention,
NRT, the Python API) is refused by name: those emit calls we could not
translate, so they are stopped before running rather than after.
"""

from llvmlite import ir as llvm
from numba.core import types

from .errors import unsupported

#: The CPU context's methods a code generator may use: pure questions about types and
#: constants, or builders of the plain instructions llvm_intrinsics.py translates.
_ALLOWED = frozenset({
    "get_value_type", "get_data_type", "get_argument_type", "get_return_type",
    "get_constant", "get_constant_generic", "get_constant_null", "get_constant_undef",
    "get_dummy_value", "get_dummy_type", "cast", "make_tuple", "is_true",
    "data_model_manager", "typing_context", "address_size", "get_abi_sizeof",
    "get_abi_alignment", "get_preferred_array_alignment", "get_value_as_data",
    "get_data_as_value", "unpack_value", "pack_value", "sentry_record_alignment",
    "fndesc", "enable_nrt", "fastmath", "error_model", "target_data",
})  # fmt: skip


def _cpu_context():
    from numba.core.registry import cpu_target

    return cpu_target.target_context


class CodegenContext:
    """The ``context`` of an intrinsic's code generator: Numba's CPU context for questions
    about types and constants, a VulkanUnsupportedError for anything else."""

    def __init__(self, name, loc):
        self._cpu = _cpu_context()
        self._name = name
        self._loc = loc

    def __getattr__(self, attr):
        if attr in _ALLOWED:
            return getattr(self._cpu, attr)
        raise unsupported(
            f"'context.{attr}' in the code generator of the @intrinsic '{self._name}' (Vulkan "
            "kernels translate the LLVM instructions an intrinsic writes; they cannot compile "
            "or call other code)",
            self._loc,
        )


def llvm_type(numba_ty, name, loc):
    """The LLVM value type of a Numba argument or result type (scalars, tuples of them,
    complex numbers), as Numba's data model gives it."""
    ty = types.unliteral(numba_ty)
    if not _representable(ty):
        raise unsupported(f"the @intrinsic '{name}' with a value of type {numba_ty}", loc)
    return _cpu_context().get_value_type(ty)


def _representable(ty):
    if isinstance(ty, (types.Boolean, types.Integer)):
        return True
    if isinstance(ty, types.Float):
        return ty.bitwidth in (32, 64)  # float16's LLVM `half`: not translated
    if isinstance(ty, types.Complex):
        return True
    if isinstance(ty, types.BaseTuple):
        return all(_representable(t) for t in ty.types)
    return isinstance(ty, types.NoneType)


def run_codegen(codegen, sig, name, loc):
    """Run `codegen(context, builder, sig, args)` into a scratch function.

    Returns (function, last block, result value): the block the builder was left in
    holds the code after which the result is available (the code generator writes no
    `ret`; the caller goes on there).
    """
    ret_ty = llvm_type(sig.return_type, name, loc)
    arg_tys = [llvm_type(t, name, loc) for t in sig.args]
    module = llvm.Module(name=f"intrinsic.{name}")
    fn = llvm.Function(module, llvm.FunctionType(ret_ty, arg_tys), name="intrinsic")
    builder = llvm.IRBuilder(fn.append_basic_block("entry"))
    context = CodegenContext(name, loc)
    try:
        result = codegen(context, builder, sig, list(fn.args))
    except Exception as e:
        from .. import errors

        if isinstance(e, errors.VulkanUnsupportedError):
            raise
        raise unsupported(
            f"the @intrinsic '{name}' (its code generator raised {type(e).__name__}: {e})", loc
        ) from e
    if isinstance(sig.return_type, types.NoneType):
        result = None
    elif not isinstance(result, llvm.Value) or result.type != ret_ty:
        got = getattr(result, "type", type(result).__name__)
        raise unsupported(
            f"the @intrinsic '{name}' whose code generator returns {got} where its signature "
            f"says {sig.return_type} ({ret_ty})",
            loc,
        )
    return fn, builder.block, result
