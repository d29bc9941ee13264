"""Disk caches: compiled kernels (``@jit(cache=True)``) and each device's VkPipelineCache.

Kernels. An entry is everything the runtime needs to launch a specialisation
(``CompiledKernel.to_record``: SPIR-V words, parameter layout and argument declarations,
grid parameters, capabilities, mode), pickled into
``<cache dir>/kernels/<module>.<name>-<key>.nvk``. The key is a SHA-256 of:

- the versions of numba_vulkan, Numba, NumPy and Python, and the size and
  mtime of the compiled ``_core`` extension and of every Python file of the
  package (a rebuilt or edited compiler is a new one, also between releases);
- the kernel's bytecode (its code object's instructions, names and constants, nested
  code included; not ``marshal``'s bytes, which differ between a module compiled from
  source and the same module loaded from ``__pycache__``);
- the values of the globals and closure variables its code names, recursively
  through every function, ``@jit`` kernel or ``njit`` function it reaches
  (numbers, strings, tuples, arrays by content, modules and classes by name;
  anything else by its pickle, and a value that cannot be pickled makes the
  kernel uncachable, with a warning);
- the contents of the source file of every function reached;
- the argument types, the narrowing mode, the code generation options, the
  device's NaN-preservation widths, the push-constant limit and
  NUMBA_VULKAN_UNROLL.

A hit builds the CompiledKernel from the entry alone: no Numba typing, no
compilation. Writes are atomic (temporary file + rename), so concurrent processes
are safe.

Trust. An entry is a pickle, and unpickling runs code: entries are read (and written)
only where the cache folder, its subfolders and the file belong to this user (or root)
and no one else can write them (runtime/disk.trusted; a folder that fails is named in a
warning, and the kernel is compiled as without a cache). Each entry starts with a magic
line and the SHA-256 of the rest, checked before unpickling; its SPIR-V is validated
before the driver sees it. A damaged entry is deleted with a warning and rebuilt.

Pipelines. ``vkGetPipelineCacheData`` of each device used is saved at exit to
``<cache dir>/pipelines/<driver key hash>.bin`` and merged into the device's
cache when a later process opens it (the driver itself rejects data of another
device or driver version).

``NUMBA_VULKAN_CACHE=0`` turns both off; ``NUMBA_VULKAN_CACHE_DIR`` moves the
folder (default ``$XDG_CACHE_HOME/numba_vulkan``, i.e. ``~/.cache/numba_vulkan``).
"""

import dis
import functools
import hashlib
import os
import pickle
import sys
import types
import warnings

import numpy as np

from .runtime.disk import cache_dir, enabled, trusted, write_atomic  # noqa: F401 (enabled: the API)

_FORMAT = 4  # bump when the entry layout changes (2: ArgDecl lists; 3: hidden arrays as
# (name, source); 4: a checksummed header, a key without marshal's bytes)


class Uncachable(Exception):
    """A value the key cannot describe (the kernel is then compiled every time)."""


# ---------------------------------------------------------------- keys


@functools.cache
def versions():
    """What every kernel's key holds of this build: the cache format, numba_vulkan's, Numba's,
    NumPy's and Python's versions and the extension's build identity (computed once)."""
    import numba

    from . import _core
    from ._version import __version__

    try:
        build = _build_identity(os.path.dirname(os.path.abspath(__file__)), _core.__file__)
    except (OSError, AttributeError):
        build = None
    return (_FORMAT, __version__, numba.__version__, np.__version__, sys.version, build)


def _build_identity(package, core_file):
    """What changes whenever the compiler does. An installed package: the hash of its
    wheel's RECORD (every file's sha256; one read, where a stat of each of its 120 files
    took 3 of a cached first call's 6 ms). A source tree (PYTHONPATH=src, an editable
    install): the size and mtime of the extension and of every .py file."""
    parent = os.path.dirname(package)
    for name in os.listdir(parent):
        if name.startswith("numba_vulkan-") and name.endswith(".dist-info"):
            with open(os.path.join(parent, name, "RECORD"), "rb") as f:
                return hashlib.sha256(f.read()).hexdigest()
    st = os.stat(core_file)
    build = [(os.path.basename(core_file), st.st_size, st.st_mtime_ns)]
    _python_files(package, "", build)
    return build


