"""A leaner driver for Numba's front half: the same passes, less bookkeeping around them.

A kernel calling five device functions runs Numba's pipeline six times
(typing/devfn.py: each callee is typed by its own pipeline, once per
signature), and for functions of a few lines Numba's bookkeeping around the
passes costs about as much as the passes themselves
(benchmarks/profile_first_call.py). This module keeps the passes, their order
and their results exactly as Numba runs them, and drops only work whose
result nothing of ours reads:

- per pass: the ``numba:run_pass`` event (whose details format the flags and
  argument types), three timers, the check that a pass left no ``ir.Del``
  (a self-check of Numba's passes) and the per-pass lock (the whole pipeline
  runs under Numba's compiler lock, taken by ``PipelineCompiler``); the pass's
  error context is entered only when it fails;
- per function: a new PassManager (and its dependency analysis) for the same
  list of passes: it is built once and reused (its only state per run is the
  pass timings, which we do not read);
- InlineClosureLikes where the function has nothing it could inline
  (``InlineClosureLikesWhenAny``); in TranslateByteCode, GenericRewrites and
  IRProcessing, the steps that cannot change the function (typing/lean_passes.py);
- per device function typed *inside* a kernel's typing: reloading Numba's
  configuration from the environment and refreshing the typing and target
  contexts' registries, which the enclosing compilation did moments before; the
  typing context is still refreshed when a template was registered since (as
  ``register_jitable`` inside an @overload does; ``registrations`` in target.py).

- in type inference, the ``warnings.catch_warnings`` that Numba enters around every
  constraint in every round of propagation (hundreds per kernel, each copying the
  filter list and swapping the warning hooks): one recording per type inference
  instead (``OneCaptureWarnings``), which gives each constraint the warnings it raised.
- in type inference, the exception that Numba raises and catches to learn that a
  global or constant (a module, a function, a float...) has no literal type: about
  thirty per kernel, each formatting and highlighting its message (``LeanTypeInferer``).

With NUMBA_DEBUG_PRINT_BEFORE/AFTER/WRAP set, Numba's own pass runner is used,
so its IR dumps still work.
"""

import contextlib
import dis
import warnings

from numba.core import compiler, config, types
from numba.core.compiler_lock import global_compiler_lock
from numba.core.compiler_machinery import PassManager, register_pass
from numba.core.errors import TypingError, WarningsFixer, new_error_context
from numba.core.typeinfer import TypeInferer
from numba.core.typing.context import CallStack
from numba.core.untyped_passes import InlineClosureLikes

from .lean_passes import CHANGED_BY, opcodes


def _check(pss, result):
    if result not in (True, False):
        raise ValueError(
            "CompilerPass implementations should return True/False. "
            f"CompilerPass with name '{pss.name()}' did not."
        )
    return result


class LeanPassManager(PassManager):
    """Numba's PassManager without its per-pass events, timers and self-checks."""

    def _runPass(self, index, pss, internal_state):
        if self._print_before or self._print_after or self._print_wrap:
            return PassManager._runPass(self, index, pss, internal_state)
        pss.analysis = self._analysis
        try:
            _check(pss, pss.run_initialization(internal_state))
            mutated = _check(pss, pss.run_pass(internal_state))
            _check(pss, pss.run_finalizer(internal_state))
        except Exception:
            # Numba's error context of the pass (it names the pass in a NumbaError), entered
            # only for a failing pass: a generator context manager per pass costs as much as
            # the smallest passes.
            with new_error_context("Pass {name}", name=pss.name()):
                raise
        if mutated:
            internal_state.metadata.setdefault(_CHANGED_BY, []).append(pss.name())
        return None


#: state.metadata key: the names of the passes that said they changed the IR, in order.
_CHANGED_BY = CHANGED_BY

# The passes before InlineClosureLikes whose changes it may rely on being post-processed.
_FIRST_PASSES = frozenset(
    {"numba_vulkan_translate_bytecode", "fixup_args", "numba_vulkan_ir_processing"}
)

# Bytecode that can give InlineClosureLikes work: closures, lambdas and comprehensions
# (MAKE_FUNCTION); lists that a loop fills for np.array (its array-call inlining).
_CLOSURE_LIKE_OPS = frozenset(
    dis.opmap[name] for name in ("MAKE_FUNCTION", "BUILD_LIST", "LIST_APPEND", "LIST_EXTEND")
)


