"""Front end: a Numba variable is held as a KIR value while only its defining block reads
it, and moves into KIR variables once another block reads or defines it (lower.py's module
doc). Each kernel below crosses blocks in one of the ways that needs the variables, and runs
in the KIR interpreter against CPython; the KIR of a straight-line kernel has no variable."""

import numba
import numpy as np
import pytest
from kir_host import check, lower

from numba_vulkan import _core, stubs


def _kir_vars(fn, *args):
    module = lower(fn, [numba.typeof(a) for a in args]).module
    return [line for line in module.print().splitlines() if " = var " in line]


def _straight(out, a):
    i = stubs.global_id(0)
    x = a[i]
    out[i] = x * 2.0 + x * x - 1.0


def test_straight_line_kernel_has_no_variables():
    assert _kir_vars(_straight, np.zeros(4), np.ones(4)) == []


def _read_in_other_blocks(out, a, n):
    t = a[0] * 3  # defined before the branch, read in both arms and after them
    if n > 2:
        out[0] = t + 1
    else:
        out[0] = t - 1
    out[1] = t


def _redefined_in_its_block(out, a, n):
    x = a[0]
    x = x * 2  # a second definition in the same block, then read in another block
    if n > 0:
        out[0] = x
    out[1] = x + 1


def _redefined_in_another_block(out, a, n):
    x = a[0]
    if n > 1:
        x = a[1]  # the second definition is in another block
    out[0] = x


def _read_before_defined(out, a, n):
    y = 0.0
    for k in range(n):
        if k > 0:
            out[k] = y  # the previous iteration's value
        y = a[k] * 2


def _conditional_expression(out, a, n):
    for k in range(n):
        out[k] = a[k] if a[k] > 0 else -a[k]  # one variable, defined in two blocks


def _tuple_across_blocks(out, a, n):
    pair = (a[0], a[1] + 1)
    if n > 0:
        out[0] = pair[1]
    out[1] = pair[0]


@pytest.mark.parametrize(
    "fn",
    [_read_in_other_blocks, _redefined_in_its_block, _redefined_in_another_block,
     _read_before_defined, _conditional_expression, _tuple_across_blocks],
    ids=lambda f: f.__name__.strip("_"),
)  # fmt: skip
@pytest.mark.parametrize("n", [0, 1, 2, 5])
def test_values_crossing_blocks(fn, n):
    a = np.array([1.5, -2.0, 3.25, -4.0, 5.0, 6.5])
    check(fn, np.zeros(6), a, n)


def test_variables_only_for_what_crosses_blocks():
    # t is read in three other blocks: one variable; the temporaries of `a[0] * 3` none
    assert len(_kir_vars(_read_in_other_blocks, np.zeros(2), np.ones(2), 3)) == 1


def test_store_at_end_goes_before_the_terminator():
    module = _core.KirModule("k")
    b = _core.KirBuilder(module)
    entry = b.create_block("entry")
    other = b.create_block("other")
    ptr = b.var(_core.Kind.i64)
    b.set_block(entry)
    value = b.const_int(_core.Kind.i64, 7)
    b.br(other)
    b.set_block(other)
    b.ret()
    b.store_at_end(entry, ptr, value)
    module.verify()
    assert module.block_ops(0)[-2:] == ["store", "br"]
