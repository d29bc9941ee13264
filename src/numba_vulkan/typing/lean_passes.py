"""Numba's TranslateByteCode, IRProcessing and GenericRewrites, without the steps that cannot change a function.

A device function of a few lines spends most of its typing in Numba's front
half (typing/lean.py); two of its passes run steps that, for most kernel code,
only look and find nothing (benchmarks/profile_first_call.py):

- On Python 3.11 Numba's ByteCode lists each inline cache entry as an instruction
  (CACHE), which the bytecode analysis and the interpreter step through doing
  nothing; ``LeanInterpreter`` leaves them out (``skip_inline_caches``).
- ``TranslateByteCode`` ends with five peepholes over the new IR. Three of them
  rewrite what only one opcode produces (``with`` blocks, ``f(*args, **kws)``,
  dict merges); ``LeanTranslateByteCode`` skips each of those when the function's
  bytecode lacks that opcode. The other two are cheap and always run.
- ``GenericRewrites`` tries every "before-inference" rewrite on every block; a
  failed match of a constant costs an exception that formats a source line.
  ``LeanGenericRewrites`` runs the same rewrites in the same order, but skips one
  of Numba's own whose ``match`` needs a node the IR does not have (no
  ``getitem``, no ``print`` callee, ...); rewrites registered by anyone else always
  run, and after any rewrite changes a block the IR is scanned again. Its closing
  post-processing (CFG canonicalisation, variable lifetimes) is skipped when
  nothing changed the IR since IRProcessing did the same: no rewrite matched, only
  RewriteSemanticConstants and DeadBranchPrune ran in between, and they left every
  block, statement and assigned value as IRProcessing left them (``LeanIRProcessing``
  notes what it left).
- ``IRProcessing`` (and GenericRewrites' closing post-processing) ends by computing
  the variables live at each block's entry, which only Numba's object-mode lowering
  reads; ``LeanPostProcessor`` leaves them out.
- ``DeadBranchPrune`` runs three times per function; for most functions the first run
  prunes nothing and nothing changes the IR before the next two, which then find
  nothing again. ``LeanDeadBranchPrune`` skips a run where its last run left the IR as
  it found it and the fingerprint shows the IR as that run left it.

All give the IR Numba's passes give (tests/nodevice/test_lean_passes.py
compares them on a corpus of functions).
"""

import dis
import sys
from types import ModuleType

from numba.core import config, interpreter, ir, postproc, rewrites, transforms, untyped_passes
from numba.core.compiler_machinery import register_pass
from numba.core.rewrites import ir_print, static_binop, static_getitem, static_raise


def _ops(*names):
    return frozenset(dis.opmap[n] for n in names if n in dis.opmap)


def opcodes(code):
    """The opcodes `code` uses (every instruction is an opcode byte and an argument byte;
    EXTENDED_ARG and inline caches are instructions of their own, never these opcodes)."""
    return set(code.co_code[0::2])


# Peephole (by name) -> the opcodes that make the IR it rewrites; absent, it finds nothing.
# '$setup_with_exitfn' variables come from with-statements (byteflow.py), calls with
# `varkwarg` from CALL_FUNCTION_EX, `_update_from_bytecode` calls from DICT_UPDATE (or a
# method of that name). Any other peephole always runs.
_PEEPHOLE_OPCODES = {
    "peep_hole_delete_with_exit": _ops("SETUP_WITH", "BEFORE_WITH", "LOAD_SPECIAL"),
    "peep_hole_call_function_ex_to_call_function_kw": _ops("CALL_FUNCTION_EX"),
    "peep_hole_fuse_dict_add_updates": _ops("DICT_UPDATE"),
}


_CACHE = dis.opmap.get("CACHE") if sys.version_info[:2] == (3, 11) else None


def skip_inline_caches(bc):
    """Drop the CACHE entries from Numba's ByteCode `bc` (Python 3.11).

    On 3.11 Numba lists each inline cache entry of an instruction (LOAD_GLOBAL
    has five, CALL four...) as an instruction of its own, which the flow
    analysis and the interpreter then step through one at a time, doing nothing:
    about two thirds of what they dispatch in kernel code. Each other instruction's
    ``next`` is pointed past its entries instead. No jump has cache entries, so
    no jump target or fall-through changes, and the IR is the same (3.12's Numba
    leaves the entries out itself).
    """
    if _CACHE is None:
        return
    table = bc.table
    kept = []
    for offset, inst in table.items():
        if inst.opcode == _CACHE and kept:
            kept[-1][1].next = inst.next
        else:
            kept.append((offset, inst))
    if len(kept) < len(table):
        bc.table = type(table)(kept)


