"""numba.cuda's warp functions with only the import changed (``from numba_vulkan import
cuda``): shuffles (a warp-sum reduction, the lanes outside the warp), ballots and votes,
``match_any_sync`` / ``match_all_sync`` and ``syncwarp``, each checked against NumPy for the
device's warp, its subgroup (8 lanes on lavapipe, 32 on NVIDIA)."""

import numpy as np
import pytest
from numba import int32

from numba_vulkan import cuda
from numba_vulkan.errors import VulkanSupportError

pytestmark = [pytest.mark.device, pytest.mark.usefixtures("device")]


@cuda.jit
def warp_sum(data, out):
    i = cuda.grid(1)
    v = data[i]
    offset = cuda.warpsize // 2
    while offset > 0:
        v += cuda.shfl_down_sync(0xffffffff, v, offset)
        offset //= 2
    if cuda.laneid == 0:
        cuda.atomic.add(out, 0, v)


def test_warp_shuffle_reduction(device):
    data = np.random.default_rng(9).integers(-50, 50, 256).astype(np.int32)
    out = np.zeros(1, dtype=np.int32)
    warp_sum[4, 64](data, out)
    assert out[0] == data.sum()


def test_shfl_down_out_of_range_keeps_own_value(device):
    @cuda.jit
    def down(out):
        i = cuda.grid(1)
        out[i] = cuda.shfl_down_sync(0xffffffff, i, 1)

    out = np.zeros(64, dtype=np.int64)
    down[1, 64](out)
    w = device.info.subgroup_size
    expect = np.arange(64) + 1
    expect[w - 1::w] -= 1  # the last lane of each subgroup: its own value, as CUDA
    np.testing.assert_array_equal(out, expect)


def test_ballot_and_votes(device):
    @cuda.jit
    def votes(flags, out):
        i = cuda.grid(1)
        p = flags[i] != 0
        out[i, 0] = cuda.ballot_sync(0xffffffff, p)
        out[i, 1] = cuda.all_sync(0xffffffff, p)
        out[i, 2] = cuda.any_sync(0xffffffff, p)
        out[i, 3] = cuda.activemask()

    w = device.info.subgroup_size
    flags = (np.arange(64) % 3 == 0).astype(np.int32)
    out = np.zeros((64, 4), dtype=np.int64)
    votes[1, 64](flags, out)
    for lane0 in range(0, 64, w):
        f = flags[lane0:lane0 + w]
        bits = sum(1 << k for k in range(min(w, 32)) if f[k])
        assert (out[lane0:lane0 + w, 0] == bits).all()
        assert (out[lane0:lane0 + w, 1] == int(f.all())).all()
        assert (out[lane0:lane0 + w, 2] == int(f.any())).all()
        assert (out[lane0:lane0 + w, 3] == (1 << min(w, 32)) - 1).all()


def _lane_masks(values, w, mask=0xFFFFFFFF):
    """numba.cuda's match_any_sync per lane, for warps of w lanes (bits of lanes 0-31):
    the lanes of the caller's warp and of `mask` whose value has the caller's bits."""
    words = values.view(f"u{values.itemsize}")
    out = []
    for i, v in enumerate(words):
        lane0 = i - i % w
        out.append(sum(1 << k for k in range(min(w, 32))
                       if words[lane0 + k] == v and mask >> k & 1))  # fmt: skip
    return np.array(out, np.uint32).view(np.int32)


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.float32, np.float64])
def test_match_any_and_all_sync(device, dtype):
    """Floats compare as their words: NaN matches itself, -0 does not match 0."""
    @cuda.jit
    def match(values, lanes, everyone, pred, masked):
        i = cuda.grid(1)
        lanes[i] = cuda.match_any_sync(0xffffffff, values[i])
        m, p = cuda.match_all_sync(0xffffffff, values[i])
        everyone[i] = m
        pred[i] = p
        masked[i] = cuda.match_any_sync(0x55555555, values[i])

    w = device.info.subgroup_size
    rng = np.random.default_rng(3)
    values = rng.integers(0, 3, 128).astype(dtype)
    values[32:64] = 7  # a uniform stretch: every warp in it matches all
    values[64:96] = np.arange(32)  # every value distinct: one round per lane
    if values.dtype.kind == "f":
        values[1], values[2], values[5], values[6] = np.nan, np.nan, -0.0, 0.0
    out = [np.zeros(128, np.int32), np.zeros(128, np.int32), np.zeros(128, np.bool_),
           np.zeros(128, np.int32)]  # fmt: skip
    match[1, 128](values, *out)
    lanes, everyone, pred, masked = out
    np.testing.assert_array_equal(lanes, _lane_masks(values, w))
    np.testing.assert_array_equal(masked, _lane_masks(values, w, 0x55555555))
    full = np.uint32((1 << min(w, 32)) - 1).view(np.int32)
    same = (lanes == full)
    np.testing.assert_array_equal(pred, np.repeat(same.reshape(-1, w).all(1), w))
    np.testing.assert_array_equal(everyone, np.where(pred, full, 0))
    assert pred[32:64].all() and not pred[:w].all()


@cuda.jit
def coop_syncwarp(res):  # numba-cuda's tests/cudapy/test_sync.py, the import changed
    sm = cuda.shared.array(32, int32)
    i = cuda.grid(1)
    sm[i] = i
    cuda.syncwarp()
    if i < 16:
        sm[i] = sm[i] + sm[i + 16]
        cuda.syncwarp(0xFFFF)
    if i < 8:
        sm[i] = sm[i] + sm[i + 8]
        cuda.syncwarp(0xFF)
    if i < 4:
        sm[i] = sm[i] + sm[i + 4]
        cuda.syncwarp(0xF)
    if i < 2:
        sm[i] = sm[i] + sm[i + 2]
        cuda.syncwarp(0x3)
    if i == 0:
        res[0] = sm[0] + sm[1]


def test_syncwarp_shares_a_warp_or_refuses_narrower_subgroups(device):
    """A subgroup barrier on subgroups of 32 lanes or more; a clear error on narrower ones
    (lavapipe's 8), where the warp's 32 lanes would not all wait."""
    res = np.zeros(1, np.int32)
    if device.info.subgroup_size < 32:
        with pytest.raises(VulkanSupportError, match="syncwarp synchronises a warp of 32 lanes"):
            coop_syncwarp[1, 32](res)
    else:
        coop_syncwarp[1, 32](res)
        assert res[0] == sum(range(32))
