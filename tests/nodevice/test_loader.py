"""Without a Vulkan loader: import works, the first runtime call explains what is missing."""

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

# Where numba_vulkan is imported from (src/ in a dev tree, site-packages when installed),
# so that subprocesses import the same build.
SRC = str(Path(importlib.util.find_spec("numba_vulkan").origin).resolve().parents[1])


def _run(code, **env):
    full = dict(os.environ, NVK_VULKAN_LOADER="/nonexistent/libvulkan.so.1", **env)
    full["PYTHONPATH"] = SRC + os.pathsep + full.get("PYTHONPATH", "")
    return subprocess.run(
        [sys.executable, "-c", code], env=full, capture_output=True, text=True, check=False
    )


def test_import_works_and_first_call_raises_loader_error_with_hint():
    code = """
import numba_vulkan
from numba_vulkan import runtime, errors
try:
    runtime.list_devices()
except errors.VulkanLoaderError as e:
    assert runtime.hint in str(e), str(e)
    assert isinstance(e, RuntimeError)
    print("LOADER-ERROR")
else:
    print("NO-ERROR")
try:
    runtime.to_device([1, 2, 3])
except errors.VulkanLoaderError as e:
    assert runtime.hint in str(e)
    print("LOADER-ERROR-AGAIN")
"""
    r = _run(code)
    assert r.returncode == 0, r.stderr
    assert "LOADER-ERROR\n" in r.stdout
    assert "LOADER-ERROR-AGAIN" in r.stdout


def test_main_reports_missing_loader():
    full = dict(os.environ, NVK_VULKAN_LOADER="/nonexistent/libvulkan.so.1")
    full["PYTHONPATH"] = SRC + os.pathsep + full.get("PYTHONPATH", "")
    r = subprocess.run(
        [sys.executable, "-m", "numba_vulkan"],
        env=full,
        capture_output=True,
        text=True,
        check=False,
    )
    assert r.returncode == 1
    assert "No Vulkan loader" in r.stdout
    assert "libvulkan1" in r.stdout


def test_hint_text():
    from numba_vulkan import runtime

    assert runtime.hint == (
        " Install your distribution's Vulkan loader (libvulkan1 on Debian and Ubuntu) and a driver."
    )
    assert runtime.DEBUG_ENV_VAR == "NUMBA_VULKAN_DEBUG"
