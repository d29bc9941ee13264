"""The device-function examples (ported from numba-cuda's documentation) run unchanged,
as a new user would run them, in subprocesses."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.device, pytest.mark.usefixtures("device")]

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("name", ["cpu_gpu_compat.py", "device_functions.py"])
def test_example_runs(name):
    import numba_vulkan

    env = dict(os.environ)
    package_root = str(Path(numba_vulkan.__file__).resolve().parents[1])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (package_root, env.get("PYTHONPATH")) if p)
    proc = subprocess.run(
        [sys.executable, str(ROOT / "examples" / name)],
        capture_output=True, text=True, timeout=300, env=env, cwd=ROOT, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.strip().endswith("ok"), proc.stdout
