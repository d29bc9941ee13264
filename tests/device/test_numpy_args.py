"""Small NumPy arguments taken by the C++ launcher directly (vk/host_args.cc,
bind/numpy_args.h): the same results as the slow path, which still takes every
array the fast one must not (strided, big-endian, bool, large, read-only where
written), hazards against device arrays, threads, and each host-argument memory
kind through NVK_VULKAN_STAGING=1 (the path of discrete GPUs) in a subprocess."""

import importlib.util
import os
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

import numba_vulkan as nv

SRC = str(Path(importlib.util.find_spec("numba_vulkan").origin).resolve().parents[1])


@nv.jit
def add3(a, b, c):
    i = nv.global_id(0)
    if i < c.size:
        c[i] = c[i] + a[i] + b[i]


@nv.jit
def scale2d(x, out, s):
    i, j = nv.global_id(0), nv.global_id(1)
    if i < out.shape[0] and j < out.shape[1]:
        out[i, j] = x[i, j] * s


@nv.jit
def total(x, out):
    i = nv.global_id(0)
    if i < x.size:
        nv.atomic.add(out, 0, x[i])


DTYPES = [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64,
          np.uint64, np.float32, np.float64]  # fmt: skip


def _values(n, dtype, seed):
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind == "f":
        return rng.standard_normal(n).astype(dtype)
    info = np.iinfo(dtype)
    return rng.integers(info.min // 4, info.max // 4, n, dtype=dtype, endpoint=True)


@pytest.mark.parametrize("dtype", DTYPES)
def test_numpy_arguments_take_the_fast_path_with_exact_results(device, dtype):
    if np.dtype(dtype).itemsize == 8 and not (device.info.int64 and device.info.float64):
        pytest.skip("the device stores 64-bit types narrowed (slow path)")
    n = 1000
    a, b = _values(n, dtype, 1), _values(n, dtype, 2)
    c = _values(n, dtype, 3)
    expect = c.copy()
    launch = add3.forall(n)
    launch(a, b, c)  # compiles (slow path)
    with np.errstate(over="ignore"):
        expect = expect + a + b
    np.testing.assert_array_equal(c, expect)
    before = add3.slow_path_count
    a0, b0 = a.copy(), b.copy()
    for _ in range(3):
        launch(a, b, c)
        with np.errstate(over="ignore"):
            expect = expect + a + b
    assert add3.slow_path_count == before, "small C-contiguous arrays take the launcher"
    np.testing.assert_array_equal(c, expect)
    np.testing.assert_array_equal(a, a0)  # read-only arguments are never written back
    np.testing.assert_array_equal(b, b0)


def test_two_dimensional_and_mixed_with_device_arrays(device):
    x = np.arange(12 * 9, dtype=np.float32).reshape(12, 9)
    out = np.zeros_like(x)
    launch = scale2d[(2, 2), (8, 8)]
    launch(x, out, np.float32(3))
    before = scale2d.slow_path_count
    d_out = nv.device_array_like(out)
    launch(x, d_out, np.float32(2))  # NumPy input, device output
    launch(nv.to_device(x), out, np.float32(5))  # device input, NumPy output
    assert scale2d.slow_path_count == before
    np.testing.assert_array_equal(d_out.copy_to_host(), x * 2)
    np.testing.assert_array_equal(out, x * 5)


def test_arrays_the_fast_path_must_not_take_still_work(device):
    n = 64
    launch = add3.forall(n)
    base = np.ones(n, np.float32)
    launch(base, base, np.zeros(n, np.float32))  # the float32 launcher exists
    cases = {
        "strided": (np.ones(2 * n, np.float32)[::2], np.ones(n, np.float32)),
        "big-endian": (np.ones(n, ">f4"), np.ones(n, np.float32)),
        "large": (np.ones(1 << 15, np.float32), np.ones(1 << 15, np.float32)),
    }
    for name, (a, b) in cases.items():
        c = np.zeros(a.shape, np.float32)
        before = add3.slow_path_count
        add3.forall(a.size)(a, b, c)
        assert add3.slow_path_count == before + 1, name
        np.testing.assert_array_equal(c, 2.0, err_msg=name)
    read_only = np.zeros(n, np.float32)
    read_only.flags.writeable = False
    with pytest.raises(Exception):  # the slow path types it read-only: no writing it
        launch(base, base, read_only)
    flags = np.zeros(n, np.bool_)

    @nv.jit
    def negate(x):
        i = nv.global_id(0)
        if i < x.size:
            x[i] = not x[i]

    negate.forall(n)(flags)
    negate.forall(n)(flags)
    negate.forall(n)(flags)
    assert flags.all()


def test_read_only_arguments_are_copied_at_launch(device):
    """A launch whose NumPy arrays are all read returns at once; it has its own copy."""
    n = 256
    x = np.arange(n, dtype=np.float32)
    out = nv.device_array(1, np.float32)
    for _ in range(2):
        out.copy_to_device(np.zeros(1, np.float32))
        total.forall(n)(x, out)
        x[:] = -1.0  # changed right after the launch: the kernel still sums 0..n-1
        assert out.copy_to_host()[0] == n * (n - 1) / 2
        x = np.arange(n, dtype=np.float32)


def test_the_same_array_twice_and_hazards_with_device_arrays(device):
    n = 128
    d = nv.to_device(np.full(n, 5, np.int32))
    c = np.zeros(n, np.int32)
    add3.forall(n)(d, d, c)  # device arrays in, NumPy out
    h = np.full(n, 7, np.int32)
    for _ in range(3):
        add3.forall(n)(h, d, d)  # writes the device array: the next launch reads it
        add3.forall(n)(d, h, c)
    # d = d + 7 + d: 5 -> 17 -> 41 -> 89; c gets 10, then d + 7 each round.
    np.testing.assert_array_equal(d.copy_to_host(), 89)
    np.testing.assert_array_equal(c, 10 + (17 + 7) + (41 + 7) + (89 + 7))
    same = np.full(n, 3, np.int32)
    add3.forall(n)(same, same, same)  # each argument gets its own copy, as on the slow path
    np.testing.assert_array_equal(same, 9)


def test_threads_launching_with_numpy_arguments(device):
    n, rounds, threads = 512, 30, 8
    errors = []

    def work(k):
        try:
            a = np.full(n, k, np.int32)
            b = np.arange(n, dtype=np.int32)
            c = np.zeros(n, np.int32)
            for r in range(rounds):
                add3.forall(n)(a, b, c)
                if not (c == (r + 1) * (a + b)).all():
                    errors.append((k, r))
                    return
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append((k, repr(e)))

    pool = [threading.Thread(target=work, args=(k,)) for k in range(threads)]
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    assert not errors, errors


CHILD = """
import numpy as np
import numba_vulkan as nv
from numba_vulkan import runtime as rt

@nv.jit
def add3(a, b, c):
    i = nv.global_id(0)
    if i < c.size:
        c[i] = c[i] + a[i] + b[i]

n = 3000
a = np.arange(n, dtype=np.float32)
b = np.full(n, 0.5, np.float32)
c = np.zeros(n, np.float32)
d = nv.to_device(np.ones(n, np.float32))
for r in range(20):
    add3.forall(n)(a, b, c)
    add3.forall(n)(a, c, d)
assert add3.slow_path_count == 1, add3.slow_path_count
assert (c == 20 * (a + b)).all()
expect = np.ones(n, np.float32)
c2 = np.zeros(n, np.float32)
for r in range(20):
    c2 += a + b
    expect += a + c2
assert (d.copy_to_host() == expect).all()
rt.synchronize()
print("MEMORY", " / ".join(nv.get_device()._core.host_args_memory(k) for k in range(3)))
print("MESSAGES", len([m for m in rt.validation_messages() if "not installed" not in m[1]]))
"""


@pytest.mark.parametrize("mode", ["", "device", "mixed", "host", "bar", "off"])
def test_host_argument_memory_kinds_on_the_staging_path(mode):
    env = dict(os.environ, NVK_VULKAN_STAGING="1", NVK_VULKAN_HOST_ARGS=mode,
               NUMBA_VULKAN_DEBUG="1", PYTHONPATH=SRC)  # fmt: skip
    if not mode:
        del env["NVK_VULKAN_HOST_ARGS"]  # the default
    if mode == "off":
        code = CHILD.replace("slow_path_count == 1", "slow_path_count == 40")
    else:
        code = CHILD
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                       check=False, timeout=300)  # fmt: skip
    assert r.returncode == 0, r.stdout + r.stderr
    assert "MESSAGES 0" in r.stdout, r.stdout
    local = "device-local host-visible"  # lavapipe's one memory type is that too
    expected = {"": f"{local} / {local} / host", "device": f"{local} / {local} / host",
                "mixed": f"{local} / host / none", "host": "host / host / none",
                "bar": f"{local} / {local} / none", "off": "off / off / off"}[mode]  # fmt: skip
    assert f"MEMORY {expected}" in r.stdout, r.stdout
