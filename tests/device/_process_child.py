"""Child process for test_process.py: fork after using the device, and spawn.

``python _process_child.py fork`` uses the device (leaving work in flight, with
one thread holding the runtime's lock and another launching), forks, and reports
(one JSON line) what each device operation raises in the child, whether freeing
the parent's objects and exiting normally worked, whether the child ended (a
child still running after two minutes is killed: 'hung'), and that the parent
still works. The child first makes the Vulkan loader's and driver's code
inaccessible (trap_driver; NVK_TEST_FORK_TRAP=0 leaves it), so that any call
into the driver kills it at once instead of working by luck (lavapipe) or
blocking forever (NVIDIA). ``python _process_child.py spawn`` runs kernels in a
pool of two 'spawn' workers (after using the device in the parent) and checks
their results.
"""

import ctypes
import faulthandler
import gc
import json
import multiprocessing
import os
import signal
import sys
import tempfile
import threading
import time

import numpy as np

import numba_vulkan as nv
from numba_vulkan import errors


@nv.jit
def affine(a, x, out):
    i = nv.global_id(0)
    if i < out.size:
        out[i] = x[i] * a + i


def run_kernel(a):
    """One task of a worker: a kernel with NumPy arguments; returns the result."""
    x = np.arange(1000, dtype=np.int32)
    out = np.zeros(1000, np.int32)
    affine.forall(1000)(np.int32(a), x, out)
    return a, out


# The shared libraries of the Vulkan loader, its layers and the drivers this test
# knows (lavapipe, NVIDIA): their code is made inaccessible in the forked child.
_DRIVER_LIBS = ("libvulkan", "libVkLayer", "lvp", "libGLX_nvidia", "libEGL_nvidia", "libnvidia-")


