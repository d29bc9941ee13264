"""The corpus of public numba.cuda kernels (benchmarks/corpus) on the default device, at CI's
small sizes, each result against NumPy.

The kernels' sources are numba-cuda's published files, fetched from PyPI into the cache
(benchmarks/corpus/sources.py); under CI (CI=true) or NVK_REQUIRE_DEVICE=1 a source that
cannot be fetched fails the run instead of skipping it. Each kernel must do what the
manifest says: run and match NumPy, or be refused with the manifest's words (a refusal lifted
fails here too, so that the manifest and docs/corpus.md follow).
"""

import ast
import os
import pathlib
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "benchmarks"))

from corpus import manifest, run_corpus, sources


def _must_have_sources():
    return os.environ.get("CI") == "true" or os.environ.get("NVK_REQUIRE_DEVICE") == "1"


@pytest.fixture(scope="session")
def corpus_sources():
    try:
        return {p: sources.package_root(p, v) for p, v in manifest.PACKAGES.items()}
    except sources.SourceUnavailable as e:
        if _must_have_sources():
            pytest.fail(f"the corpus's sources could not be fetched: {e}")
        pytest.skip(f"the corpus's sources could not be fetched: {e}")


def test_corpus_size():
    assert len(manifest.KERNELS) >= 40
    assert len({e.id for e in manifest.KERNELS}) == len(manifest.KERNELS)


@pytest.mark.parametrize("entry", manifest.KERNELS, ids=lambda e: e.id)
def test_source_is_the_published_one(entry, corpus_sources):
    """Extracted word for word: every line of the ported source that is not an import is a
    line of the published file, and the file's hash is the manifest's."""
    version = manifest.PACKAGES[entry.package]
    path = corpus_sources[entry.package] / entry.file
    assert sources.file_sha256(path) == manifest.FILE_SHA256[f"{entry.package}=={version}:{entry.file}"]
    published = {line.strip() for line in path.read_text().splitlines()}
    ported = run_corpus.kernel_source(entry, "numba_vulkan")
    tree = ast.parse(ported)
    import_lines = {n.lineno for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))}
    for number, line in enumerate(ported.splitlines(), 1):
        if number not in import_lines and line.strip():
            assert line.strip() in published, f"not in {entry.file}: {line!r}"
    assert entry.kernel in {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}


def test_port_changes_only_the_numba_cuda_imports():
    src = ("from numba import cuda, float32\nfrom numba.cuda.random import (\n    x,\n)\n"
           "import numpy as np\n    from numba.cuda import int32\nx = 'from numba import cuda'\n")
    assert sources.port(src).splitlines() == [
        "from numba_vulkan import cuda; from numba import float32",
        "from numba_vulkan.cuda.random import (", "    x,", ")", "import numpy as np",
        "    from numba_vulkan.cuda import int32", "x = 'from numba import cuda'"]


@pytest.mark.parametrize("entry", manifest.KERNELS, ids=lambda e: e.id)
def test_kernel(entry, corpus_sources, device):
    record = run_corpus.run_entry(entry, ["numba_vulkan"], "small", False, {})
    result = record["backends"]["numba_vulkan"]
    expect = entry.expected(device.info.subgroup_size)
    if expect == "ok":
        assert result["status"] == "ok", result.get("reason")
    else:
        words = expect.split(":", 1)[1].strip()
        assert result["status"] == "refused", (
            f"the manifest expects a refusal ({words}) but the kernel {result['status']}: "
            f"{result.get('reason', 'update manifest.py and docs/corpus.md')}")
        assert words in result["reason"], result["reason"]
