"""The status buffer inside kernels: the hidden argument and the words written into it.

A kernel that can raise or print (numba_vulkan/sites.py has the layout) gets
one hidden parameter, ``status.addr``: the device address of the device's
status buffer. It is declared on first use, like grid.base/grid.groups
(frontend/grid.py), so kernels that never raise or print have no such
parameter and pay nothing. To the launcher it is one more array argument
after the kernel's own, a 0-d uint32 array (``argspec``), which the
dispatcher appends to the arguments of every launch (runtime/reports.py).

KIR values do not cross blocks (only the entry block's do), so the values a
record needs are spilled into variables before each branch and reloaded after.
"""

from .. import _core, sites
from . import arith, grid

K = _core.Kind
Op = _core.Op
A = _core.AtomicOp
B = _core.Builtin

PARAM = "status.addr"


def _addr(lowerer):
    root = lowerer.root
    index = getattr(root, "status_param", None)
    if index is None:
        index = root.status_param = root.module.add_param(PARAM, K.u64)
    return lowerer.b.param(index)


def word_ptr(lowerer, index):
    """A pointer to status word `index` (a Python int)."""
    return word_ptr_at(lowerer, arith.const(lowerer.b, K.i32, index))


def word_ptr_at(lowerer, index):
    """A pointer to the status word at `index`, an i32 KIR value (KIR values are ints too)."""
    return lowerer.b.elemptr(K.u32, _addr(lowerer), index)


def store_word(lowerer, index, value):
    lowerer.b.store(word_ptr(lowerer, index), arith.convert(lowerer.b, value, K.u32))


def split64(b, value):
    """(low, high) u32 words of an integer value, sign-extended from its own width."""
    k = b.kind(value)
    if k == K.bool:
        return arith.convert(b, value, K.u32), arith.const(b, K.u32, 0)
    if arith.BITS[k] == 64:
        high = b.binary(Op.shr, value, arith.const(b, k, 32))
        return arith.convert(b, value, K.u32), arith.convert(b, high, K.u32)
    low = arith.convert(b, value, K.u32)
    if not arith.is_signed(k):
        return low, arith.const(b, K.u32, 0)
    negative = b.compare(Op.lt, value, arith.const(b, k, 0))
    return low, b.select(negative, arith.const(b, K.u32, 0xFFFFFFFF), arith.const(b, K.u32, 0))


def add_site(lowerer, site):
    root = lowerer.root
    if all(s.key != site.key for s in root.sites):
        root.sites.append(site)
    return site


def spill(lowerer, values):
    """Store KIR values into fresh variables (to use them in another block)."""
    b = lowerer.b
    slots = []
    for v in values:
        slot = b.var(b.kind(v))
        b.store(slot, v)
        slots.append(slot)
    return slots


def emit_raise(lowerer, site, values=()):
    """Record `site`'s exception (if no invocation did first) and return from the kernel.

    `values` are up to two integer KIR values of the current block (the message's
    run-time values). Ends the current block.
    """
    b = lowerer.b
    add_site(lowerer, site)
    slots = spill(lowerer, values)
    old = b.atomic(A.cas, [word_ptr(lowerer, sites.EXC_FLAG), arith.const(b, K.u32, 0),
                           arith.const(b, K.u32, 1)])  # fmt: skip
    won = b.compare(Op.eq, old, arith.const(b, K.u32, 0))
    tag = f"raise{b.current_block}"
    write, done = b.create_block(f"{tag}.write"), b.create_block(f"{tag}.done")
    b.condbr(won, write, done)
    b.set_block(write)
    store_word(lowerer, sites.EXC_KEY, arith.const(b, K.u32, site.key & 0xFFFFFFFF))
    store_word(lowerer, sites.EXC_KEY + 1, arith.const(b, K.u32, site.key >> 32))
    wide = lowerer.mode.index64
    for axis in range(3):
        gid = grid.lower(lowerer, B.global_id, axis, K.u64 if wide else K.i32)
        low, high = split64(b, gid) if wide else (gid, arith.const(b, K.u32, 0))
        store_word(lowerer, sites.EXC_GID + 2 * axis, low)
        store_word(lowerer, sites.EXC_GID + 2 * axis + 1, high)
    for i, slot in enumerate(slots):
        low, high = split64(b, b.load(slot))
        store_word(lowerer, sites.EXC_VALUES + 2 * i, low)
        store_word(lowerer, sites.EXC_VALUES + 2 * i + 1, high)
    b.br(done)
    b.set_block(done)
    b.ret()


def check(lowerer, bad, site, values=()):
    """Raise `site`'s exception where the KIR bool `bad` holds; go on in a new block.

    Values of the current block other than `values` must not be used after this
    (they stay in the block before the branch): call it before lowering a statement.
    """
    b = lowerer.b
    slots = spill(lowerer, values)
    tag = f"check{b.current_block}"
    fail, ok = b.create_block(f"{tag}.fail"), b.create_block(f"{tag}.ok")
    b.condbr(bad, fail, ok)
    b.set_block(fail)
    emit_raise(lowerer, site, [b.load(s) for s in slots])
    b.set_block(ok)


def argspec(lowerer):
    """The launcher's argspec of the hidden argument, or None if the kernel has none."""
    index = getattr(lowerer.root, "status_param", None)
    if index is None:
        return None
    return ("array", "uint32", 0, lowerer.module.param_offset(index), (), (), 4)
