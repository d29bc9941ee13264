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
  runs under Numba's compiler lock, taken by ``PipelineCompiler``);
- per function: a new PassManager (and its dependency analysis) for the same
  list of passes: it is built once and reused (its only state per run is the
  pass timings, which we do not read);
- per device function typed *inside* a kernel's typing: reloading Numba's
  configuration from the environment and refreshing the typing and target
  contexts' registries, which the enclosing compilation did moments before
  (a template registered since is picked up: see ``VulkanCompiler``).

With NUMBA_DEBUG_PRINT_BEFORE/AFTER/WRAP set, Numba's own pass runner is used,
so its IR dumps still work.
"""

from numba.core import compiler, config
from numba.core.compiler_lock import global_compiler_lock
from numba.core.compiler_machinery import PassManager
from numba.core.errors import new_error_context


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
        with new_error_context("Pass {name}", name=pss.name()):
            _check(pss, pss.run_initialization(internal_state))
            _check(pss, pss.run_pass(internal_state))
            _check(pss, pss.run_finalizer(internal_state))
        return None


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
