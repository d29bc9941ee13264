"""typing/lean_passes.py gives the IR Numba's TranslateByteCode and GenericRewrites give.

Each function of the corpus is translated twice (Numba's Interpreter and ours),
then rewritten twice (Numba's rewrite registry and ours), and the IR dumps must
be equal; the corpus has the constructs each skipped step looks for, so a
skip that loses a rewrite shows as a difference.
"""

import builtins
import io
import re

import numba
import numpy as np
import pytest
from numba.core import (
    analysis, bytecode, compiler, interpreter, postproc, rewrites, typed_passes, types,
    untyped_passes,
)
from numba.core import errors
from numba.core.compiler_machinery import AnalysisPass, PassManager, register_pass
from numba.core.rewrites import ir_print, static_getitem
from numba.core.target_extension import target_override

from numba_vulkan.typing import lean, lean_passes

_print_alias = print


class _Ctx:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def _arith(a, b):
    if a > b:
        return a - b
    return np.float32(b) * 2.0


def _loop(x):
    acc = 0.0
    for k in range(4):
        acc += x * k
    return min(max(acc, -1.0), 1.0)


def _const_items(a, x):
    a[1] = a[0] + x
    return (a[2], x**2, x**3.5)


def _prints(x):
    print(x, 1)
    _print_alias(x)
    builtins.print("b")
    return x


def _raises(x):
    if x < 0:
        raise ValueError("negative", 3)
    return x


def _with_block(x):
    with _Ctx():
        y = x + 1
    return y


def _star_call(f, args, kws):
    return f(*args, **kws)


def _many_keywords(f, x):  # CPython calls with CALL_FUNCTION_EX beyond 15 keywords
    return f(
        k0=x, k1=x, k2=x, k3=x, k4=x, k5=x, k6=x, k7=x, k8=x, k9=x, k10=x, k11=x, k12=x,
        k13=x, k14=x, k15=x, k16=x,
    )


def _dict_merge(a):
    return {**a, "k": 1}


def _named_like_peephole(d):
    d._update_from_bytecode(1)
    return d


CORPUS = [
    _arith,
    _loop,
    _const_items,
    _prints,
    _raises,
    _with_block,
    _star_call,
    _many_keywords,
    _dict_merge,
    _named_like_peephole,
]

MATCHABLE = [f for f in CORPUS if f not in (_star_call, _dict_merge)]  # Numba refuses those


def _dump(func_ir):
    out = io.StringIO()
    func_ir.dump(file=out)
    return out.getvalue()


def _translate(func, interp_class):
    func_id = bytecode.FunctionIdentity.from_function(func)
    return interp_class(func_id).interpret(bytecode.ByteCode(func_id=func_id))


def _translated(func, interp_class):
    """The IR's dump, or the error Numba's translation refuses the function with."""
    try:
        return _dump(_translate(func, interp_class))
    except Exception as e:  # noqa: BLE001 (UnsupportedBytecodeError here; any, elsewhere)
        return f"{type(e).__name__}: {e}"


def _rewritten(func, apply):
    func_ir = _translate(func, interpreter.Interpreter)
    postproc.PostProcessor(func_ir).run()
    state = compiler.StateDict()
    state.func_ir, state.typemap, state.calltypes = func_ir, None, None
    state.func_id, state.args, state.metadata = func_ir.func_id, (), {}
    apply(state)
    return _dump(func_ir)


@pytest.mark.parametrize("func", CORPUS, ids=lambda f: f.__name__)
def test_translation_equals_numbas(func):
    theirs = _translated(func, interpreter.Interpreter)
    assert _translated(func, lean_passes.LeanInterpreter) == theirs


@pytest.mark.parametrize("func", MATCHABLE, ids=lambda f: f.__name__)
def test_rewrites_equal_numbas(func):
    theirs = _rewritten(func, lambda s: rewrites.rewrite_registry.apply("before-inference", s))
    assert _rewritten(func, lean_passes._apply_rewrites) == theirs


def _scan(func):
    func_ir = _translate(func, interpreter.Interpreter)
    postproc.PostProcessor(func_ir).run()
    return lean_passes._Scan(func_ir), func_ir


@pytest.mark.parametrize("func", MATCHABLE, ids=lambda f: f.__name__)
def test_skips_only_what_cannot_match(func):
    scan, func_ir = _scan(func)
    state = compiler.StateDict()
    state.func_ir, state.typemap, state.calltypes = func_ir, None, None
    for cls in rewrites.rewrite_registry.rewrites["before-inference"]:
        if lean_passes._may_match(cls, scan, func_ir):
            continue
        rewrite = cls(state)
        for block in func_ir.blocks.values():
            assert not rewrite.match(func_ir, block, None, None), (cls, func)


