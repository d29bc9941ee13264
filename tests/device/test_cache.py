"""cache=True: a second process loads the kernel from disk without Numba typing;
a changed source file is a miss; NUMBA_VULKAN_CACHE=0 and NUMBA_VULKAN_CACHE_DIR
work; the pipeline cache is saved per driver."""

import importlib.util
import json
import os
import subprocess
import sys
import textwrap

import pytest

# The folder the numba_vulkan under test comes from (installed or a source tree with
# a built extension): the child processes import the same one.
SRC = os.path.dirname(os.path.dirname(importlib.util.find_spec("numba_vulkan").origin))

MODULE = """
import numba_vulkan as nv
from khelp import bump
SCALE = {scale}

@nv.jit(cache=True)
def triple(x, out):
    i = nv.global_id(0)
    if i < out.size:
        out[i] = bump(x[i]) * SCALE
"""

HELPER = """
import numba_vulkan as nv

@nv.jit(device=True)
def bump(v):
    return v + {bump}
"""

CHILD = """
import json, sys, time
sys.path.insert(0, sys.argv[1])
import numpy as np
import numba_vulkan as nv
from numba_vulkan.typing import pipeline
if sys.argv[2] == "no-typing":
    def refuse(*a, **k):
        raise AssertionError("Numba typing ran on a cache hit")
    pipeline.type_kernel = refuse
import kmod
nv.get_device()
x = np.arange(10, dtype=np.float32)
out = np.zeros_like(x)
t = time.perf_counter()
kmod.triple.forall(10)(x, out)
ms = (time.perf_counter() - t) * 1e3
print(json.dumps({"out": out.tolist(), "hits": sum(kmod.triple.stats.cache_hits.values()),
                  "misses": sum(kmod.triple.stats.cache_misses.values()), "ms": ms}))
"""


def _run(tmp_path, mode="", **env):
    child_env = dict(os.environ, PYTHONPATH=os.path.abspath(SRC))
    child_env.pop("NUMBA_VULKAN_CACHE", None)
    child_env.update(env)
    child_env.setdefault("NUMBA_VULKAN_CACHE_DIR", str(tmp_path / "cache"))
    child_env.setdefault("NUMBA_VULKAN_CACHE", "1")  # conftest turns it off for the suite
    r = subprocess.run([sys.executable, "-c", CHILD, str(tmp_path), mode], env=child_env,
                       capture_output=True, text=True, timeout=300)  # fmt: skip
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout.strip().splitlines()[-1])


def _write_module(tmp_path, scale, bump=0):
    (tmp_path / "kmod.py").write_text(textwrap.dedent(MODULE.format(scale=scale)))
    (tmp_path / "khelp.py").write_text(textwrap.dedent(HELPER.format(bump=bump)))
    for pyc in (tmp_path / "__pycache__").glob("*") if (tmp_path / "__pycache__").exists() else ():
        pyc.unlink()


def test_hit_in_a_second_process_without_typing(tmp_path):
    _write_module(tmp_path, 3)
    first = _run(tmp_path)
    assert first["misses"] == 1 and first["hits"] == 0
    assert first["out"][:3] == [0.0, 3.0, 6.0]
    second = _run(tmp_path, "no-typing")  # type_kernel raises if called
    assert second["hits"] == 1 and second["misses"] == 0
    assert second["out"] == first["out"]
    entries = list((tmp_path / "cache" / "kernels").glob("kmod.triple-*.nvk"))
    assert len(entries) == 1
    print(f"first call: {first['ms']:.1f} ms compiling, {second['ms']:.1f} ms from the cache")


def test_miss_after_the_source_changes(tmp_path):
    _write_module(tmp_path, 3)
    assert _run(tmp_path)["misses"] == 1
    _write_module(tmp_path, 5)  # a global the kernel reads changes, and the file
    changed = _run(tmp_path)
    assert changed["misses"] == 1 and changed["hits"] == 0
    assert changed["out"][:3] == [0.0, 5.0, 10.0]
    assert _run(tmp_path)["hits"] == 1


def test_miss_after_a_device_function_in_another_file_changes(tmp_path):
    _write_module(tmp_path, 3)
    assert _run(tmp_path)["misses"] == 1
    _write_module(tmp_path, 3, bump=1)  # only khelp.py changes
    changed = _run(tmp_path)
    assert changed["misses"] == 1 and changed["out"][:3] == [3.0, 6.0, 9.0]
    assert _run(tmp_path, "no-typing")["hits"] == 1


