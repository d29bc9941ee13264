"""Launch graphs (graphs.py, src/core/vk/graph.cc): replays equal the same launches made one
by one, many replays, new arrays and scalars bound, ordering against launches and copies
outside the graph, barriers decided at capture, and the errors for what a graph cannot hold.
"""

import threading

import numpy as np
import pytest

import numba_vulkan as nv
from numba_vulkan.errors import VulkanGraphError, VulkanSupportError

N = 256


@nv.jit
def _add(x, a):
    i = nv.global_id(0)
    if i < x.size:
        x[i] += a


@nv.jit
def _axpb(src, dst, a, b):
    i = nv.global_id(0)
    if i < dst.size:
        dst[i] = a * src[i] + b


@nv.jit
def _shift(src, dst):
    # dst[i] = src[i - 1] (dst[0] = src[0]): reads another invocation's element.
    i = nv.global_id(0)
    if i < dst.size:
        dst[i] = src[i - 1] if i > 0 else src[0]


@nv.jit
def _slow_add(x, a, rounds):
    # x[i] += a, after a loop that keeps the device busy for a while.
    i = nv.global_id(0)
    if i < x.size:
        acc = np.int64(0)
        for r in range(rounds):
            acc = (acc * 7 + i + r) % 1000003
        if acc != -1:
            x[i] += a


@nv.jit
def _checked_add(x, limit):
    i = nv.global_id(0)
    if i < x.size:
        x[i] += 1
        if x[i] > limit:
            raise ValueError("past the limit")


def _groups(n=N):
    return (n + 63) // 64, 64


def _sequence(x, y, z, s=None):
    """A mix of dependent and independent launches over three arrays."""
    g, l = _groups()
    for k in range(3):
        _add[g, l, s](x, np.float32(k + 1))
        _axpb[g, l, s](x, y, np.float32(0.5), np.float32(k))
        _shift[g, l, s](y, z)
        _add[g, l, s](z, np.float32(1))
        _axpb[g, l, s](z, x, np.float32(2), np.float32(-1))


def _arrays(device, seed=0):
    rng = np.random.default_rng(seed)
    return [nv.to_device(rng.random(N, dtype=np.float32)) for _ in range(3)]


def test_replay_equals_the_launches_one_by_one(device):
    plain = _arrays(device)
    _sequence(*plain)
    expected = [a.copy_to_host() for a in plain]

    captured = _arrays(device)
    before = [a.copy_to_host() for a in captured]
    s = nv.stream()
    with nv.graph(s) as g:
        _sequence(*captured, s)
    assert g.commands == 15
    # Nothing ran during the capture.
    for a, b in zip(captured, before):
        np.testing.assert_array_equal(a.copy_to_host(), b)
    exe = g.instantiate()
    exe.replay()
    s.synchronize()
    for a, e in zip(captured, expected):
        np.testing.assert_array_equal(a.copy_to_host(), e)


def test_many_replays_record_once(device):
    x = nv.to_device(np.zeros(N, np.float32))
    s = nv.stream()
    with nv.graph(s) as g:
        for _ in range(20):
            _add[_groups()[0], 64, s](x, np.float32(1))
    exe = g.instantiate()
    for _ in range(50):
        exe.replay()
    s.synchronize()
    np.testing.assert_array_equal(x.copy_to_host(), np.full(N, 1000, np.float32))
    assert exe.records == 1  # every replay after the first submitted the same command buffer
    assert exe.barriers == 19  # a chain: one barrier between each pair of launches


def test_barriers_only_between_dependent_commands(device):
    a, b, c = (nv.to_device(np.zeros(N, np.float32)) for _ in range(3))
    s = nv.stream()
    g0, l0 = _groups()
    with nv.graph(s) as g:
        for x in (a, b, c):  # independent: no barrier
            _add[g0, l0, s](x, np.float32(1))
        _axpb[g0, l0, s](a, b, np.float32(1), np.float32(0))  # reads a, writes b: one
        _axpb[g0, l0, s](a, c, np.float32(1), np.float32(0))  # reads a again, writes c: none
    exe = g.instantiate()
    assert exe.barriers == 1
    exe.replay()
    s.synchronize()
    for x in (a, b, c):
        np.testing.assert_array_equal(x.copy_to_host(), np.ones(N, np.float32))


def test_a_long_chain_of_small_kernels(device):
    x = nv.to_device(np.zeros(64, np.int32))
    s = nv.stream()
    with nv.graph(s) as g:
        for _ in range(1000):
            _add[1, 64, s](x, np.int32(1))
    exe = g.instantiate()
    exe.replay()
    exe.replay()
    s.synchronize()
    np.testing.assert_array_equal(x.copy_to_host(), np.full(64, 2000, np.int32))


