"""scripts/run_cudapy.py changes imports only, and its classifier sorts failures by cause.
(The run itself needs a numba-cuda checkout: NUMBA_CUDA_SRC, tests/device/test_cuda_compat.py.)"""

import pathlib
import sys

SCRIPTS = pathlib.Path(__file__).resolve().parents[2] / "scripts"
sys.path.insert(0, str(SCRIPTS))

import cudapy_classify  # noqa: E402
import run_cudapy  # noqa: E402


def test_port_changes_imports_only():
    src = (
        "from numba import cuda, types\n"
        "from numba.cuda.testing import (unittest,\n    CUDATestCase)\n"
        "from numba.cuda import config, float32\n"
        "from numba.cuda.core.errors import TypingError\n"
        "from numba.cuda.cudadrv import driver\n"
        "    from numba import cuda\n"
        "x = 'from numba import cuda'  # not an import\n"
    )
    got = run_cudapy.port(src).splitlines()
    assert got[0] == "from numba_vulkan import cuda; from numba import types"
    assert got[1] == "from _cudapy_testing import (unittest,"
    assert got[3] == "import _cudapy_config as config; from numba_vulkan.cuda import (float32)"
    assert got[4] == "from numba.core.errors import TypingError"
    assert got[5] == "from numba_vulkan.cuda.cudadrv import driver"  # fails: CUDA internals
    assert got[6] == "    from numba_vulkan import cuda"
    assert got[7] == src.splitlines()[7]


def test_classifier():
    c = cudapy_classify.classify
    assert c("PASS", "") == ""
    assert c("ERROR", "VulkanUnsupportedError: grid-wide synchronisation ...").startswith(
        "Vulkan cannot: grid sync")
    assert c("ERROR", "AttributeError: 'Dispatcher' object has no attribute 'inspect_llvm'") \
        .startswith("CUDA internals")
    assert c("ERROR", "ModuleNotFoundError: No module named 'numba_vulkan.cuda.cudadrv'") \
        .startswith("CUDA internals")
    assert c("FAIL", "AssertionError: 3 != 4") == "our bug: wrong result"
    assert c("ERROR", "ImportError: cannot import name 'vectorize' from 'numba_vulkan.cuda'") \
        .startswith("missing: vectorize")
    assert c("SKIP", "needs the CUDA toolkit (skip_if_nvjitlink_missing)") == \
        "skip: needs the CUDA toolkit"