class LeanInterpreter(interpreter.Interpreter):
    """Numba's Interpreter, without the peepholes that have nothing to rewrite, and on
    3.11 without stepping through inline cache entries (``skip_inline_caches``)."""

    def interpret(self, bytecode):
        skip_inline_caches(bytecode)
        return super().interpret(bytecode)

    def post_process(self, peepholes, func_ir):
        code = self.bytecode.func_id.code
        used = opcodes(code)
        if "_update_from_bytecode" in code.co_names:
            used |= _PEEPHOLE_OPCODES["peep_hole_fuse_dict_add_updates"]

        def needed(peep):
            ops = _PEEPHOLE_OPCODES.get(getattr(peep, "__name__", None))
            return ops is None or bool(used & ops)

        return super().post_process([p for p in peepholes if needed(p)], func_ir)


@register_pass(mutates_CFG=True, analysis_only=False)
class LeanTranslateByteCode(untyped_passes.TranslateByteCode):
    """TranslateByteCode with LeanInterpreter."""

    _name = "numba_vulkan_translate_bytecode"

    def run_pass(self, state):
        state["func_ir"] = LeanInterpreter(state["func_id"]).interpret(state["bc"])
        return True


# ---------------------------------------------------------------- GenericRewrites

_FAIL = object()


def _constant(func_ir, name, depth=0):
    """What ``func_ir.infer_constant(name)`` gives, without its exceptions: the value,
    _FAIL where Numba would fail, or None where unsure (so the caller runs Numba's code)."""
    if depth > 20:
        return None
    try:
        defn = func_ir.get_definition(name)
    except KeyError:
        return _FAIL
    if isinstance(defn, (ir.Global, ir.FreeVar, ir.Const)):
        return defn.value
    if isinstance(defn, ir.Arg):
        return _FAIL
    if not isinstance(defn, ir.Expr):
        return None
    if defn.op == "getattr":
        base = _constant(func_ir, defn.value.name, depth + 1)
        if base is None or base is _FAIL:
            return base
        if isinstance(base, (ModuleType, type)):
            return getattr(base, defn.attr, _FAIL)
        return _FAIL
    if defn.op == "call":  # only slice(...) and exception classes are constants: never print
        return _FAIL
    if defn.op in ("build_list", "build_tuple"):
        return _FAIL  # a list or tuple, never print
    return _FAIL  # Numba's ConstantInference fails on every other expression


def _may_call_print(func_ir, calls):
    for expr in calls:
        callee = _constant(func_ir, expr.func.name)
        if callee is None or callee is print:
            return True
    return False


class _Scan:
    """What one walk over the IR finds that Numba's rewrites look for."""

    def __init__(self, func_ir):
        self.ops = set()
        self.stmts = set()
        self.binop_fns = set()
        self.calls = []
        for block in func_ir.blocks.values():
            for stmt in block.body:
                self.stmts.add(type(stmt))
                if isinstance(stmt, ir.Assign) and isinstance(stmt.value, ir.Expr):
                    expr = stmt.value
                    self.ops.add(expr.op)
                    if expr.op == "call":
                        self.calls.append(expr)
                    elif expr.op == "binop":
                        self.binop_fns.add(expr.fn)

    def has_stmt(self, classes):
        return any(issubclass(t, classes) for t in self.stmts)


# Numba's rewrite -> whether it can match: what its ``match`` looks for, found by _Scan.
_MAY_MATCH = {
    static_getitem.RewriteConstGetitems: lambda scan, func_ir: "getitem" in scan.ops,
    static_getitem.RewriteConstSetitems: lambda scan, func_ir: scan.has_stmt(ir.SetItem),
    static_raise.RewriteConstRaises: lambda scan, func_ir: scan.has_stmt((ir.Raise, ir.TryRaise)),
    static_binop.DetectStaticBinops: lambda scan, func_ir: bool(
        scan.binop_fns & set(static_binop.DetectStaticBinops.rhs_operators)
    ),
    ir_print.RewritePrintCalls: lambda scan, func_ir: _may_call_print(func_ir, scan.calls),
    ir_print.DetectConstPrintArguments: lambda scan, func_ir: scan.has_stmt(ir.Print),
}
_KNOWN_REWRITES = frozenset(_MAY_MATCH)


