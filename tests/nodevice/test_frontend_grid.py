"""group_id, global_id and num_groups in a piece of a split grid (frontend/grid.py), run in
the KIR interpreter: ids past 2^32 with 64-bit indices, wrapping like GlobalInvocationId with
32-bit ones."""

import numpy as np
from kir_host import INDEX64, INTS, lower, run_kir

import numba_vulkan as nv
from numba_vulkan import _core

B = _core.Builtin


def _ids(out):
    out[0] = nv.global_id(0)
    out[1] = nv.group_id(0)
    out[2] = nv.num_groups(0)
    out[3] = nv.global_id(2)


BUILTINS = [(B.group_id, 0, 5), (B.local_size, 0, 64), (B.local_id, 0, 3),
            (B.num_groups, 0, 2**27 + 100), (B.group_id, 2, 1), (B.local_size, 2, 4),
            (B.local_id, 2, 2)]  # fmt: skip
BASE = (2**27, 0, 7)


def test_ids_past_2_32_with_64_bit_indices():
    (got,) = run_kir(_ids, (np.zeros(4, np.int64),), INDEX64, BUILTINS, grid_base=BASE)
    group = 2**27 + 5
    assert list(got) == [group * 64 + 3, group, 2**27 + 100, (7 + 1) * 4 + 2]
    assert got[0] == 2**33 + 323


def test_32_bit_ids_within_the_launchers_limits():
    """A 32-bit specialisation runs grids of ids below 2^31 and fewer than 2^26 groups per axis
    (_core.fits_int32_ids): there the ids are exact; the masks that tell the narrowing pass
    so change nothing."""
    builtins = [(B.group_id, 0, 5), (B.local_size, 0, 16), (B.local_id, 0, 3),
                (B.num_groups, 0, 2**26 - 1), (B.group_id, 2, 1), (B.local_size, 2, 4),
                (B.local_id, 2, 2)]  # fmt: skip
    base = (2**26 - 6, 0, 7)
    assert _core.fits_int32_ids((2**26 - 1, 1, 9), (16, 1, 4))
    (got,) = run_kir(_ids, (np.zeros(4, np.int64),), INTS, builtins, grid_base=base)
    assert list(got) == [(2**26 - 1) * 16 + 3, 2**26 - 1, 2**26 - 1, 34]


def test_grid_parameters_only_where_used():
    import numba

    def no_ids(out):
        out[0] = nv.local_id(0)

    lk = lower(no_ids, [numba.typeof(np.zeros(1, np.int64))])
    assert lk.grid == (None, None, 4)
    lk = lower(_ids, [numba.typeof(np.zeros(1, np.int64))], INDEX64)
    base, groups, index_bytes = lk.grid
    assert len(base) == 3 and len(groups) == 3 and index_bytes == 8


def _turns(out):
    """Counts the turns of a group loop this invocation runs (out[0]) and the smallest global
    id it saw (out[1])."""
    i = nv.global_id(0)
    out[0] += 1
    if i < out[1]:
        out[1] = i


def test_the_group_loop_takes_its_workgroups_in_turn():
    """Dispatched workgroup 1 of 4 in a grid of 10 takes workgroups 1, 5 and 9."""
    builtins = [(B.group_id, 0, 1), (B.local_size, 0, 2), (B.local_id, 0, 1),
                (B.num_groups, 0, 10)]  # fmt: skip
    for mode in (INTS, INDEX64):
        (got,) = run_kir(_turns, (np.array([0, 2**30], np.int64),), mode, builtins,
                         group_loop=True, grid_stride=4)  # fmt: skip
        assert list(got) == [3, 1 * 2 + 1]


def test_the_group_loop_never_wraps_past_the_grid():
    """The launcher keeps a 32-bit grid below 2^26 workgroups per axis, where the loop's sums
    cannot wrap; its test of each turn's workgroup against the grid is unsigned all the same,
    so that raising that limit cannot run turns outside the grid. Here the interpreter runs a
    dispatch the launcher would not make: 2^31 - 1 workgroups and a stride of 2^30 + 8, so
    the turn after workgroup 2^30 + 4's names 2^31 + 12, negative as an int32 (a signed test
    would go on turning until it wrapped onto 2^31 - 1, here without end)."""
    builtins = [(B.group_id, 0, 2**30 + 4), (B.local_size, 0, 1), (B.local_id, 0, 0),
                (B.num_groups, 0, 2**31 - 1)]  # fmt: skip
    (got,) = run_kir(_turns, (np.array([0, 2**30], np.int64),), INTS, builtins,
                     max_steps=20_000, group_loop=True, grid_stride=2**30 + 8)  # fmt: skip
    assert got[0] == 1
