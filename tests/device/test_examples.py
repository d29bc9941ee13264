"""The programs in examples/ run as a new user would run them, in subprocesses."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.device, pytest.mark.usefixtures("device")]

ROOT = Path(__file__).resolve().parents[2]


def run_example(name, *args):
    env = dict(os.environ)
    # The example imports the same numba_vulkan as the tests: installed, or src/ in development.
    import numba_vulkan

    package_root = str(Path(numba_vulkan.__file__).resolve().parents[1])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (package_root, env.get("PYTHONPATH")) if p)
    proc = subprocess.run(
        [sys.executable, str(ROOT / "examples" / name), *map(str, args)],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        cwd=ROOT,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


def device_name():
    from numba_vulkan import runtime

    return runtime.get_device().info.name


def test_demo():
    out = run_example("demo.py")
    assert device_name() in out
    assert "output: [0, 1, -2, 9, -4, 25, -6, 49, -8, 81]" in out
    assert "matches NumPy: True" in out


def test_saxpy():
    out = run_example("saxpy.py", 10000)
    assert "matches NumPy: True" in out
    assert device_name() in out


def test_mandelbrot_prints_picture_and_device():
    out = run_example("mandelbrot.py", 60, 24, 80)
    lines = out.splitlines()
    picture = lines[:24]
    assert all(len(line) == 60 for line in picture)
    # The main cardioid is inside the set; the far left column is outside.
    assert picture[12][42] == "@"
    assert all(line[0] == " " for line in picture)
    assert device_name() in lines[24]


def test_matrix_tiles():
    out = run_example("matrix_tiles.py", "--m", 40, "--n", 33, "--k", 24)  # edges in every axis
    assert "matches NumPy" in out


def test_tiled_matmul():
    out = run_example("tiled_matmul.py", "--size", 40)  # not a multiple of 16: the bounds
    assert "matches NumPy: True" in out


def test_shared_reduction():
    out = run_example("shared_reduction.py", "--size", 100003)
    assert "matches NumPy: True" in out


def test_histogram():
    out = run_example("histogram.py", "--size", 200000)
    assert "matches NumPy: True" in out


def test_prefix_sum_with_subgroups():
    out = run_example("prefix_sum.py", "--size", 40000)
    assert "matches NumPy: True" in out


@pytest.mark.parametrize("name, args", [("heat_equation.py", (48, 30)), ("nbody.py", (64, 10)),
                                        ("image_blur.py", (64, 3))])  # fmt: skip
def test_gallery_examples_match_numpy(name, args):
    out = run_example(name, *args)
    assert "matches NumPy: True" in out
    assert device_name() in out
