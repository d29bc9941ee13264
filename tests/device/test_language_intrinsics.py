"""Kernel intrinsics: global_id, local_id, group_id, local_size, num_groups in
1-, 2- and 3-d launches, through both launch forms, against the values NumPy
derives from the launch configuration."""

import numpy as np
import pytest

import numba_vulkan as nv

pytestmark = [pytest.mark.device, pytest.mark.usefixtures("device")]

FIELDS = 15  # global, local, group ids, local sizes, group counts: 3 axes each


@nv.jit
def record_ids(out):
    gx = nv.global_id(0)
    gy = nv.global_id(1)
    gz = nv.global_id(2)
    wx = nv.num_groups(0) * nv.local_size(0)
    wy = nv.num_groups(1) * nv.local_size(1)
    row = gx + wx * (gy + wy * gz)
    if row < out.shape[0]:
        out[row, 0] = gx
        out[row, 1] = gy
        out[row, 2] = gz
        out[row, 3] = nv.local_id(0)
        out[row, 4] = nv.local_id(1)
        out[row, 5] = nv.local_id(2)
        out[row, 6] = nv.group_id(0)
        out[row, 7] = nv.group_id(1)
        out[row, 8] = nv.group_id(2)
        out[row, 9] = nv.local_size(0)
        out[row, 10] = nv.local_size(1)
        out[row, 11] = nv.local_size(2)
        out[row, 12] = nv.num_groups(0)
        out[row, 13] = nv.num_groups(1)
        out[row, 14] = nv.num_groups(2)


def _triple(v):
    v = (v,) if isinstance(v, int) else tuple(v)
    return v + (1,) * (3 - len(v))


def expected_ids(groups, local):
    """One row per invocation, in the order record_ids writes them."""
    groups, local = _triple(groups), _triple(local)
    total = [g * l for g, l in zip(groups, local)]
    gz, gy, gx = np.meshgrid(*(np.arange(t) for t in reversed(total)), indexing="ij")
    gid = [a.ravel() for a in (gx, gy, gz)]
    cols = gid + [g % l for g, l in zip(gid, local)] + [g // l for g, l in zip(gid, local)]
    cols += [np.full(gid[0].size, l) for l in local] + [np.full(gid[0].size, g) for g in groups]
    return np.stack(cols, axis=1).astype(np.int32)


@pytest.mark.parametrize(
    "groups, local",
    [
        (5, 16),
        ((5,), (16,)),
        ((3, 4), (8, 2)),
        ((2, 3, 2), (4, 2, 2)),
        ((1, 1, 3), (1, 1, 4)),
        ((7, 1), (1, 4)),
    ],
    ids=["1d-int", "1d-tuple", "2d", "3d", "z-only", "y-local"],
)
def test_ids_and_sizes_cuda_style_launch(groups, local):
    want = expected_ids(groups, local)
    out = np.full((want.shape[0], FIELDS), -1, np.int32)
    record_ids[groups, local](out)
    np.testing.assert_array_equal(out, want)


@pytest.mark.parametrize(
    "extent, local, groups",
    [(200, 64, 4), ((10, 20), (8, 8), (2, 3)), ((5, 6, 7), (4, 4, 4), (2, 2, 2)), (100, 32, 4)],
    ids=["1d", "2d", "3d", "1d-local32"],
)
def test_forall_rounds_up_to_whole_groups(extent, local, groups):
    # forall(extent) launches whole workgroups of the default (or given) local size,
    # so some invocations fall outside `extent`; all of them run.
    want = expected_ids(groups, local)
    out = np.full((want.shape[0], FIELDS), -1, np.int32)
    if local in (64, (8, 8), (4, 4, 4)):
        record_ids.forall(extent)(out)  # the default local sizes
    else:
        record_ids.forall(extent, local_size=local)(out)
    np.testing.assert_array_equal(out, want)


@nv.jit
def ids_as_indices(out):
    i = nv.global_id(0)
    j = nv.global_id(1)
    if i < out.shape[0] and j < out.shape[1]:
        out[i, j] = i * 1000 + j


def test_forall_2d_axis_order_matches_array_axes():
    out = np.zeros((13, 21), np.int32)
    ids_as_indices.forall(out.shape)(out)
    np.testing.assert_array_equal(out, np.arange(13)[:, None] * 1000 + np.arange(21)[None, :])


def test_intrinsics_outside_kernels_raise():
    for f in (nv.global_id, nv.local_id, nv.group_id, nv.local_size, nv.num_groups):
        with pytest.raises(NotImplementedError):
            f(0)
