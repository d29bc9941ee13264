"""The group loop (frontend/grid.py): a kernel's workgroups along x run as a loop over at
most 4,096 dispatched workgroups, each taking the launch's workgroups in turn.

It must never change a result: every id a kernel reads (``group_id``, ``global_id``,
``num_groups``, ``cuda.blockIdx``, ``cuda.grid``), an early return, an exception, a subgroup
operation, a device function (against numba.njit), NumPy arguments, a launch on a stream
and a captured graph give what they give without it. lavapipe has a loop cap,
where the loop is off by default; these tests turn it on there (NUMBA_VULKAN_GROUP_LOOP=2's
setting) with grids of more than 4,096 workgroups, so that every dispatched workgroup loops.
"""

import warnings

import numba
import numpy as np
import pytest

import numba_vulkan as nv
from numba_vulkan import config, cuda, launchers
from numba_vulkan.frontend import grid

pytestmark = [pytest.mark.device, pytest.mark.usefixtures("device")]

LOCAL = 32
GROUPS = 3 * 4096 + 7  # three turns for most dispatched workgroups, a fourth for seven
N = GROUPS * LOCAL - 5  # the last workgroup partly outside the array


@pytest.fixture(autouse=True)
def group_loop(monkeypatch):
    monkeypatch.setattr(config, "GROUP_LOOP", 2)


def looped(kernel, *args):
    """Whether `kernel`, compiled for `args`, runs its workgroups as a loop."""
    return "groups.header" in kernel.inspect_kir(*args)


