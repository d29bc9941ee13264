"""Grids larger than one dispatch: group_id, global_id and num_groups.

A device runs at most ``max_groups`` workgroups per axis in one dispatch
(65,535 of 64 invocations on lavapipe, i.e. 4,194,240 ids). The launcher
splits a larger grid into several dispatches; each dispatch sees its own
WorkgroupId (from 0) and NumWorkgroups. So the kernel reads two hidden
parameters, added to the parameter block after the arguments only when the
kernel uses these intrinsics, and written by the launcher per dispatch:

    grid.base.{x,y,z}    the first workgroup of this dispatch in the whole grid
    grid.groups.{x,y,z}  the workgroups of the whole grid

and computes

    group_id(a)   = WorkgroupId[a] + base[a]
    global_id(a)  = group_id(a) * local_size(a) + LocalInvocationId[a]
    num_groups(a) = groups[a]

as signed 32-bit integers in a 32-bit-index specialisation, and in 64 bits in
a 64-bit-index one (``mode.index64``), whose ids may pass 2^32. The launcher
asks for the 64-bit specialisation when a grid has more than 2^31 invocations
or 2^GROUP_BITS_32 (2^26) workgroups along an axis (``_core.fits_int32_ids``),
so 32-bit ids are exact and never negative; they are then sign-extended to
intp, which tells the narrowing pass that they fit 32 bits. Group ids and
group counts are masked to GROUP_BITS_32 bits (a no-op at run time), which
tells it more: `i * TILE` in a loop `for i in range(num_groups)` fits 32 bits,
as it does in numba.cuda's tiled matmul.

The group loop (CodegenControls.group_loop). NVIDIA's Vulkan driver keeps fewer
workgroups resident than CUDA keeps blocks, and a kernel of one element per
invocation in workgroups of 128 or 256 then waits on memory (docs/corpus.md,
"Small workgroups on NVIDIA's Vulkan driver"). So a kernel can run its
workgroups along x as a loop: the launcher dispatches at most 4,096 of them
(kGroupLoopGroups, bind/launch.cc) and writes that count as a third hidden parameter,

    grid.stride.x        the workgroups along x of this dispatch

and each workgroup takes the user's workgroups WorkgroupId.x + j * stride for
j = 0, 1, ... while they are below groups.x; the kernel's returns go on to the
next j. Each turn is one whole user workgroup, with the user's local ids, so
subgroup operations see the subgroups they would; kernels with barriers, shared
memory or cooperative matrices are lowered without the loop (needs_whole_groups).

The loop pays where starting workgroups is what a kernel waits on: light kernels, whose
invocations each move a few bytes (an H100, numba.cuda's test kernels at 2^25 elements in
workgroups of 256: an int32 store or an int32 load and store 1.10-1.69x faster), and costs
a few percent where invocations move more (12 to 24 bytes: 0.95-0.97x, atomics 0.89x).
So a device's default (CodegenControls.group_loop = LIGHT, launchers.group_loop) gives it
to light kernels only: lowered without it first, a kernel is lowered again with it where
is_light finds it moves at most LIGHT_BYTES of global memory, in no loop and no atomic.
"""

from .. import _core
from . import arith

K = _core.Kind
Op = _core.Op
B = _core.Builtin

#: CodegenControls.group_loop's third value (besides False and True): the loop for light
#: kernels only (module doc)
LIGHT = "light"
#: The most bytes of global loads and stores (each op counted once) of a light kernel: one
#: 4-byte load and one 4-byte store
LIGHT_BYTES = 8

BASE = "grid.base"
GROUPS = "grid.groups"
STRIDE = "grid.stride"


def _params(lowerer, name, axes="xyz"):
    """The u32 parameters `name`.{x,y,z} (or those of `axes`), declared on first use."""
    indices = lowerer.grid_params.get(name)
    if indices is None:
        # Hidden parameters (kir/abi.h): the launcher writes them by these names, and
        # learns the width of the ids from `index`.
        index = K.i64 if lowerer.mode.index64 else K.i32
        indices = [
            lowerer.module.add_hidden_param(f"{name}.{axis}", K.u32, index) for axis in axes
        ]
        lowerer.grid_params[name] = indices
    return indices