def _may_match(rewrite_cls, scan, func_ir):
    """False only where Numba's rewrite `rewrite_cls` cannot match any block."""
    may_match = _MAY_MATCH.get(rewrite_cls)
    return True if may_match is None else may_match(scan, func_ir)


@register_pass(mutates_CFG=True, analysis_only=False)
class LeanGenericRewrites(untyped_passes.GenericRewrites):
    """GenericRewrites, without the rewrites that cannot match (module docstring).

    The loop is ``RewriteRegistry.apply('before-inference', ...)``'s, with the skip.
    """

    _name = "numba_vulkan_generic_rewrites"

    def run_pass(self, state):
        if config.DEBUG or config.DUMP_IR:
            return super().run_pass(state)
        msg = (
            "Internal error in pre-inference rewriting pass encountered during "
            f'compilation of function "{state.func_id.func_name}"'
        )
        with untyped_passes.fallback_context(state, msg):
            _apply_rewrites(state)
        return True


#: state.metadata key: the IR's fingerprint as IRProcessing left it.
_PROCESSED = "numba_vulkan_processed_ir"
#: state.metadata key (typing/lean.py): the passes that said they changed the IR, in order.
CHANGED_BY = "numba_vulkan_changed_by"
# Passes between IRProcessing and GenericRewrites whose changes the fingerprint sees: they
# only replace statements, assigned values and terminators, and delete blocks.
_SEEN_BY_FINGERPRINT = frozenset(
    {"rewrite_semantic_constants", "dead_branch_prune", "numba_vulkan_dead_branch_prune"}
)


def _fingerprint(func_ir):
    """The labels and the identities of the blocks, their statements and assigned values:
    what the passes above change, all of which PostProcessor.run's results depend on.
    Also the objects themselves, so that none is freed and its id reused meanwhile."""
    objects = []
    for block in func_ir.blocks.values():
        objects.append(block)
        for stmt in block.body:
            objects.append(stmt)
            if isinstance(stmt, ir.Assign):
                objects.append(stmt.value)
    return tuple(func_ir.blocks), tuple(map(id, objects)), objects


class LeanPostProcessor(postproc.PostProcessor):
    """Numba's PostProcessor without the live variables at each block's entry.

    ``run()`` canonicalises the CFG, attaches the (lazy) variable lifetimes and then
    computes ``func_ir.block_entry_vars``, which forces the CFG, the use-def, live and
    dead maps of every block: most of the post-processing of a small function. Only
    Numba's object-mode lowering reads those entry variables; nothing of Numba's front
    half or of ours does, and the passes that read the lifetimes (MixedContainerUnroller:
    ``livemap``) compute them from the same lazy ``VariableLifetime`` when they do.
    Generators and ``emit_dels`` (which use the entry variables) run Numba's ``run``.
    """

    def run(self, emit_dels=False, extend_lifetimes=False):
        func_ir = self.func_ir
        if emit_dels or func_ir.is_generator:
            return super().run(emit_dels, extend_lifetimes)
        func_ir.blocks = transforms.canonicalize_cfg(func_ir.blocks)
        func_ir.variable_lifetime = postproc.VariableLifetime(func_ir.blocks)
        func_ir.generator_info = None
        return None


@register_pass(mutates_CFG=True, analysis_only=False)
class LeanIRProcessing(untyped_passes.IRProcessing):
    """IRProcessing with LeanPostProcessor, remembering the IR it left for
    LeanGenericRewrites."""

    _name = "numba_vulkan_ir_processing"

    def run_pass(self, state):
        if config.DEBUG or config.DUMP_IR:
            changed = super().run_pass(state)
        else:
            LeanPostProcessor(state.func_ir).run()
            changed = True
        state.metadata[_PROCESSED] = (state.func_ir, *_fingerprint(state.func_ir))
        return changed


def _unchanged_since_processing(state):
    """Whether the IR is as LeanIRProcessing's post-processing left it."""
    processed = state.metadata.get(_PROCESSED)
    changed_by = state.metadata.get(CHANGED_BY, ())
    if processed is None or LeanIRProcessing._name not in changed_by:
        return False
    func_ir, labels, ids, _ = processed
    since = changed_by[changed_by.index(LeanIRProcessing._name) + 1:]
    if func_ir is not state.func_ir or not set(since) <= _SEEN_BY_FINGERPRINT:
        return False
    now = _fingerprint(func_ir)
    return now[0] == labels and now[1] == ids