def _may_have_closure_likes(state):
    """Whether InlineClosureLikes could change this function (see the class below)."""
    code = state.func_id.code
    if opcodes(code) & _CLOSURE_LIKE_OPS:
        return True
    names = set(code.co_names) | set(code.co_freevars)
    if names & {"reduce", "list"}:  # functools.reduce; list() filled in a loop
        return True
    glbls = getattr(state.func_id.func, "__globals__", {})
    for name in names:  # a stencil, called
        value = glbls.get(name)
        if type(value).__module__.startswith("numba.stencils"):
            return True
    return False


@register_pass(mutates_CFG=True, analysis_only=False)
class InlineClosureLikesWhenAny(InlineClosureLikes):
    """Numba's InlineClosureLikes, skipped where it has nothing to do.

    It inlines calls to closures and lambdas, ``functools.reduce`` and stencils,
    and turns lists filled in a loop for ``np.array`` into arrays, then
    post-processes the IR again (variable lifetimes, CFG canonicalisation: the
    same as IRProcessing did). For the small functions device functions are,
    that post-processing was most of a pipeline's untyped passes. Skipped only
    when the bytecode has none of the constructs above and no pass since
    IRProcessing changed the IR (numba_vulkan.cuda's rewrite may have), so the
    IR after it is what Numba's pass would have left.
    """

    _name = "numba_vulkan_inline_closure_likes"

    def run_pass(self, state):
        changed = set(state.metadata.get(_CHANGED_BY, ())) - _FIRST_PASSES
        if changed or _may_have_closure_likes(state):
            return super().run_pass(state)
        return False


class PipelineCompiler(compiler.CompilerBase):
    """CompilerBase with a pass list built once, and no reloads for nested compilations.

    Subclasses give ``build_pipeline()`` (a finalized LeanPassManager) and
    ``pipeline_key()`` (what the list of passes depends on); ``nested`` says that
    this compilation runs inside another one's typing (a device function).
    """

    _pipelines = {}

    def __init__(self, typingctx, targetctx, args, flags, nested):
        if not nested:
            config.reload_config()
            typingctx.refresh()
            targetctx.refresh()
        elif typingctx.registrations() != typingctx.registrations_seen:
            typingctx.refresh()  # a template registered during the enclosing typing
        state = self.state = compiler.StateDict()
        state.typingctx = typingctx
        state.targetctx = compiler._make_subtarget(targetctx, flags)
        state.library = None
        state.args = args
        state.return_type = None
        state.flags = flags
        state.locals = {}
        state.bc = None
        state.func_id = None
        state.func_ir = None
        state.lifted = None
        state.lifted_from = None
        state.typemap = None
        state.calltypes = None
        state.type_annotation = None
        state.metadata = {}
        state.reload_init = []
        state.pipeline = self
        state.parfor_diagnostics = compiler.ParforDiagnostics()
        state.metadata["parfor_diagnostics"] = state.parfor_diagnostics
        state.metadata["parfors"] = {}
        state.status = compiler._CompileStatus(can_fallback=flags.enable_pyobject)

    def define_pipelines(self):
        key = self.pipeline_key()
        pm = self._pipelines.get(key)
        if pm is None:
            pm = self._pipelines[key] = self.build_pipeline()
        return [pm]

    @global_compiler_lock
    def compile_extra(self, func):
        return super().compile_extra(func)


# ---------------------------------------------------------------- warnings of type inference


class OneCaptureWarnings(WarningsFixer):
    """Numba's WarningsFixer for one type inference, with one recording of warnings.

    Numba's ``catch_warnings(filename, lineno)`` enters ``warnings.catch_warnings(record=True)``
    (and an "always" filter for its category) around each constraint, each round: the
    warnings a constraint raised are then kept, deduplicated, under the constraint's line
    (``flush`` emits them at the end) or, of other categories, emitted again at once. Here
    ``recording()`` enters that state once, around the whole inference, and each
    constraint's ``catch_warnings`` only notes where the record stood, taking what was added
    meanwhile at its end: the same warnings, kept under the same lines. Warnings of other
    categories, and those raised outside any constraint (which Numba does not catch), are
    emitted again when the recording ends, before ``flush``. Unlike Numba's, a filter that
    a constraint itself changes stays changed until the inference ends.
    """

    def __init__(self, category):
        super().__init__(category)
        self._record = []
        self._taken = 0  # entries of _record already sorted
        self._again = []  # (message, category, filename, lineno) to emit when it ends

    @contextlib.contextmanager
    def recording(self):
        """Record the warnings raised inside; afterwards emit again the ones not kept, then
        flush the kept ones (as Numba's ``with warnings:`` does, also after an exception)."""
        try:
            with warnings.catch_warnings(record=True) as record:
                warnings.simplefilter("always", self._category)
                self._record = record
                try:
                    yield
                finally:
                    self._take(None, None)
            for message, category, filename, lineno in self._again:
                warnings.warn_explicit(message, category, filename, lineno)
        finally:
            self._again.clear()
            self.flush()

    def _take(self, filename, lineno, constraint=False):
        """Sort the entries recorded since the last call: kept under (filename, lineno) when
        a constraint raised them in the category, else emitted again at the end."""
        for w in self._record[self._taken:]:
            if not constraint:  # as raised (Numba's fixer never saw it)
                self._again.append((w.message, w.category, w.filename, w.lineno))
            elif issubclass(w.category, self._category):
                key = (filename or w.filename, lineno or w.lineno, w.category)
                self._warnings[key].add(str(w.message))
            else:  # as Numba's fixer emits it again
                self._again.append((str(w.message), w.category, w.filename, w.lineno))
        self._taken = len(self._record)

    def catch_warnings(self, filename=None, lineno=None):
        return _ConstraintWarnings(self, filename, lineno)


