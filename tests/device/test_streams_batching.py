"""Launches on a stream share submissions (src/core/vk/stream.cc, "the open op"):
whatever waits for one of them, or uses one of their arrays, must submit them first
and be ordered after them.

Most tests first keep the stream busy with a long launch, so that the launches after
it wait in the stream's open op instead of going out one by one. The device's timeout
is set for each test: a wait for work that was never submitted then fails instead of
hanging.
"""

import gc
import threading
import time

import numpy as np
import pytest
from numba import int64
from streams_support import double, plus_one, slow_fill

import numba_vulkan as nv

N = 2048


@nv.jit
def _inc(x):
    i = nv.global_id(0)
    if i < x.size:
        x[i] += 1


@pytest.fixture
def timed_device(device):
    before = device.timeout
    device.timeout = 60.0
    yield device
    device.timeout = before


def _busy(stream):
    """Keep `stream` busy for a while (a launch it submits at once), returning the
    array the launch fills."""
    stream.synchronize()  # caught up: the next launch goes out at once
    # Long enough on a GPU too (an H100 ran 2^15 invocations before the next 200 launches
    # were issued, and each then went out at once to an idle device)
    # On lavapipe 2^19 invocations (about 120 ms): 2^15 gave about 9 ms once the int64
    # `rounds` travelled in 32 bits (a 32-bit loop counter), and a loaded CI machine then
    # issued the 200 launches after the device had gone idle; 2^17 (30 ms) did too on a
    # 2-core machine running a benchmark beside the tests (200 launches at 150 us each)
    n, rounds = (1 << 19 if stream.device.info.kind == "cpu" else 1 << 22), 3000
    big = nv.device_array(n, np.int64)
    slow_fill.forall(n, stream=stream)(big, rounds)
    return big


def _zeros(n=N, dtype=np.int64):
    return nv.to_device(np.zeros(n, dtype))


def test_a_dependent_chain_shares_submissions_and_a_host_read_submits_it(timed_device):
    s = nv.stream()
    a, b = _zeros(), _zeros()
    _busy(s)
    start = s.value
    for k in range(60):  # each reads what the one before wrote, and writes what it read
        if k % 2 == 0:
            plus_one.forall(N, stream=s)(a, b)
        else:
            plus_one.forall(N, stream=s)(b, a)
    # kMaxBatch launches per submission while the stream is busy (lavapipe: 4).
    assert s.value - start <= 60 // 4
    # Read outside streams, without synchronizing: the read submits and waits.
    np.testing.assert_array_equal(a.copy_to_host(), np.full(N, 60))
    np.testing.assert_array_equal(b.copy_to_host(), np.full(N, 59))
    assert a[N - 1] == 60  # a mapped (or staged) element read too
    s.synchronize()
    assert s.query()


def test_the_stream_value_counts_the_open_op(timed_device):
    s = nv.stream()
    x = _zeros()
    _inc.forall(N)(_zeros())  # compiled first: on a GPU, compiling outlasts the busy kernel
    _busy(s)
    v = s.value
    _inc.forall(N, stream=s)(x)
    _inc.forall(N, stream=s)(x)
    assert s.value == v + 1  # both in one op, not yet submitted
    s.synchronize()
    assert s.query() and s.value == v + 1
    np.testing.assert_array_equal(x.copy_to_host(), np.full(N, 2))


