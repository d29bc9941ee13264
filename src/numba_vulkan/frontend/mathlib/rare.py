"""A branch around a rarely needed computation (a subnormal operand, a huge argument).

The library is branch-free where every invocation needs the same work, but a
path that only a few operands take (sin's full reduction beyond 2^20, erf of a
subnormal on a flushing device) costs every invocation its instructions when it
is a select. `branch` puts it in a block of its own that an invocation enters
only when its condition holds, so that the others pay a comparison and a jump.

KIR lets a value defined outside the entry block be used only in its own block
(docs/kir.md), so the values the rare path reads and replaces travel through
variables, and the code after the branch must use only what `branch` returns:
callers are a call's last step (the result itself), never a building block of
another function.
"""


def branch(b, cond, values, rare, tag):
    """`values` after `if cond: values = rare(*values)`: the values as the block after the
    branch sees them (loads of variables). `rare` gets them loaded in the rare block and
    returns replacements of the same kinds. `tag` names the blocks (made unique by the
    current block's id)."""
    slots = [b.var(b.kind(v)) for v in values]
    for slot, v in zip(slots, values):
        b.store(slot, v)
    name = f"{tag}{b.current_block}"
    slow, done = b.create_block(f"{name}.rare"), b.create_block(f"{name}.done")
    b.condbr(cond, slow, done)
    b.set_block(slow)
    new = rare(*(b.load(s) for s in slots))
    for slot, v in zip(slots, new):
        b.store(slot, v)
    b.br(done)
    b.set_block(done)
    return tuple(b.load(s) for s in slots)