def test_cache_off_and_moved(tmp_path):
    _write_module(tmp_path, 3)
    off = _run(tmp_path, NUMBA_VULKAN_CACHE="0")
    assert off["hits"] == 0 and off["misses"] == 0  # not even looked up
    assert not (tmp_path / "cache" / "kernels").exists()
    moved = tmp_path / "elsewhere"
    _run(tmp_path, NUMBA_VULKAN_CACHE_DIR=str(moved))
    assert list((moved / "kernels").glob("*.nvk"))
    assert _run(tmp_path, NUMBA_VULKAN_CACHE_DIR=str(moved))["hits"] == 1


def test_pipeline_cache_saved_per_driver(tmp_path):
    _write_module(tmp_path, 3)
    _run(tmp_path)
    files = list((tmp_path / "cache" / "pipelines").glob("*.bin"))
    assert len(files) == 1 and files[0].stat().st_size > 0
    _run(tmp_path)  # loads it (a corrupt or foreign file is ignored by the driver)
    files[0].write_bytes(b"garbage")
    assert _run(tmp_path)["hits"] == 1


def test_uncachable_global_warns(tmp_path, monkeypatch):
    import numpy as np

    import numba_vulkan as nv
    from numba_vulkan import config

    monkeypatch.setattr(config, "CACHE", 1)
    monkeypatch.setattr(config, "CACHE_DIR", str(tmp_path / "cache"))

    class Opaque:
        def __reduce__(self):
            raise TypeError("not picklable")

    token = Opaque()

    def kernel(x):
        i = nv.global_id(0)
        if i < x.size and token is not None:
            x[i] = 1

    with pytest.warns(nv.VulkanPerformanceWarning, match="not cached"):
        k = nv.jit(cache=True)(kernel)
        try:
            k.forall(4)(np.zeros(4, np.int32))
        except Exception:
            pass  # the kernel itself may not compile; the warning is what is tested


def test_clear_removes_the_entries(tmp_path, monkeypatch):
    from numba_vulkan import cache, config

    _write_module(tmp_path, 3)
    _run(tmp_path)
    monkeypatch.setattr(config, "CACHE_DIR", str(tmp_path / "cache"))
    assert list((tmp_path / "cache" / "kernels").glob("*.nvk"))
    cache.clear()
    assert not (tmp_path / "cache" / "kernels").exists()
    assert _run(tmp_path)["misses"] == 1


SHARED_CHILD = """
import json, sys
sys.path.insert(0, sys.argv[1])
import numpy as np
import numba_vulkan as nv

@nv.jit(cache=True)
def block_sums(x, out):
    buf = nv.shared.array(0, np.float32)  # sized at launch
    t = nv.local_id(0)
    g = nv.group_id(0)
    buf[t] = x[g * 64 + t]
    nv.barrier()
    if t == 0:
        s = np.float32(0)
        for j in range(64):
            s += buf[j]
        out[g] = s

x = np.arange(256, dtype=np.float32)
out = np.zeros(4, np.float32)
block_sums[4, 64, 0, 256](x, out)
print(json.dumps({"out": out.tolist(), "hits": sum(block_sums.stats.cache_hits.values())}))
"""


def test_kernels_with_dynamic_shared_memory_are_cached(tmp_path):
    env = dict(os.environ, PYTHONPATH=os.path.abspath(SRC), NUMBA_VULKAN_CACHE="1",
               NUMBA_VULKAN_CACHE_DIR=str(tmp_path / "cache"))  # fmt: skip
    (tmp_path / "k.py").write_text(SHARED_CHILD)
    want = [float(sum(range(64 * b, 64 * b + 64))) for b in range(4)]
    for hits in (0, 1):
        r = subprocess.run([sys.executable, str(tmp_path / "k.py"), str(tmp_path)], env=env,
                           capture_output=True, text=True, timeout=300)  # fmt: skip
        assert r.returncode == 0, r.stderr
        result = json.loads(r.stdout.strip().splitlines()[-1])
        assert result == {"out": want, "hits": hits}


