"""The drawing of the house: no module of numba_vulkan imports, directly or through others,
a module that imports it back. Every import counts, also one inside a function (it is an
arrow all the same, only drawn later) and one under ``if TYPE_CHECKING``. The floors are
described in docs/architecture.md ("Floors")."""

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "src" / "numba_vulkan"


def _modules(package=PACKAGE):
    """{dotted name: path} of every module of `package` (a package is its __init__)."""
    found = {}
    for path in package.rglob("*.py"):
        parts = list(path.relative_to(package.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    found[f"{package.name}._core"] = None  # the C++ extension: imports nothing of ours
    return found


def _imports(name, path, modules):
    """The package's modules that module `name` imports (`from a import b` counts as an
    import of a.b where that is a module, else of a)."""
    tree = ast.parse(path.read_text(), str(path))
    here = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                stem = here[: len(here) - node.level + 1]
                base = ".".join(stem + ([base] if base else []))
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base
                       for a in node.names]  # fmt: skip
        else:
            continue
        for target in targets:
            while target and target not in modules:
                target = target.rpartition(".")[0]
            if target and target != name:
                out.add(target)
    return out


def _cycle(graph):
    """One cycle of `graph` as a list of modules (first repeated at the end), or None."""
    state = {}  # module -> 1 on the current path, 2 finished

    def visit(node, path):
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            if nxt not in state:
                found = visit(nxt, path)
                if found:
                    return found
        path.pop()
        state[node] = 2
        return None

    for start in sorted(graph):
        if start not in state:
            found = visit(start, [])
            if found:
                return found
    return None


def _graph(package=PACKAGE):
    modules = _modules(package)
    return {name: (_imports(name, path, modules) if path else set())
            for name, path in modules.items()}  # fmt: skip


def test_no_import_circles():
    cycle = _cycle(_graph())
    assert cycle is None, "an import circle: " + " -> ".join(cycle)


def test_a_deferred_import_closes_a_circle(tmp_path):
    """The check sees a circle closed by an import inside a function, and arrows in
    relative and absolute form, and ignores what lies outside the package."""
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("import numpy\nfrom . import a\n")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from .sub import b\n")
    (pkg / "sub" / "b.py").write_text("def f():\n    from ..a import g\n")
    assert _cycle(_graph(pkg)) == ["pkg.a", "pkg.sub.b", "pkg.a"]
    (pkg / "sub" / "b.py").write_text("import pkg.sub\n")
    assert _cycle(_graph(pkg)) is None
