"""numba_vulkan as a Numba target: the hardware target, typing and target contexts.

Numba decides which typing templates and overloads apply by the *target* of
the compilation (``numba.core.target_extension``). We register ``Vulkan``, a
GPU target named "vulkan", so that registrations made with
``target="vulkan"`` (and the generic ones) apply to kernels while CPU-only
ones do not.

Only Numba's front half runs for our kernels (bytecode, untyped passes, type
inference); lowering is ours (``numba_vulkan.frontend``). The target context
below therefore exists only because Numba's pipeline and type inference ask
for one: it carries the target class and the error model, and never
generates code.
"""

import functools
import types as pytypes

import numpy as np
from numba.core import imputils, types
from numba.core.base import BaseContext
from numba.core.target_extension import GPU, jit_registry, target_override, target_registry
from numba.core.typing import Context as NumbaTypingContext
from numba.core.typing import signature
from numba.extending import typeof_impl

from . import bfloat16
from .overloads import OverloadDispatcher, device_function


class Vulkan(GPU):
    """The Vulkan hardware target: any Vulkan 1.2+ compute device."""


target_registry["vulkan"] = Vulkan
TARGET_NAME = "vulkan"


#: The array library kernels have (frontend/reductions.py lowers it), by method name and by
#: function; Numba's typing of it comes with numba.np.arraymath (``_load_array_library``).
ARRAY_METHODS = ("sum", "prod", "mean", "min", "max", "argmin", "argmax", "any", "all", "fill",
                 "var", "std")  # fmt: skip
ARRAY_FUNCTIONS = {np.sum: "sum", np.prod: "prod", np.mean: "mean", np.min: "min",
                   np.max: "max", np.amin: "min", np.amax: "max", np.argmin: "argmin",
                   np.argmax: "argmax", np.any: "any", np.all: "all", np.dot: "dot",
                   np.nansum: "nansum", np.nanprod: "nanprod", np.nanmin: "nanmin",
                   np.nanmax: "nanmax", np.nanmean: "nanmean", np.var: "var", np.std: "std",
                   np.count_nonzero: "count_nonzero"}  # fmt: skip


def _is_array_library_function(val):
    """np.sum, np.dot, np.var... (ARRAY_FUNCTIONS)."""
    try:
        return val in ARRAY_FUNCTIONS
    except TypeError:  # unhashable
        return False


_AXIS_NAMES = frozenset(("sum", "prod", "mean", "min", "max", "argmin", "argmax", "any", "all"))
_AXIS_REDUCTIONS = {f: name for f, name in ARRAY_FUNCTIONS.items() if name in _AXIS_NAMES}


def _axis_reduction_signature(func, args, kws):
    """The type of ``a.sum(axis=k)``, ``np.argmin(a, k)``... (_AXIS_REDUCTIONS): for an
    array of 2 or more dimensions an array of one dimension less, with NumPy's dtype
    (numba.njit's where it has the reduction: sums and products of signed integers and
    bools in int64, of unsigned ones in uint64; means of integers in float64; indices
    in intp; min and max in the array's dtype; any and all in bool); for a 1-d array that
    scalar. Numba's own templates type sum and argmin/argmax by compiling CPU code (axis
    checks with f-strings) that kernels cannot, and have no axis for the others;
    frontend/reductions.AxisReduction lowers them. None for any other call."""
    rest = list(args)
    if isinstance(func, types.BoundFunction) and isinstance(func.this, types.Array):
        key = func.typing_key  # "array.sum" (Numba's templates) or (types.Array, "sum")
        name = key.split(".")[-1] if isinstance(key, str) else None
        if isinstance(key, tuple) and len(key) == 2 and isinstance(key[1], str):
            name = key[1]
        arr = func.this
    elif isinstance(func, types.Function) and args and isinstance(args[0], types.Array):
        try:
            name = _AXIS_REDUCTIONS.get(func.typing_key)
        except TypeError:
            return None
        arr, rest = args[0], rest[1:]
    else:
        return None
    if name not in _AXIS_NAMES:
        return None
    kws = dict(kws)
    if len(rest) == 1 and not kws:
        axis = rest[0]
    elif not rest and set(kws) == {"axis"}:
        axis = kws["axis"]
    else:
        return None
    if not isinstance(types.unliteral(axis), types.Integer):
        return None
    dtype = arr.dtype
    if not isinstance(dtype, (types.Boolean, types.Integer, types.Float)):
        return None
    integral = not isinstance(dtype, types.Float)
    if name in ("argmin", "argmax"):
        ret = types.intp
    elif name in ("any", "all"):
        ret = types.boolean
    elif name in ("min", "max"):
        ret = dtype
    elif name == "mean":
        ret = types.float64 if integral else dtype
    elif isinstance(dtype, types.Integer) and not dtype.signed:  # sum, prod
        ret = types.uint64
    else:
        ret = types.int64 if integral else dtype
    result = types.Array(ret, arr.ndim - 1, "C") if arr.ndim > 1 else ret
    sig = signature(result, *args, *kws.values())
    return sig.replace(recvr=func.this) if isinstance(func, types.BoundFunction) else sig