CONSTANT_CHILD = """
import json, sys
import numpy as np
import numba_vulkan as nv

TABLE = np.arange(1000, dtype=np.float32) * 0.5  # too large to inline: a constant buffer

@nv.jit(cache=True)
def lookup(idx, out):
    i = nv.global_id(0)
    if i < out.size:
        out[i] = TABLE[idx[i]]

idx = np.array([0, 999, 500, 3], dtype=np.int32)
out = np.zeros(4, np.float32)
lookup.forall(4)(idx, out)
print(json.dumps({"out": out.tolist(), "hits": sum(lookup.stats.cache_hits.values())}))
"""


def test_kernels_with_constant_buffers_are_cached(tmp_path):
    env = dict(os.environ, PYTHONPATH=os.path.abspath(SRC), NUMBA_VULKAN_CACHE="1",
               NUMBA_VULKAN_CACHE_DIR=str(tmp_path / "cache"))  # fmt: skip
    (tmp_path / "c.py").write_text(CONSTANT_CHILD)
    for hits in (0, 1):  # the frozen values travel in the entry
        r = subprocess.run([sys.executable, str(tmp_path / "c.py")], env=env,
                           capture_output=True, text=True, timeout=300)  # fmt: skip
        assert r.returncode == 0, r.stderr
        result = json.loads(r.stdout.strip().splitlines()[-1])
        assert result == {"out": [0.0, 499.5, 250.0, 1.5], "hits": hits}


def test_a_global_device_array_is_not_cached_and_says_so(tmp_path, monkeypatch):
    import numpy as np

    import numba_vulkan as nv
    from numba_vulkan import config

    monkeypatch.setattr(config, "CACHE", 1)
    monkeypatch.setattr(config, "CACHE_DIR", str(tmp_path / "cache"))
    table = nv.to_device(np.arange(4, dtype=np.int32))

    def kernel(x):
        i = nv.global_id(0)
        if i < x.size:
            x[i] = table[i] + 1

    out = np.zeros(4, np.int32)
    with pytest.warns(nv.VulkanPerformanceWarning, match="not cached: .*global device array"):
        nv.jit(cache=True)(kernel).forall(4)(out)
    np.testing.assert_array_equal(out, [1, 2, 3, 4])
    assert not (tmp_path / "cache" / "kernels").exists()

RAISE_CHILD = """
import json, sys
sys.path.insert(0, sys.argv[1])
import numpy as np
import numba_vulkan as nv

class Odd(Exception):
    pass

@nv.jit(cache=True, boundscheck=True)
def k(x, out):
    i = nv.global_id(0)
    if i < out.size:
        if x[i] % 2:
            raise Odd("odd input")
        print("even", x[i])
        out[i] = x[x.size + i]  # out of bounds: IndexError

found = []
for x in (np.array([3]), np.array([4])):
    try:
        k.forall(x.size)(x, np.zeros(x.size))
    except (Odd, IndexError) as e:
        found.append([type(e).__name__, str(e)])
print(json.dumps({"found": found, "hits": sum(k.stats.cache_hits.values())}))
"""


def test_kernels_that_raise_and_print_decode_when_loaded_from_the_cache(tmp_path):
    env = dict(os.environ, PYTHONPATH=os.path.abspath(SRC), NUMBA_VULKAN_CACHE="1",
               NUMBA_VULKAN_CACHE_DIR=str(tmp_path / "cache"))  # fmt: skip
    (tmp_path / "r.py").write_text(RAISE_CHILD)
    for hits in (0, 1):
        r = subprocess.run([sys.executable, str(tmp_path / "r.py"), str(tmp_path)], env=env,
                           capture_output=True, text=True, timeout=300)  # fmt: skip
        assert r.returncode == 0, r.stderr
        lines = r.stdout.strip().splitlines()
        result = json.loads(lines[-1])
        assert result["hits"] == hits  # the second process decodes the cached kernels' sites
        (odd, odd_text), (index, index_text) = result["found"]
        assert odd == "Odd" and odd_text.startswith("odd input (in kernel 'k'")
        assert index == "IndexError"
        assert index_text.startswith("index 1 is out of bounds for axis 0 with size 1 (array 'x')")
        assert "even 4" in lines


# ---------------------------------------------------------------- trust