def _apply_rewrites(state):
    func_ir = state.func_ir
    blocks = func_ir.blocks
    old_blocks = blocks.copy()
    scan = _Scan(func_ir)
    changed = False
    for rewrite_cls in rewrites.rewrite_registry.rewrites["before-inference"]:
        if not _may_match(rewrite_cls, scan, func_ir):
            continue
        rewrite = rewrite_cls(state)
        work_list = list(blocks.items())
        while work_list:
            key, block = work_list.pop()
            if rewrite.match(func_ir, block, state.typemap, state.calltypes):
                new_block = rewrite.apply()
                blocks[key] = new_block
                work_list.append((key, new_block))
                scan = None
        if scan is None:  # a rewrite changed the IR: look again
            scan = _Scan(func_ir)
            changed = True
    for key, block in blocks.items():
        if block != old_blocks[key]:
            block.verify()
    if changed or not _unchanged_since_processing(state):
        LeanPostProcessor(func_ir).run()


# ---------------------------------------------------------------- DeadBranchPrune

#: state.metadata key: what LeanDeadBranchPrune's last run left, when it changed nothing.
_PRUNE_FOUND_NOTHING = "numba_vulkan_prune_found_nothing"
# Passes between two runs of the pruning whose changes the fingerprint sees: they replace
# blocks, statements or assigned values (a rewrite returns a new block; inlining adds blocks
# and statements; a raise or a make_function is replaced), never a node in place.
_CHANGES_SEEN_BY_FINGERPRINT = frozenset(
    {
        "numba_vulkan_generic_rewrites",
        "Rewrite dynamic raises",
        "make_function_op_code_to_jit_function",
        "inline_inlinables",
    }
)


def _shape(func_ir):
    """The labels and the terminators: what dead_branch_prune changes when it changes
    anything (it prunes a branch into a jump, rewriting its condition, and deletes
    unreachable blocks; it also edits phis, which it finds only after ReconstructSSA, a
    pass our pipeline does not run)."""
    return tuple(func_ir.blocks), [block.body[-1] for block in func_ir.blocks.values()]


def _same_shape(a, b):
    return a[0] == b[0] and all(x is y for x, y in zip(a[1], b[1]))


@register_pass(mutates_CFG=True, analysis_only=False)
class LeanDeadBranchPrune(untyped_passes.DeadBranchPrune):
    """DeadBranchPrune, skipped where it would run on the IR its last run left unchanged.

    Numba's pruning is a function of the IR and the argument types (the same throughout
    a pipeline): on the IR it found nothing in, it finds nothing again. A run is skipped
    when the last one changed nothing, the passes that said they changed the IR since
    are ones whose changes the fingerprint sees, and the fingerprint (labels, blocks,
    statements, assigned values) is the one that run left.
    """

    _name = "numba_vulkan_dead_branch_prune"

    def run_pass(self, state):
        changed_by = state.metadata.get(CHANGED_BY)  # kept by LeanPassManager (lean.py)
        if changed_by is None or config.DEBUG or config.DUMP_IR:
            return super().run_pass(state)
        func_ir = state.func_ir
        found_nothing = state.metadata.pop(_PRUNE_FOUND_NOTHING, None)
        if found_nothing is not None:
            left_ir, start, labels, ids, objects = found_nothing
            if left_ir is func_ir and set(changed_by[start:]) <= _CHANGES_SEEN_BY_FINGERPRINT:
                now = _fingerprint(func_ir)
                if now[0] == labels and now[1] == ids:
                    # skipped: this run says it changed nothing, so it is not in changed_by
                    state.metadata[_PRUNE_FOUND_NOTHING] = (func_ir, len(changed_by), *now)
                    return False
        before = _shape(func_ir)
        super().run_pass(state)
        if state.func_ir is func_ir and _same_shape(before, _shape(func_ir)):
            # the passes after this one start after its own entry in changed_by
            start = len(changed_by) + 1
            state.metadata[_PRUNE_FOUND_NOTHING] = (func_ir, start, *_fingerprint(func_ir))
        return True