_SCALAR_TYPES = (types.Number, types.Boolean)
# Callees whose calls on scalars are remembered: functions and operators, and NumPy's
# scalar classes (np.float32(x): Numba makes a new call template for each such call).
_MEMO_CALLEES = (types.Function, types.NumberClass)

# Library modules whose attributes programs do not rebind: the types of their attributes
# (np.float32, math.sqrt ...) and of the modules themselves are remembered per process.
_FROZEN_MODULES = frozenset({"numpy", "math", "cmath", "operator", "builtins"})


def _is_numpy_function(val):
    """Whether `val` is one of NumPy's functions (not a class or a module)."""
    module = getattr(val, "__module__", None) or ""
    return callable(val) and not isinstance(val, type) and module.partition(".")[0] == "numpy"


def _is_library_value(val):
    """Whether `val` is a library module, builtin function, ufunc or NumPy/builtin class:
    a value whose Numba type depends only on the registered templates."""
    cls = type(val)
    if cls is pytypes.ModuleType:
        return val.__name__.partition(".")[0] in _FROZEN_MODULES
    if cls is pytypes.BuiltinFunctionType or cls is np.ufunc:
        return True
    return isinstance(val, type) and getattr(val, "__module__", None) in ("builtins", "numpy")


class VulkanTypingContext(NumbaTypingContext):
    """Numba's typing (builtins, math, NumPy scalars) plus the kernel intrinsics."""

    def __init__(self):
        from .lean import LeanCallStack

        super().__init__()
        # One recording of warnings per type inference, not one per constraint (lean.py).
        self.callstack = LeanCallStack()

    def load_additional_registries(self):
        from numba.cpython import cmathimpl  # noqa: F401  (types cmath.cosh, polar, rect ...:

        # their @overloads; frontend/mathlib/cmathlib.py lowers every cmath call itself)
        from numba.misc import literal  # noqa: F401  (types literal_unroll, literally)

        from . import bfloat16_math, float16, fma, matrix, vkdecl  # noqa: F401

        super().load_additional_registries()
        self.install_registry(vkdecl.registry)
        self.install_registry(matrix.registry)
        self.install_registry(float16.registry)  # float16 arithmetic (typing/float16.py)
        self.install_registry(fma.registry)  # cuda.fma (typing/fma.py)
        # bfloat16's operators (typing/bfloat16.py); bfloat16_math registers @overloads
        self.install_registry(bfloat16.registry)

    def _load_array_library(self):
        """Numba's typing of array reductions (a.sum(), np.dot...) is registered when
        numba.np.arraymath and numba.np.linalg are imported, which only the CPU target
        does; they cost half a second (linalg imports SciPy), so only kernels that use
        them pay it. Lowered in frontend/reductions.py, never with Numba's CPU code."""
        if not getattr(self, "_array_library", False):
            from numba.np import arraymath, linalg  # noqa: F401

            self._array_library = True
            self.refresh()

    def _insert_global(self, gv, gty):
        """Numba's own overloads of np.empty/zeros/ones/full, registered when the array
        library is loaded in the middle of a kernel's typing (_load_array_library), would
        augment their Function types there, and a variable typed before with the old type
        would no longer unify with the new one: these keep the kernels' types."""
        from .vkdecl import NUMPY_CONSTRUCTOR_TYPES

        try:
            own = NUMPY_CONSTRUCTOR_TYPES.get(gv)
        except TypeError:  # unhashable
            own = None
        super()._insert_global(gv, own if own is not None else gty)

    def registrations(self):
        """How many templates the installed registries hold: it grows when one is
        registered, e.g. by ``register_jitable`` inside an @overload being typed (Numba's
        np.min of complex arrays), which only a refresh makes visible."""
        return sum(
            len(r.functions) + len(r.attributes) + len(r.globals) for r in self._registries
        )

    def refresh(self):
        # Numba refreshes before every compilation; only new templates (an extension
        # imported since, the array library) can change how a call resolves.
        super().refresh()
        self.registrations_seen = self.registrations()
        size = sum(map(len, self._functions.values())) + len(self._globals)
        if size != getattr(self, "_templates_seen", None):
            self._templates_seen = size
            self._scalar_calls = {}
            self._library_types = {}  # (value) or (module type, attribute) -> Numba type

    def resolve_function_type(self, func, args, kws):
        """Numba's resolution, remembered for functions applied to scalars only.

        Numba resolves every ``x + y`` (and ``np.float32(x)``) afresh, trying each
        template of the operator in turn; typing a small kernel spends a third of its time there.
        With only numbers and booleans as arguments the answer depends on nothing
        but the function and the argument types (literal types included), so it
        is kept for the process: the second kernel that adds two float32 values
        does not ask again. Failures are not kept (Numba reports them itself).
        """
        if not kws and isinstance(func, types.Dispatcher):
            return self._resolve_device_call(func, args)
        axis_sig = _axis_reduction_signature(func, args, kws)
        if axis_sig is not None:
            return axis_sig
        if kws or not isinstance(func, _MEMO_CALLEES) or not all(
            isinstance(a, _SCALAR_TYPES) for a in args
        ):
            return super().resolve_function_type(func, args, kws)
        key = (func, tuple(args))
        sig = self._scalar_calls.get(key)
        if sig is None:
            sig = super().resolve_function_type(func, args, kws)
            if sig is not None:
                self._scalar_calls[key] = sig
        return sig

    def _resolve_device_call(self, func, args):
        """A call of a device function or @overload implementation, remembered per
        dispatcher and argument types (``OverloadDispatcher.resolved``). The dispatcher
        keeps one typing per argument types, each an exact match for them, so the
        signature Numba picks for the same types cannot change."""
        memo = getattr(func.dispatcher, "resolved", None)
        if memo is None:  # not one of ours (typing/overloads.py)
            return super().resolve_function_type(func, args, {})
        key = tuple(args)
        sig = memo.get(key)
        if sig is None:
            sig = super().resolve_function_type(func, args, {})
            if sig is not None:
                memo[key] = sig
        return sig

    def resolve_getattr(self, typ, attr):
        if isinstance(typ, types.Array) and attr in ARRAY_METHODS:
            self._load_array_library()
        if isinstance(typ, types.Module) and _is_library_value(typ.pymod):
            # np.float32, math.pi...: Numba looks through every attribute template of
            # modules each time; the answer for a library module's attribute is fixed.
            key = (typ, attr)
            found = self._library_types.get(key)
            if found is None:
                found = super().resolve_getattr(typ, attr)
                if found is not None:
                    self._library_types[key] = found
            return found
        return super().resolve_getattr(typ, attr)

    def resolve_value_type(self, val):
        if _is_array_library_function(val):
            self._load_array_library()
        if _is_library_value(val):  # range, min, np, np.float32 ...: remembered
            found = self._library_types.get(val)
            if found is None:
                found = super().resolve_value_type(val)
                self._library_types[val] = found
            return found
        # @nv.jit and numba.njit functions are device functions here, typed (and later
        # inlined) for Vulkan: never compiled for the CPU (typing/devfn.py).
        fn = device_function(val)
        if fn is not None:
            return types.Dispatcher(fn)
        if _is_device_array(val):  # a global DeviceArray: used in place (frontend/hidden.py)
            return device_array_type(val)
        brain = bfloat16.value_type(val)  # ml_dtypes.bfloat16 and its values: Numba has none
        if brain is not None:
            return brain
        try:
            return super().resolve_value_type(val)
        except ValueError:
            # np.round, np.clip...: Numba's @overloads of NumPy functions are registered by
            # numba.np.arraymath, which only the array library loads: without it a kernel
            # compiled first in its process would find them missing.
            if getattr(self, "_array_library", False) or not _is_numpy_function(val):
                raise
        self._load_array_library()
        return super().resolve_value_type(val)

    def unify_pairs(self, first, second):
        # bfloat16 first: Numba's numbers unify through NumPy dtypes, which Numba has none
        # for bfloat16 (typing/bfloat16.py's BFloat16.unify knows them all).
        if bfloat16.is_bfloat16(second) and not bfloat16.is_bfloat16(first):
            first, second = second, first
        return super().unify_pairs(first, second)

    def resolve_module_constants(self, typ, attr):
        # Numba lets the AttributeError of a missing module attribute escape (no line, no
        # construct); None makes type inference report "Unknown attribute" at its line, which
        # pipeline.type_kernel_for_user turns into a VulkanUnsupportedError.
        if not hasattr(typ.pymod, attr):
            return None
        found = super().resolve_module_constants(typ, attr)
        if found is None and self.registrations() != self.registrations_seen:
            # Reading the attribute imported a module during this typing (numba_vulkan.cuda
            # loads fp16, bf16, random ... on first use), whose templates are not loaded yet.
            self.refresh()
            found = super().resolve_module_constants(typ, attr)
        return found


