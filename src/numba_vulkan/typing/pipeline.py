"""Numba's front half for the Vulkan target: bytecode -> IR -> untyped passes ->
type inference with our typing context, and nothing of Numba's lowering.

Everything that types kernel code lives in this package (numba_vulkan.typing):
the target and its contexts (target.py), the kernel intrinsics (vkdecl.py),
``@overload`` implementations and device functions (overloads.py, devfn.py),
the translation of Numba's errors (translate.py), and this pipeline. The
compiler (numba_vulkan.compiler), the front end and the dispatcher build on
it; nothing here imports them.
"""

import re
from dataclasses import dataclass, field

from numba.core import compiler
from numba.core.compiler_machinery import AnalysisPass, register_pass
from numba.core.errors import NumbaError, TypingError, UnsupportedBytecodeError
from numba.core.target_extension import target_override
from numba.core.typed_passes import NopythonTypeInference
from numba.core.untyped_passes import (
    FindLiterallyCalls,
    FixupArgs,
    InlineInlinables,
    LiteralPropagationSubPipelinePass,
    MakeFunctionToJitFunction,
    RewriteDynamicRaises,
    RewriteSemanticConstants,
)

from .. import errors
from ..errors import VulkanUnsupportedError
from . import devfn, lean, lean_passes, scalar_constants, target, translate
from .literal_unroll import LiteralUnroll


@dataclass(frozen=True)
class Options:
    """The compilation options of ``@nv.jit`` that change generated code."""

    fastmath: bool = False
    fast_builtins: bool = None  # the driver's built-ins for math calls; None: as fastmath
    boundscheck: bool = False
    error_model: str = "numpy"
    optimize: bool = True
    debug: bool = False


@dataclass
class TypedKernel:
    """What Numba's front half leaves: typed IR of one specialisation."""

    func_ir: object
    typemap: dict
    calltypes: dict
    argtypes: tuple
    return_type: object
    annotation: object = field(default=None, repr=False)
    callees: tuple = ()  # TypedKernels of the device functions inlined into this kernel




@register_pass(mutates_CFG=False, analysis_only=True)
class VulkanTypingDone(AnalysisPass):
    """The last pass: hand the typed IR over, without any of Numba's lowering."""

    _name = "numba_vulkan_typing_done"

    def __init__(self):
        AnalysisPass.__init__(self)

    def run_pass(self, state):
        state.cr = TypedKernel(
            func_ir=state.func_ir,
            typemap=state.typemap,
            calltypes=state.calltypes,
            argtypes=tuple(state.args),
            return_type=state.return_type,
        )
        return False


#: Untyped-IR passes that packages built on this one add right after IRProcessing
#: (numba_vulkan.cuda adds its rewrite of ``cuda.threadIdx.x`` & co. when imported).
_EXTRA_UNTYPED_PASSES = []


def add_untyped_pass(pass_class, description):
    """Run `pass_class` (a registered Numba FunctionPass) on every kernel, after IRProcessing."""
    if all(c is not pass_class for c, _ in _EXTRA_UNTYPED_PASSES):
        _EXTRA_UNTYPED_PASSES.append((pass_class, description))


class VulkanCompiler(lean.PipelineCompiler):
    """Numba's untyped passes (without ReconstructSSA) and type inference, then stop."""

    def pipeline_key(self):
        return tuple(c for c, _ in _EXTRA_UNTYPED_PASSES)

    def build_pipeline(self):
        pm = lean.LeanPassManager("numba_vulkan")
        pm.add_pass(lean_passes.LeanTranslateByteCode, "analyzing bytecode")
        pm.add_pass(FixupArgs, "fix up args")
        pm.add_pass(lean_passes.LeanIRProcessing, "processing IR")
        for pass_class, description in _EXTRA_UNTYPED_PASSES:
            pm.add_pass(pass_class, description)
        # Closures first, in case they use nonlocals (as Numba orders it).
        pm.add_pass(lean.InlineClosureLikesWhenAny, "inline calls to locally defined closures")
        pm.add_pass(scalar_constants.FoldScalarConstants, "np.float32(0.5) as a constant")
        pm.add_pass(RewriteSemanticConstants, "rewrite semantic constants")
        pm.add_pass(lean_passes.LeanDeadBranchPrune, "dead branch pruning")
        pm.add_pass(lean_passes.LeanGenericRewrites, "nopython rewrites")
        pm.add_pass(RewriteDynamicRaises, "rewrite dynamic raises")
        pm.add_pass(MakeFunctionToJitFunction, "convert make_function into JIT functions")
        pm.add_pass(InlineInlinables, "inline inlinable functions")
        pm.add_pass(lean_passes.LeanDeadBranchPrune, "dead branch pruning")
        pm.add_pass(FindLiterallyCalls, "find literally calls")
        pm.add_pass(LiteralUnroll, "handles literal_unroll")
        pm.add_pass(lean_passes.LeanDeadBranchPrune, "dead branch pruning")
        pm.add_pass(LiteralPropagationSubPipelinePass, "literal propagation")
        pm.add_pass(NopythonTypeInference, "nopython frontend")
        pm.add_pass(VulkanTypingDone, "numba_vulkan: stop after typing")
        pm.finalize()
        return pm


def type_kernel_for_user(pyfunc, argtypes, options):
    """type_kernel, with every failure said as a VulkanUnsupportedError (typing/translate.py).

    A recursive device function fails its typing (devfn.check_not_recursive); only a failed
    typing searches the functions the kernel names for a cycle (devfn.check_cycles), whose
    error names the cycle and the kernel's line that starts it. The search reads the bytecode
    of the kernel and of each callee that calls another: kernels that type need not pay it.
    """
    try:
        return type_kernel(pyfunc, argtypes, options)
    except Exception as e:
        devfn.check_cycles(pyfunc)
        if not isinstance(e, (NumbaError, UnsupportedBytecodeError)) or isinstance(
            e, (errors.InternalCompilerError, errors.SpirvCodegenError)
        ):
            raise
        raise translate.translate(e) from None


