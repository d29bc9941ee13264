"""Many Python threads on one device at once: launches, copies, allocations, waits.

Each thread works on its own arrays (sharing one read-only input) and checks
every result against NumPy, while the others do the same and some call
``synchronize`` and record events. Before the runtime guarded its own state,
two threads launching at once crashed the process (SIGSEGV/SIGBUS), and a
launch racing ``synchronize`` raised "waiting for a batch that was never
recorded".

``python tests/device/test_threads.py [rounds]`` runs the stress test alone and
prints how long each round took.
"""

import random
import sys
import threading
import time

import numpy as np
import pytest

import numba_vulkan as nv
from numba_vulkan import runtime as rt

THREADS = 8


def _kernels():
    """Fresh dispatchers, so that the threads also race to compile and specialise them."""

    @nv.jit
    def affine(a, x, out):
        i = nv.global_id(0)
        if i < out.size:
            out[i] = x[i] * a + i

    @nv.jit
    def add(x, y, out):
        i = nv.global_id(0)
        if i < out.size:
            out[i] = x[i] + y[i]

    return affine, add


def _worker(seed, affine, add, shared_x, shared_host, iterations, barrier):
    rng = random.Random(seed)
    nrng = np.random.default_rng(seed)
    device = rt.get_device()
    barrier.wait()
    for it in range(iterations):
        op = rng.randrange(7)
        n = rng.choice((1, 63, 64, 1000, 4097))
        a = np.int32(rng.randrange(-50, 50))
        if op == 0:
            # Device arrays only: asynchronous launches, chained, then one read.
            x = rt.to_device(nrng.integers(-1000, 1000, n, dtype=np.int32))
            out = rt.device_array(n, np.int32)
            out2 = rt.device_array(n, np.int32)
            affine.forall(n)(a, x, out)
            add.forall(n)(out, x, out2)
            hx = x.copy_to_host()
            expect = hx * a + np.arange(n, dtype=np.int32)
            np.testing.assert_array_equal(out2.copy_to_host(), expect + hx)
        elif op == 1:
            # NumPy arguments: copied in, launched, copied back.
            hx = nrng.integers(-1000, 1000, n, dtype=np.int32)
            out = np.zeros(n, np.int32)
            affine.forall(n)(a, hx, out)
            np.testing.assert_array_equal(out, hx * a + np.arange(n, dtype=np.int32))
        elif op == 2:
            # The shared read-only input, with a launch configuration by brackets.
            m = shared_host.size
            out = rt.device_array(m, np.int32)
            affine[(m + 63) // 64, 64](a, shared_x, out)
            np.testing.assert_array_equal(
                out.copy_to_host(), shared_host * a + np.arange(m, dtype=np.int32)
            )
        elif op == 3:
            # Device-side copies and element access.
            hx = nrng.integers(-1000, 1000, n, dtype=np.int32)
            x = rt.to_device(hx)
            y = x.copy()
            np.testing.assert_array_equal(y.copy_to_host(), hx)
            k = rng.randrange(n)
            y[k] = 7
            assert y[k] == 7
        elif op == 4:
            # Allocations of many sizes, written and read back (pool reuse across threads).
            arrays = []
            for _ in range(rng.randrange(1, 6)):
                m = rng.choice((1, 10, 300, 5000, 70000))
                host = nrng.integers(0, 1 << 30, m, dtype=np.int64).astype(np.int32)
                arrays.append((rt.to_device(host), host))
            for d, host in arrays:
                np.testing.assert_array_equal(d.copy_to_host(), host)
        elif op == 5:
            nv.synchronize()
        else:
            device.synchronize()
            if device.info.timestamp_bits:
                start = nv.event().record()
                out = rt.device_array(n, np.int32)
                affine.forall(n)(a, shared_x[:n], out)
                end = nv.event().record()
                end.synchronize()
                assert start.elapsed_time(end) >= 0.0


def run_stress(threads=THREADS, iterations=40, seed=0):
    """Run the workers; returns the seconds taken. Raises the first worker failure."""
    affine, add = _kernels()
    shared_host = np.arange(5000, dtype=np.int32) - 2500
    shared_x = rt.to_device(shared_host)
    barrier = threading.Barrier(threads)
    errors = []

    def run(i):
        try:
            _worker(seed * 1000 + i, affine, add, shared_x, shared_host, iterations, barrier)
        except BaseException as e:  # noqa: BLE001 (reported below with its thread)
            errors.append((i, e))
            barrier.abort()

    pool = [threading.Thread(target=run, args=(i,)) for i in range(threads)]
    t0 = time.perf_counter()
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    elapsed = time.perf_counter() - t0
    for i, e in errors:
        if not isinstance(e, threading.BrokenBarrierError):
            raise AssertionError(f"thread {i} failed: {e!r}") from e
    assert not errors
    nv.synchronize()
    return elapsed


def test_threads_launch_copy_allocate_and_synchronize(device):
    run_stress(seed=1)


def test_threads_share_one_launch_configuration(device):
    """One LaunchConfig and one Launcher used by every thread at once (the parameter block)."""
    affine, _ = _kernels()
    n = 2048
    launch = affine.forall(n)
    hosts = [np.arange(n, dtype=np.int32) * (t + 1) for t in range(THREADS)]
    launch(np.int32(1), rt.to_device(hosts[0]), rt.device_array(n, np.int32))  # specialise
    barrier = threading.Barrier(THREADS)
    errors = []

    def run(t):
        try:
            x = rt.to_device(hosts[t])
            outs = [rt.device_array(n, np.int32) for _ in range(4)]
            barrier.wait()
            for rep in range(50):
                out = outs[rep % 4]
                launch(np.int32(t + rep), x, out)
                if rep % 4 == 3:
                    for k, o in enumerate(outs):
                        a = t + rep - 3 + k
                        expect = hosts[t] * a + np.arange(n, dtype=np.int32)
                        np.testing.assert_array_equal(o.copy_to_host(), expect)
        except BaseException as e:  # noqa: BLE001
            errors.append((t, e))
            barrier.abort()

    pool = [threading.Thread(target=run, args=(t,)) for t in range(THREADS)]
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    assert not errors, errors


def test_launches_race_synchronize(device):
    """The case that raised "waiting for a batch that was never recorded"."""
    affine, _ = _kernels()
    n = 512
    x = rt.to_device(np.arange(n, dtype=np.int32))
    stop = threading.Event()
    errors = []

    def syncer():
        try:
            while not stop.is_set():
                nv.synchronize()
        except BaseException as e:  # noqa: BLE001
            errors.append(e)

    def launcher(t):
        try:
            out = rt.device_array(n, np.int32)
            for rep in range(100):
                affine.forall(n)(np.int32(rep), x, out)
            np.testing.assert_array_equal(
                out.copy_to_host(), np.arange(n, dtype=np.int32) * 100
            )
        except BaseException as e:  # noqa: BLE001
            errors.append(e)

    syncers = [threading.Thread(target=syncer) for _ in range(2)]
    launchers = [threading.Thread(target=launcher, args=(t,)) for t in range(6)]
    for t in syncers + launchers:
        t.start()
    for t in launchers:
        t.join()
    stop.set()
    for t in syncers:
        t.join()
    assert not errors, errors


def test_launches_keep_the_gil_unless_they_wait(device):
    """A launch that returns at once keeps the GIL (handing it to another thread and back
    cost Dask's threaded scheduler more than the launches: bind/gil.h); one that waits for
    the device hands it over while it waits (here the device makes each launch wait for its
    kernel, as NUMBA_VULKAN_SYNC=1 does; a wait for room in the queue takes the same path,
    Device::WaitSemaphore). A thread counting in Python sees both: its count stands still
    across a launch on an idle device and moves across one that waits. Python takes the GIL
    from a thread by force only past the switch interval, 0.5 s here, longer than the kernel
    takes, so only a wait that lets go of it lets the count move."""

    @nv.jit
    def slow(out, n):
        i = nv.global_id(0)
        if i < out.size:
            acc = 0
            for k in range(n):
                acc += k ^ i
            out[i] = acc

    out = rt.device_array(1 << 14, np.int64)
    slow.forall(out.size)(out, 1)  # compiled
    nv.synchronize()
    core = rt.get_device()._core
    count = [0]
    stop = threading.Event()

    def counter():
        while not stop.is_set():
            count[0] += 1

    interval = sys.getswitchinterval()
    sys.setswitchinterval(0.5)
    thread = threading.Thread(target=counter)
    thread.start()
    try:
        while count[0] == 0:
            time.sleep(0.001)
        nv.synchronize()
        before = count[0]
        slow.forall(out.size)(out, 1)  # the device idle: submitted at once, no wait
        kept = count[0] - before
        core.sync_launches = True
        try:
            before = count[0]
            slow.forall(out.size)(out, 4000)  # waits for its kernel (tens of ms)
            moved = count[0] - before
        finally:
            core.sync_launches = False
    finally:
        stop.set()
        thread.join()
        sys.setswitchinterval(interval)
    nv.synchronize()
    assert kept == 0
    assert moved > 0
    np.testing.assert_array_equal(out.copy_to_host()[:3],
                                  [sum(k ^ i for k in range(4000)) for i in range(3)])

if __name__ == "__main__":
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 10
    for r in range(rounds):
        print(f"round {r}: {run_stress(seed=r):.2f} s", flush=True)
