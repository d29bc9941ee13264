"""lavapipe's loop cap (issue 10, item 6): measured at device creation, cached per driver,
recorded in DeviceInfo, and a warning for kernels whose loops could pass it."""

import json
import os
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import numba_vulkan as nv
from numba_vulkan.runtime import probes


@nv.jit
def _count(ones, n, out):
    total = 0
    for j in range(n):
        total += ones[j & 1]
    out[0] = total


def test_limit_matches_what_loops_do(device):
    limit = device.info.loop_iteration_limit
    out = np.zeros(1, np.int64)
    n = 100_000 if limit is None else limit + 1000
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", nv.VulkanLoopLimitWarning)
        _count.forall(1)(np.ones(2, np.int64), n, out)
    assert out[0] == (n if limit is None else limit)


def test_lavapipe_of_mesa_22_has_the_cap(device):
    info = device.info
    if "llvmpipe" not in info.name or "Mesa 22." not in info.driver_info:
        pytest.skip("not Mesa 22's lavapipe")
    assert info.loop_iteration_limit == 65535
    assert nv.list_devices()[info.index].loop_iteration_limit == 65535


def _subprocess(code, cache_dir):
    env = dict(os.environ, NUMBA_VULKAN_CACHE_DIR=str(cache_dir),
               PYTHONPATH=str(Path(nv.__file__).resolve().parents[1]))  # fmt: skip
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                       check=False)  # fmt: skip
    assert r.returncode == 0, r.stdout + r.stderr
    return r.stdout


def test_probe_result_is_cached_per_driver(device, tmp_path):
    code = "import numba_vulkan as nv; print('LIMIT', nv.get_device().info.loop_iteration_limit)"
    out = _subprocess(code, tmp_path)
    expected = device.info.loop_iteration_limit
    assert f"LIMIT {expected}" in out
    data = json.loads((tmp_path / "driver_probes.json").read_text())
    key = probes.driver_key(device.info)
    assert data[key]["loop_iteration_limit"] == expected
    # A later process trusts the cache instead of probing again: change it, and it says so.
    data[key]["loop_iteration_limit"] = 12345
    (tmp_path / "driver_probes.json").write_text(json.dumps(data))
    code = (
        "import numba_vulkan as nv; print('LISTED', nv.list_devices()[0].loop_iteration_limit);"
        "print('LIMIT', nv.get_device(0).info.loop_iteration_limit)"
    )
    out = _subprocess(code, tmp_path)
    assert "LISTED 12345" in out and "LIMIT 12345" in out


def _while_kernel(out, n):
    i = 0
    while i < n:
        i += 1
    out[0] = i


def _static_kernel(out):
    s = 0
    for i in range(100):
        for j in range(10):
            s += i * j
    out[0] = s


def _nested_long_kernel(out):
    s = 0
    for i in range(300):
        for j in range(300):
            s += 1
    out[0] = s


def test_warns_once_per_kernel_whose_loops_could_pass_the_limit(device):
    if device.info.loop_iteration_limit is None:
        pytest.skip("the device runs loops to the end")
    out = np.zeros(1, np.int64)
    for fn, warns in [(_while_kernel, True), (_static_kernel, False), (_nested_long_kernel, True)]:
        kernel = nv.jit(fn)
        args = (out, 10) if fn is _while_kernel else (out,)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            kernel.forall(1)(*args)
            kernel.forall(1)(*args)
            kernel.forall(1)(np.zeros(1, np.int32), *args[1:])  # a second specialisation
        got = [w for w in caught if w.category is nv.VulkanLoopLimitWarning]
        assert len(got) == (1 if warns else 0), (fn.__name__, [str(w.message) for w in got])
        if warns:
            message = str(got[0].message)
            assert fn.__name__ in message and str(device.info.loop_iteration_limit) in message