def test_skips_happen():
    scan, func_ir = _scan(_loop)
    for cls in rewrites.rewrite_registry.rewrites["before-inference"]:
        expected = cls not in lean_passes._KNOWN_REWRITES
        assert lean_passes._may_match(cls, scan, func_ir) is expected, cls
    scan, func_ir = _scan(_const_items)
    assert lean_passes._may_match(static_getitem.RewriteConstGetitems, scan, func_ir)
    assert lean_passes._may_match(static_getitem.RewriteConstSetitems, scan, func_ir)
    assert not lean_passes._may_match(ir_print.RewritePrintCalls, scan, func_ir)
    scan, func_ir = _scan(_prints)
    assert lean_passes._may_match(ir_print.RewritePrintCalls, scan, func_ir)
    # ir.Print nodes appear only once RewritePrintCalls has run
    assert not lean_passes._may_match(ir_print.DetectConstPrintArguments, scan, func_ir)


def test_each_print_spelling_is_found():
    for name, callee in (("print", print), ("alias", _print_alias), ("module", builtins.print)):
        assert callee is print, name
    ours = _rewritten(_prints, lean_passes._apply_rewrites)
    assert ours.count("print(") == 3, ours


# ---------------------------------------------------------------- the untyped passes in a row


def _pruned(x):
    flag = 1
    if flag == 1:
        return x
    return -x


def _tuple_len(t, a):
    n = len(t) + a.ndim
    if n > 3:
        return t[0]
    return t[1]


def _arg_types(func):
    if func is _tuple_len:
        return (types.UniTuple(types.float64, 3), types.Array(types.float64, 2, "C"))
    return (types.float64,) * func.__code__.co_argcount


def _untyped(func, passes):
    """The IR after `passes`, run as our pipeline runs them: its dump, each block's entry
    variables (computed from the lifetimes where LeanPostProcessor left them out) and each
    label's live variables."""
    pm = lean.LeanPassManager("test")
    for pass_class in passes:
        pm.add_pass(pass_class, pass_class.__name__)
    pm.finalize()
    state = compiler.StateDict()
    state.func_id = bytecode.FunctionIdentity.from_function(func)
    state.func_ir, state.typemap, state.calltypes = None, None, None
    state.args, state.metadata, state.flags = _arg_types(func), {}, compiler.Flags()
    untyped_passes.ExtractByteCode().run_pass(state)
    pm.run(state)
    func_ir = state.func_ir
    if func_ir.block_entry_vars:  # Numba's IRProcessing
        entry = {label: sorted(func_ir.block_entry_vars[b]) for label, b in func_ir.blocks.items()}
    else:  # LeanPostProcessor left them out: what Numba's computes from the same lifetimes
        vlt = func_ir.variable_lifetime
        live = analysis.compute_live_variables(
            vlt.cfg, func_ir.blocks, vlt.usedefs.defmap, vlt.deadmaps.combined
        )
        entry = {label: sorted(live[label]) for label in func_ir.blocks}
    live = {k: sorted(v) for k, v in func_ir.variable_lifetime.livemap.items()}
    return _dump(func_ir), entry, live, state.metadata


NUMBA_PASSES = [
    untyped_passes.TranslateByteCode,
    untyped_passes.FixupArgs,
    untyped_passes.IRProcessing,
    untyped_passes.RewriteSemanticConstants,
    untyped_passes.DeadBranchPrune,
    untyped_passes.GenericRewrites,
]
OUR_PASSES = [
    lean_passes.LeanTranslateByteCode,
    untyped_passes.FixupArgs,
    lean_passes.LeanIRProcessing,
    untyped_passes.RewriteSemanticConstants,
    untyped_passes.DeadBranchPrune,
    lean_passes.LeanGenericRewrites,
]


@pytest.mark.parametrize("func", MATCHABLE + [_pruned, _tuple_len], ids=lambda f: f.__name__)
def test_untyped_passes_equal_numbas(func):
    theirs = _untyped(func, NUMBA_PASSES)[:3]
    assert _untyped(func, OUR_PASSES)[:3] == theirs


def test_post_processing_skipped_only_when_unchanged():
    skipped = []
    real = lean_passes.LeanPostProcessor.run

    def counting(self, *args, **kwargs):
        skipped.append(self.func_ir)
        return real(self, *args, **kwargs)

    lean_passes.LeanPostProcessor.run = counting
    try:
        runs = {}
        for func in (_loop, _pruned, _tuple_len, _prints):
            skipped.clear()
            _untyped(func, OUR_PASSES)
            runs[func.__name__] = len(skipped)
    finally:
        lean_passes.LeanPostProcessor.run = real
    # IRProcessing's, then GenericRewrites' only where a pass changed the IR in between
    assert runs == {"_loop": 1, "_pruned": 2, "_tuple_len": 2, "_prints": 2}


# ---------------------------------------------------------------- a failing pass