def test_events_between_launches(timed_device):
    if timed_device.info.timestamp_bits == 0:
        pytest.skip("no timestamps")
    s, t = nv.stream(), nv.stream()
    a, b = _zeros(), _zeros()
    start, middle, end = nv.event(), nv.event(), nv.event()
    _busy(s)
    start.record(s)
    for _ in range(3):
        _inc.forall(N, stream=s)(a)
    middle.record(s)  # after the three launches: submits them, then its own op
    for _ in range(4):
        _inc.forall(N, stream=s)(b)
    end.record(s)
    middle.synchronize()
    assert middle.query()
    # Another stream reads both: it waits for s's work that wrote them.
    out = nv.device_array(N, np.int64)
    plus_one.forall(N, stream=t)(b, out)
    plus_one.forall(N, stream=t)(a, out)
    host = out.copy_to_host(stream=t)
    t.synchronize()
    np.testing.assert_array_equal(host, np.full(N, 4))
    end.synchronize()
    assert 0 <= start.elapsed_time(middle) <= start.elapsed_time(end)
    np.testing.assert_array_equal(b.copy_to_host(), np.full(N, 4))


@pytest.mark.parametrize("pinned", [True, False])
def test_a_copy_after_launches_is_ordered_after_them(timed_device, pinned):
    s = nv.stream()
    x = _zeros()
    _busy(s)
    for _ in range(5):
        _inc.forall(N, stream=s)(x)
    out = nv.pinned_array(N, np.int64) if pinned else np.empty(N, np.int64)
    out[:] = -1
    x.copy_to_host(out=out, stream=s)
    double.forall(N, stream=s)(x)  # after the copy: not in what it copied
    back = nv.device_array(N, np.int64)
    back.copy_to_device(x, stream=s)  # a device-to-device copy after a launch
    s.synchronize()
    np.testing.assert_array_equal(out, np.full(N, 5))
    np.testing.assert_array_equal(back.copy_to_host(), np.full(N, 10))


def test_an_array_of_the_open_op_used_outside_streams_and_by_another_stream(timed_device):
    s, t = nv.stream(), nv.stream()
    x = _zeros()
    _busy(s)
    for _ in range(5):
        _inc.forall(N, stream=s)(x)  # x = 5, in s's open op
    double.forall(N)(x)  # outside streams: waits for s (10)
    _inc.forall(N, stream=t)(x)  # t waits for the device's batch (11)
    _inc.forall(N, stream=s)(x)  # s waits for t (12)
    _inc.forall(N, stream=t)(x)  # and t for s again (13)
    out = x.copy_to_host(stream=t)
    t.synchronize()
    np.testing.assert_array_equal(out, np.full(N, 13))
    np.testing.assert_array_equal(x.copy_to_host(), np.full(N, 13))


def test_graph_replay_after_launches(timed_device):
    s = nv.stream()
    x = _zeros()
    with nv.graph(s) as g:
        double.forall(N, stream=s)(x)
    exe = g.instantiate()
    _busy(s)
    for _ in range(3):
        _inc.forall(N, stream=s)(x)  # 3, in the open op
    exe.replay(s)  # after them: 6
    _inc.forall(N, stream=s)(x)  # after the replay: 7
    s.synchronize()
    np.testing.assert_array_equal(x.copy_to_host(), np.full(N, 7))


def test_query_idle_and_the_devices_synchronize_submit_the_open_op(timed_device):
    s = nv.stream()
    x = _zeros()
    deadline = time.monotonic() + 60
    _busy(s)
    _inc.forall(N, stream=s)(x)
    while not s.query():  # each query submits what is open: it finishes
        assert time.monotonic() < deadline, "the stream's query never saw it done"
        time.sleep(0.001)
    _busy(s)
    _inc.forall(N, stream=s)(x)
    while not x._buffer.idle:
        assert time.monotonic() < deadline, "the array never went idle"
        time.sleep(0.001)
    _busy(s)
    _inc.forall(N, stream=s)(x)
    nv.synchronize()  # the device's synchronize waits for streams' open ops too
    assert s.query()
    np.testing.assert_array_equal(x.copy_to_host(), np.full(N, 3))


