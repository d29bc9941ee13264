"""Child process for test_process.py: fork after using the device, and spawn.

``python _process_child.py fork`` uses the device, forks, and reports (one JSON
line) what a launch, a copy and a synchronisation raise in the child, and that
the parent still works. ``python _process_child.py spawn`` runs kernels in a
pool of two 'spawn' workers (after using the device in the parent) and checks
their results.
"""

import json
import multiprocessing
import os
import sys
import threading

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


def child_calls(d):
    outcome = {}
    calls = {
        "get_device": lambda: nv.get_device(0) and nv.list_devices(refresh=True),
        "launch": lambda: run_kernel(2),
        "device launch": lambda: affine.forall(10)(np.int32(1), d, d),
        "copy_to_host": d.copy_to_host,
        "to_device": lambda: nv.to_device(np.zeros(4)),
        "synchronize": nv.synchronize,
        "pool_stats": lambda: nv.get_device().pool_stats(),
        "stream query": lambda: nv.stream().query(),
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


def fork():
    d = nv.to_device(np.arange(10, dtype=np.int32))
    a, out = run_kernel(3)
    assert (out == np.arange(1000) * 4).all()
    # Another thread holds the runtime's device lock while the process forks: the
    # child must still get its error rather than wait for a lock nobody will release.
    from numba_vulkan.runtime import devices

    held, release = threading.Event(), threading.Event()

    def hold():
        with devices._lock:
            held.set()
            release.wait()

    holder = threading.Thread(target=hold)
    holder.start()
    held.wait()
    read, write = os.pipe()
    pid = os.fork()
    if pid:
        release.set()
        holder.join()
    if pid == 0:
        os.close(read)
        os.write(write, json.dumps(child_calls(d)).encode())
        os.close(write)
        sys.exit(0)  # a normal exit: atexit handlers and finalisers run in the child
    os.close(write)
    data = b""
    while chunk := os.read(read, 1 << 16):
        data += chunk
    _, status = os.waitpid(pid, 0)
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
        "child": json.loads(data),
        "child_exit": os.waitstatus_to_exitcode(status),
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
