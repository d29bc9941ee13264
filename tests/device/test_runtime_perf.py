"""Host time of the launch path (Launcher.launch), and copy bandwidth.

Run as a script for the numbers: ``python tests/device/test_runtime_perf.py``.
Under pytest it checks generous bounds only (CI machines vary); the target on a
real GPU is < 10 us per launch with 3 device arrays and 1 scalar.
"""

import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
import _spirv_kernels as K

# The kernel reads the first array only; the other two arrays and the block's tail
# are there to make the launcher do the work of a 3-array, 1-scalar kernel.


def measure(n_launches=20000, in_buffer=True):
    from numba_vulkan import _core
    from numba_vulkan import runtime as rt

    device = rt.get_device()
    words, push_size = K.scale_index(Path(tempfile.mkdtemp()), True)
    kernel = device.load_kernel(words, push_size)
    # (out, k) where the kernel reads them, then two more arrays (at 24 and 40)
    launcher = _core.Launcher(device._core, kernel, K.arg_decls("out", "k", "b", "c"), 64, True)
    a, b, c = (rt.device_array(64, np.uint32) for _ in range(3))
    args = (a, np.uint32(3), b, c)
    groups, local = (1, 1, 1), (64, 1, 1)
    for _ in range(200):
        launcher.launch(groups, local, args)
    rt.synchronize()
    t0 = time.perf_counter()
    for _ in range(n_launches):
        launcher.launch(groups, local, args)
    t1 = time.perf_counter()
    rt.synchronize()
    t2 = time.perf_counter()
    np.testing.assert_array_equal(a.copy_to_host(), np.arange(64, dtype=np.uint32) * 3)

    nbytes = 64 << 20
    host = np.ones(nbytes // 4, np.float32)
    d = rt.device_array(host.shape, np.float32)
    d.copy_to_device(host)
    t3 = time.perf_counter()
    d.copy_to_device(host)
    t4 = time.perf_counter()
    d.copy_to_host(out=host)
    t5 = time.perf_counter()
    return {
        "device": device.info.name,
        "launch_us": (t1 - t0) / n_launches * 1e6,
        "launch_and_run_us": (t2 - t0) / n_launches * 1e6,
        "to_device_GBps": nbytes / (t4 - t3) / 1e9,
        "to_host_GBps": nbytes / (t5 - t4) / 1e9,
        "arrays_mapped": device._core.arrays_mapped,
    }


def test_launch_host_time(device):
    r = measure(n_launches=2000)
    print(r)
    assert r["launch_us"] < 1000  # a loose bound: lavapipe on a 2-core CI machine


if __name__ == "__main__":
    print(measure())
