"""Elements kept in registers while a loop runs (spirv/loop_promotion.h) never change a
result.

An element a loop loads and stores at one address lives in a register from the loop's
entry to its exit, written back before any other access that may overlap it. Each kernel
here runs on device arrays that share memory in the ways that could go wrong: a second array
over the same bytes, read or written in the loop, a view of another dtype over half an
element, a neighbour 8 bytes on, a loop left by a break, a barrier behind which another
invocation wrote; each must agree bit for bit with numba.njit running the same function over
NumPy views of one buffer, and with the pass turned off.
"""

import numba
import numpy as np
import pytest

import numba_vulkan as nv
from numba_vulkan import config, cuda, launchers
from numba_vulkan.cuda.random import create_xoroshiro128p_states, xoroshiro128p_uniform_float32

pytestmark = [pytest.mark.device, pytest.mark.usefixtures("device")]


def run_both(func, buffer, make_views, groups=1, local_size=1):
    """func(*views) as a kernel over device views of one device buffer, and under njit over
    the same views of a NumPy copy; returns (device buffer after, CPU buffer after)."""
    kernel = nv.jit(func)
    on_device = nv.to_device(buffer)
    kernel[groups, local_size](*make_views(on_device))
    cpu = buffer.copy()
    numba.njit(func)(*make_views(cpu))
    return on_device.copy_to_host(), cpu


def spirv_of(func, *args):
    return nv.jit(func).inspect_spirv(*args)


def promoted(func, *args):
    """How many elements the kernel's loops keep in registers, compiled for `args`."""
    kernel = nv.jit(func)
    kernel.inspect_spirv(*args)
    (compiled,) = kernel.specialisations.values()
    return compiled.promoted_elements


def expect_as_njit(func, buffer, make_views, elements):
    """``run_both``'s buffers equal bit for bit, and the kernel keeping `elements` elements
    in registers (compiled for the device views)."""
    dev, cpu = run_both(func, buffer, make_views)
    np.testing.assert_array_equal(dev, cpu)
    assert promoted(func, *make_views(nv.to_device(buffer))) == elements


def counter(state, out):
    for k in range(out.size):
        s = state[0]
        state[0] = s * np.uint64(6364136223846793005) + np.uint64(1442695040888963407)
        out[k] = s >> np.uint64(33)


@pytest.mark.parametrize("overlap", [False, True])
def test_state_updated_in_a_loop(overlap):
    # out over the state's own element (overlap) or after it: the stores to out[0] must
    # reach the next load of the state
    buffer = np.arange(1, 41, dtype=np.uint64)
    views = lambda b: (b[0:1], b[0:32] if overlap else b[8:40])  # noqa: E731
    expect_as_njit(counter, buffer, views, 1)


def half_overwritten(state, halves):
    for k in range(6):
        s = state[0]
        state[0] = s + np.uint64(1)
        if k == 2:
            halves[1] = np.uint32(7)  # the high half of state[0]


def test_a_store_through_a_view_of_another_dtype():
    buffer = np.array([5, 9], np.uint64)
    on_device = nv.to_device(buffer)
    kernel = nv.jit(half_overwritten)
    kernel[1, 1](on_device[0:1], on_device.view(np.uint32))
    cpu = buffer.copy()
    numba.njit(half_overwritten)(cpu[0:1], cpu.view(np.uint32))
    np.testing.assert_array_equal(on_device.copy_to_host(), cpu)
    assert promoted(half_overwritten, on_device[0:1], on_device.view(np.uint32)) == 1


def read_through_an_alias(state, alias, out):
    for k in range(out.size):
        state[0] = state[0] + np.int64(k + 1)
        out[k] = alias[0]  # the same element, through another array


def test_an_alias_read_in_the_loop_sees_each_store():
    buffer = np.zeros(9, np.int64)
    dev, cpu = run_both(read_through_an_alias, buffer, lambda b: (b[0:1], b[0:1], b[1:9]))
    np.testing.assert_array_equal(dev, cpu)
    np.testing.assert_array_equal(dev[1:], np.cumsum(np.arange(1, 9)))
    on_device = nv.to_device(buffer)
    assert promoted(read_through_an_alias, on_device[0:1], on_device[0:1], on_device[1:9]) == 1