_unused_lowering = imputils.Registry("numba_vulkan.unused_lowering")


class VulkanTargetContext(BaseContext):
    """The target context Numba's passes require; it never lowers anything."""

    def __init__(self, typing_context):
        super().__init__(typing_context, TARGET_NAME)

    def refresh(self):
        # No lowering: numba_vulkan.frontend lowers Numba's typed IR itself. The one
        # (empty) registry only gives @overload_method/@intrinsic templates, which
        # register their lowering in the target's first registry, a place to do so.
        self.install_registry(_unused_lowering)

    def codegen(self):
        return None

    @property
    def call_conv(self):
        return None


class TargetDescriptor:
    """What Numba's templates look up through ``dispatcher_registry[Vulkan].targetdescr``."""

    @property
    def typing_context(self):
        return contexts()[0]

    @property
    def target_context(self):
        return contexts()[1]


@functools.cache
def contexts():
    """The (typing context, target context) pair, created once per process."""
    with target_override(TARGET_NAME):
        typing_context = VulkanTypingContext()
        target_context = VulkanTargetContext(typing_context)
    return typing_context, target_context


# ---------------------------------------------------------------- typeof of device arrays


def device_array_type(array):
    """The Numba type of a ``runtime.DeviceArray``: an Array of its (host) dtype, of layout
    'C' where it is C-contiguous, 'F' where it is F-contiguous only, else 'A' (as
    numba.typeof types NumPy arrays; launchers.make_launcher holds each specialisation
    to its layouts)."""
    dtype = bfloat16.from_dtype(array.dtype)  # Numba's, and bfloat16
    layout = "C" if array.is_contiguous else "F" if array._f_only() else "A"
    return types.Array(dtype, array.ndim, layout)


def _is_device_array(value):
    from ..runtime import DeviceArray

    return isinstance(value, DeviceArray)


@functools.cache
def register_device_array_typeof():
    """Teach ``numba.typeof`` about DeviceArray (once the runtime package provides it)."""
    try:
        from ..runtime import DeviceArray
    except ImportError:
        return False

    @typeof_impl.register(DeviceArray)
    def _typeof_device_array(value, c):
        return device_array_type(value)

    return True


# ---------------------------------------------------------------- @overload implementations


def _overload_jit(**jit_options):
    """The jit decorator Numba uses for ``@overload`` implementations typed for Vulkan."""
    return lambda pyfunc: OverloadDispatcher(pyfunc, jit_options)


jit_registry[Vulkan] = _overload_jit
