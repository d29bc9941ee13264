"""Barriers, memory fences and grid-wide synchronisation.

``nv.barrier()`` (``syncthreads``) is a workgroup control barrier with
acquire-release semantics over shared and global memory; the fences are
memory barriers at workgroup and device scope (spirv/sync.cc).

Every invocation of a workgroup must reach the same barrier, or the
workgroup hangs or runs on with undefined results. divergence.py refuses a
barrier that provably sits under a branch on an invocation's own id; other
divergent barriers (say, under a branch on data read from memory) are the
programmer's responsibility, as in CUDA.

Grid-wide synchronisation (``cg.this_grid().sync()``) does not exist in
Vulkan: workgroups of one dispatch cannot wait for each other. The front end
refuses it and says what to do instead.
"""

from .. import _core, errors, stubs

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
}