def check_device_calls(kernel_name, options, device_calls):
    """Refuse device functions whose options cannot hold once inlined into this kernel.

    A device function is inlined (docs/device-functions.md), so it runs with the
    kernel's options; a callee asking for different ones is refused rather than
    silently compiled with the kernel's.
    """
    for origin, loc in device_calls:
        opts = devfn.origin_options(origin)
        callee = getattr(origin, "__name__", "?")
        problem = None
        if opts["debug"]:
            problem = "debug=True is not supported yet"
        elif opts["boundscheck"] and not options.boundscheck:
            problem = (
                "its boundscheck=True differs from the kernel's boundscheck=False; a device "
                "function is inlined and checked as the kernel says, so pass boundscheck=True "
                "to the kernel (or set NUMBA_BOUNDSCHECK=1)"
            )
        elif opts["error_model"] not in (None, options.error_model):
            problem = (
                f"its error_model={opts['error_model']!r} differs from the kernel's "
                f"{options.error_model!r}"
            )
        elif bool(opts["fastmath"]) != bool(options.fastmath):
            problem = (
                f"its fastmath={opts['fastmath']} differs from the kernel's "
                f"{bool(options.fastmath)}; a device function is inlined and compiled with the "
                "kernel's fastmath, so give both the same value"
            )
        if problem is not None:
            raise errors.VulkanUnsupportedError(
                f"calling device function '{callee}' from kernel '{kernel_name}': {problem}",
                loc=loc,
            )


def type_kernel(pyfunc, argtypes, options):
    """Run Numba's front half on ``pyfunc`` for ``argtypes``; raises Numba's TypingError."""
    stack = devfn.typing_stack()
    stack.append(pyfunc)
    try:
        return _type_kernel(pyfunc, argtypes, options)
    finally:
        stack.pop()


devfn.set_typer(lambda pyfunc, argtypes: type_kernel(pyfunc, argtypes, Options()))


def _type_kernel(pyfunc, argtypes, options):
    typing_context, target_context = target.contexts()
    flags = compiler.Flags()
    flags.no_cpython_wrapper = True
    flags.no_cfunc_wrapper = True
    flags.nrt = False
    flags.enable_ssa = False
    flags.error_model = options.error_model
    flags.boundscheck = options.boundscheck
    if options.fastmath:
        flags.fastmath = True
    # A device function typed inside a kernel's typing (the stack holds the kernel and it).
    nested = len(devfn.typing_stack()) > 1
    with target_override(target.TARGET_NAME):
        pipeline = VulkanCompiler(typing_context, target_context, tuple(argtypes), flags, nested)
        try:
            typed = pipeline.compile_extra(pyfunc)
        except TypingError as e:
            better = _unsupported_call_error(pyfunc, e)
            if better is None:
                raise
            raise better from None
    # A kernel returning a value is reported by the front end, with its location.
    return typed


_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_UNTYPED_GLOBAL = re.compile(r"Untyped global name '([^']+)'")
def _unsupported_call_error(pyfunc, error):
    """A VulkanUnsupportedError for Numba's "untyped global" TypingError when that global is a
    function (an @nv.jit function or any other callable Numba cannot type); else None."""
    match = _UNTYPED_GLOBAL.search(_ANSI.sub("", str(error)))
    if match is None:
        return None
    name = match.group(1)
    value = devfn.lookup_name(pyfunc, name)
    if value is devfn.MISSING or not callable(value):
        return None
    loc = getattr(error, "loc", None)
    if devfn.is_nv_jitted(value):
        return None  # typed as a device function (typing/devfn.py): not this error
    else:
        what = getattr(value, "__qualname__", None) or getattr(value, "__name__", None) or name
        msg = (
            f"calling '{what}' is not supported in Vulkan kernels: "
            "only the built-ins, math functions and numba_vulkan intrinsics of the kernel "
            "language can be called"
        )
    return VulkanUnsupportedError(msg, loc=loc)


def uses_float64(typed):
    """Whether a typed kernel has float64 values (variables, arguments or array elements)."""
    from numba.core import types

    def is_f64(t):
        t = getattr(t, "dtype", t)
        return isinstance(t, types.Float) and t.bitwidth == 64

    if any(is_f64(t) for t in typed.typemap.values()) or any(map(is_f64, typed.argtypes)):
        return True
    return any(uses_float64(c) for c in getattr(typed, "callees", ()))


def annotate(typed):
    """Numba's type annotation (source lines with the types of their variables) as text."""
    from numba.core.annotations.type_annotations import TypeAnnotation

    try:
        annotation = TypeAnnotation(
            func_ir=typed.func_ir,
            typemap=typed.typemap,
            calltypes=typed.calltypes,
            lifted=(),
            lifted_from=None,
            args=typed.argtypes,
            return_type=typed.return_type,
        )
        return str(annotation)
    except (OSError, TypeError, ValueError):  # no usable source: the IR itself, typed
        lines = [f"{typed.func_ir.func_id.func_qualname} {typed.argtypes} -> {typed.return_type}"]
        for label, block in sorted(typed.func_ir.blocks.items()):
            lines.append(f"label {label}:")
            for stmt in block.body:
                targets = [v.name for v in stmt.list_vars()]
                known = ", ".join(f"{n}: {typed.typemap[n]}" for n in targets if n in typed.typemap)
                lines.append(f"    {stmt}" + (f"    # {known}" if known else ""))
        return "\n".join(lines)
