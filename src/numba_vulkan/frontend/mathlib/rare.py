"""Branches in the library: around a rarely needed computation (`branch`), and between the
formulas of a function's intervals (`cases`).

The library is branch-free where every invocation needs the same work, but a
path that only a few operands take (sin's full reduction beyond 2^20, erf of a
subnormal on a flushing device) costs every invocation its instructions when it
is a select. `branch` puts it in a block of its own that an invocation enters
only when its condition holds, so that the others pay a comparison and a jump.
`cases` does the same for a function computed by one of several formulas (erf's
intervals): each invocation runs only its own formula. A GPU's group of
invocations (an NVIDIA warp) runs every case that one of its members takes, one
after the other, so a case is worth a block of its own when the group's operands
tend to share it; with operands spread over all cases the group pays about what
evaluating them all and selecting costs, plus the jumps.

KIR lets a value defined outside the entry block be used only in its own block
(docs/kir.md), so the values the blocks read and replace travel through
variables, and the code after the branch must use only what `branch` or `cases`
returns: callers are a call's last step (the result itself), never a building
block of another function.
"""


def branch(b, cond, values, rare, tag):
    """`values` after `if cond: values = rare(*values)`: the values as the block after the
    branch sees them (loads of variables). `rare` gets them loaded in the rare block and
    returns replacements of the same kinds. `tag` names the blocks (made unique by the
    current block's id)."""
    slots = _spill(b, values)
    name = f"{tag}{b.current_block}"
    slow, done = b.create_block(f"{name}.rare"), b.create_block(f"{name}.done")
    b.condbr(cond, slow, done)
    _fill(b, slow, slots, rare, done)
    b.set_block(done)
    return tuple(b.load(s) for s in slots)


def _spill(b, values):
    """Variables holding `values` (stored in the current block)."""
    slots = [b.var(b.kind(v)) for v in values]
    for slot, v in zip(slots, values):
        b.store(slot, v)
    return slots


def _fill(b, block, slots, body, done):
    """Block `block`: the variables replaced by `body` of their loaded values, then on to `done`."""
    b.set_block(block)
    new = body(*(b.load(s) for s in slots))
    for slot, v in zip(slots, new):
        b.store(slot, v)
    b.br(done)


def cases(b, values, paths, tag):
    """`values` replaced by the body of the first of `paths` whose condition holds, as the block
    after the cases sees them (loads of variables). `paths` are (name, cond, body): cond a bool
    value of the current block (None for the last path, taken when no other is), body a
    function of the values loaded in its own block (named `tag`, the current block's id and
    `name`) returning replacements of the same kinds. The conditions are tested in order, the
    first in the current block, each other in a block of its own."""
    slots = _spill(b, values)
    conds = [c for _, c, _ in paths[:-1]]
    cond_slots = _spill(b, conds[1:])
    name = f"{tag}{b.current_block}"
    blocks = [b.create_block(f"{name}.{p}") for p, _, _ in paths]
    done = b.create_block(f"{name}.done")
    for i, cond in enumerate(conds):
        if i + 2 == len(paths):
            other = blocks[i + 1]
        else:
            other = b.create_block(f"{name}.not_{paths[i][0]}")
        b.condbr(cond if i == 0 else b.load(cond_slots[i - 1]), blocks[i], other)
        b.set_block(other)
    for block, (_, _, body) in zip(blocks, paths):
        _fill(b, block, slots, body, done)
    b.set_block(done)
    return tuple(b.load(s) for s in slots)
