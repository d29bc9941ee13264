"""Barriers, memory fences and grid-wide synchronisation.

``nv.barrier()`` (``syncthreads``) is a workgroup control barrier with
acquire-release semantics over shared and global memory; the fences are
memory barriers at workgroup and device scope (spirv/sync.cc).

Every invocation of a workgroup must reach the same barrier, or the
workgroup hangs or runs on with undefined results. divergence.py has each
launch refuse a barrier that provably sits under a branch on an invocation's
own id (an id compared with a constant, judged for the launch's workgroup
size); other branches around barriers (on data, on `tid < size`) must be
uniform: the programmer's responsibility, as in CUDA.

``syncthreads_count/and/or(p)`` count the invocations with a true ``p`` in
a hidden one-element shared u32: barrier; the counter reset to 0; barrier; the
counts added; barrier; each reads the count. The first barrier keeps a reset
from overtaking the previous call's reads. Where the device has subgroup ballots
one invocation resets the counter and one per subgroup adds its subgroup's count
(a ballot's bit count): a few atomics per workgroup, not one per invocation
(numba.cuda's corpus kernels of it ran at 0.55 of numba.cuda's speed with those,
docs/corpus.md). Elsewhere every invocation swaps 0 in and adds its 0 or 1
atomically (no branch and no race). and/or compare the count with the
workgroup's size and with 0.

Grid-wide synchronisation (``cg.this_grid().sync()``) does not exist in
Vulkan: workgroups of one dispatch cannot wait for each other. The front end
refuses it and says what to do instead.
"""

from .. import _core, errors, stubs
from .mathlib import rare

_KINDS = {
    stubs.barrier: _core.BarrierKind.workgroup,
    stubs.threadfence_block: _core.BarrierKind.fence_workgroup,
    stubs.threadfence: _core.BarrierKind.fence_device,
}


def lower_barrier(lowerer, fn, expr, sig, target):
    if fn is stubs.barrier:
        lowerer.barrier_locs = getattr(lowerer, "barrier_locs", []) + [expr.loc]
    lowerer.b.barrier(_KINDS[fn])
    return None, sig.return_type


def lower_barrier_reduction(lowerer, fn, expr, sig, target):
    from . import arith

    b = lowerer.b
    K = _core.Kind
    lowerer.barrier_locs = getattr(lowerer, "barrier_locs", []) + [expr.loc]
    value = lowerer.load_cast(expr.args[0], sig.args[0])
    pred = arith.truth(b, value) if b.kind(value) != K.bool else value
    counter = getattr(lowerer, "barrier_counter", None)
    if counter is None:
        counter = lowerer.barrier_counter = b.array_var(True, K.u32, 1)
    zero = arith.const(b, K.u32, 0)
    one = arith.const(b, K.u32, 1)
    A = _core.AtomicOp
    S = _core.SubgroupOp
    b.barrier(_core.BarrierKind.workgroup)
    if lowerer.subgroup_ballot:
        # Values cross the branches as rare.branch's values (KIR: a block's own values only).
        first = b.subgroup(S.elect, K.bool, [], 0)
        leader = b.binary(_core.Op.and_, first,
                          b.compare(_core.Op.eq, b.subgroup(S.id, K.u32, [], 0), zero))
        (pred,) = rare.branch(b, leader, (pred,), lambda p: _reset(b, counter, p),
                              "syncthreads.reset")
        b.barrier(_core.BarrierKind.workgroup)
        ones = b.subgroup(S.ballot_count, K.u32, [pred], 0)
        rare.branch(b, b.subgroup(S.elect, K.bool, [], 0), (ones,),
                    lambda n: _add(b, counter, n), "syncthreads.add")
        zero = arith.const(b, K.u32, 0)
    else:
        b.atomic(A.exch, [b.index_ptr(counter, zero), zero])
        b.barrier(_core.BarrierKind.workgroup)
        b.atomic(A.add, [b.index_ptr(counter, zero), b.select(pred, one, zero)])
    b.barrier(_core.BarrierKind.workgroup)
    count = b.load(b.index_ptr(counter, zero))
    if fn is stubs.syncthreads_count:
        result = count
    elif fn is stubs.syncthreads_or:
        result = arith.convert(b, b.compare(_core.Op.ne, count, zero), K.u32)
    else:
        total = None
        for axis in range(3):
            n = b.builtin(_core.Builtin.local_size, axis)
            total = n if total is None else b.binary(_core.Op.mul, total, n)
        result = arith.convert(b, b.compare(_core.Op.eq, count, total), K.u32)
    return arith.convert(b, result, K.i32), sig.return_type


def _reset(b, counter, pred):
    """The block of the one invocation that resets the counter (rare.branch's body)."""
    from . import arith

    zero = arith.const(b, _core.Kind.u32, 0)
    b.store(b.index_ptr(counter, zero), zero)
    return (pred,)


def _add(b, counter, n):
    """The block of one invocation per subgroup: its subgroup's count added."""
    from . import arith

    b.atomic(_core.AtomicOp.add, [b.index_ptr(counter, arith.const(b, _core.Kind.u32, 0)), n])
    return (n,)


def lower_this_grid(lowerer, fn, expr, sig, target):
    raise errors.VulkanUnsupportedError(
        "grid-wide synchronisation (cg.this_grid().sync()) does not exist in Vulkan: "
        "workgroups of one launch cannot wait for each other. Split the kernel into "
        "several kernels at the sync points and launch them one after the other on one "
        "stream (launches on a stream run in order, each seeing the previous one's writes)",
        loc=expr.loc,
    )


CALLS = {
    stubs.barrier: lower_barrier,
    stubs.threadfence_block: lower_barrier,
    stubs.threadfence: lower_barrier,
    stubs.cg.this_grid: lower_this_grid,
    stubs.syncthreads_count: lower_barrier_reduction,
    stubs.syncthreads_and: lower_barrier_reduction,
    stubs.syncthreads_or: lower_barrier_reduction,
}