def _python_files(folder, prefix, out):
    """(path relative to the package, size, mtime) of every .py file under `folder`, in
    name order."""
    with os.scandir(folder) as it:
        entries = sorted(it, key=lambda e: e.name)
    for e in entries:
        if e.is_dir(follow_symlinks=False):
            if e.name != "__pycache__":
                _python_files(e.path, prefix + e.name + "/", out)
        elif e.name.endswith(".py"):
            st = e.stat()
            out.append((prefix + e.name, st.st_size, st.st_mtime_ns))


class _Hasher:
    """Feeds the functions a kernel reaches, and their values, into one hash."""

    def __init__(self):
        self.h = hashlib.sha256()
        self.seen = set()
        self.files = {}

    def add(self, *parts):
        for p in parts:
            self.h.update(repr(p).encode())
            self.h.update(b"\0")

    def function(self, func):
        if id(func) in self.seen:
            self.add("seen", getattr(func, "__qualname__", "?"))
            return
        self.seen.add(id(func))
        code = func.__code__
        self.add("function", func.__module__, func.__qualname__)
        self.code(code)
        self.source_file(code.co_filename)
        names = set()
        _code_names(code, names)
        globs = func.__globals__
        for name in sorted(names):
            if name in globs:
                self.add("global", name)
                self.value(globs[name])
        for name, cell in zip(code.co_freevars, func.__closure__ or ()):
            self.add("free", name)
            try:
                self.value(cell.cell_contents)
            except ValueError:  # an empty cell
                self.add("empty")
        self.add("defaults", repr(func.__defaults__))

    def code(self, code):
        """A code object by what it does, not by marshal's bytes: those depend on reference
        counts (marshal marks objects seen twice), which differ between a module compiled
        from source and the same module loaded from __pycache__."""
        self.add("code", code.co_argcount, code.co_posonlyargcount, code.co_kwonlyargcount,
                 code.co_flags, code.co_names, code.co_varnames, code.co_freevars,
                 code.co_cellvars)  # fmt: skip
        self.h.update(code.co_code)
        for const in code.co_consts:
            if isinstance(const, types.CodeType):
                self.code(const)
            else:
                self.add(type(const).__name__, const)

    def source_file(self, path):
        if path in self.files:
            return
        try:
            with open(path, "rb") as f:
                digest = hashlib.sha256(f.read()).hexdigest()
        except OSError:  # "<string>" and the like: the bytecode is all there is
            digest = None
        self.files[path] = digest
        self.add("file", path, digest)

    def value(self, v):
        from .stubs import Stub
        from .typing.devfn import is_nv_jitted

        if v is None or isinstance(v, (bool, int, float, complex, str, bytes)):
            self.add(type(v).__name__, v)
        elif isinstance(v, np.generic):
            self.add("np", v.dtype.str, v.tobytes())
        elif isinstance(v, np.ndarray):
            self.add("ndarray", v.dtype.str, v.shape, hashlib.sha256(v.tobytes()).hexdigest())
        elif isinstance(v, (tuple, list, frozenset)):
            items = sorted(v, key=repr) if isinstance(v, frozenset) else v
            self.add(type(v).__name__, len(v))
            for item in items:
                self.value(item)
        elif _is_device_array(v):  # used in place by the kernel: no entry can hold it
            raise Uncachable("a global device array (a kernel that uses one in place is "
                             "compiled in each process; pass it as an argument to cache)")
        elif isinstance(v, types.ModuleType):
            self.add("module", v.__name__)
        elif is_nv_jitted(v):
            self.add("kernel", v.options)
            self.function(v.py_func)
        elif isinstance(v, Stub):
            self.add("stub", v.__name__)
        elif isinstance(v, types.FunctionType):
            self.function(v)
        elif hasattr(v, "py_func") and isinstance(v.py_func, types.FunctionType):
            self.add("numba dispatcher", type(v).__name__, getattr(v, "targetoptions", None))
            self.function(v.py_func)
        elif isinstance(v, type):
            self.add("class", v.__module__, v.__qualname__)
        elif isinstance(v, types.BuiltinFunctionType):
            self.add("builtin", getattr(v, "__module__", None), v.__qualname__)
        else:
            try:
                self.h.update(pickle.dumps(v, protocol=4))
            except Exception as e:
                raise Uncachable(f"{type(v).__name__} value {v!r:.60} ({e})") from None