def accumulate_until(total, values, limit):
    for k in range(values.size):
        total[0] += values[k]
        if total[0] > limit:
            break
    total[1] = total[0] * 2  # after the loop: the value written back


def test_a_loop_left_by_a_break_writes_the_element_back():
    buffer = np.arange(1, 21, dtype=np.float64)
    buffer[:2] = 0.0
    for limit in (10.0, 1000.0):
        kernel_args = lambda b: (b[0:2], b[2:20], limit)  # noqa: E731
        dev, cpu = run_both(accumulate_until, buffer, kernel_args)
        np.testing.assert_array_equal(dev, cpu)
    assert promoted(accumulate_until, *kernel_args(nv.to_device(buffer))) == 1


def nested(state, out):
    n = 0
    for i in range(3):
        for j in range(4):
            for k in range(5):
                x = state[0]
                x ^= x << np.uint64(13)
                x ^= x >> np.uint64(7)
                x ^= x << np.uint64(17)
                state[0] = x
                out[n] = x  # out[0] is state[0] where they overlap
                n += 1


@pytest.mark.parametrize("overlap", [False, True])
def test_a_state_kept_across_inner_loops(overlap):
    # A middle loop (the outer one holds lavapipe's loop guard) keeps the state across the
    # innermost loop's iterations; the store to out[0] overwrites it where they overlap.
    buffer = np.arange(1, 62, dtype=np.uint64)
    views = lambda b: (b[0:1], b[0:60] if overlap else b[1:61])  # noqa: E731
    expect_as_njit(nested, buffer, views, 1)


def accumulate_products(c, a, b):
    for i in range(4):
        for j in range(4):
            for k in range(6):
                c[i, j] += a[i, k] * b[k, j]


@pytest.mark.parametrize("overlap", [False, True])
def test_products_accumulated_in_place(overlap):
    # c[i, j] kept across the k loop; where a is c's own memory, the loads of a must see
    # the sums stored so far
    buffer = np.arange(64, dtype=np.float64) % 7 - 3

    def views(b):
        a = b[0:24] if overlap else b[16:40]
        return b[0:16].reshape(4, 4), a.reshape(4, 6), b[40:64].reshape(6, 4)

    expect_as_njit(accumulate_products, buffer, views, 1)


PAIR = np.dtype([("x", np.int64), ("y", np.int64)])


def neighbours(a, out):
    for k in range(out.size):
        x = a[0]["x"]
        y = a[0]["y"]
        a[0]["x"] = x + y
        a[0]["y"] = x
        out[k] = x


def test_neighbouring_elements():
    # the two fields of one record, 8 bytes apart: two elements, neither compared with the
    # other's stores
    pair = np.zeros(1, PAIR)
    pair[0] = (1, 0)
    a, out = nv.to_device(pair), nv.to_device(np.zeros(24, np.int64))
    nv.jit(neighbours)[1, 1](a, out)
    cpu_pair, cpu_out = pair.copy(), np.zeros(24, np.int64)
    numba.njit(neighbours)(cpu_pair, cpu_out)
    np.testing.assert_array_equal(out.copy_to_host(), cpu_out)
    assert a.copy_to_host().tobytes() == cpu_pair.tobytes()
    assert cpu_out[-1] == 46368  # Fibonacci
    assert promoted(neighbours, a, out) == 2


def written_behind_a_barrier(shared_out, seen):
    t = nv.local_id(0)
    for k in range(4):
        v = shared_out[0]  # every invocation reads, then invocation k writes
        nv.barrier()
        if t == k:
            shared_out[0] = v + t + 1
        nv.barrier()
        seen[k * 4 + t] = shared_out[0]


