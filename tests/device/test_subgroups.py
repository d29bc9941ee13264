"""nv.subgroup.*: every operation against NumPy, computed for the device's subgroup size
(DeviceInfo.subgroup_size: 8 on lavapipe), so the tests hold for any size."""

import numba
import numpy as np
import pytest

import numba_vulkan as nv

pytestmark = [pytest.mark.device, pytest.mark.usefixtures("device")]

N = 64


@pytest.fixture(scope="module")
def width(device):
    if not (device.info.subgroup_arithmetic and device.info.subgroup_shuffle):
        pytest.skip("the device lacks subgroup arithmetic or shuffles")
    return device.info.subgroup_size


def _lanes(a, w):
    return a.reshape(-1, w)


@nv.jit
def ids(out):
    g = nv.global_id(0)
    out[0, g] = nv.subgroup.size()
    out[1, g] = nv.subgroup.lane()
    out[2, g] = nv.subgroup.id()
    out[3, g] = nv.subgroup.count()
    out[4, g] = nv.subgroup.elect()


def test_ids(width):
    out = np.zeros((5, N), np.int64)
    ids[1, N](out)
    g = np.arange(N)
    np.testing.assert_array_equal(out[0], width)
    np.testing.assert_array_equal(out[1], g % width)
    np.testing.assert_array_equal(out[2], g // width)
    np.testing.assert_array_equal(out[3], N // width)
    np.testing.assert_array_equal(out[4], g % width == 0)


def _arith_kernel():
    @nv.jit
    def arith(a, out):
        g = nv.global_id(0)
        v = a[g]
        out[0, g] = nv.subgroup.sum(v)
        out[1, g] = nv.subgroup.prod(v)
        out[2, g] = nv.subgroup.min(v)
        out[3, g] = nv.subgroup.max(v)
        out[4, g] = nv.subgroup.inclusive_sum(v)
        out[5, g] = nv.subgroup.exclusive_sum(v)
        out[6, g] = nv.subgroup.inclusive_max(v)
        out[7, g] = nv.subgroup.exclusive_min(v)
        out[8, g] = nv.subgroup.inclusive_prod(v)
        out[9, g] = nv.subgroup.exclusive_max(v)
    return arith


@pytest.mark.parametrize("dtype", [np.int32, np.uint32, np.int64, np.uint64, np.float32,
                                   np.float64], ids=lambda d: np.dtype(d).name)
def test_reductions_and_scans(dtype, width):
    rng = np.random.default_rng(3)
    lo = 0 if np.dtype(dtype).kind == "u" else -3
    a = rng.integers(lo, 4, N).astype(dtype)  # small integers: exact in every order
    out = np.zeros((10, N), dtype)
    _arith_kernel()[1, N](a, out)
    L = _lanes(a, width)
    big = np.iinfo(dtype) if np.dtype(dtype).kind in "iu" else None
    ident_min = big.max if big else np.inf
    ident_max = big.min if big else -np.inf
    with np.errstate(over="ignore"):
        want = [
            np.repeat(L.sum(1, dtype=dtype), width),
            np.repeat(L.prod(1, dtype=dtype), width),
            np.repeat(L.min(1), width),
            np.repeat(L.max(1), width),
            np.cumsum(L, 1, dtype=dtype).ravel(),
            (np.cumsum(L, 1, dtype=dtype) - L).ravel(),
            np.maximum.accumulate(L, 1).ravel(),
            np.concatenate([np.full((L.shape[0], 1), ident_min, dtype),
                            np.minimum.accumulate(L, 1)[:, :-1]], 1).ravel(),
            np.cumprod(L, 1, dtype=dtype).ravel(),
            np.concatenate([np.full((L.shape[0], 1), ident_max, dtype),
                            np.maximum.accumulate(L, 1)[:, :-1]], 1).ravel(),
        ]
    for row, w in enumerate(want):
        np.testing.assert_array_equal(out[row], w.astype(dtype), err_msg=f"row {row}")


@nv.jit
def votes_and_moves(a, out, ballots):
    g = nv.global_id(0)
    v = a[g]
    lane = nv.subgroup.lane()
    w = nv.subgroup.size()
    out[0, g] = nv.subgroup.any(v > 5)
    out[1, g] = nv.subgroup.all(v >= 0)
    out[2, g] = nv.subgroup.ballot_count(v % 2 == 1)
    out[3, g] = nv.subgroup.broadcast(v, 1)
    out[4, g] = nv.subgroup.broadcast_first(v)
    out[5, g] = nv.subgroup.shuffle(v, (lane + 3) % w)
    out[6, g] = nv.subgroup.shuffle_xor(v, 1)
    up = nv.subgroup.shuffle_up(v, 1)
    down = nv.subgroup.shuffle_down(v, 1)
    out[7, g] = up if lane >= 1 else -1
    out[8, g] = down if lane + 1 < w else -1
    b = nv.subgroup.ballot(v % 2 == 1)
    ballots[0, g] = b[0]
    ballots[1, g] = b[1]


def test_votes_ballots_broadcasts_shuffles(width):
    a = np.random.default_rng(4).integers(0, 8, N).astype(np.int32)
    out = np.zeros((9, N), np.int32)
    ballots = np.zeros((2, N), np.uint32)
    votes_and_moves[1, N](a, out, ballots)
    L = _lanes(a, width)
    lane = np.arange(width)
    np.testing.assert_array_equal(out[0], np.repeat((L > 5).any(1), width))
    np.testing.assert_array_equal(out[1], 1)
    np.testing.assert_array_equal(out[2], np.repeat((L % 2 == 1).sum(1), width))
    np.testing.assert_array_equal(out[3], np.repeat(L[:, 1], width))
    np.testing.assert_array_equal(out[4], np.repeat(L[:, 0], width))
    np.testing.assert_array_equal(out[5], L[:, (lane + 3) % width].ravel())
    np.testing.assert_array_equal(out[6], L[:, lane ^ 1].ravel())
    np.testing.assert_array_equal(out[7], np.where(lane >= 1, L[:, lane - 1], -1).ravel())
    np.testing.assert_array_equal(out[8], np.where(lane + 1 < width, L[:, (lane + 1) % width],
                                                   -1).ravel())
    bits = ((L % 2 == 1) * (1 << lane.astype(np.uint64))).sum(1)
    np.testing.assert_array_equal(ballots[0], np.repeat(bits & 0xFFFFFFFF, width))
    np.testing.assert_array_equal(ballots[1], np.repeat(bits >> 32, width))


def test_capabilities_are_reported():
    compiled = votes_and_moves.compile((numba.int32[::1], numba.int32[:, ::1],
                                        numba.uint32[:, ::1]))
    for cap in ("subgroup_basic", "subgroup_vote", "subgroup_ballot", "subgroup_shuffle",
                "subgroup_shuffle_relative"):
        assert cap in compiled.capabilities


def test_barrier_under_a_branch_on_the_lane_is_refused(width):
    @nv.jit
    def k(out):
        if nv.subgroup.lane() == 0:
            nv.barrier()
        out[0] = 1

    with pytest.raises(nv.VulkanUnsupportedError, match="every invocation"):
        k[1, N](np.zeros(1, np.int32))


@nv.jit
def subgroup_tree_sum(a, out):
    """Each subgroup sums its lanes' values through shared memory, halving the active lanes
    at each step: the barrier runs inside the branch, among the active lanes only."""
    sm = nv.shared.array(N, np.int32)
    i = nv.local_id(0)
    lane = nv.subgroup.lane()
    sm[i] = a[i]
    nv.subgroup.barrier()
    step = nv.subgroup.size() // 2
    while step > 0:
        if lane < step:
            sm[i] = sm[i] + sm[i + step]
            nv.subgroup.barrier()
        step //= 2
    out[i] = sm[i - lane]  # lane 0's sum, read by every lane after the first barrier


def test_barrier_among_the_active_lanes(width):
    a = np.random.default_rng(3).integers(-1000, 1000, N).astype(np.int32)
    out = np.zeros(N, np.int32)
    subgroup_tree_sum[1, N](a, out)
    sums = _lanes(a, width).sum(axis=1)
    np.testing.assert_array_equal(_lanes(out, width)[:, 0], sums)
    (text,) = subgroup_tree_sum.inspect_asm().values()
    assert "OpControlBarrier %uint_3 %uint_3" in text  # Subgroup scope, not Workgroup (2)


@nv.jit
def partitions(a, out):
    """subgroup.partition of a's values, in every lane and among the lanes whose index is not
    a multiple of 3 (the others inactive)."""
    g = nv.global_id(0)
    lanes = nv.subgroup.partition(a[g])
    for w in range(4):
        out[0, w, g] = lanes[w]
    if nv.subgroup.lane() % 3 != 0:
        lanes = nv.subgroup.partition(a[g])
        for w in range(4):
            out[1, w, g] = lanes[w]


def _partition_oracle(a, width, active):
    """Per lane, the four ballot words of the active lanes of its subgroup whose value has
    its bits (0 for an inactive lane)."""
    bits = a.view(f"u{a.itemsize}") if a.dtype != np.bool_ else a.astype(np.uint8)
    out = np.zeros((4, a.size), np.uint32)
    for g in range(a.size):
        if not active[g % width]:
            continue
        first = g - g % width
        for j in range(width):
            if active[j] and bits[first + j] == bits[g]:
                out[j // 32, g] |= np.uint32(1 << (j % 32))
    return out


@pytest.mark.parametrize("dtype", [np.int32, np.uint32, np.int64, np.uint64, np.float16,
                                   np.float32, np.float64, np.bool_],
                         ids=lambda d: np.dtype(d).name)
def test_partition_groups_lanes_by_bits(dtype, width):
    """Floats compare as their words: NaN matches NaN of the same bits, -0 does not match 0.
    Values are drawn from three so that lanes share them (a round per distinct value)."""
    rng = np.random.default_rng(5)
    if np.dtype(dtype).kind == "f":
        pool = np.array([np.nan, -0.0, 0.0, 1.5, -1.5], dtype)
    elif dtype is np.bool_:
        pool = np.array([False, True])
    else:
        pool = np.array([0, 7, 1 << 40 if np.dtype(dtype).itemsize == 8 else 9], dtype)
    a = pool[rng.integers(0, pool.size, N)]
    out = np.zeros((2, 4, N), np.uint32)
    partitions[1, N](a, out)
    np.testing.assert_array_equal(out[0], _partition_oracle(a, width, np.ones(width, bool)))
    some = np.arange(width) % 3 != 0
    np.testing.assert_array_equal(out[1], _partition_oracle(a, width, some))


def test_partition_is_one_instruction_where_the_device_has_it(monkeypatch):
    """On a device with VK_NV_shader_subgroup_partitioned the loop becomes
    OpGroupNonUniformPartitionNV (the form SPIRV-Tools validates here; the H200 runs it)."""
    from numba_vulkan import launchers

    controls = launchers.codegen_controls
    monkeypatch.setattr(launchers, "codegen_controls",
                        lambda device: controls(device)._replace(subgroup_partitioned=True))

    @nv.jit
    def match(a, out):
        g = nv.global_id(0)
        out[g] = nv.subgroup.partition(a[g])[0]

    compiled = match.compile((numba.float64[::1], numba.uint32[::1]))
    assert "subgroup_partitioned" in compiled.capabilities
    text = compiled.disassemble()
    assert "OpGroupNonUniformPartitionNV" in text and "OpLoopMerge" not in text
    with pytest.raises(nv.VulkanSupportError, match="subgroup_partitioned"):
        nv.get_device().check_support(compiled)
