"""The package's build identity in disk-cache keys (cache._build_identity): whatever
changes the compiler must change it, installed or run from a source tree."""

import os

from numba_vulkan import cache


def _tree(root, files):
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def test_an_installed_package_is_identified_by_its_record(tmp_path):
    record = "numba_vulkan-0.1.0.dist-info/RECORD"
    _tree(tmp_path, {"numba_vulkan/__init__.py": "", "numba_vulkan/_core.so": "x",
                     record: "numba_vulkan/__init__.py,sha256=a,0\n"})  # fmt: skip
    package = str(tmp_path / "numba_vulkan")
    first = cache._build_identity(package, package + "/_core.so")
    assert first == cache._build_identity(package, package + "/_core.so")
    (tmp_path / record).write_text("numba_vulkan/__init__.py,sha256=b,0\n")  # a reinstall
    assert cache._build_identity(package, package + "/_core.so") != first


def test_a_source_tree_is_identified_by_its_files(tmp_path):
    _tree(tmp_path, {"numba_vulkan/__init__.py": "", "numba_vulkan/_core.so": "x",
                     "numba_vulkan/frontend/lower.py": "a = 1\n",
                     "numba_vulkan/frontend/__pycache__/lower.cpython-311.pyc": "junk"})
    package = str(tmp_path / "numba_vulkan")
    first = cache._build_identity(package, package + "/_core.so")
    assert [name for name, *_ in first] == ["_core.so", "__init__.py", "frontend/lower.py"]
    lower = tmp_path / "numba_vulkan/frontend/lower.py"
    lower.write_text("a = 22\n")  # another size
    second = cache._build_identity(package, package + "/_core.so")
    assert second != first
    st = lower.stat()
    os.utime(lower, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))  # the same size, later
    assert cache._build_identity(package, package + "/_core.so") != second
