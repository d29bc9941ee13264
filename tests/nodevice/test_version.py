"""One version everywhere, and never the original's: src/numba_vulkan/_version.py holds it,
pyproject.toml and docs/conf.py read it from there, and the package, the installed
distribution and docs/status.md agree. It is not 0.1.0, the version of the original
numba-vulkan on PyPI, which has the same distribution and import name (docs/install.md)."""

import importlib.metadata
import re
from pathlib import Path

import pytest

import numba_vulkan as nv

ROOT = Path(__file__).resolve().parents[2]


def _source_version():
    text = (ROOT / "src" / "numba_vulkan" / "_version.py").read_text()
    return re.search(r'^__version__ = "([^"]+)"$', text, re.M).group(1)


def test_the_package_pyproject_and_the_docs_agree():
    version = _source_version()
    assert nv.__version__ == version
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert re.search(r'^dynamic = \["version"\]$', pyproject, re.M)
    assert 'input = "src/numba_vulkan/_version.py"' in pyproject
    assert (ROOT / "docs" / "status.md").read_text().startswith(f"# Status ({version})")


def test_never_the_original_version():
    assert nv.__version__ != "0.1.0"
    assert hasattr(nv, "_core")  # the original is pure Python


def test_the_installed_distribution_is_this_package():
    try:
        dist = importlib.metadata.distribution("numba_vulkan")
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("numba_vulkan is not installed (a source tree on PYTHONPATH)")
    init = Path(dist.locate_file("numba_vulkan/__init__.py")).resolve()
    if init != Path(nv.__file__).resolve():
        pytest.skip(f"numba_vulkan is imported from {nv.__file__}, not the installed {init}")
    assert dist.version == nv.__version__


def test_py_typed_ships_with_the_package():
    assert (Path(nv.__file__).parent / "py.typed").is_file()