class _ConstraintWarnings:
    """One constraint's ``catch_warnings``: what it adds to the record is its own."""

    __slots__ = ("fixer", "filename", "lineno")

    def __init__(self, fixer, filename, lineno):
        self.fixer, self.filename, self.lineno = fixer, filename, lineno

    def __enter__(self):
        self.fixer._take(None, None)  # raised before, outside any constraint

    def __exit__(self, exc_type, exc, tb):
        fixer = self.fixer
        if exc_type is None:
            fixer._take(self.filename, self.lineno, constraint=True)
        else:  # Numba's catch_warnings drops them when the constraint raises
            fixer._taken = len(fixer._record)
        return False


# ---------------------------------------------------------------- type inference


def _may_be_literal(value):
    """Whether ``types.maybe_literal(value)`` may give a type (or raise its ValueError):
    it gives None, by raising and catching a LiteralTypingError, for any value whose
    class has no literal type (Literal.ctor_map: int, bool, str, slice... as registered)."""
    return type(value) in types.Literal.ctor_map or isinstance(value, types.Literal)


class LeanTypeInferer(TypeInferer):
    """Numba's TypeInferer, typing globals and constants that cannot be literals without
    ``types.maybe_literal``'s exception (a NumbaError, whose message is highlighted:
    colorama is initialised and reset for each). A kernel names a few such globals (np,
    range, its device functions) and constants (floats); anything else takes Numba's way.
    tests/nodevice/test_lean_typeinfer.py types a corpus both ways.
    """

    def typeof_const(self, inst, target, const):
        if _may_be_literal(const):
            return super().typeof_const(inst, target, const)
        # Numba's, with no literal type to prefer
        self.add_type(target.name, self.resolve_value_type(inst, const), loc=inst.loc)
        return None

    def typeof_global(self, inst, target, gvar):
        value = gvar.value
        if _may_be_literal(value) or isinstance(value, tuple):
            return super().typeof_global(inst, target, gvar)
        try:
            typ = self.resolve_value_type(inst, value)
        except TypingError:  # Numba's way says why, in its words
            return super().typeof_global(inst, target, gvar)
        if isinstance(typ, (types.Array, types.BaseAnonymousTuple)) or (
            isinstance(typ, types.Dispatcher) and typ.dispatcher.is_compiling
        ):
            return super().typeof_global(inst, target, gvar)
        # Numba's, for a type that needs no adjustment and a value with no literal type
        self.sentry_modified_builtin(inst, gvar)
        tv = self.typevars[target.name]
        if tv.locked:
            tv.add_type(typ, loc=inst.loc)
        else:
            self.lock_type(target.name, typ, loc=inst.loc)
        self.assumed_immutables.add(inst)
        return None


class LeanCallStack(CallStack):
    """Numba's CallStack, whose ``register`` (entered around each type inference, as the
    typing context's) makes the inference a LeanTypeInferer and gives it a
    OneCaptureWarnings and its recording. (Numba's ``type_inference_stage`` creates the
    TypeInferer and registers it before it builds any constraint.)"""

    @contextlib.contextmanager
    def register(self, target, typeinfer, func_id, args):
        if type(typeinfer) is TypeInferer:
            typeinfer.__class__ = LeanTypeInferer
        with super().register(target, typeinfer, func_id, args):
            fixer = typeinfer.warnings = OneCaptureWarnings(typeinfer.warnings._category)
            with fixer.recording():
                yield
