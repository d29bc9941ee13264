"""frontend/loop_bounds.py: which kernels have a static bound on their loop iterations."""

import numba
import numpy as np
import pytest

from numba_vulkan.typing import pipeline
from numba_vulkan.frontend.loop_bounds import static_iterations

N = 7


def no_loops(out):
    out[0] = 1


def one_range(out):
    for i in range(10):
        out[0] += i


def start_stop_step(out):
    for i in range(3, 103, 5):
        out[0] += i


def nested(out):
    for i in range(4):
        for j in range(5):
            out[0] += j
    for k in range(N):  # a global constant
        out[0] += k


def runtime_bound(out, n):
    for i in range(n):
        out[0] += i


def while_loop(out, n):
    while n > 0:
        n -= 1


def nested_unknown_inner(out, n):
    for i in range(3):
        j = 0
        while j < n:
            j += 1


@pytest.mark.parametrize(
    ("fn", "expected"),
    [(no_loops, 0), (one_range, 10), (start_stop_step, 20), (nested, 4 + 4 * 5 + N),
     (runtime_bound, None), (while_loop, None), (nested_unknown_inner, None)],
)  # fmt: skip
def test_static_iterations(fn, expected):
    args = [numba.typeof(np.zeros(1, np.int64))]
    if fn.__code__.co_argcount == 2:
        args.append(numba.int64)
    typed = pipeline.type_kernel(fn, tuple(args), pipeline.Options())
    assert static_iterations(typed.func_ir) == expected


def branches_only(out, n):
    if n > 0:
        out[0] = 1
    elif n < -5:
        out[0] = 2
    else:
        return
    out[0] += 1


@pytest.mark.parametrize(
    ("fn", "acyclic"),
    [(no_loops, True), (branches_only, True), (one_range, False), (while_loop, False)],
)  # fmt: skip
def test_acyclic_shortcut_agrees_with_the_cfg(fn, acyclic):
    from numba.core.analysis import compute_cfg_from_blocks

    from numba_vulkan.frontend.loop_bounds import _acyclic

    args = [numba.typeof(np.zeros(1, np.int64))]
    if fn.__code__.co_argcount == 2:
        args.append(numba.int64)
    blocks = pipeline.type_kernel(fn, tuple(args), pipeline.Options()).func_ir.blocks
    assert _acyclic(blocks) is acyclic
    assert not compute_cfg_from_blocks(blocks).loops() or not acyclic
