"""The status buffer inside kernels: the hidden argument and the words written into it.

A kernel that can raise or print (numba_vulkan/sites.py has the layout) gets
one hidden parameter, ``status.addr``: the device address of the device's
status buffer. It is declared on first use, like grid.base/grid.groups
(frontend/grid.py), so kernels that never raise or print have no such
parameter and pay nothing. It is a hidden parameter (kir/abi.h,
``KirModule.add_hidden_param``), listed last among the kernel's hidden arrays
(frontend/hidden.py) as ``("status", ("status", None))``: hidden_args.py gives
the launcher the device's status buffer (runtime/reports.py, a 0-d uint32
DeviceArray) as its value, used by every launch, and written where the kernel
prints (``mark_written``).

KIR values do not cross blocks (only the entry block's do), so the values a
record needs are spilled into variables before each branch and reloaded after.
"""

from .. import _core, sites
from . import arith, grid

K = _core.Kind
Op = _core.Op
A = _core.AtomicOp
B = _core.Builtin

NAME = "status"  # the hidden array's name: its one parameter is NAME + ".addr"
PARAM = NAME + ".addr"
SOURCE = "status"  # the hidden array's source kind (frontend/hidden.py, hidden_args.py)


def _addr(lowerer):
    root = lowerer.root
    return lowerer.b.param(_declare(root))


def _declare(root):
    """The status parameter's index, declared on first use (its declaration: root.status_arg)."""
    index = getattr(root, "status_param", None)
    if index is None:
        root.status_arg = root.module.num_args
        index = root.status_param = root.module.add_hidden_param(PARAM, K.u64)
    return index


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
    """Raise `site`'s exception: store its key and values, jump to the kernel's raise block.

    `values` are up to two integer KIR values of the current block (the message's
    run-time values). Ends the current block. Every raise of a kernel goes to one
    shared block (``finish``), so each site costs a few private stores and a branch:
    drivers that run both sides of a branch under a mask (lavapipe) then pay for the
    atomic and the buffer stores once per kernel, not once per check.
    """
    b = lowerer.b
    add_site(lowerer, site)
    root = lowerer.root
    if getattr(root, "raise_block", None) is None:
        root.raise_block = b.create_block("raise")
        root.raise_vars = [b.var(K.u32) for _ in range(6)]  # key, value 0, value 1 (lo, hi)
    words = [arith.const(b, K.u32, site.key & 0xFFFFFFFF), arith.const(b, K.u32, site.key >> 32)]
    for v in values:
        words.extend(split64(b, v))
        root.raise_values = True
    words += [arith.const(b, K.u32, 0)] * (6 - len(words))
    for var, w in zip(root.raise_vars, words):
        b.store(var, w)
    b.br(root.raise_block)


def finish(lowerer):
    """Emit the kernel's raise block, if some statement raises: the first invocation to
    get here (compare-and-swap on the flag) writes the record; all return."""
    root = lowerer.root
    if getattr(root, "raise_block", None) is None:
        return
    b = root.b
    b.set_block(root.raise_block)
    key_lo, key_hi, *value_words = [b.load(v) for v in root.raise_vars]
    slots = spill(root, [key_lo, key_hi, *value_words])
    old = b.atomic(A.cas, [word_ptr(root, sites.EXC_FLAG), arith.const(b, K.u32, 0),
                           arith.const(b, K.u32, 1)])  # fmt: skip
    won = b.compare(Op.eq, old, arith.const(b, K.u32, 0))
    write, done = b.create_block("raise.write"), b.create_block("raise.done")
    b.condbr(won, write, done)
    b.set_block(write)
    key_lo, key_hi, *value_words = [b.load(s) for s in slots]
    store_word(root, sites.EXC_KEY, key_lo)
    store_word(root, sites.EXC_KEY + 1, key_hi)
    # The host zeroes the record after reading it: words that are always 0 here (high
    # words of 32-bit ids, values no site has) are not stored (each store costs on
    # drivers that run untaken branches under a mask).
    wide = root.mode.index64
    for axis in range(3):
        gid = grid.lower(root, B.global_id, axis, K.u64 if wide else K.i32)
        low, high = split64(b, gid) if wide else (gid, None)
        store_word(root, sites.EXC_GID + 2 * axis, low)
        if high is not None:
            store_word(root, sites.EXC_GID + 2 * axis + 1, high)
    if getattr(root, "raise_values", False):
        for i, w in enumerate(value_words):
            store_word(root, sites.EXC_VALUES + i, w)
    b.br(done)
    b.set_block(done)
    root.end_invocation()


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


def lowered(lowerer):
    """(name, source) of the status buffer as the kernel's last hidden array, or None if
    the kernel neither raises nor prints. Its declaration is marked written where the
    kernel prints (the hazard flag the status buffer had before the ArgDecl contract)."""
    root = lowerer.root
    if not root.sites:
        return None
    _declare(root)  # every site's code declares it; a kernel with sites always has it
    if root.prints:
        root.module.mark_written(root.status_arg)
    return lowered_entry()


def lowered_entry():
    """The status buffer's entry among a kernel's hidden arrays (compiled.hidden), also for
    kernels whose status parameter the loop guard declared (kir/loop_guard.h)."""
    return (NAME, (SOURCE, None))