def _run_full(tmp_path, **env):
    """_run, with the child's stderr."""
    child_env = dict(os.environ, PYTHONPATH=os.path.abspath(SRC), NUMBA_VULKAN_CACHE="1")
    child_env.setdefault("NUMBA_VULKAN_CACHE_DIR", str(tmp_path / "cache"))
    child_env.update(env)
    r = subprocess.run([sys.executable, "-c", CHILD, str(tmp_path), ""], env=child_env,
                       capture_output=True, text=True, timeout=300)  # fmt: skip
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout.strip().splitlines()[-1]), r.stderr


def _planted_pickle(marker):
    """A cache entry whose unpickling creates `marker` (what another user could plant)."""
    import hashlib
    import pickle

    class Plant:
        def __reduce__(self):
            return (os.system, (f"touch {marker}",))

    data = pickle.dumps({"key": "x", "kernel": Plant()}, protocol=4)
    return b"NVKCACHE1\n" + hashlib.sha256(data).digest() + data


def test_an_entry_others_can_write_is_never_unpickled(tmp_path):
    """A cache folder writable by other users (a shared NUMBA_VULKAN_CACHE_DIR of mode 777):
    an entry planted there is not read, the kernel is compiled, and a warning says why."""
    _write_module(tmp_path, 3)
    first, _ = _run_full(tmp_path)
    (entry,) = (tmp_path / "cache" / "kernels").glob("kmod.triple-*.nvk")
    marker = tmp_path / "planted-code-ran"
    entry.write_bytes(_planted_pickle(marker))
    os.chmod(tmp_path / "cache", 0o777)
    os.chmod(tmp_path / "cache" / "kernels", 0o777)
    out, err = _run_full(tmp_path)
    assert not marker.exists()
    assert out["out"] == first["out"] and out["misses"] == 1
    assert "writable by others" in err and "NUMBA_VULKAN_CACHE_DIR" in err
    if os.getuid() == 0:  # a folder of another user, private to them, is not trusted either
        os.chmod(tmp_path / "cache", 0o755)
        os.chmod(tmp_path / "cache" / "kernels", 0o755)
        os.chown(tmp_path / "cache" / "kernels", 12345, 12345)
        out, err = _run_full(tmp_path)
        assert not marker.exists() and out["misses"] == 1 and "another user" in err


def test_a_damaged_entry_is_deleted_and_rebuilt(tmp_path):
    _write_module(tmp_path, 3)
    first, _ = _run_full(tmp_path)
    (entry,) = (tmp_path / "cache" / "kernels").glob("kmod.triple-*.nvk")
    data = bytearray(entry.read_bytes())
    data[len(data) // 2] ^= 0x10  # one flipped bit in the pickle
    entry.write_bytes(bytes(data))
    out, err = _run_full(tmp_path)
    assert out["out"] == first["out"] and out["misses"] == 1
    assert "damaged" in err and "checksum" in err
    again, err = _run_full(tmp_path)  # rewritten by the second run
    assert again["hits"] == 1 and "damaged" not in err


def test_an_entry_of_the_old_format_is_replaced(tmp_path):
    """An entry without the checksummed header (a pickle alone) is never unpickled."""
    import pickle

    _write_module(tmp_path, 3)
    first, _ = _run_full(tmp_path)
    (entry,) = (tmp_path / "cache" / "kernels").glob("kmod.triple-*.nvk")
    entry.write_bytes(pickle.dumps({"key": "x"}))
    out, err = _run_full(tmp_path)
    assert out["misses"] == 1 and "damaged" in err


def test_key_does_not_depend_on_reference_counts():
    """marshal's bytes of a code object depend on how many references its constants have
    (a module compiled from source against the same module loaded from __pycache__): the
    key must not, or every second process recompiles and keeps a second entry."""
    import marshal

    from numba_vulkan import cache

    src = "def f(x, out):\n    out[0] = x[0] + 12345678901234567890 + 2.5\n"
    ns = {}
    exec(compile(src, "kref.py", "exec"), ns)  # noqa: S102
    f = ns["f"]
    before = cache.kernel_key(f, (), {}, None)
    marshalled = marshal.dumps(f.__code__)
    held = list(f.__code__.co_consts)  # more references to the constants
    assert marshal.dumps(f.__code__) != marshalled  # what the old key hashed changed
    assert cache.kernel_key(f, (), {}, None) == before
    del held
