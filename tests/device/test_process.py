"""Processes: a child forked after the parent used the device gets a clear error;
multiprocessing's 'spawn' start method works (_process_child.py does the work)."""

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

SRC = str(Path(importlib.util.find_spec("numba_vulkan").origin).resolve().parents[1])
CHILD = str(Path(__file__).with_name("_process_child.py"))


def _child(mode):
    env = dict(os.environ, PYTHONPATH=SRC)
    r = subprocess.run(
        [sys.executable, CHILD, mode], capture_output=True, text=True, env=env, timeout=300
    )
    assert r.returncode == 0, r.stderr[-3000:]
    return json.loads(r.stdout.strip().splitlines()[-1]), r.stderr[-3000:]


def test_forked_child_gets_a_clear_error_instead_of_hanging(device):
    """The child calls into neither the driver nor a lock of the parent's threads: with
    the driver's code made inaccessible (_process_child.trap_driver), every device
    operation raises VulkanForkError, freeing the parent's objects works, and the child
    exits normally (the driver's own exit handlers, which hang on NVIDIA, are skipped)."""
    r, stderr = _child("fork")
    assert r["child_exit"] != "hung", r  # killed after two minutes (the NVIDIA symptom)
    assert r["child_exit"] == 0, (r, stderr)  # -11: it called into the trapped driver
    child = r["child"]
    if sys.platform.startswith("linux"):
        assert any("libvulkan" in name for name in child["trapped"]), child["trapped"]
    assert len(child["calls"]) >= 20
    for call, outcome in child["calls"].items():
        assert outcome.startswith("VulkanForkError"), (call, outcome)
        assert "'spawn'" in outcome, outcome
    assert child["free"] == "no error"
    assert r["pool"].startswith("VulkanForkError"), r["pool"]
    assert r["parent_works"]


def test_spawn_pool_runs_kernels(device):
    r, _ = _child("spawn")
    assert r == {"tasks": 6, "all_correct": True, "parent_works": True}
