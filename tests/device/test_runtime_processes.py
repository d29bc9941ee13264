"""The runtime in child processes, under settings fixed at start: NUMBA_VULKAN_SYNC=1, the
validation layer (NUMBA_VULKAN_DEBUG=2) and the staging copies of discrete GPUs
(NVK_VULKAN_STAGING=1), each on lavapipe in a subprocess running hand-written SPIR-V."""

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest
from _spirv_kernels import required as _kernels

# Where numba_vulkan is imported from (src/ in a dev tree, site-packages when installed),
# so that subprocesses import the same build.
SRC = str(Path(importlib.util.find_spec("numba_vulkan").origin).resolve().parents[1])


def test_sync_mode_subprocess(tmp_path):
    """NUMBA_VULKAN_SYNC=1 makes every launch wait: the device is idle right after."""
    code = f"""
import sys, pathlib, numpy as np
sys.path.insert(0, {str(Path(__file__).parent)!r})
import _spirv_kernels as K
from numba_vulkan import runtime as rt, _core
d = rt.get_device()
assert d._core.sync_launches
words, ps = K.scale_index(pathlib.Path({str(tmp_path)!r}), False)
L = _core.Launcher(d._core, d.load_kernel(words, ps), K.arg_decls(), K.PARAM_SIZE, False)
out = rt.device_array(4096, np.uint32)
for i in range(5):
    assert L.launch((64, 1, 1), (64, 1, 1), (out, np.uint32(i)))
    assert d._core.idle()
print("SYNC-OK")
"""
    if not _kernels():
        return
    env = dict(os.environ, NUMBA_VULKAN_SYNC="1", PYTHONPATH=SRC)
    r = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=False
    )
    assert "SYNC-OK" in r.stdout, r.stderr


# ---- debug -----------------------------------------------------------------------------


def test_validation_layer_is_quiet_for_clean_use(tmp_path):
    code = f"""
import sys, pathlib, warnings, numpy as np
sys.path.insert(0, {str(Path(__file__).parent)!r})
import _spirv_kernels as K
from numba_vulkan import runtime as rt, _core
assert rt.debug_level() == 1 and rt.debug_enabled()
d = rt.get_device()
x = rt.to_device(np.arange(1000, dtype=np.float32))
y = x[::2].copy_to_host()
if K.have_spirv_as():
    for in_buffer in (False, True):
        words, ps = K.scale_index(pathlib.Path({str(tmp_path)!r}), in_buffer)
        L = _core.Launcher(d._core, d.load_kernel(words, ps), K.arg_decls(), K.PARAM_SIZE, in_buffer)
        out = rt.device_array(1000, np.uint32)
        for i in range(40):
            assert L.launch((16, 1, 1), (64, 1, 1), (out, np.uint32(i)))
        assert out[999] == 999 * 39
with warnings.catch_warnings():
    warnings.simplefilter("error")
    rt.synchronize()
msgs = rt.validation_messages()
print("MESSAGES", len(msgs))
for m in msgs:
    print(m)
"""
    env = dict(os.environ, NUMBA_VULKAN_DEBUG="1", PYTHONPATH=SRC)
    r = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=False
    )
    _skip_without_layer(r.stdout + r.stderr)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "MESSAGES 0" in r.stdout, r.stdout


def _skip_without_layer(output):
    if "VK_LAYER_KHRONOS_validation is not installed" in output:
        pytest.skip("the Vulkan validation layer is not installed")


def test_validation_messages_are_collected_and_warned(tmp_path):
    """A real misuse (push range smaller than the module's block) is collected, not printed."""
    code = f"""
import sys, pathlib, warnings, numpy as np
sys.path.insert(0, {str(Path(__file__).parent)!r})
import _spirv_kernels as K
from numba_vulkan import runtime as rt, _core
from numba_vulkan.errors import VulkanValidationWarning
d = rt.get_device()
words, ps = K.scale_index(pathlib.Path({str(tmp_path)!r}), False)
L = _core.Launcher(d._core, d.load_kernel(words, 8), K.arg_decls(), K.PARAM_SIZE, False)
L.launch((1, 1, 1), (64, 1, 1), (rt.device_array(10, np.uint32), np.uint32(1)))
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    rt.synchronize()
assert any(w.category is VulkanValidationWarning for w in caught), caught
msgs = rt.validation_messages(clear=True)
assert msgs and msgs[0][0] == "error" and "VUID" in msgs[0][1], msgs
assert rt.validation_messages() == []
print("COLLECTED")
"""
    _kernels()
    env = dict(os.environ, NUMBA_VULKAN_DEBUG="1", PYTHONPATH=SRC)
    r = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=False
    )
    _skip_without_layer(r.stdout + r.stderr)
    assert "COLLECTED" in r.stdout, r.stdout + r.stderr
    assert "VUID" not in r.stderr  # collected, never printed


def test_staging_path_subprocess(tmp_path):
    """NVK_VULKAN_STAGING=1: the copies that discrete GPUs need, under validation."""
    code = f"""
import sys, pathlib, numpy as np
sys.path.insert(0, {str(Path(__file__).parent)!r})
import _spirv_kernels as K
from numba_vulkan import runtime as rt, _core
d = rt.get_device()
assert not d._core.arrays_mapped
host = np.arange(3 * 1000, dtype=np.float64).reshape(3, 1000)
x = rt.to_device(host)
assert (x.copy_to_host() == host).all() and (x[:, ::7].copy_to_host() == host[:, ::7]).all()
x[1, ::3] = -1.0
host[1, ::3] = -1.0
assert (x.copy_to_host() == host).all() and (x.copy().copy_to_host() == host).all()
big = np.arange(11_000_003, dtype=np.float32)  # 44 MB: chunks of 32 MiB and 10 MB, threads
b = rt.to_device(big)
assert (b.copy_to_host() == big).all()
assert (b[5::7].copy_to_host() == big[5::7]).all()
b[::1000] = 0.5
big[::1000] = 0.5
assert (b.copy_to_host() == big).all()
words, ps = K.scale_index(pathlib.Path({str(tmp_path)!r}), True)
L = _core.Launcher(d._core, d.load_kernel(words, ps), K.arg_decls(), K.PARAM_SIZE, True)
out = rt.device_array(1000, np.uint32)
for i in range(40):
    assert L.launch((16, 1, 1), (64, 1, 1), (out, np.uint32(i)))
    if i % 9 == 0:
        assert out[999] == 999 * i
assert (out.copy_to_host() == np.arange(1000, dtype=np.uint32) * 39).all()
rt.synchronize()
print("MESSAGES", len([m for m in rt.validation_messages() if "not installed" not in m[1]]))
"""
    _kernels()
    env = dict(os.environ, NVK_VULKAN_STAGING="1", NUMBA_VULKAN_DEBUG="2", PYTHONPATH=SRC)
    r = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=False
    )
    assert r.returncode == 0, r.stdout + r.stderr
    assert "MESSAGES 0" in r.stdout, r.stdout
