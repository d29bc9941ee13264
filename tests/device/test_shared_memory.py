"""nv.shared.array, nv.local.array, np.empty/zeros/ones/full in kernels, barriers and fences.

The shared-memory tests read what *other* invocations wrote (a reverse, a transpose, a
tree reduction): without the barrier they read stale or unwritten elements (checked once
by hand on lavapipe: removing nv.barrier() from the reverse fails it)."""

import numpy as np
import pytest

import numba_vulkan as nv
from numba_vulkan import launchers

pytestmark = [pytest.mark.device, pytest.mark.usefixtures("device")]

TILE = 8
ALL_DTYPES = [np.bool_, np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32,
              np.int64, np.uint64, np.float32, np.float64]


def _reverse_kernel(dtype):
    @nv.jit
    def reverse(a, out):
        s = nv.shared.array(64, dtype)
        t = nv.local_id(0)
        g = nv.global_id(0)
        s[t] = a[g]
        nv.barrier()
        out[g] = s[63 - t]
    return reverse


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=lambda d: np.dtype(d).name)
def test_shared_reverse_every_dtype(dtype):
    rng = np.random.default_rng(0)
    a = (rng.integers(0, 100, 256) % 2 == 0) if dtype is np.bool_ else \
        rng.integers(0, 100, 256).astype(dtype)
    out = np.zeros_like(a)
    _reverse_kernel(dtype)[4, 64](a, out)
    np.testing.assert_array_equal(out, a.reshape(4, 64)[:, ::-1].ravel())


@nv.jit
def transpose(a, out):
    tile = nv.shared.array((TILE, TILE + 1), np.float32)  # padded: global-constant shape
    x, y = nv.local_id(0), nv.local_id(1)
    bx, by = nv.group_id(0) * TILE, nv.group_id(1) * TILE
    tile[y, x] = a[by + y, bx + x]
    nv.syncthreads()
    out[bx + y, by + x] = tile[x, y]


def test_shared_2d_transpose_with_constant_expression_shape():
    a = np.arange(32 * 16, dtype=np.float32).reshape(32, 16)
    out = np.zeros((16, 32), np.float32)
    transpose[(2, 4), (TILE, TILE)](a, out)
    np.testing.assert_array_equal(out, a.T)


@nv.jit
def block_sums(a, out):
    s = nv.shared.array(64, np.float64)
    t = nv.local_id(0)
    s[t] = a[nv.global_id(0)]
    nv.barrier()
    stride = 32
    while stride > 0:
        if t < stride:
            s[t] += s[t + stride]
        nv.barrier()
        stride //= 2
    if t == 0:
        out[nv.group_id(0)] = s[0]


def test_tree_reduction_with_barriers_in_a_loop():
    a = np.random.default_rng(2).integers(0, 1000, 64 * 20).astype(np.float64)
    out = np.zeros(20)
    block_sums[20, 64](a, out)
    np.testing.assert_array_equal(out, a.reshape(20, 64).sum(axis=1))