def test_ids_and_counts():
    @nv.jit
    def ids(out):
        i = nv.global_id(0)
        if i < out.shape[0]:
            out[i, 0] = nv.group_id(0)
            out[i, 1] = nv.local_id(0)
            out[i, 2] = nv.num_groups(0)
            out[i, 3] = i

    out = nv.device_array((N, 4), np.int64)
    ids[GROUPS, LOCAL](out)
    i = np.arange(N)
    want = np.stack([i // LOCAL, i % LOCAL, np.full(N, GROUPS), i], axis=1)
    np.testing.assert_array_equal(out.copy_to_host(), want)
    assert looped(ids, out)


def test_cuda_layer_early_return_and_two_dimensions():
    @cuda.jit
    def grid2(out):
        x, y = cuda.grid(2)
        if x >= out.shape[1] or y >= out.shape[0]:
            return
        out[y, x] = cuda.blockIdx.x * 100000 + cuda.threadIdx.x * 1000 + y * 10 + cuda.gridDim.y

    rows = 3
    out = cuda.device_array((rows, N), np.int64)
    grid2[(GROUPS, rows), (LOCAL, 1)](out)
    x = np.arange(N)[None, :]
    y = np.arange(rows)[:, None]
    want = (x // LOCAL) * 100000 + (x % LOCAL) * 1000 + y * 10 + rows
    np.testing.assert_array_equal(out.copy_to_host(), want)
    assert looped(grid2, out)


def test_an_exception_leaves_the_other_workgroups_running():
    bad = N - 3 * LOCAL  # in a late turn of its dispatched workgroup

    @nv.jit
    def check(out, bad):
        i = nv.global_id(0)
        if i == bad:
            raise ValueError("bad element")
        if i < out.size:
            out[i] = i + 1

    out = nv.to_device(np.zeros(N, np.int64))
    with pytest.raises(ValueError, match="bad element"):
        check[GROUPS, LOCAL](out, bad)
        nv.synchronize()
    got = out.copy_to_host()
    want = np.arange(N) + 1
    want[bad] = 0
    np.testing.assert_array_equal(got, want)
    assert looped(check, out, bad)


def test_subgroups_are_the_launch_s():
    size = nv.get_device().info.subgroup_size

    @nv.jit
    def sums(x, out):
        i = nv.global_id(0)
        out[i] = nv.subgroup.sum(x[i])  # every invocation in range: whole subgroups

    n = GROUPS * LOCAL
    x = np.random.default_rng(3).integers(-1000, 1000, n).astype(np.int64)
    out = nv.device_array(n, np.int64)
    sums[GROUPS, LOCAL](nv.to_device(x), out)
    want = np.repeat(x.reshape(-1, size).sum(axis=1), size)
    np.testing.assert_array_equal(out.copy_to_host(), want)
    assert looped(sums, nv.to_device(x), out)


def collatz_steps(x):
    """Steps of the Collatz sequence from x, at most 40: loops, branches and an early
    return, integer results to compare bit for bit."""
    if x <= 0:
        return -x
    steps = 0
    while x != 1:
        if steps == 40:
            return 1000 + x % 7
        x = x // 2 if x % 2 == 0 else 3 * x + 1
        steps += 1
    return steps


def test_a_device_function_matches_numba_njit():
    steps = nv.jit(device=True)(collatz_steps)

    @nv.jit
    def apply(xs, out):
        i = nv.global_id(0)
        if i >= xs.size:
            return
        out[i] = steps(xs[i])

    xs = np.random.default_rng(7).integers(-50, 10**6, N).astype(np.int64)
    out = nv.device_array(N, np.int64)
    apply[GROUPS, LOCAL](nv.to_device(xs), out)
    np.testing.assert_array_equal(out.copy_to_host(), collatz_on_cpu(xs))
    assert looped(apply, nv.to_device(xs), out)


collatz_steps_njit = numba.njit(collatz_steps)


@numba.njit
def collatz_on_cpu(xs):
    out = np.empty_like(xs)
    for i in range(xs.size):
        out[i] = collatz_steps_njit(xs[i])
    return out


def test_numpy_arguments_and_a_captured_graph():
    @nv.jit
    def add(a, out):
        i = nv.global_id(0)
        if i < a.size:
            out[i] += a[i]

    a = np.arange(N, dtype=np.int32)
    out = np.zeros(N, np.int32)
    add[GROUPS, LOCAL](a, out)  # NumPy arguments: copied in and back around the launch
    np.testing.assert_array_equal(out, a)
    d_a, d_out = nv.to_device(a), nv.device_array(N, np.int32)
    d_out[:] = 0
    s = nv.stream()
    with nv.graph(s) as g:
        add[GROUPS, LOCAL, s](d_a, d_out)
    exe = g.instantiate()
    for _ in range(3):
        exe.replay()
    s.synchronize()
    np.testing.assert_array_equal(d_out.copy_to_host(), 3 * a)
    assert looped(add, d_a, d_out)


def test_on_a_stream():
    @nv.jit
    def add(a, out):
        i = nv.global_id(0)
        if i < a.size:
            out[i] = a[i] * 3

    a = np.arange(N, dtype=np.int32)
    out = nv.device_array(N, np.int32)
    stream = nv.stream()
    add[GROUPS, LOCAL, stream](nv.to_device(a), out)
    stream.synchronize()
    np.testing.assert_array_equal(out.copy_to_host(), a * 3)
    # Past the device's workgroups along x (lavapipe: 65,535): the dispatch is still one
    # piece of at most 4,096, and each id is the launch's.
    many = min(nv.get_device().info.max_groups[0], 1 << 20) + 6
    out = nv.device_array(many * 2, np.int32)
    add[many, 2, stream](nv.to_device(np.arange(many * 2, dtype=np.int32)), out)
    stream.synchronize()
    np.testing.assert_array_equal(out.copy_to_host(), np.arange(many * 2) * 3)


def test_barriers_and_shared_memory_keep_whole_workgroups():
    @nv.jit
    def reverse(a, out):
        s = nv.shared.array(LOCAL, np.int32)
        t = nv.local_id(0)
        i = nv.global_id(0)
        s[t] = a[i]
        nv.barrier()
        out[i] = s[LOCAL - 1 - t]

    n = GROUPS * LOCAL
    a = np.arange(n, dtype=np.int32)
    out = nv.device_array(n, np.int32)
    reverse[GROUPS, LOCAL](nv.to_device(a), out)
    np.testing.assert_array_equal(out.copy_to_host(), a.reshape(-1, LOCAL)[:, ::-1].ravel())
    assert not looped(reverse, nv.to_device(a), out)

    # Asked for by the kernel, the loop it cannot have is named in a warning, once.
    asked = nv.jit(group_loop=True)(reverse.py_func)
    with pytest.warns(nv.VulkanPerformanceWarning, match="group_loop=True has no effect"):
        asked[GROUPS, LOCAL](nv.to_device(a), out)
    np.testing.assert_array_equal(out.copy_to_host(), a.reshape(-1, LOCAL)[:, ::-1].ravel())
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        asked[2, LOCAL](nv.to_device(a[:2 * LOCAL]), out)


def test_off_by_default_on_a_device_with_a_loop_cap(monkeypatch):
    monkeypatch.setattr(config, "GROUP_LOOP", 1)

    @nv.jit
    def one(out):
        i = nv.global_id(0)
        if i < out.size:
            out[i] = 1

    out = nv.device_array(64, np.int32)
    assert looped(one, out) == (not nv.get_device().info.loop_iteration_limit)


def test_the_kernel_option_overrides_the_environment(monkeypatch):
    """group_loop=True loops a kernel where NUMBA_VULKAN_GROUP_LOOP is 0 (here on lavapipe,
    which has a loop cap), group_loop=False keeps one from looping where it is 2; a value
    other than None, True or False is refused."""
    monkeypatch.setattr(config, "GROUP_LOOP", 0)

    def plus_id(a, out):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = a[i] + cuda.blockIdx.x

    a = np.arange(N, dtype=np.int64)
    want = a + np.arange(N) // LOCAL
    on = cuda.jit(group_loop=True)(plus_id)
    out = nv.device_array(N, np.int64)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # looped as asked: no warning
        on[GROUPS, LOCAL](nv.to_device(a), out)
    np.testing.assert_array_equal(out.copy_to_host(), want)
    assert looped(on, nv.to_device(a), out)

    monkeypatch.setattr(config, "GROUP_LOOP", 2)
    off = nv.jit(group_loop=False)(plus_id)
    off[GROUPS, LOCAL](nv.to_device(a), out)
    np.testing.assert_array_equal(out.copy_to_host(), want)
    assert not looped(off, nv.to_device(a), out)
    assert looped(nv.jit(plus_id), nv.to_device(a), out)  # None: the environment's 2

    with pytest.raises(TypeError, match="group_loop must be None, True or False"):
        nv.jit(group_loop="yes")



def test_the_device_default_loops_light_kernels_only(monkeypatch):
    """The default on NVIDIA (launchers.group_loop gives grid.LIGHT; here forced on
    lavapipe): the loop for kernels whose invocations move at most 8 bytes of global memory
    in no loop and no atomic, with their results as without it; not for 12 bytes, 16, a
    loop, an atomic or a barrier."""
    monkeypatch.setattr(launchers, "group_loop", lambda info, setting=None: grid.LIGHT)

    @cuda.jit
    def load_store(a, out):  # 4 + 4 bytes
        i = cuda.grid(1)
        if i < out.size:
            out[i] = a[i] + cuda.blockIdx.x

    @cuda.jit
    def store(out):  # 4
        i = cuda.grid(1)
        if i < out.size:
            out[i] = i

    @cuda.jit
    def two_loads(a, b, out):  # 12
        i = cuda.grid(1)
        if i < out.size:
            out[i] = a[i] + b[i]

    @cuda.jit
    def wide(a, out):  # 8 + 8
        i = cuda.grid(1)
        if i < out.size:
            out[i] = a[i] + 1

    @cuda.jit
    def counted(out):  # 4, in a loop
        i = cuda.grid(1)
        if i < out.size:
            for j in range(3):
                out[i] = j

    @cuda.jit
    def atomic(out):  # an atomic
        cuda.atomic.add(out, 0, 1)

    @cuda.jit
    def barrier(out):  # 4, and a barrier
        i = cuda.grid(1)
        cuda.syncthreads()
        if i < out.size:
            out[i] = i

    a = np.arange(N, dtype=np.int32)
    d_a, out = nv.to_device(a), nv.device_array(N, np.int32)
    load_store[GROUPS, LOCAL](d_a, out)
    np.testing.assert_array_equal(out.copy_to_host(), a + np.arange(N) // LOCAL)
    assert looped(load_store, d_a, out)
    store[GROUPS, LOCAL](out)
    np.testing.assert_array_equal(out.copy_to_host(), a)
    assert looped(store, out)
    assert not looped(two_loads, d_a, d_a, out)
    wide_a = nv.to_device(a.astype(np.int64))
    assert not looped(wide, wide_a, nv.device_array(N, np.int64))
    assert not looped(counted, out)
    assert not looped(atomic, out)
    assert not looped(barrier, out)


def test_the_default_by_device_and_setting():
    """launchers.group_loop: NVIDIA's default is grid.LIGHT, other vendors' and loop-capped
    devices' none; NUMBA_VULKAN_GROUP_LOOP 0, 1 and 2 override it."""

    class Info:
        def __init__(self, vendor_id, loop_iteration_limit=0):
            self.vendor_id, self.loop_iteration_limit = vendor_id, loop_iteration_limit

    nvidia, amd, capped = Info(0x10DE), Info(0x1002), Info(0x10005, 65535)
    assert launchers.group_loop(nvidia) == grid.LIGHT
    assert launchers.group_loop(amd) is False
    assert launchers.group_loop(capped) is False
    assert [launchers.group_loop(nvidia, s) for s in (0, 1, 2)] == [False, True, True]
    assert [launchers.group_loop(capped, s) for s in (0, 1, 2)] == [False, False, True]
