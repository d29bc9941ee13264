"""Ctrl-C during waits, the wait timeout (NUMBA_VULKAN_TIMEOUT) and device loss.

Each case runs in a child process (_interrupt_child.py), which sends SIGINT to
itself while it waits for seconds of queued work, or marks its device lost.
"""

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

SRC = str(Path(importlib.util.find_spec("numba_vulkan").origin).resolve().parents[1])
CHILD = str(Path(__file__).with_name("_interrupt_child.py"))


def _child(mode, timeout=180):
    env = dict(os.environ, PYTHONPATH=SRC)
    env.pop("NUMBA_VULKAN_TIMEOUT", None)
    r = subprocess.run(
        [sys.executable, CHILD, mode], capture_output=True, text=True, env=env, timeout=timeout
    )
    assert r.returncode == 0, r.stderr[-3000:]
    return json.loads(r.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("mode", ["synchronize", "copy_to_host", "event", "launch", "stream"])
def test_ctrl_c_interrupts_a_wait_within_100_ms(device, mode):
    if mode == "event" and not device.info.timestamp_bits:
        pytest.skip("the device writes no timestamps")
    r = _child(mode)
    print(r)
    assert r["caught"] == "KeyboardInterrupt", r
    assert r["latency_s"] < 0.1, r  # measured: about 10 ms (one wait slice) on lavapipe
    # The queued work was not lost or broken, and the device still runs kernels.
    assert r["result_ok"], r
    assert r["device_works"], r


def test_timeout_turns_a_long_wait_into_an_error(device):
    r = _child("timeout")
    assert r["caught"] == "VulkanTimeoutError", r
    assert "NUMBA_VULKAN_TIMEOUT" in r["message"], r
    assert 0.3 <= r["waited_s"] < 1.0, r
    assert r["is_timeout_error"]
    assert r["device_works"], r


def test_a_lost_device_fails_every_later_call_clearly(device):
    r = _child("lost")
    for call, message in r.items():
        assert "VK_ERROR_DEVICE_LOST" in message and "restart the process" in message, (
            call,
            message,
        )


def test_timeout_from_the_environment(device):
    env = dict(os.environ, PYTHONPATH=SRC, NUMBA_VULKAN_TIMEOUT="2.5")
    code = "import numba_vulkan as nv; print(nv.get_device().timeout)"
    r = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120
    )
    assert r.returncode == 0, r.stderr
    assert float(r.stdout) == 2.5