@nv.jit
def three_d(out):
    s = nv.shared.array((2, 3, 4), np.int32)
    t = nv.local_id(0)
    if t < 24:
        s[t // 12, t // 4 % 3, t % 4] = t * 10
    nv.barrier()
    if t < 24:
        out[t] = s[(23 - t) // 12, (23 - t) // 4 % 3, (23 - t) % 4] + s.size + s.shape[2]


def test_shared_3d():
    out = np.zeros(24, np.int32)
    three_d[1, 32](out)
    np.testing.assert_array_equal(out, (23 - np.arange(24)) * 10 + 24 + 4)


@nv.jit
def dyn_reverse(a, out):
    s = nv.shared.array(0, np.float32)
    t = nv.local_id(0)
    n = nv.local_size(0)
    s[t] = a[nv.global_id(0)]
    nv.barrier()
    out[nv.global_id(0)] = s[n - 1 - t]


def test_dynamic_shared_memory_sized_at_launch():
    a = np.arange(128, dtype=np.float32)
    out = np.zeros_like(a)
    dyn_reverse[2, 64, 0, 64 * 4](a, out)
    np.testing.assert_array_equal(out, a.reshape(2, 64)[:, ::-1].ravel())
    out[:] = 0
    dyn_reverse[4, 32, 0, 32 * 4](a, out)
    np.testing.assert_array_equal(out, a.reshape(4, 32)[:, ::-1].ravel())
    with pytest.raises(nv.VulkanUnsupportedError, match="shared_bytes"):
        dyn_reverse[2, 64](a, out)


def test_dynamic_shared_launches_take_the_fast_path():
    """After its first launch, a size's specialisation is launched by its C++ launcher (the
    slow path typed and compiled once per size); sizes never mix."""
    k = nv.jit(dyn_reverse.py_func)
    a = nv.to_device(np.arange(128, dtype=np.float32))
    out = nv.device_array(128, np.float32)
    for local in (64, 32, 64, 32):
        k[128 // local, local, 0, local * 4](a, out)
        np.testing.assert_array_equal(out.copy_to_host(),
                                      np.arange(128.0).reshape(-1, local)[:, ::-1].ravel())
    assert k.slow_path_count == 2  # one per size


@nv.jit
def dyn_alias(a, bits, halves):
    f = nv.shared.array(0, np.float32)
    i = nv.shared.array(0, np.int32)  # the same memory, as numba.cuda's dynamic arrays
    u = nv.shared.array(0, np.uint32)[64:]  # a view of its second half
    t = nv.local_id(0)
    f[t] = a[t]
    nv.barrier()
    bits[t] = i[63 - t]  # another invocation's float, as its bits
    halves[t] = u[t % 64]


def test_dynamic_shared_arrays_alias():
    a = (np.arange(128, dtype=np.float32) - 64.5) / 3
    bits = np.zeros(128, np.int32)
    halves = np.zeros(128, np.uint32)
    dyn_alias[1, 128, 0, 128 * 4](a, bits, halves)
    np.testing.assert_array_equal(bits[:64], a[:64][::-1].view(np.int32))
    np.testing.assert_array_equal(halves, np.tile(a[64:].view(np.uint32), 2))


def test_dynamic_shared_arrays_of_other_widths_or_atomics_refused():
    @nv.jit
    def widths(out):
        f = nv.shared.array(0, np.float64)
        i = nv.shared.array(0, np.int32)
        f[0] = 1.0
        out[0] = i[0]

    with pytest.raises(nv.VulkanUnsupportedError, match="float64 and int32.*same width"):
        widths[1, 1, 0, 8](np.zeros(1, np.int32))

    @nv.jit
    def atomic(out):
        f = nv.shared.array(0, np.float32)
        i = nv.shared.array(0, np.int32)
        f[0] = 1.0
        nv.atomic.add(i, 0, 1)
        out[0] = i[0]

    with pytest.raises(nv.VulkanUnsupportedError, match="atomic.add on a dynamic shared"):
        atomic[1, 1, 0, 4](np.zeros(1, np.int32))


def test_too_much_shared_memory(device):
    limit = device.info.max_shared_memory
    n = limit // 4 + 1

    @nv.jit
    def big(out):
        s = nv.shared.array(n, np.int32)
        s[0] = 1
        out[0] = s[0]

    with pytest.raises(nv.VulkanSupportError, match=f"{n * 4} bytes.*max_shared_memory"):
        big[1, 1](np.zeros(1, np.int32))
    with pytest.raises(nv.VulkanSupportError, match="max_shared_memory"):
        dyn_reverse[1, 64, 0, limit + 4](np.zeros(64, np.float32), np.zeros(64, np.float32))


@nv.jit
def local_arrays(out):
    g = nv.global_id(0)
    x = nv.local.array((3, TILE + 1), np.int64)
    e = np.empty(5, np.int32)
    z = np.zeros((2, 2))
    o = np.ones(4, np.uint8)
    f = np.full((3,), 2.5, np.float32)
    for i in range(3):
        for j in range(TILE + 1):
            x[i, j] = i * j + g
    for i in range(5):
        e[i] = i * g
    z[1, 1] = 0.5
    out[g] = x[2, TILE] + e[4] + z[1, 1] + z[0, 1] + o[3] + f[2] + x[-1, -1]


def test_local_arrays_are_private_per_invocation():
    out = np.zeros(64)
    local_arrays[2, 32](out)
    g = np.arange(64)
    np.testing.assert_array_equal(out, (2 * TILE + g) * 2 + 4 * g + 0.5 + 1 + 2.5)


def test_shapes_must_be_constant():
    @nv.jit
    def dynamic_shape(out, n):
        s = nv.local.array(n, np.int32)
        s[0] = 1
        out[0] = s[0]

    with pytest.raises(nv.VulkanUnsupportedError, match="compile-time constant"):
        dynamic_shape[1, 1](np.zeros(1, np.int32), 4)


@nv.jit
def fences(out, flags):
    g = nv.global_id(0)
    out[g] = g
    nv.threadfence_block()
    nv.threadfence()
    flags[g] = 1


def test_fences_compile_and_run():
    out = np.zeros(64, np.int32)
    flags = np.zeros(64, np.int32)
    fences[1, 64](out, flags)
    np.testing.assert_array_equal(out, np.arange(64))
    assert flags.all()
    spirv = next(iter(fences.inspect_spirv().values()))
    assert "OpMemoryBarrier" in spirv


def test_grid_sync_is_refused_with_advice():
    @nv.jit
    def grid_sync(out):
        g = nv.cg.this_grid()
        out[nv.global_id(0)] = 1
        g.sync()

    with pytest.raises(nv.VulkanUnsupportedError, match="split the kernel|Split the kernel"):
        grid_sync[1, 1](np.zeros(1, np.int32))


def test_barrier_under_an_id_comparison_is_refused_where_divergent():
    """`if local_id(0) < 32:` around a barrier: refused at a launch of 64 invocations per
    workgroup (half skip it), accepted and run at 32 (all take the branch)."""

    @nv.jit
    def divergent(out):
        t = nv.local_id(0)
        if t < 32:
            nv.barrier()
        out[t] = t * 2

    with pytest.raises(nv.VulkanUnsupportedError, match=r"local_id\(0\) < 32.*local size \(64"):
        divergent[1, 64](np.zeros(64, np.int32))
    out = np.zeros(32, np.int32)
    divergent[1, 32](out)
    np.testing.assert_array_equal(out, np.arange(32) * 2)

    @nv.jit
    def only_first(out):
        if nv.local_id(1) == 0:  # one row of each workgroup
            nv.barrier()
        out[nv.global_id(0)] = 1

    with pytest.raises(nv.VulkanUnsupportedError, match="every invocation"):
        only_first[(1, 1), (8, 8)](np.zeros(8, np.int32))
    out = np.zeros(16, np.int32)
    only_first[(2, 1), (8, 1)](out)  # local_id(1) is 0 everywhere: uniform
    np.testing.assert_array_equal(out, 1)

    @nv.jit
    def divergent_loop(out):
        for i in range(nv.global_id(0)):
            nv.barrier()
        out[0] = 1

    with pytest.raises(nv.VulkanUnsupportedError, match="every invocation"):
        divergent_loop[1, 64](np.zeros(1, np.int32))


def test_global_id_comparison_is_divergent_only_inside_a_workgroup():
    @nv.jit
    def k(out):
        g = nv.global_id(0)
        if g >= 48:
            nv.barrier()
        out[g] = g

    out = np.zeros(96, np.int32)
    k[6, 16](out)  # 48 is a workgroup boundary: every workgroup is uniform
    np.testing.assert_array_equal(out, np.arange(96))
    with pytest.raises(nv.VulkanUnsupportedError, match=r"global_id\(0\) >= 48"):
        k[3, 32](np.zeros(96, np.int32))  # workgroup 1 holds 32..63: split at 48


def test_uniform_barriers_and_branches_after_them_are_accepted():
    @nv.jit
    def early_return(a, out):
        s = nv.shared.array(64, np.int32)
        t = nv.local_id(0)
        g = nv.global_id(0)
        if a.size < 0:  # uniform: depends on no id
            return
        s[t] = a[g]
        nv.barrier()
        if t < 32:  # a branch after the barrier, without one inside, is fine
            out[g] = s[63 - t]
        else:
            out[g] = s[63 - t] + 1

    a = np.arange(128, dtype=np.int32)
    out = np.zeros_like(a)
    early_return[2, 64](a, out)
    want = a.reshape(2, 64)[:, ::-1].ravel() + (np.arange(128) % 64 >= 32)
    np.testing.assert_array_equal(out, want)


def test_early_return_before_a_barrier_is_refused_where_divergent():
    """lavapipe gives wrong results when some invocations return before a barrier: an
    early return on an id comparison that splits a workgroup is refused; one on data is
    accepted (it must be uniform, docs/parallel.md) and, uniform here, computes."""

    @nv.jit
    def provable(a, out):
        s = nv.shared.array((8, 8), np.int32)
        if nv.local_id(0) >= 4:
            return
        s[nv.local_id(1), nv.local_id(0)] = a[nv.global_id(1), nv.global_id(0)]
        nv.barrier()
        out[nv.global_id(1), nv.global_id(0)] = s[nv.local_id(1), nv.local_id(0)]

    a = np.arange(64, dtype=np.int32).reshape(8, 8)
    with pytest.raises(nv.VulkanUnsupportedError, match="returning early"):
        provable[(1, 1), (8, 8)](a, np.zeros_like(a))

    @nv.jit
    def on_data(a, out):
        s = nv.shared.array((8, 8), np.int32)
        x, y = nv.global_id(0), nv.global_id(1)
        if x >= out.shape[1] and y >= out.shape[0]:
            return
        s[nv.local_id(1), nv.local_id(0)] = a[y, x]
        nv.barrier()
        out[y, x] = s[nv.local_id(0), nv.local_id(1)]

    out = np.zeros_like(a)
    on_data[(1, 1), (8, 8)](a, out)
    np.testing.assert_array_equal(out, a.T)


def test_shared_bytes_must_be_a_non_negative_int():
    for bad in (-1, 1.5, "64", True):
        with pytest.raises(TypeError, match="shared_bytes"):
            dyn_reverse[1, 64, 0, bad]


@nv.jit
def barrier_reductions(a, out):
    g = nv.global_id(0)
    v = a[g]
    out[0, g] = nv.syncthreads_count(v > 2)
    out[1, g] = nv.syncthreads_and(v >= 0)
    out[2, g] = nv.syncthreads_or(v > 8)
    out[3, g] = nv.syncthreads_count(v % 2)  # called again: the count starts from 0


def barrier_counts_in_a_loop(a, out):
    g = nv.global_id(0)
    for r in range(out.shape[0]):
        out[r, g] = nv.syncthreads_count(a[g] > r)


@pytest.mark.parametrize("ballot", [True, False], ids=["per subgroup", "per invocation"])
def test_syncthreads_count_and_or(monkeypatch, ballot):
    """Counts per workgroup against NumPy, for the form that adds one count per subgroup
    (a device with ballots) and the one that adds per invocation; workgroups of 60 leave a
    subgroup part-filled (lavapipe's subgroups are 8 wide, NVIDIA's 32)."""
    device = nv.get_device()
    if ballot and not (device.info.subgroup_basic and device.info.subgroup_ballot):
        pytest.skip("no subgroup ballots")
    controls = launchers.codegen_controls
    monkeypatch.setattr(launchers, "codegen_controls",
                        lambda d: controls(d)._replace(subgroup_ballot=ballot))
    a = np.random.default_rng(5).integers(0, 10, 128).astype(np.int32)
    out = np.zeros((4, 128), np.int32)
    barrier_reductions[2, 64](a, out)
    blocks = a.reshape(2, 64)
    np.testing.assert_array_equal(out[0], np.repeat((blocks > 2).sum(1), 64))
    np.testing.assert_array_equal(out[1], 1)
    np.testing.assert_array_equal(out[2], np.repeat((blocks > 8).any(1), 64))
    np.testing.assert_array_equal(out[3], np.repeat((blocks % 2).sum(1), 64))
    a = np.random.default_rng(6).integers(0, 10, 180).astype(np.int32)
    out = np.zeros((10, 180), np.int32)
    counts = nv.jit(barrier_counts_in_a_loop)  # compiled for this form only
    counts[3, 60](a, out)
    want = (a.reshape(3, 60)[None] > np.arange(10)[:, None, None]).sum(2)
    np.testing.assert_array_equal(out, np.repeat(want, 60, axis=1))
    assert ("OpGroupNonUniformBallotBitCount" in "".join(counts.inspect_spirv().values())) == ballot


@nv.jit
def _histogram_helper(ary, dtype, nbins, shape2, op):
    # numba.cuda's test_atomics style: the helper's arrays take their shape from its caller
    t = nv.local_id(0)
    sm = nv.shared.array(nbins, dtype)
    scratch = nv.local.array(shape2, dtype)
    scratch[0, 1] = 1
    sm[t] = 0
    nv.barrier()
    op(sm, ary[t] % nbins, scratch[0, 1])
    nv.barrier()
    ary[t] = sm[t]


@nv.jit
def _inner(ary, nbins):
    _histogram_helper(ary, np.uint32, nbins, (2, 3), nv.atomic.add)


@nv.jit
def histogram_by_helpers(ary):
    _inner(ary, 32)  # two calls deep: the constant 32 reaches shared.array


def test_array_shape_from_device_function_arguments():
    ary = np.random.default_rng(3).integers(0, 32, 32).astype(np.uint32)
    expected = np.bincount(ary, minlength=32).astype(np.uint32)
    histogram_by_helpers[1, 32](ary)
    np.testing.assert_array_equal(ary, expected)

    @nv.jit
    def not_constant(ary, n):
        _histogram_helper(ary, np.uint32, n, (2, 3), nv.atomic.add)

    with pytest.raises(nv.VulkanUnsupportedError, match="not a compile-time constant"):
        not_constant[1, 32](ary, 32)
