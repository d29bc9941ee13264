"""The golden corpus (tests/golden): each kernel compiles, without a device, to exactly the
KIR and SPIR-V text checked in, and every module passes SPIRV-Tools' validator.

A failure here after a deliberate code-generation change is expected: regenerate with
``PYTHONPATH=src python3 tests/golden/regen.py`` and review the diff (docs/testing.md).
"""

import difflib
import os
import subprocess
import sys

import pytest

GOLDEN = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "golden")
sys.path.insert(0, GOLDEN)

import golden  # noqa: E402
from kernels import CASES  # noqa: E402

from numba_vulkan import _core  # noqa: E402

REGEN = "PYTHONPATH=src python3 tests/golden/regen.py"

# The texts depend on the bytecode Numba reads (block order, source lines), which changes
# between Python versions: they are made with the Python of CI (Debian 12's 3.11).
GOLDEN_PYTHON = (3, 11)


def _compare(name, what, got, path):
    if sys.version_info[:2] != GOLDEN_PYTHON:
        pytest.skip(f"the golden texts are made with Python {GOLDEN_PYTHON[0]}.{GOLDEN_PYTHON[1]}")
    with open(path) as f:
        want = f.read()
    if got != want:
        diff = "".join(list(difflib.unified_diff(
            want.splitlines(True), got.splitlines(True), f"{name}.{what} (checked in)",
            f"{name}.{what} (compiled now)"))[:60])  # fmt: skip
        pytest.fail(f"the {what} of golden kernel {name!r} changed; if intended, run "
                    f"`{REGEN} {name}` and review the diff:\n{diff}")  # fmt: skip


@pytest.mark.parametrize("name", sorted(CASES))
def test_golden_kernel(name):
    fn, argtypes = CASES[name]
    kir, spirv, words = golden.compile_case(fn, argtypes)
    _core.validate(words)
    kir_path, spirv_path = golden.paths(name)
    _compare(name, "kir", kir, kir_path)
    _compare(name, "spvasm", spirv, spirv_path)


def test_every_golden_file_has_a_kernel():
    files = {f.rsplit(".", 1)[0] for f in os.listdir(GOLDEN) if f.endswith((".kir", ".spvasm"))}
    assert files == set(CASES), f"golden files or kernels without a pair: {files ^ set(CASES)}"


def test_output_does_not_depend_on_the_hash_seed():
    """Dict or set order must not leak into code generation: another hash seed, another
    process, the same text."""
    code = (
        "import sys; sys.path.insert(0, sys.argv[1]); import golden, kernels, hashlib;"
        "h = hashlib.sha256();"
        "[h.update(''.join(golden.compile_case(*kernels.CASES[n])[:2]).encode())"
        " for n in ('device_functions', 'views', 'constants', 'records')];"
        "print(h.hexdigest())"
    )
    import importlib.util

    src = os.path.dirname(os.path.dirname(importlib.util.find_spec("numba_vulkan").origin))
    env = dict(os.environ, PYTHONPATH=src)
    digests = set()
    for seed in ("1", "2"):
        env["PYTHONHASHSEED"] = seed
        r = subprocess.run([sys.executable, "-c", code, GOLDEN], env=env, capture_output=True,
                           text=True, timeout=300)  # fmt: skip
        assert r.returncode == 0, r.stderr
        digests.add(r.stdout.strip())
    assert len(digests) == 1