def test_rebinding_arrays(device):
    x, y, z = _arrays(device, seed=1)
    s = nv.stream()
    with nv.graph(s) as g:
        _sequence(x, y, z, s)
    exe = g.instantiate()
    assert len(exe.parameters) == 3 and exe.parameters[0] is x

    others = _arrays(device, seed=2)
    plain = [nv.to_device(a.copy_to_host()) for a in others]
    _sequence(*plain)
    kept = [a.copy_to_host() for a in (x, y, z)]
    for old, new in zip((x, y, z), others):
        exe.rebind(old, new)
    assert exe.bound(x) is others[0]
    exe.replay()
    s.synchronize()
    for a, p in zip(others, plain):
        np.testing.assert_array_equal(a.copy_to_host(), p.copy_to_host())
    for a, k in zip((x, y, z), kept):  # the captured arrays were left alone
        np.testing.assert_array_equal(a.copy_to_host(), k)
    assert exe.records == 1  # recorded at the first replay, with the new bindings


def test_rebinding_a_declared_scalar(device):
    x = nv.to_device(np.zeros(N, np.float32))
    s = nv.stream()
    with nv.graph(s) as g:
        a = g.scalar(np.float32(1))
        for _ in range(4):
            _add[_groups()[0], 64, s](x, a)
        _add[_groups()[0], 64, s](x, np.float32(100))  # a constant
    exe = g.instantiate()
    exe.replay()
    exe.rebind(a, 2.5).replay()  # a Python float, converted to float32
    s.synchronize()
    assert exe.records == 2
    np.testing.assert_array_equal(x.copy_to_host(), np.full(N, 4 + 100 + 10 + 100, np.float32))


def test_capture_a_function(device):
    def step(x, y, a, stream):
        g, l = _groups()
        _add[g, l, stream](x, a)
        _axpb[g, l, stream](x, y, 2.0, 1.0)

    x = nv.to_device(np.zeros(N, np.float64))
    y = nv.to_device(np.zeros(N, np.float64))
    f = nv.capture(step, x, y, 1.0)
    f(x, y, 1.0)
    f.graph.stream.synchronize()
    np.testing.assert_array_equal(y.copy_to_host(), np.full(N, 3.0))
    u = nv.to_device(np.full(N, 10.0))
    v = nv.to_device(np.zeros(N))
    f(u, v, 5.0)
    f(x, y, 3.0)
    f.graph.stream.synchronize()
    np.testing.assert_array_equal(v.copy_to_host(), np.full(N, 31.0))
    np.testing.assert_array_equal(y.copy_to_host(), np.full(N, 9.0))


def test_ordered_against_launches_and_copies_outside_the_graph(device):
    x = nv.to_device(np.zeros(N, np.float32))
    y = nv.to_device(np.zeros(N, np.float32))
    s = nv.stream()
    g0, l0 = _groups()
    with nv.graph(s) as g:
        _slow_add[g0, l0, s](x, np.float32(10), 2000)
        _axpb[g0, l0, s](x, y, np.float32(2), np.float32(0))
    exe = g.instantiate()
    for round_ in range(3):
        x.copy_to_device(np.full(N, round_, np.float32))
        _add[g0, l0](x, np.float32(1))  # in the device's open batch: submitted before the replay
        exe.replay()
        _add[g0, l0](y, np.float32(1))  # after the replay: waits for it on the device
        np.testing.assert_array_equal(y.copy_to_host(),
                                      np.full(N, 2 * (round_ + 11) + 1, np.float32))


def test_replays_in_flight_with_new_bindings(device):
    arrays = [nv.to_device(np.full(N, k, np.float32)) for k in range(5)]
    s = nv.stream()
    with nv.graph(s) as g:
        _slow_add[_groups()[0], 64, s](arrays[0], np.float32(1), 3000)
    exe = g.instantiate()
    exe.replay()
    for a in arrays[1:]:  # each rebinding records a command buffer no replay in flight uses
        exe.rebind(arrays[0], a).replay()
    exe.rebind(arrays[0], arrays[0]).replay()
    s.synchronize()
    for k, a in enumerate(arrays):
        np.testing.assert_array_equal(a.copy_to_host(), np.full(N, k + 1 + (k == 0), np.float32))


def test_replays_from_threads(device):
    x = nv.to_device(np.zeros(N, np.int32))
    s = nv.stream()
    with nv.graph(s) as g:
        _add[_groups()[0], 64, s](x, np.int32(1))
    exe = g.instantiate()
    streams = [nv.stream() for _ in range(4)]

    def replay(stream):
        for _ in range(25):
            exe.replay(stream)

    threads = [threading.Thread(target=replay, args=(st,)) for st in streams]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    np.testing.assert_array_equal(x.copy_to_host(), np.full(N, 100, np.int32))