def trap_driver():
    """Make the code of the Vulkan loader and driver inaccessible in this (forked) process:
    any call into them, from our runtime or from an exit handler, then kills the child
    with SIGSEGV at once. On NVIDIA such a call can block forever (the driver's threads
    and locks did not survive the fork); on lavapipe it usually works. The trap turns
    both into the same clear failure. The first page of a mapping at file offset 0 stays
    (it holds the ELF headers, which the C++ unwinder reads for every library).
    Returns the names of the libraries trapped."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    page = os.sysconf("SC_PAGE_SIZE")
    trapped = set()
    with open("/proc/self/maps") as maps:
        for line in maps:
            parts = line.split()
            if len(parts) < 6 or "x" not in parts[1]:
                continue
            name = os.path.basename(parts[5])
            if not any(key in name for key in _DRIVER_LIBS):
                continue
            start, end = (int(x, 16) for x in parts[0].split("-"))
            if int(parts[2], 16) == 0:
                start += page
            if start < end:
                if libc.mprotect(start, end - start, 0) != 0:
                    raise OSError(ctypes.get_errno(), f"mprotect of {name}")
                trapped.add(name)
    return sorted(trapped)


@nv.jit
def checked(x):  # can raise: its launch gives the device a status buffer, read at exit
    i = nv.global_id(0)
    if i < x.size and x[i] < 0:
        raise ValueError("negative")


@nv.jit
def fresh(x):  # never launched before the fork: the child would compile it
    i = nv.global_id(0)
    if i < x.size:
        x[i] += 1


def child_calls(parent):
    """What a user does after the fork: every device operation must raise
    VulkanForkError; freeing what the parent made must work (silently leaked)."""
    outcome = {}
    d = parent["array"]
    calls = {
        "get_device": lambda: nv.get_device(0) and nv.list_devices(refresh=True),
        "launch": lambda: run_kernel(2),  # NumPy arguments: the C++ launcher's host args
        "device launch": lambda: affine.forall(10)(np.int32(1), d, d),
        "launch with another local size": lambda: affine[1, 7](np.int32(1), d, d),
        "new kernel": lambda: fresh.forall(10)(np.zeros(10, np.int32)),
        "stream launch": lambda: affine.forall(10, stream=parent["stream"])(np.int32(1), d, d),
        "copy_to_host": d.copy_to_host,
        "copy_to_device": lambda: d.copy_to_device(np.zeros(10, np.int32)),
        "to_device": lambda: nv.to_device(np.zeros(4)),
        "device_array": lambda: nv.device_array(4),
        "pinned_array": lambda: nv.pinned_array(4),
        "synchronize": nv.synchronize,
        "device synchronize": lambda: nv.get_device().synchronize(),
        "pool_stats": lambda: nv.get_device().pool_stats(),
        "stream": lambda: nv.stream(),
        "parent's stream query": parent["stream"].query,
        "parent's stream synchronize": parent["stream"].synchronize,
        "stream copy": lambda: d.copy_to_host(stream=parent["stream"]),
        "event": lambda: nv.event().record(),
        "parent's event": parent["event"].synchronize,
    }
    for name, call in calls.items():
        try:
            call()
            outcome[name] = "no error"
        except errors.VulkanForkError as e:
            outcome[name] = "VulkanForkError: " + str(e)
        except Exception as e:  # noqa: BLE001 (reported to the test)
            outcome[name] = f"{type(e).__name__}: {e}"
    return outcome


def _busy(stop):
    """Launch (recording under the device's lock) until told to stop."""
    x = nv.device_array(1 << 12, np.int32)
    while not stop.is_set():
        affine.forall(x.size)(np.int32(1), x, x)
    nv.synchronize()


def fork_child(parent, path):
    """The forked child: trap the driver, do what a user does, free what the parent
    made, write the outcome to `path` and exit normally (atexit handlers, finalisers
    and the C library's exit handlers run)."""
    result = {}
    faulthandler.enable()  # a call into the trapped driver prints where (no timers: fork)
    try:
        trap = os.environ.get("NVK_TEST_FORK_TRAP", "1") == "1"
        result["trapped"] = trap_driver() if trap else []
        result["calls"] = child_calls(parent)
        try:
            parent.clear()  # the parent's arrays, stream and event: leaked, not freed
            gc.collect()
            result["free"] = "no error"
        except Exception as e:  # noqa: BLE001
            result["free"] = f"{type(e).__name__}: {e}"
    finally:
        with open(path, "w") as f:
            json.dump(result, f)
    sys.exit(0)


def wait_child(pid, deadline_s=120):
    """The child's exit code, or 'hung' (then it is killed) after `deadline_s`."""
    end = time.monotonic() + deadline_s
    while time.monotonic() < end:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        time.sleep(0.02)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    return "hung"


def fork():
    d = nv.to_device(np.arange(10, dtype=np.int32))
    a, out = run_kernel(3)
    assert (out == np.arange(1000) * 4).all()
    checked.forall(10)(d)  # the child's exit then runs runtime/reports.py's atexit check
    stream = nv.stream()
    big = nv.device_array(1 << 20, np.int32)
    affine.forall(big.size, stream=stream)(np.int32(1), big, big)
    # Work still in flight at the fork, and objects of every kind for the child to free.
    parent = {"array": d, "big": big, "stream": stream, "event": nv.event().record(),
              "pinned": nv.pinned_array(16), "work": nv.device_array(1 << 20, np.int32)}
    affine.forall(big.size)(np.int32(2), parent["work"], parent["work"])
    # Other threads at the fork: one holds locks of the runtime that the child's calls
    # take (the child must still get its error rather than wait for a lock nobody will
    # release: numba_vulkan/forksafe.py), one keeps launching (so the device's own C++
    # lock may be held at that moment: the runtime checks for a fork before taking it).
    from numba_vulkan.runtime import copies, device_list

    held, release, stop = threading.Event(), threading.Event(), threading.Event()

    def hold():
        with device_list.lock, copies._staging_lock:
            held.set()
            release.wait()

    threads = [threading.Thread(target=hold), threading.Thread(target=_busy, args=(stop,))]
    for t in threads:
        t.start()
    held.wait()
    time.sleep(0.05)
    path = os.path.join(tempfile.mkdtemp(), "child.json")
    start = time.monotonic()
    pid = os.fork()
    if pid == 0:
        fork_child(parent, path)
    release.set()
    stop.set()
    for t in threads:
        t.join()
    exit_code = wait_child(pid)
    child_s = time.monotonic() - start
    child = {}
    if os.path.exists(path) and os.path.getsize(path):
        with open(path) as f:
            child = json.load(f)
    # Through multiprocessing's 'fork' context as well: the worker's error comes back.
    try:
        with multiprocessing.get_context("fork").Pool(1) as pool:
            pool.map(run_kernel, [1])
        pool_outcome = "no error"
    except errors.VulkanForkError as e:
        pool_outcome = "VulkanForkError: " + str(e)
    except Exception as e:  # noqa: BLE001
        pool_outcome = f"{type(e).__name__}: {e}"
    a, out = run_kernel(5)
    return {
        "child": child,
        "child_exit": exit_code,
        "child_s": child_s,
        "pool": pool_outcome,
        "parent_works": bool((out == np.arange(1000) * 6).all()),
    }


def spawn():
    run_kernel(1)  # the parent has used the device: spawn must not care
    with multiprocessing.get_context("spawn").Pool(2) as pool:
        results = pool.map(run_kernel, range(6))
    ok = all((out == np.arange(1000) * (a + 1)).all() for a, out in results)
    a, out = run_kernel(7)
    return {
        "tasks": len(results),
        "all_correct": bool(ok),
        "parent_works": bool((out == np.arange(1000) * 8).all()),
    }


if __name__ == "__main__":
    print(json.dumps(fork() if sys.argv[1] == "fork" else spawn()), flush=True)
