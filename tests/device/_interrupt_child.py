"""Child process for test_interrupt.py: Ctrl-C during a wait, timeouts, device loss.

``python _interrupt_child.py MODE`` prints one JSON line. Modes:

- ``synchronize``, ``copy_to_host``, ``event``, ``launch``, ``stream`` (the work
  on a stream, waited for by ``Stream.synchronize``): queue seconds of
  work (a kernel looping 10,000 times in each of 65,536 invocations, launched
  repeatedly: lavapipe ends loops after 65,535 iterations per invocation, so the
  work is made long by invocations and launches, not by one long loop), send
  SIGINT to itself after a delay and wait in that way; reports the seconds from
  the signal to the KeyboardInterrupt, then checks that the device still runs a
  kernel correctly.
- ``timeout``: about 2 s of work (long_launch: on a GPU without lavapipe's loop
  cap the loop, not the invocations, grows with the device's speed) waited for
  with ``Device.timeout`` at 0.3 s; the wait must raise VulkanTimeoutError, and
  the device must work afterwards.
- ``lost``: marks the device lost; every later call must raise
  VulkanDeviceLostError.
"""

import json
import os
import signal
import sys
import threading
import time

import numpy as np

import numba_vulkan as nv
from numba_vulkan import errors

N = 1 << 16
LOOP = 10_000  # iterations per invocation, well below lavapipe's 65,535
LAUNCHES = 5


@nv.jit
def spin(out, n):
    i = nv.global_id(0)
    if i < out.size:
        acc = np.int32(i)
        for k in range(n):
            acc = acc * np.int32(1103515245) + np.int32(k)
        out[i] = acc


@nv.jit
def affine(a, x, out):
    i = nv.global_id(0)
    if i < out.size:
        out[i] = x[i] * a + i


def _spin_expected(n, loop):
    acc = np.arange(n, dtype=np.int64)
    for k in range(loop):
        acc = (acc * 1103515245 + k) & 0xFFFFFFFF
    return acc.astype(np.uint32).view(np.int32)


def device_works():
    """A fresh launch gives the right answer (the device survived)."""
    x = np.arange(1000, dtype=np.int32)
    out = np.zeros(1000, np.int32)
    affine.forall(1000)(np.int32(3), x, out)
    return bool((out == x * 3 + np.arange(1000)).all())


def work_size(target_s=0.5):
    """Invocations per launch so that one launch takes about `target_s` on this device:
    N on lavapipe; a fast GPU (the H200 runs N invocations in well under a millisecond)
    gets up to 4096 times more, so the signal still finds queued work."""
    out = nv.device_array(N, np.int32)
    spin.forall(N)(out, np.int32(1))  # compile before timing anything
    nv.synchronize()
    seconds = float("inf")
    for _ in range(3):  # the fastest: other processes on the device only slow it down
        start = time.perf_counter()
        spin.forall(N)(out, np.int32(LOOP))
        nv.synchronize()
        seconds = min(seconds, time.perf_counter() - start)
    return N * max(1, min(4096, int(target_s / max(seconds, 1e-6))))


def queue_work(out, stream=None):
    for _ in range(LAUNCHES):
        spin.forall(out.size, stream=stream)(out, np.int32(LOOP))


