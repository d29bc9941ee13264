"""Refuse barriers that provably sit in divergent control flow.

Every invocation of a workgroup must reach the same ``nv.barrier()``; one
that some invocations skip hangs the workgroup or gives undefined results.
Where the front end can see it, it refuses the kernel: a barrier is refused
when it lies under a branch whose condition depends on ``local_id`` or
``global_id`` (or on the old value of an atomic, or on a subgroup operation:
they differ per invocation or per subgroup), before the paths of that branch
meet again.

The analysis runs on Numba's IR, by variable name and without regard to
order (a name that is ever assigned something id-dependent counts as
id-dependent): conservative towards refusing, but only for names that do
hold such values somewhere. An id-dependent early ``return`` before a barrier
(the CUDA idiom ``if x >= n: return``) is refused too: Vulkan asks every
invocation of the workgroup to arrive, and lavapipe does give wrong results
when some have left (the tiled matmul at a size that is not a multiple of
the tile did). Guard the work instead of returning (``if x < n: ...``), as
numba-cuda's current tiled-matmul example does.

Barriers under branches on data (``if a[0] > 0:``) cannot be judged here and
are the programmer's responsibility, as in CUDA (docs/parallel.md).
"""

from numba.core import ir

from .. import stubs
from .errors import unsupported

_ID_SOURCES = (stubs.local_id, stubs.global_id)


def _static_callee(func_ir, var, depth=0):
    if depth > 16:
        return None
    try:
        defn = func_ir.get_definition(var)
    except Exception:  # no single definition
        return None
    if isinstance(defn, (ir.Global, ir.FreeVar)):
        return defn.value
    if isinstance(defn, ir.Expr) and defn.op == "getattr":
        base = _static_callee(func_ir, defn.value, depth + 1)
        return getattr(base, defn.attr, None) if base is not None else None
    return None


def _is_varying_source(fn):
    """Calls whose results differ between invocations of one workgroup: ids, atomics and
    every subgroup operation but size() and count() (they differ between subgroups)."""
    if any(fn is s for s in _ID_SOURCES):
        return True
    uniform = (stubs.subgroup.size, stubs.subgroup.count)
    members = list(stubs.atomic._members.values()) + list(stubs.subgroup._members.values())
    return any(fn is m for m in members) and not any(fn is u for u in uniform)


def _tainted(func_ir):
    """Names of the variables that may hold invocation-dependent values."""
    assigns = [
        stmt for block in func_ir.blocks.values() for stmt in block.body
        if isinstance(stmt, ir.Assign)
    ]
    tainted = set()
    changed = True
    while changed:
        changed = False
        for stmt in assigns:
            name = stmt.target.name
            if name in tainted:
                continue
            value = stmt.value
            hit = False
            if isinstance(value, ir.Var):
                hit = value.name in tainted
            elif isinstance(value, ir.Expr):
                if value.op == "call" and _is_varying_source(_static_callee(func_ir, value.func)):
                    hit = True
                else:
                    hit = any(v.name in tainted for v in value.list_vars())
            if hit:
                tainted.add(name)
                changed = True
    return tainted


def _barrier_loc(func_ir, block):
    for stmt in block.body:
        if isinstance(stmt, ir.Assign) and isinstance(stmt.value, ir.Expr) \
                and stmt.value.op == "call" \
                and any(_static_callee(func_ir, stmt.value.func) is s
                        for s in (stubs.barrier, *stubs.BARRIER_REDUCTIONS)):
            return stmt.loc
    return None


def check(func_ir):
    """Raise VulkanUnsupportedError for a barrier under an id-dependent branch."""
    blocks = func_ir.blocks
    barriers = {label: loc for label, b in blocks.items()
                if (loc := _barrier_loc(func_ir, b)) is not None}
    if not barriers:
        return
    succ = {}
    for label, b in blocks.items():
        t = b.terminator
        succ[label] = [t.target] if isinstance(t, ir.Jump) else \
            [t.truebr, t.falsebr] if isinstance(t, ir.Branch) else []
    # Every return leads to one exit node, so an early return is a path that skips
    # the barriers after it.
    exit_node = object()
    for label, b in blocks.items():
        if isinstance(b.terminator, ir.Return):
            succ[label] = [exit_node]
    succ[exit_node] = []
    # Post-dominators (blocks without successors return: they lead to the one exit).
    labels = list(succ)
    pdom = {n: set(labels) for n in labels}
    changed = True
    while changed:
        changed = False
        for n in labels:
            new = set.intersection(*(pdom[s] for s in succ[n])) if succ[n] else set()
            new = new | {n}
            if new != pdom[n]:
                pdom[n] = new
                changed = True

    tainted = _tainted(func_ir)
    for label, b in blocks.items():
        t = b.terminator
        if not isinstance(t, ir.Branch) or t.cond.name not in tainted:
            continue
        stop = pdom[label] - {label}
        seen, work = set(), list(succ[label])
        while work:
            n = work.pop()
            if n in seen or n in stop or n == label or n is exit_node:
                continue
            seen.add(n)
            if n in barriers:
                raise unsupported(
                    "nv.barrier() under a branch that depends on local_id/global_id (branch at "
                    f"line {t.loc.line}): every invocation of a workgroup must reach the same "
                    "barrier; move it out of the branch (and guard work with `if i < n:` "
                    "rather than returning early before a barrier)",
                    barriers[n],
                )
            work.extend(succ[n])