def test_the_graph_keeps_its_arrays(device):
    s = nv.stream()
    x = nv.to_device(np.zeros(N, np.float32))
    with nv.graph(s) as g:
        _add[_groups()[0], 64, s](x, np.float32(3))
    exe = g.instantiate()
    del g, x
    for _ in range(4):
        nv.device_array(N, np.float32)  # allocations that would reuse a freed buffer
    exe.replay()
    s.synchronize()
    (key,) = exe.parameters
    np.testing.assert_array_equal(key.copy_to_host(), np.full(N, 3, np.float32))


def test_copies_and_events_in_a_graph(device):
    x = nv.to_device(np.zeros(N, np.float32))
    y = nv.device_array(N, np.float32)
    src = nv.pinned_array(N, np.float32)
    out = nv.pinned_array(N, np.float32)
    s = nv.stream()
    timed = device.info.timestamp_bits > 0
    start, end = (nv.event(), nv.event()) if timed else (None, None)
    with nv.graph(s) as g:
        if timed:
            start.record(s)
        x.copy_to_device(src, stream=s)
        _add[_groups()[0], 64, s](x, np.float32(1))
        y.copy_to_device(x, stream=s)
        _add[_groups()[0], 64, s](y, np.float32(1))
        y.copy_to_host(out, stream=s)
        if timed:
            end.record(s)
    exe = g.instantiate()
    for k in range(3):
        src[:] = np.arange(N) * k  # a replay copies what the pinned array holds then
        exe.replay()
        s.synchronize()
        np.testing.assert_array_equal(out, np.arange(N, dtype=np.float32) * k + 2)
        if timed:
            assert start.elapsed_time(end) >= 0
    with pytest.raises(VulkanGraphError, match="copy captured"):
        exe.rebind(x, nv.device_array(N, np.float32))


def test_kernel_exceptions_are_reported_after_a_replay(device):
    x = nv.to_device(np.zeros(N, np.float32))
    s = nv.stream()
    with nv.graph(s) as g:
        _checked_add[_groups()[0], 64, s](x, np.float32(2))
    exe = g.instantiate()
    exe.replay()
    exe.replay()
    s.synchronize()
    exe.replay()
    with pytest.raises(ValueError, match="past the limit"):
        s.synchronize()


def test_launches_after_the_capture_run(device):
    x = nv.to_device(np.zeros(N, np.float32))
    s = nv.stream()
    with nv.graph(s) as g:
        _add[_groups()[0], 64, s](x, np.float32(1))
    _add[_groups()[0], 64, s](x, np.float32(5))
    s.synchronize()
    np.testing.assert_array_equal(x.copy_to_host(), np.full(N, 5, np.float32))
    assert g.commands == 1


# ---- what a graph cannot hold ----------------------------------------------------------


def _capturing(body):
    s = nv.stream()
    g = nv.graph(s)
    with pytest.raises(VulkanGraphError) as info, g:
        body(s)
    assert not s._core.capturing  # the capture ended with the exception
    with pytest.raises(VulkanGraphError, match="ended with an exception"):
        g.instantiate()
    return str(info.value)


def test_numpy_arguments_are_refused(device):
    host = np.zeros(N, np.float32)
    message = _capturing(lambda s: _add[_groups()[0], 64, s](host, np.float32(1)))
    assert "NumPy array" in message and "to_device" in message


def test_waits_inside_a_capture_are_refused(device):
    assert "synchronize" in _capturing(lambda s: s.synchronize())
    assert "query" in _capturing(lambda s: s.query())


def test_host_callbacks_are_refused(device):
    assert "add_callback" in _capturing(lambda s: s.add_callback(lambda *a: None))


def test_pageable_copies_are_refused(device):
    x = nv.to_device(np.zeros(N, np.float32))
    host = np.zeros(N, np.float32)
    assert "pinned" in _capturing(lambda s: x.copy_to_host(host, stream=s))
    assert "pinned" in _capturing(lambda s: x.copy_to_device(host, stream=s))
    assert "pinned" in _capturing(lambda s: nv.to_device(host, stream=s))