def interrupt(mode):
    device = nv.get_device()
    n = work_size()
    out = nv.device_array(n, np.int32)
    fired = {}

    def fire():
        # Well inside the queued work (about 2.5 s, or more where the calibration ran
        # alongside other processes' work): 0.5 s left too little where another
        # process slowed the calibration down several times over.
        time.sleep(0.1)
        fired["t"] = time.perf_counter()
        os.kill(os.getpid(), signal.SIGINT)

    stream = nv.stream() if mode == "stream" else None
    if mode != "launch":
        queue_work(out, stream)
    start = time.perf_counter()
    threading.Thread(target=fire, daemon=True).start()
    caught = None
    try:
        if mode == "synchronize":
            nv.synchronize()
        elif mode == "copy_to_host":
            out.copy_to_host()
        elif mode == "event":
            nv.event().record().synchronize()
        elif mode == "stream":
            stream.synchronize()
        elif mode == "launch":
            # Launches block once MAX_IN_FLIGHT batches are queued: a wait for a slot.
            # Shorter launches (N // 16 invocations), or draining them takes minutes.
            for _ in range(10_000):
                spin.forall(n // 16)(out, np.int32(LOOP))
        caught = "none"
    except KeyboardInterrupt:
        caught = "KeyboardInterrupt"
    end = time.perf_counter()
    result = {
        "mode": mode,
        "caught": caught,
        "latency_s": end - fired["t"] if "t" in fired else None,
        "waited_s": end - start,
    }
    t = time.perf_counter()
    device.synchronize()  # the queued work finishes normally
    result["drain_s"] = time.perf_counter() - t
    result["result_ok"] = bool(
        (out.copy_to_host()[:256] == _spin_expected(256, LOOP)).all()
    )
    result["device_works"] = device_works()
    return result


def _launch_seconds(out, n, loop):
    """The fastest of two launches of `n` invocations of spin looping `loop` times."""
    seconds = float("inf")
    for _ in range(2):  # other processes on the device only slow it down
        start = time.perf_counter()
        spin.forall(n)(out, np.int32(loop))
        nv.synchronize()
        seconds = min(seconds, time.perf_counter() - start)
    return seconds


def long_launch(target_s):
    """(invocations, loop count) of a launch of spin that takes about `target_s` here.

    Measured on a launch of at least 50 ms, so that the launch's own latency (tens of
    microseconds, all that N invocations of LOOP iterations cost on an H200) does not
    pass for the device's speed. Where the driver caps loops (lavapipe: 65,535
    iterations per invocation) the loop stays at LOOP and the invocations grow; elsewhere
    the loop grows instead: a GPU runs N invocations at once, so the launch lasts as
    long as one invocation's loop, and a longer loop needs no larger array."""
    device = nv.get_device()
    capped = device.info.loop_iteration_limit is not None
    n, loop = N, LOOP
    out = nv.device_array(64 * N if capped else N, np.int32)
    spin.forall(N)(out, np.int32(1))  # compile before timing anything
    nv.synchronize()
    while True:
        seconds = _launch_seconds(out, n, loop)
        if seconds >= 0.05 or (capped and n >= 16 * N) or loop >= 1 << 27:
            break
        if capped:
            n *= 4
        else:
            loop *= 8
    scale = target_s / max(seconds, 1e-6)
    if capped:
        return min(64 * N, max(N, int(n * scale))), loop
    return n, min(2**31 - 1, max(LOOP, int(loop * scale)))


TIMEOUT_S = 0.3
TIMEOUT_LAUNCHES = 4  # of about 0.5 s each: 2 s queued, well past the timeout


def timeout():
    """The wait for 2 s of queued work (as this process measures the device) ends with
    VulkanTimeoutError after TIMEOUT_S: the work outlasts the timeout on any device even
    where the measurement ran alongside other processes' work and came out several times
    too slow."""
    device = nv.get_device()
    n, loop = long_launch(0.5)
    out = nv.device_array(n, np.int32)
    for _ in range(TIMEOUT_LAUNCHES):
        spin.forall(n)(out, np.int32(loop))
    device.timeout = TIMEOUT_S  # after queueing: a launch waiting for a slot must not time out
    start = time.perf_counter()
    try:
        nv.synchronize()
        caught, message = "none", ""
    except errors.VulkanTimeoutError as e:
        caught, message = type(e).__name__, str(e)
    waited = time.perf_counter() - start
    device.timeout = 0
    device.synchronize()
    return {
        "caught": caught,
        "message": message,
        "waited_s": waited,
        "invocations": n,
        "loop": loop,
        "is_timeout_error": isinstance(errors.VulkanTimeoutError("x"), TimeoutError),
        "device_works": device_works(),
    }


def lost():
    device = nv.get_device()
    x = nv.to_device(np.arange(10, dtype=np.int32))
    assert device_works()
    device._core._simulate_device_lost()
    calls = {
        "launch": lambda: affine.forall(10)(np.int32(1), x, x),
        "numpy launch": device_works,
        "synchronize": nv.synchronize,
        "copy_to_host": x.copy_to_host,
        "to_device": lambda: nv.to_device(np.zeros(3)),
        "device_array": lambda: nv.device_array(3),
        "event": lambda: nv.event().record(),
    }
    outcome = {}
    for name, call in calls.items():
        for _ in range(2):  # and again: the loss is permanent
            try:
                call()
                outcome[name] = "no error"
            except errors.VulkanDeviceLostError as e:
                outcome[name] = str(e)
            except Exception as e:  # noqa: BLE001 (reported to the test)
                outcome[name] = f"{type(e).__name__}: {e}"
    return outcome


if __name__ == "__main__":
    mode = sys.argv[1]
    # A process started in the background by a non-interactive shell (`cmd &`) ignores
    # SIGINT, and so does Python then, and every child inherits it: Ctrl-C as a terminal
    # would deliver it.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    if mode == "timeout":
        r = timeout()
    elif mode == "lost":
        r = lost()
    else:
        r = interrupt(mode)
    print(json.dumps(r), flush=True)