def _is_device_array(value):
    from .runtime import DeviceArray

    return isinstance(value, DeviceArray)


def _code_names(code, out):
    """The global names `code` (and code nested in it) loads; attribute names are
    not globals, so they do not drag unrelated module values into the key."""
    for ins in dis.get_instructions(code):
        if ins.opname in ("LOAD_GLOBAL", "LOAD_NAME"):
            out.add(ins.argval)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            _code_names(const, out)


def kernel_key(pyfunc, argtypes, options, mode, extra=()):
    """The SHA-256 hex key of one specialisation (raises Uncachable)."""
    h = _Hasher()
    h.add("versions", versions())
    h.function(pyfunc)
    h.add("argtypes", tuple(str(t) for t in argtypes), tuple(repr(t) for t in argtypes))
    h.add("mode", mode, "options", options, "extra", extra)
    return h.h.hexdigest()


def _entry_path(pyfunc, key):
    name = f"{getattr(pyfunc, '__module__', '') or ''}.{pyfunc.__qualname__}"
    name = "".join(c if c.isalnum() or c in "._-" else "_" for c in name)[:80]
    return os.path.join(cache_dir(), "kernels", f"{name}-{key[:40]}.nvk")


#: An entry's first bytes: this magic, then the SHA-256 of the rest (the pickle).
_MAGIC = b"NVKCACHE1\n"


def load_kernel(pyfunc, key):
    """The CompiledKernel cached under `key`, or None.

    An entry is read only where trusted() says no other user can have written it (a pickle
    runs code when loaded); its checksum is checked before it is unpickled, and its SPIR-V
    validated before the driver sees it. A damaged entry is deleted with a warning (the
    kernel is compiled again and the entry rewritten)."""
    from . import _core
    from .codegen import CompiledKernel

    path = _entry_path(pyfunc, key)
    try:
        if not trusted(path):
            return None
        with open(path, "rb") as f:
            data = f.read()
    except OSError:  # missing or unreadable: a miss
        return None
    try:
        head = len(_MAGIC) + 32
        if data[: len(_MAGIC)] != _MAGIC:
            raise ValueError("not a numba_vulkan cache entry of this format")
        if hashlib.sha256(data[head:]).digest() != data[len(_MAGIC) : head]:
            raise ValueError("its checksum does not match its contents")
        record = pickle.loads(data[head:])  # noqa: S301 - trusted, checksummed
        if record.get("key") != key:
            raise ValueError("it was written for another key")
        kernel = CompiledKernel.from_record(record["kernel"])
        _core.validate(kernel.words)
        return kernel
    except Exception as e:  # noqa: BLE001 - any damage: say so, drop it, compile again
        warnings.warn(f"numba_vulkan's cache entry {path} for kernel {pyfunc.__name__!r} is "
                      f"damaged ({str(e).splitlines()[0] if str(e) else type(e).__name__}): "
                      "deleted; the kernel is compiled again", RuntimeWarning, stacklevel=4)  # fmt: skip
        try:
            os.unlink(path)
        except OSError:
            pass
        return None


def store_kernel(pyfunc, key, compiled):
    """Write `compiled` under `key`; failures to write only cost a compilation later."""
    path = _entry_path(pyfunc, key)
    try:
        data = pickle.dumps({"key": key, "kernel": compiled.to_record()}, protocol=4)
    except Exception as e:
        warnings.warn(f"kernel {pyfunc.__name__!r} cannot be cached: {e}", RuntimeWarning,
                      stacklevel=3)  # fmt: skip
        return
    write_atomic(path, _MAGIC + hashlib.sha256(data).digest() + data)


def clear():
    """Delete every cached kernel and pipeline cache (entries of old sources stay
    otherwise: a changed kernel gets a new entry, the old one is never read again)."""
    import shutil

    for sub in ("kernels", "pipelines"):
        shutil.rmtree(os.path.join(cache_dir(), sub), ignore_errors=True)


# ---------------------------------------------------------------- pipeline caches