@register_pass(mutates_CFG=False, analysis_only=True)
class _FailingPass(AnalysisPass):
    _name = "numba_vulkan_test_failing_pass"
    error = None

    def __init__(self):
        AnalysisPass.__init__(self)

    def run_pass(self, state):
        raise type(self).error


@pytest.mark.parametrize(
    "make_error", [lambda: errors.TypingError("it fails"), lambda: ValueError("not Numba's")],
    ids=["TypingError", "ValueError"],
)
def test_failing_pass_has_numbas_error_context(make_error):
    """LeanPassManager enters the pass's error context only for a failing pass: the error
    says what Numba's PassManager makes it say ("During: Pass ..." for a NumbaError). A new
    exception for each run: copying one is not reliable (tblib, which Dask installs,
    registers its own reduction of every exception with copyreg)."""
    error = make_error()

    def failure(manager_class):
        _FailingPass.error = make_error()
        pm = manager_class("test")
        pm.add_pass(_FailingPass, "fails")
        pm.finalize()
        state = compiler.StateDict()
        state.func_ir = None
        state.func_id = bytecode.FunctionIdentity.from_function(_pruned)
        state.flags, state.args, state.return_type = compiler.Flags(), (types.float64,), None
        with pytest.raises(type(error)) as info:
            pm.run(state)
        return str(info.value)

    theirs = failure(PassManager)
    if isinstance(error, errors.NumbaError):
        assert "During: Pass numba_vulkan_test_failing_pass" in theirs
    assert failure(lean.LeanPassManager) == theirs


# ---------------------------------------------------------------- the pruning, run once


@register_pass(mutates_CFG=False, analysis_only=True)
class _StopWithIR(AnalysisPass):
    """Ends a test pipeline where type inference would start: state.cr is the IR's dump
    and the passes that said they changed it."""

    _name = "numba_vulkan_test_stop_with_ir"

    def __init__(self):
        AnalysisPass.__init__(self)

    def run_pass(self, state):
        state.cr = _dump(state.func_ir), list(state.metadata.get(lean.CHANGED_BY, ()))
        return False


def _front(func, pruning):
    """Our pipeline's untyped passes (pipeline.VulkanCompiler's list, with `pruning` for
    its dead branch pruning): the IR's dump and the passes that said they changed it."""
    from numba_vulkan.typing import pipeline, target

    passes = []
    for pass_class, description in pipeline.VulkanCompiler.build_pipeline(None).passes:
        if pass_class is typed_passes.NopythonTypeInference:
            break
        passes.append((pruning if pass_class is lean_passes.LeanDeadBranchPrune else pass_class,
                       description))  # fmt: skip

    class Front(pipeline.VulkanCompiler):
        def pipeline_key(self):
            return ("test", pruning)

        def build_pipeline(self):
            pm = lean.LeanPassManager("test")
            for pass_class, description in passes:
                pm.add_pass(pass_class, description)
            pm.add_pass(_StopWithIR, "stop")
            pm.finalize()
            return pm

    typing_context, target_context = target.contexts()
    flags = compiler.Flags()
    flags.nrt = False
    with target_override(target.TARGET_NAME):
        return Front(typing_context, target_context, _arg_types(func), flags, False).compile_extra(
            func
        )


@numba.njit(inline="always")
def _inlined(x, y):
    if y > 2:
        return x
    return x + y


def _inlines(x):
    return _inlined(x, 3)  # y > 2 is pruned only once inlined (by the second pruning)


def _closure(x):
    def add(y):
        return x + y

    return add(1.0)


PRUNING_CORPUS = [_arith, _loop, _raises, _pruned, _tuple_len, _inlines, _closure]


@pytest.mark.parametrize("func", PRUNING_CORPUS, ids=lambda f: f.__name__)
def test_pruning_equals_numbas(func):
    def dump(pruning):  # inlined variables and blocks are numbered by process-wide counters
        text = re.sub(r"_v\d+_", "_vN_", _front(func, pruning)[0])
        labels = {}
        for label in re.findall(r"^label (\d+):", text, flags=re.M):
            labels.setdefault(label, f"L{len(labels)}")
        return re.sub(
            r"(label |jump |branch [^,]+, |, )(\d+)\b",
            lambda m: m.group(1) + labels.get(m.group(2), m.group(2)),
            text,
        )

    theirs = dump(untyped_passes.DeadBranchPrune)
    assert dump(lean_passes.LeanDeadBranchPrune) == theirs


def test_pruning_skipped_only_when_unchanged():
    def runs(func):
        changed_by = _front(func, lean_passes.LeanDeadBranchPrune)[1]
        return changed_by.count(lean_passes.LeanDeadBranchPrune._name)

    # three prunings in the pipeline: the first always runs, the others where it found
    # nothing and nothing changed since
    assert runs(_loop) == 1
    assert runs(_pruned) == 2  # the first pruned: the second runs (and finds nothing)
    assert runs(_inlines) == 3  # inlining changed the IR before the second