def test_arrays_dropped_and_a_stream_dropped_with_launches_in_its_open_op(timed_device):
    s = nv.stream()
    keep = _zeros()
    _busy(s)
    for _ in range(3):
        tmp = nv.to_device(np.arange(N, dtype=np.int64))
        _inc.forall(N, stream=s)(tmp)  # the open op keeps tmp's buffer alive
        plus_one.forall(N, stream=s)(tmp, keep)
        del tmp
    gc.collect()
    fresh = [nv.to_device(np.zeros(N, np.int64)) for _ in range(3)]  # the pool's buckets
    del s  # the open op goes out with the release; its work completes
    gc.collect()
    np.testing.assert_array_equal(keep.copy_to_host(), np.arange(N) + 2)
    for f in fresh:
        np.testing.assert_array_equal(f.copy_to_host(), np.zeros(N))
    again = nv.stream()  # may reuse the dropped one's timeline
    _inc.forall(N, stream=again)(keep)
    again.synchronize()
    np.testing.assert_array_equal(keep.copy_to_host(), np.arange(N) + 3)


def test_threads_launching_on_their_own_streams(timed_device):
    shared = _zeros()
    outside = _zeros()
    errors = []
    n_threads, reps = 6, 20

    def work(seed):
        try:
            s = nv.stream()
            own = _zeros()
            for rep in range(reps):
                for _ in range(4):
                    _inc.forall(N, stream=s)(own)
                if rep % n_threads == seed:
                    _inc.forall(N, stream=s)(shared)  # other streams use it too
                if rep % 5 == seed % 5:
                    _inc.forall(N)(outside)  # outside streams
                if rep % 7 == 3:
                    s.synchronize()
            # No synchronize: the read outside streams submits and waits.
            np.testing.assert_array_equal(own.copy_to_host(), np.full(N, 4 * reps))
        except Exception as e:  # noqa: BLE001 (reported by the main thread)
            errors.append(e)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(n_threads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[0]
    expected_shared = sum(1 for k in range(n_threads) for r in range(reps) if r % n_threads == k)
    np.testing.assert_array_equal(shared.copy_to_host(), np.full(N, expected_shared))
    expected_outside = sum(1 for k in range(n_threads) for r in range(reps) if r % 5 == k % 5)
    np.testing.assert_array_equal(outside.copy_to_host(), np.full(N, expected_outside))


@nv.jit
def _add_nine(out, a, b, c, d, e, f, g, h, m):
    # Ten 3D arrays: 320 bytes of parameters, which go through the op's parameter ring.
    i = nv.global_id(0)
    if i < out.size:
        p, r = i // (out.shape[1] * out.shape[2]), i % (out.shape[1] * out.shape[2])
        q, t = r // out.shape[2], r % out.shape[2]
        out[p, q, t] += (a[p, q, t] + b[p, q, t] + c[p, q, t] + d[p, q, t] + e[p, q, t]
                         + f[p, q, t] + g[p, q, t] + h[p, q, t] + m[p, q, t])  # fmt: skip


def test_many_launches_fill_several_ops(timed_device):
    """More launches than an op takes (kMaxBatch), of kernels taking their parameters
    as push constants and from the op's parameter ring: every launch lands once, in
    order."""
    s = nv.stream()
    shape = (3, 4, 5)
    x = nv.to_device(np.zeros(shape, np.int64))
    ones = nv.to_device(np.ones(shape, np.int64))
    dev = timed_device
    ring = _add_nine.compile((int64[:, :, :],) * 10, device=dev)
    assert ring.params_in_buffer == (ring.param_size > dev.info.max_push_constants)
    _busy(s)
    start = s.value
    expected = 0
    for k in range(200):
        if k % 10 == 9:
            double.forall(x.size, stream=s)(x.reshape(-1))
            expected *= 2
        elif k % 3 == 0:
            _add_nine.forall(x.size, stream=s)(x, *(ones,) * 9)
            expected += 9
        else:
            _inc.forall(x.size, stream=s)(x.reshape(-1))
            expected += 1
    assert s.value - start < 200 // 4
    s.synchronize()
    np.testing.assert_array_equal(x.copy_to_host(), np.full(shape, expected))
