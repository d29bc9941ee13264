"""Refuse barriers that provably sit in divergent control flow; accept the rest.

Every invocation of a workgroup must reach the same ``nv.barrier()``; one that some
invocations skip hangs the workgroup or gives undefined results (lavapipe gives
wrong results; CUDA's rule for ``syncthreads`` is the same). A barrier under a branch
whose condition depends on the invocation (``local_id``, ``global_id``, a subgroup
lane, an atomic's old value ...) is divergent only if the condition differs inside one
workgroup, which usually depends on the launch and on data: numba-cuda's reduction
example syncs under ``if tid < size:``, uniform when every thread of the block passes.

So the rule is (docs/parallel.md):

* where the condition is a comparison of an id itself with a constant
  (``if local_id(0) == 0:``, ``if threadIdx.x < 32:``, ``if global_id(0) >= 100:``,
  ``if subgroup.lane() == 0:``, early ``return`` on one) or a loop ``for i in
  range(local_id(0))``, check() records a *guard*, and every launch evaluates it for
  its workgroup size and count (launch_error()): a launch where the condition takes
  both values inside some workgroup is refused before it runs;
* every other id-dependent branch around a barrier is accepted: it must be uniform in
  each workgroup, which is the programmer's responsibility, as in CUDA.

The analysis runs on Numba's IR, by variable name and without regard to order.
"""

import operator

from numba.core import ir

from .. import stubs

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


_COMPARE = {operator.lt: "<", operator.le: "<=", operator.gt: ">", operator.ge: ">=",
            operator.eq: "==", operator.ne: "!="}
_SWAP = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "==": "==", "!=": "!="}


def _definition(func_ir, var, depth=0):
    """The expression `var` holds, through plain copies."""
    try:
        defn = func_ir.get_definition(var)
    except Exception:  # several definitions: not a single value
        return None
    if isinstance(defn, ir.Var) and depth < 16:
        return _definition(func_ir, defn, depth + 1)
    return defn


def _id_source(func_ir, var):
    """("local"|"global", axis) or ("lane", 0) when `var` is an id itself, else None."""
    defn = _definition(func_ir, var)
    if not (isinstance(defn, ir.Expr) and defn.op == "call"):
        return None
    fn = _static_callee(func_ir, defn.func)
    if fn is stubs.subgroup.lane and not defn.args:
        return ("lane", 0)
    for source, stub in (("local", stubs.local_id), ("global", stubs.global_id)):
        if fn is stub and len(defn.args) == 1:
            axis = _constant(func_ir, defn.args[0])
            if isinstance(axis, int) and 0 <= axis < 3:
                return (source, axis)
    return None


def _constant(func_ir, var):
    defn = _definition(func_ir, var)
    if isinstance(defn, ir.Const):
        return defn.value
    if isinstance(defn, (ir.Global, ir.FreeVar)):
        return defn.value
    return None


def _guard(func_ir, cond, branch_line, barrier_line):
    """The guard tuple (source, axis, op, constant, branch line, barrier line) when
    `cond` is provably judged at launch, else None."""
    defn = _definition(func_ir, cond)
    if isinstance(defn, ir.Expr) and defn.op == "call" and len(defn.args) == 1 \
            and _static_callee(func_ir, defn.func) is bool:
        defn = _definition(func_ir, defn.args[0])
    if not isinstance(defn, ir.Expr):
        return None
    if defn.op == "pair_second":  # a for loop: for i in range(id)
        it = _definition(func_ir, defn.value)
        it = _definition(func_ir, it.value) if isinstance(it, ir.Expr) and it.op == "iternext" \
            else None
        rng = _definition(func_ir, it.value) if isinstance(it, ir.Expr) and it.op == "getiter" \
            else None
        if isinstance(rng, ir.Expr) and rng.op == "call" and len(rng.args) == 1 \
                and _static_callee(func_ir, rng.func) is range:
            source = _id_source(func_ir, rng.args[0])
            if source is not None:
                return (*source, "range", 0, branch_line, barrier_line)
        return None
    if defn.op != "binop" or defn.fn not in _COMPARE:
        return None
    op = _COMPARE[defn.fn]
    for id_var, k_var, flip in ((defn.lhs, defn.rhs, False), (defn.rhs, defn.lhs, True)):
        source = _id_source(func_ir, id_var)
        k = _constant(func_ir, k_var)
        if source is not None and isinstance(k, int) and not isinstance(k, bool):
            return (*source, _SWAP[op] if flip else op, k, branch_line, barrier_line)
    return None


def check(func_ir):
    """The guards (tuples, see _guard) of the barriers under id-dependent branches whose
    divergence a launch can decide; other such barriers are accepted (module doc)."""
    blocks = func_ir.blocks
    barriers = {label: loc for label, b in blocks.items()
                if (loc := _barrier_loc(func_ir, b)) is not None}
    if not barriers:
        return ()
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
    guards = []
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
                guard = _guard(func_ir, t.cond, t.loc.line, barriers[n].line)
                if guard is not None and guard not in guards:
                    guards.append(guard)
                break
            work.extend(succ[n])
    return tuple(guards)


def _mixed(op, k, lo, hi):
    """Whether `x op k` is true for some and false for other x in lo..hi-1 (one
    workgroup's ids, a contiguous range)."""
    if hi - lo < 2:
        return False
    if op == "range":
        return True  # trip counts lo, lo+1 ... differ
    if op in ("==", "!="):
        return lo <= k < hi
    # the first x where the (monotone) comparison changes its value
    t = k + 1 if op in ("<=", ">") else k
    return lo < t < hi


def launch_error(guards, groups, local_size, subgroup_size):
    """The message refusing a launch in which a guard (check()) is divergent, or None.

    groups and local_size are the launch's 3-d counts; a global id's comparison is
    divergent when its turning point falls inside one workgroup."""
    for source, axis, op, k, branch_line, barrier_line in guards:
        size = local_size[axis]
        if source == "local":
            bad = _mixed(op, k, 0, size)
        elif source == "lane":
            width = min(subgroup_size, local_size[0] * local_size[1] * local_size[2])
            bad = _mixed(op, k, 0, width)
        else:  # global: ids w*size .. (w+1)*size-1 of workgroup w
            total = groups[axis] * size
            if op == "range" or op in ("==", "!="):
                bad = size > 1 and (op == "range" or 0 <= k < total)
            else:
                t = k + 1 if op in ("<=", ">") else k
                bad = size > 1 and 0 < t < total and t % size != 0
        if bad:
            what = f"range({source}_id({axis}))" if op == "range" else \
                f"{'subgroup.lane()' if source == 'lane' else f'{source}_id({axis})'} {op} {k}"
            return (f"the barrier at line {barrier_line} sits under a branch (line "
                    f"{branch_line}: {what}) that differs between invocations of one workgroup "
                    f"at this launch (local size {tuple(local_size)}): every invocation of a "
                    "workgroup must reach the same barrier; move it out of the branch (guard "
                    "the work with `if i < n:` rather than returning early before a barrier)")
    return None