def test_an_element_another_invocation_wrote_behind_a_barrier():
    out = nv.to_device(np.zeros(1, np.int64))
    seen = nv.to_device(np.zeros(16, np.int64))
    nv.jit(written_behind_a_barrier)[1, 4](out, seen)
    # after round k every invocation sees 1 + 2 + ... + (k + 1)
    expected = np.repeat(np.cumsum(np.arange(1, 5)), 4)
    np.testing.assert_array_equal(seen.copy_to_host(), expected)
    assert promoted(written_behind_a_barrier, out, seen) == 0  # a loop with a barrier


def test_the_pass_runs_and_off_computes_the_same(monkeypatch):
    # The kernels above do run with the pass: their SPIR-V changes when it is off.
    buffer = np.arange(1, 41, dtype=np.uint64)
    views = lambda b: (b[0:1], b[0:32])  # noqa: E731
    with_pass, _ = run_both(counter, buffer, views)
    device_views = views(nv.to_device(buffer))
    promoted = spirv_of(counter, *device_views)
    monkeypatch.setattr(config, "PROMOTE", 0)
    without, _ = run_both(counter, buffer, views)
    plain = spirv_of(counter, *device_views)
    assert promoted.count("OpSelectionMerge") > plain.count("OpSelectionMerge")
    np.testing.assert_array_equal(with_pass, without)


def two_paths(states, out, t, mode):
    # As inlined draws leave a generator's state: its address computed again in each arm
    for i in range(8):
        if mode == 1:
            x = states[t, 0]
            x ^= x << np.uint64(13)
            x ^= x >> np.uint64(7)
            states[t, 0] = x
            out[i] = x
        else:
            y = states[t, 0]
            y ^= y << np.uint64(5)
            y ^= y >> np.uint64(3)
            states[t, 0] = y + states[t, 1]
            out[i] = y


@pytest.mark.parametrize("mode", [1, 2])
@pytest.mark.parametrize("overlap", [False, True])
def test_an_element_reached_from_both_arms_of_a_branch(mode, overlap):
    buffer = np.arange(1, 60, dtype=np.uint64)
    views = lambda b: (b[0:8].reshape(4, 2), b[0:40] if overlap else b[8:48], 2, mode)  # noqa: E731
    expect_as_njit(two_paths, buffer, views, 1)


@pytest.mark.parametrize("hidden_ranges", [0, launchers.HIDE_ON_RANGE_ASSUMING_VENDORS])
def test_the_published_3d_random_kernel_keeps_its_state(monkeypatch, hidden_ranges):
    # numba-cuda's random_3d example (benchmarks/corpus): a generator's state in registers
    # across the grid-stride loops, also where NVIDIA's hidden ranges make the state's index
    # arithmetic 40 operations deep; the draws as with the pass off, bit for bit.
    monkeypatch.setattr(config, "HIDE_INT_RANGES", hidden_ranges)

    def random_3d(arr, rng_states):
        startx, starty, startz = cuda.grid(3)
        stridex, stridey, stridez = cuda.gridsize(3)
        tid = startz * stridey * stridex + starty * stridex + startx
        for i in range(startz, arr.shape[0], stridez):
            for j in range(starty, arr.shape[1], stridey):
                for k in range(startx, arr.shape[2], stridex):
                    arr[i, j, k] = xoroshiro128p_uniform_float32(rng_states, tid)

    def draws(promote):
        monkeypatch.setattr(config, "PROMOTE", promote)
        kernel = cuda.jit(random_3d)
        arr = cuda.device_array((12, 10, 8), np.float32)
        states = create_xoroshiro128p_states(4**3, seed=7)
        kernel[(2, 2, 2), (2, 2, 2)](arr, states)
        (compiled,) = kernel.specialisations.values()
        return arr.copy_to_host(), states.copy_to_host(), compiled.promoted_elements

    arr, states, elements = draws(1)
    plain_arr, plain_states, none = draws(0)
    assert (elements, none) == (2, 0)
    np.testing.assert_array_equal(arr, plain_arr)
    np.testing.assert_array_equal(states, plain_states)