def begin_group_loop(lowerer, first):
    """Open the group loop (module doc) before block `first`, the kernel's first: the
    loop's counter starts at 0, its header enters `first` while the workgroup it names is
    in the grid, its latch (lowerer.group_latch, where end_invocation goes) counts on,
    and its exit returns."""
    b = lowerer.b
    count = b.var(K.u32)
    b.store(count, arith.const(b, K.u32, 0))
    header = b.create_block("groups.header")
    latch = b.create_block("groups.latch")
    done = b.create_block("groups.done")
    lowerer.group_count, lowerer.group_latch = count, latch
    b.br(header)
    b.set_block(header)
    # Unsigned: the launcher keeps 32-bit grids below 2^GROUP_BITS_32 workgroups per axis,
    # where the sum cannot wrap, but were that raised, the turn after the last could name a
    # workgroup past 2^31 - 1, which an int32 would wrap below groups.x (a turn outside the
    # grid; tests/nodevice/test_frontend_grid.py runs such a dispatch).
    work = K.u64 if lowerer.mode.index64 else K.u32
    group = _group(lowerer, 0, work)
    groups = arith.convert(b, b.param(_params(lowerer, GROUPS)[0]), work)
    b.condbr(b.compare(Op.lt, group, groups), first, done)
    b.set_block(latch)
    b.store(count, b.binary(Op.add, b.load(count), arith.const(b, K.u32, 1)))
    b.br(header)
    b.set_block(done)
    b.ret()


def needs_whole_groups(lowerer):
    """Whether the kernel lowered by `lowerer` needs each workgroup to be one of the
    dispatch's (barriers, shared memory, cooperative matrices): no group loop then."""
    if lowerer.shared_memory:
        return True
    module = lowerer.module
    return any(op == "barrier" or op.startswith("coop")
               for i in range(module.num_blocks) for op in module.block_ops(i))


def is_light(lowerer):
    """Whether the kernel lowered (without the loop) by `lowerer` is light (module doc): no
    loop, no atomic, at most LIGHT_BYTES of global loads and stores, and workgroups it can
    run as turns of the loop."""
    global_bytes, atomics, loops = lowerer.module.traffic()
    return (global_bytes <= LIGHT_BYTES and not atomics and not loops
            and not needs_whole_groups(lowerer))


def _work(lowerer):
    return K.u64 if lowerer.mode.index64 else K.i32


def _group(lowerer, axis, work):
    """The user's workgroup along `axis` in the whole grid, as `work`."""
    b = lowerer.b
    base = arith.convert(b, b.param(_params(lowerer, BASE)[axis]), work)
    group = b.binary(Op.add, arith.convert(b, b.builtin(B.group_id, axis), work), base)
    root = lowerer.root
    if axis == 0 and root.group_count is not None:
        turn = arith.convert(b, b.load(root.group_count), work)
        stride = arith.convert(b, b.param(_params(root, STRIDE, "x")[0]), work)
        group = b.binary(Op.add, group, b.binary(Op.mul, turn, stride))
    return group


def lower(lowerer, builtin, axis, kind):
    """The value of `builtin` (group_id, global_id or num_groups) along `axis`, as `kind`."""
    b = lowerer.b
    work = _work(lowerer)
    if builtin == B.num_groups:
        groups = arith.convert(b, b.param(_params(lowerer, GROUPS)[axis]), work)
        return arith.convert(b, _known_below(b, groups, work, _core.GROUP_BITS_32), kind)
    group = _group(lowerer, axis, work)
    if builtin == B.group_id:
        return arith.convert(b, _known_below(b, group, work, _core.GROUP_BITS_32), kind)
    size = arith.convert(b, b.builtin(B.local_size, axis), work)
    local = arith.convert(b, b.builtin(B.local_id, axis), work)
    ids = b.binary(Op.add, b.binary(Op.mul, group, size), local)
    return arith.convert(b, _known_below(b, ids, work, 31), kind)


def _known_below(b, value, work, bits):
    """`value` & (2^bits - 1) for 32-bit ids: a no-op, since the launcher keeps every id of a
    32-bit specialisation below 2^31 and every group id and count below 2^GROUP_BITS_32,
    which tells the narrowing pass so (ids are never negative, so `ids + 1` fits and the
    negative-index wrap of ids folds away; `i * TILE` over the groups fits 32 bits)."""
    if work != K.i32:
        return value
    return b.binary(Op.and_, value, arith.const(b, K.i32, 2**bits - 1))


def layout(lowerer):
    """(base offsets or None, groups offsets or None, index bytes), for tests and the KIR
    interpreter; the launcher reads the same from the hidden parameters' declarations."""
    offsets = {
        name: tuple(lowerer.module.param_offset(i) for i in indices)
        for name, indices in lowerer.grid_params.items()
    }
    index_bytes = 8 if lowerer.mode.index64 else 4
    return (offsets.get(BASE), offsets.get(GROUPS), index_bytes)
