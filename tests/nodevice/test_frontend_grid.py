"""group_id, global_id and num_groups in a piece of a split grid (frontend/grid.py), run in
the KIR interpreter: ids past 2^32 with 64-bit indices, wrapping like GlobalInvocationId with
32-bit ones."""

import numpy as np

import numba_vulkan as nv
from numba_vulkan import _core

from kir_host import EXACT, INDEX64, INTS, lower, run_kir

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
