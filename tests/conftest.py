"""Shared pytest fixtures and markers for numba_vulkan's tests.

Tiers: tests/nodevice (no Vulkan device needed), tests/device (a real device:
lavapipe in CI), tests/fuzz (random programs against CPython).
"""

import os

import pytest


def _device_available():
    try:
        from numba_vulkan import runtime

        return bool(runtime.list_devices())
    except (ImportError, RuntimeError, OSError):  # no loader, no driver, no device
        return False


def pytest_sessionstart(session):
    """Under NVK_REQUIRE_DEVICE=1 (scripts/test.sh, hence CI) a missing Vulkan device fails
    the run at once instead of skipping the device tier."""
    if os.environ.get("NVK_REQUIRE_DEVICE") == "1" and not _device_available():
        pytest.exit(
            "NVK_REQUIRE_DEVICE=1 but no Vulkan device was found (is mesa-vulkan-drivers "
            "installed? `python3 -m numba_vulkan` says more)",
            returncode=3,
        )


@pytest.fixture(scope="session")
def device():
    """The default Vulkan device; skips the test where there is none."""
    if not _device_available():
        pytest.skip("no Vulkan device")
    from numba_vulkan import runtime

    return runtime.get_device()


def requires_feature(name):
    """Skip marker for tests that need a DeviceInfo feature, e.g. requires_feature("float64")."""
    try:
        from numba_vulkan import runtime

        infos = runtime.list_devices()
        ok = bool(infos) and bool(getattr(runtime.get_device().info, name, False))
    except (ImportError, RuntimeError, OSError):  # no loader, no driver, no device
        ok = False
    return pytest.mark.skipif(not ok, reason=f"the device lacks {name}")


os.environ.setdefault("NUMBA_VULKAN_CACHE", "0")
# The emitter's modules are validated too, before optimisation (by default only the
# final module is): a module the optimiser happens to repair still fails a test.
os.environ.setdefault("NUMBA_VULKAN_VALIDATE", "2")


def run_python(code, *args, timeout=300, **env):
    """Run `code` in a fresh Python process that imports the numba_vulkan under test;
    `env` adds environment variables. Returns the CompletedProcess (text output)."""
    import subprocess
    import sys
    from pathlib import Path

    import numba_vulkan

    full = dict(os.environ, PYTHONPATH=str(Path(numba_vulkan.__file__).resolve().parents[1]))
    full.update(env)
    return subprocess.run([sys.executable, "-c", code, *args], env=full, capture_output=True,
                          text=True, timeout=timeout, check=False)  # fmt: skip
