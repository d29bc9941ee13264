"""Grids of more workgroups than one dispatch allows (issue 10, item 5).

The launcher splits them into dispatches of at most ``max_groups`` workgroups
per axis, and the kernel adds each dispatch's first workgroup to its ids
(frontend/grid.py). Every id of a grid just above the limit is checked.
"""

import os

import numpy as np
import pytest

import numba_vulkan as nv


@nv.jit
def _ids(gid, grp, n, counts):
    i = nv.global_id(0)
    if i < n:
        gid[i] = i
        grp[i] = nv.group_id(0)
    if i == 0:
        counts[0] = nv.num_groups(0)
        counts[1] = nv.num_groups(1)


def _above_max_groups(device, local):
    n = device.info.max_groups[0] * local + 1000  # 4,195,240 on lavapipe: two dispatches
    if n > 2**28:  # NVIDIA: max_groups 2^31 - 1 (the arrays would not fit in memory)
        pytest.skip(f"max_groups {device.info.max_groups[0]}: {n} invocations are too many to check")
    return n


def _id_arrays(n):
    return nv.device_array(n, np.int32), nv.device_array(n, np.int32), nv.device_array(2, np.int64)


def _check_ids(gid, grp, counts, n, local, groups):
    expected = np.arange(n, dtype=np.int32)
    np.testing.assert_array_equal(gid.copy_to_host(), expected)
    np.testing.assert_array_equal(grp.copy_to_host(), expected // local)
    np.testing.assert_array_equal(counts.copy_to_host(), [groups, 1])


@pytest.mark.parametrize("where", ["device", "stream"])
def test_forall_just_above_max_groups_gives_every_id(device, where):
    local = 64
    n = _above_max_groups(device, local)
    gid, grp, counts = _id_arrays(n)
    stream = nv.stream() if where == "stream" else None
    launch = _ids.forall(n, local_size=local, stream=stream)
    assert launch.groups[0] > device.info.max_groups[0]
    launch(gid, grp, n, counts)
    if stream is not None:
        stream.synchronize()
    _check_ids(gid, grp, counts, n, local, launch.groups[0])


def test_graph_of_a_split_grid_replays_and_rebinds(device):
    """A captured launch of several pieces: each piece's parameter block is kept and
    patched when the arrays are rebound."""
    local = 64
    n = _above_max_groups(device, local)
    stream = nv.stream()
    arrays = _id_arrays(n)
    launch = _ids.forall(n, local_size=local, stream=stream)
    with nv.graph(stream) as g:
        launch(*arrays[:2], n, arrays[2])
    exe = g.instantiate()
    exe.replay()
    stream.synchronize()
    _check_ids(*arrays, n, local, launch.groups[0])
    fresh = _id_arrays(n)
    for old, new in zip(arrays, fresh):
        exe.rebind(old, new)
    exe.replay()
    stream.synchronize()
    _check_ids(*fresh, n, local, launch.groups[0])


@nv.jit
def _ids2(out, counts):
    x = nv.global_id(0)
    y = nv.global_id(1)
    if x < out.shape[1] and y < out.shape[0]:
        out[y, x] = y * 1000 + x * 10 + nv.group_id(1) % 7
    if x == 0 and y == 0:
        counts[0] = nv.num_groups(0)
        counts[1] = nv.num_groups(1)


def test_grid_split_along_y_and_x(device):
    """Both axes past max_groups: four pieces, each with its own base."""
    mx, my = device.info.max_groups[0], device.info.max_groups[1]
    # Small enough to run, large enough to need splitting along both axes only when the
    # limits are small; lavapipe's are 65,535 so y is split, x is not (one row each).
    groups = (2, my + 3)
    out = nv.device_array((groups[1], groups[0]), np.int64)
    counts = nv.device_array(2, np.int64)
    _ids2[groups, (1, 1)](out, counts)
    y, x = np.mgrid[0 : groups[1], 0 : groups[0]]
    np.testing.assert_array_equal(out.copy_to_host(), y * 1000 + x * 10 + y % 7)
    np.testing.assert_array_equal(counts.copy_to_host(), groups)
    assert mx >= 2


@nv.jit
def _local_only(out):
    out[nv.local_id(0)] = nv.local_size(0)  # reads no group ids: split without base parameters


def test_kernel_without_group_ids_is_split_too(device):
    out = nv.device_array(4, np.int32)
    _local_only[device.info.max_groups[0] + 2, 4](out)
    np.testing.assert_array_equal(out.copy_to_host(), [4, 4, 4, 4])


def test_32_bit_ids_past_2_31_take_the_64_bit_specialisation(device):
    """A launcher with 32-bit ids declines grids past 2^31 - 1 invocations along an axis (the
    dispatcher then compiles 64-bit ids), before recording anything."""
    gid = nv.device_array(4, np.int32)
    grp = nv.device_array(4, np.int32)
    counts = nv.device_array(2, np.int64)
    _ids.forall(4)(gid, grp, 4, counts)
    (launcher,) = _ids._launchers[device]
    assert launcher.launch((2, 1, 1), (64, 1, 1), (gid, grp, 4, counts))
    assert not launcher.launch((2**25 + 1, 1, 1), (64, 1, 1), (gid, grp, 4, counts))
    assert not launcher.launch((1, 2**31 + 1, 1), (1, 1, 1), (gid, grp, 4, counts))
    assert _ids.forall(2**31 + 64).needs_64bit_ids()
    assert not _ids.forall(2**31).needs_64bit_ids()  # ids 0 .. 2^31 - 1 fit in 32 bits
    # 2^26 groups or more along an axis: group ids and counts are masked to 26 bits in the
    # 32-bit specialisation (frontend/grid.py)
    limit = 2**nv._core.GROUP_BITS_32
    assert limit == 2**26
    assert not launcher.launch((limit, 1, 1), (1, 1, 1), (gid, grp, 4, counts))
    assert not launcher.launch((1, 1, limit), (1, 1, 1), (gid, grp, 4, counts))
    assert _ids[limit, 1].needs_64bit_ids()
    assert not _ids[limit - 1, 1].needs_64bit_ids()
    assert not _ids[limit - 1, 32].needs_64bit_ids()
    np.testing.assert_array_equal(gid.copy_to_host(), [0, 1, 2, 3])


def test_grid_past_uint32_is_refused_clearly(device):
    with pytest.raises(OverflowError, match="groups"):
        _ids[2**32, 1]


@nv.jit
def _top(out, first):
    i = nv.global_id(0)
    if i >= first and i - first < out.size:
        out[i - first] = i


@pytest.mark.skipif(not os.environ.get("NVK_SLOW_TESTS"), reason="set NVK_SLOW_TESTS=1 to run")
def test_ids_past_2_31_on_the_device(device):
    """2^31 + 1000 invocations (about 15 s on lavapipe): the 64-bit specialisation is taken
    and the last ids, past 2^31, are right."""
    n = 2**31 + 1000
    out = nv.device_array(1024, np.int64)
    launch = _top.forall(n, local_size=256)
    assert launch.needs_64bit_ids()
    launch(out, np.int64(n - 1024))
    np.testing.assert_array_equal(out.copy_to_host(), np.arange(n - 1024, n))
    assert [mode.ints for (_, mode) in _top.specialisations] == [False]