def test_rebinding_errors(device):
    x = nv.to_device(np.zeros(N, np.float32))
    y = nv.to_device(np.zeros(N, np.float32))
    s = nv.stream()
    with nv.graph(s) as g:
        n = g.scalar(np.int32(3))
        _axpb[_groups()[0], 64, s](x, y, np.float32(2), np.float32(1))
        _add[_groups()[0], 64, s](nv.to_device(np.zeros(N, np.int32)), n)
    exe = g.instantiate()
    with pytest.raises(VulkanGraphError, match="shape"):
        exe.rebind(x, nv.to_device(np.zeros(N + 1, np.float32)))
    with pytest.raises(VulkanGraphError, match="dtype"):
        exe.rebind(x, nv.to_device(np.zeros(N, np.float64)))
    with pytest.raises(VulkanGraphError, match="strides"):
        exe.rebind(x, nv.to_device(np.zeros(2 * N, np.float32))[::2])
    with pytest.raises(VulkanGraphError, match="device array"):
        exe.rebind(x, np.zeros(N, np.float32))
    with pytest.raises(VulkanGraphError, match="no parameter"):
        exe.rebind(nv.to_device(np.zeros(N, np.float32)), x)
    with pytest.raises(VulkanGraphError, match="int32"):
        exe.rebind(n, 1.5)
    with pytest.raises(VulkanGraphError, match="does not fit"):
        exe.rebind(n, 2**40)
    with pytest.raises(VulkanGraphError, match="bool"):
        g.scalar(True)
    # Reading and writing one array where the capture had two: refused at the replay.
    exe.rebind(y, x)
    with pytest.raises(VulkanSupportError, match="same memory"):
        exe.replay()
    exe.rebind(y, y)
    exe.replay()
    s.synchronize()


def test_capture_state_errors(device):
    s = nv.stream()
    x = nv.to_device(np.zeros(N, np.float32))
    g = nv.graph(s).begin()
    with pytest.raises(VulkanGraphError, match="still capturing"):
        g.instantiate()
    with pytest.raises(VulkanGraphError, match="already"):
        nv.graph(s).begin()
    _add[_groups()[0], 64, s](x, np.float32(1))
    g.end()
    with pytest.raises(VulkanGraphError, match="captures once"):
        g.begin()
    exe = g.instantiate()
    with nv.graph(s), pytest.raises(VulkanGraphError, match="into a capture"):
        exe.replay(s)
    with pytest.raises(VulkanGraphError, match="reaches no captured launch"):
        nv.capture(lambda x, a, stream: _add[1, 64, stream](x, a + 1), x, 1.0)


def test_another_devices_stream_is_refused(device):
    if len(nv.list_devices()) < 2:
        pytest.skip("one device")
    x = nv.to_device(np.zeros(N, np.float32))
    s = nv.stream()
    with nv.graph(s) as g:
        _add[_groups()[0], 64, s](x, np.float32(1))
    other = nv.stream(1)
    with pytest.raises(VulkanGraphError, match="another device"):
        g.instantiate().replay(other)


# ---- the numba.cuda layer ---------------------------------------------------------------


def test_cuda_graph_builder_and_stream_capture(device):
    from numba_vulkan import cuda

    @cuda.jit
    def inc(x):
        i = cuda.grid(1)
        if i < x.size:
            x[i] += 1

    d = cuda.to_device(np.zeros(N))
    builder = cuda.create_graph_builder()
    builder.begin_building()
    assert builder.is_building
    inc[_groups()[0], 64, builder](d)
    inc[_groups()[0], 64, builder](d)
    graph = builder.end_building().complete()
    s = cuda.stream()
    graph.launch(s)
    graph.launch(s)
    s.synchronize()
    np.testing.assert_array_equal(d.copy_to_host(), np.full(N, 4.0))

    s2 = cuda.stream()
    cuda.begin_capture(s2)
    inc[_groups()[0], 64, s2](d)
    cuda.end_capture(s2).instantiate().launch(s2)
    s2.synchronize()
    np.testing.assert_array_equal(d.copy_to_host(), np.full(N, 5.0))
    with pytest.raises(VulkanGraphError, match="begin_capture"):
        cuda.end_capture(s2)


@nv.jit
def _add_int(x, n):
    i = nv.global_id(0)
    if i < x.size:
        x[i] += n


def test_rebinding_an_int64_scalar_beyond_the_captured_slot(device):
    """int64 scalars that fit int32 travel in 32 bits (docs/narrowing.md): a graph captured
    with such a value refuses one beyond int32 with the reason; captured with a value beyond
    int32, it takes any int64."""
    x = nv.to_device(np.zeros(N, np.int64))
    s = nv.stream()
    with nv.graph(s) as g:
        n = g.scalar(np.int64(5))
        _add_int[_groups()[0], 64, s](x, n)
    exe = g.instantiate()
    exe.rebind(n, -(2**31)).replay()
    with pytest.raises(VulkanGraphError, match="does not fit the captured kernel's 32-bit"):
        exe.rebind(n, 2**31)
    with nv.graph(s) as g:
        big = g.scalar(np.int64(2**40))
        _add_int[_groups()[0], 64, s](x, big)
    exe = g.instantiate()
    exe.replay()
    exe.rebind(big, 7).replay()
    s.synchronize()
    np.testing.assert_array_equal(x.copy_to_host(), np.full(N, -(2**31) + 2**40 + 7, np.int64))
