"""Run numba-cuda's own kernel tests (tests/cudapy) on numba_vulkan.cuda.

Usage:
    python3 scripts/run_cudapy.py NUMBA_CUDA_SRC [test_file ...] [--timeout S] [--json OUT]
    python3 scripts/run_cudapy.py --pypi [...]     # numba-cuda 0.30.4 from PyPI instead
    python3 scripts/run_cudapy.py --report OUT     # the report of a stored run, again

NUMBA_CUDA_SRC is a numba-cuda source tree (a checkout, or an unpacked sdist/wheel);
the tests are read from its numba_cuda/numba/cuda/tests/cudapy (or numba/cuda/tests/cudapy)
and nothing is copied into this repository. Each file is ported by changing imports only:
``from numba import cuda`` -> ``from numba_vulkan import cuda`` and ``from numba.cuda
import X`` -> ``from numba_vulkan.cuda import X`` (the program's change), and the test
scaffolding (numba.cuda.testing, numba.cuda.tests.support, numba-cuda's config) pointed at
the stand-ins of scripts/cudapy_shim.py (numba-cuda's registry of llvmlite lowerings,
numba.cuda.cudaimpl, to one no target uses, so a test file registering an extension
example still imports; numba.cuda.cgutils to Numba's). Imports of numba-cuda's compiler internals
(numba.cuda.cudadrv, .compiler, .core.ir ...) are left pointing into numba_vulkan.cuda,
where they do not exist: those files fail to import and are classified as relying on
CUDA internals.

Each file runs in its own process (a crash or hang loses one file, not the run), under
pytest, which collects numba-cuda's unittest classes and its plain pytest functions alike
(marks included: an expected failure that fails is a skip naming it), and each test under a
timeout (SIGALRM, --timeout seconds, 60 by default). The report gives
pass/fail/error/skip counts per file, the totals, and every failure classified by cause
(cudapy_classify.py); docs/cuda-compat.md records a run.
"""

import argparse
import json
import os
import pathlib
import re
import signal
import subprocess
import sys
import tempfile
import time

import pytest

HERE = pathlib.Path(__file__).resolve().parent
TESTS_UNDER = ("numba_cuda/numba/cuda/tests/cudapy", "numba/cuda/tests/cudapy", ".")
PYPI_VERSION = "0.30.4"

# Scaffolding modules -> stand-ins (longest names first; whole dotted names only).
MODULE_MAP = [
    ("numba.cuda.testing", "_cudapy_testing"),
    ("numba.cuda.tests.support", "_cudapy_support"),
    ("numba.cuda.tests.cudapy", "_cudapy_tests"),
    ("numba.cuda.core.config", "_cudapy_config"),
    ("numba.cuda.core.errors", "numba.core.errors"),
    ("numba.cuda.core", "_cudapy_core"),
    ("numba.cuda.cudaimpl", "_cudapy_cudaimpl"),
    ("numba.cuda.cgutils", "numba.core.cgutils"),
    ("numba.cuda.utils", "numba.core.utils"),
    ("numba.cuda.np.numpy_support", "numba.np.numpy_support"),
    ("numba.cuda.np", "numba.np"),
    ("numba.cuda.misc", "numba.misc"),
    ("numba.cuda.typing", "numba.core.typing"),
    # everything else of numba.cuda is the program's API: ours
    ("numba.cuda", "numba_vulkan.cuda"),
]
SCAFFOLD_NAMES = {"config": "_cudapy_config", "cgutils": "numba.core.cgutils"}  # `from numba.cuda import config`


def _map_module(name):
    for old, new in MODULE_MAP:
        if name == old or name.startswith(old + "."):
            return new + name[len(old):]
    return name


def port(source):
    """The test file with its imports changed (and nothing else)."""
    def numba_import(m):  # from numba import cuda[, types ...]: only cuda is ours
        rest = m.group(2).strip().lstrip(",").strip()
        return m.group(1) + "from numba_vulkan import cuda" + (
            f"; from numba import {rest}" if rest else "")

    source = re.sub(r"^(\s*)from numba import cuda\b([^\n(]*)$", numba_import, source,
                    flags=re.M)

    def from_import(m):
        indent, module, names = m.group(1), m.group(2), m.group(3)
        if module == "numba.cuda":
            listed = [n.strip() for n in names.strip("()\n ").replace("\n", " ").split(",")]
            scaffold = [n for n in listed if n.split(" as ")[0] in SCAFFOLD_NAMES]
            rest = [n for n in listed if n and n not in scaffold]
            parts = [f"import {SCAFFOLD_NAMES[n.split(' as ')[0]]} as {n.split(' as ')[-1]}"
                     for n in scaffold]
            if rest:
                parts.append(f"from numba_vulkan.cuda import ({', '.join(rest)})")
            return indent + "; ".join(parts)
        return f"{indent}from {_map_module(module)} import {names}"

    source = re.sub(r"^(\s*)from (numba\.cuda[\w.]*) import (\([^)]*\)|[^\n]*)", from_import,
                    source, flags=re.M)
    source = re.sub(r"^(\s*)import (numba\.cuda[\w.]*)",
                    lambda m: f"{m.group(1)}import {_map_module(m.group(2))}", source, flags=re.M)
    return source


def find_tests(root):
    for sub in TESTS_UNDER:
        d = pathlib.Path(root) / sub
        if d.is_dir() and any(d.glob("test_*.py")):
            return d
    raise SystemExit(f"no tests/cudapy directory under {root}")


def fetch_pypi(dest):
    """numba-cuda's sdist from PyPI (pip download), unpacked: its tests are in it."""
    subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:",
                    f"numba-cuda=={PYPI_VERSION}", "-d", dest], check=True)
    archive = next(pathlib.Path(dest).glob("numba_cuda-*"))
    import tarfile
    with tarfile.open(archive) as tar:
        tar.extractall(dest, filter="data")
    return next(p for p in pathlib.Path(dest).iterdir() if p.is_dir())


def make_package(tests_dir, out):
    """_cudapy_tests: every .py of tests/cudapy ported, so usecase imports resolve."""
    pkg = pathlib.Path(out) / "_cudapy_tests"
    pkg.mkdir()
    # the stand-ins are installed by the package itself, so that a process a test spawns
    # (multiprocessing's "spawn") imports the test module as the run did
    (pkg / "__init__.py").write_text("import cudapy_shim\n\ncudapy_shim.install()\n")
    for path in tests_dir.glob("*.py"):
        if path.name != "__init__.py":
            (pkg / path.name).write_text(port(path.read_text()))
    return pkg


# ------------------------------------------------------------------ one file, in a child


class _Timeout(BaseException):
    """Raised by SIGALRM in a test that ran too long (BaseException: tests cannot eat it)."""


def _why(exc_text):
    lines = [ln for ln in exc_text.strip().splitlines() if ln and not ln.startswith(" ")]
    return re.sub(r"\x1b\[[0-9;]*m", "", lines[-1] if lines else exc_text)[:400]


def _one_line(message):
    """'Type: first line of the message' from pytest's 'Type: message' (colours removed)."""
    message = re.sub(r"\x1b\[[0-9;]*m", "", message)
    qual, sep, text = message.partition(": ")
    if not sep or " " in qual:  # not 'Type: ...'
        qual, text = "", message
    line = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    if qual.endswith("_Timeout"):
        qual = "Timeout"
    return (f"{qual}: {line}" if qual else line)[:400]


class _Collector:
    """A pytest plugin keeping the first outcome of each test as [kind, one line].

    pytest collects both styles numba-cuda uses: unittest.TestCase classes and plain
    ``def test_...`` functions (with their marks: xfail, skipif, parametrize). An
    expected failure (``unittest.expectedFailure``, ``pytest.mark.xfail``) that fails
    is a SKIP naming it, not a pass; an unexpected success is a FAIL.
    """

    def __init__(self, timeout):
        self.timeout = timeout
        self.outcomes = {}

    @staticmethod
    def _test_id(nodeid):
        path, _, rest = nodeid.partition("::")
        return ".".join([pathlib.Path(path).stem] + [p for p in rest.split("::") if p])

    def _set(self, test, kind, line):
        if self.outcomes.get(test, ["PASS"])[0] == "PASS":
            self.outcomes[test] = [kind, line]

    def pytest_collectreport(self, report):
        if report.skipped:  # pytest.skip(allow_module_level=True) or importorskip at import
            reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else ""
            self._set(self._test_id(report.nodeid) or report.nodeid, "SKIP",
                      reason.removeprefix("Skipped: ")[:200])
        if report.failed:  # the file (or a class) could not be imported or collected
            name = self._test_id(report.nodeid) or report.nodeid
            text = str(report.longrepr)
            errors = [ln[1:].strip() for ln in text.splitlines() if ln.startswith("E ")]
            self._set(name, "ERROR", _why(errors[-1] if errors else text))

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item, nextitem):
        def on_alarm(signum, frame):
            raise _Timeout(f"timeout after {self.timeout} s")

        signal.signal(signal.SIGALRM, on_alarm)
        signal.alarm(self.timeout)
        try:
            yield
        finally:
            signal.alarm(0)

    def pytest_runtest_logreport(self, report):
        test = self._test_id(report.nodeid)
        self.outcomes.setdefault(test, ["PASS", ""])
        if hasattr(report, "wasxfail"):
            if report.skipped:
                self._set(test, "SKIP", f"expected failure (the test's own mark) {report.wasxfail}"[:200])
            else:
                self._set(test, "FAIL", "AssertionError: unexpected success")
        elif report.skipped:
            reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
            self._set(test, "SKIP", reason.removeprefix("Skipped: ")[:200])
        elif report.failed:
            crash = getattr(report.longrepr, "reprcrash", None)
            text = _one_line(crash.message if crash else str(report.longrepr))
            kind = "FAIL" if text.startswith(("AssertionError", "Failed:")) else "ERROR"
            self._set(test, kind, text)


def run_one(pkg_parent, name, timeout):
    """Run one ported test module under pytest; return {test_id: [outcome, reason]}."""
    sys.path.insert(0, str(pkg_parent))
    sys.path.insert(0, str(HERE))
    collector = _Collector(timeout)
    ini = pathlib.Path(pkg_parent) / "pytest.ini"  # no configuration from folders above
    ini.write_text("[pytest]\n")
    path = pathlib.Path(pkg_parent) / "_cudapy_tests" / f"{name}.py"
    pytest.main([str(path), "-c", str(ini), "--rootdir", str(pkg_parent), "-q", "-s",
                 "-p", "no:cacheprovider", "-W", "ignore::pytest.PytestCollectionWarning"],
                plugins=[collector])
    if not collector.outcomes:  # nothing collected: report the file, as a file that fails
        collector.outcomes[name] = ["ERROR", "no tests collected"]
    return collector.outcomes


# ------------------------------------------------------------------ the whole run


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("src", nargs="?", help="numba-cuda source tree")
    ap.add_argument("files", nargs="*", help="test file names (default: all test_*.py)")
    ap.add_argument("--pypi", action="store_true", help=f"download numba-cuda {PYPI_VERSION}")
    ap.add_argument("--timeout", type=int, default=60, help="seconds per test")
    ap.add_argument("--file-timeout", type=int, default=900, help="seconds per file")
    ap.add_argument("--json", help="write all outcomes to this file")
    ap.add_argument("--report", metavar="JSON", help="print the report of an earlier --json")
    ap.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        print("@@RESULT " + json.dumps(run_one(args.child[0], args.child[1], args.timeout)))
        return 0
    from cudapy_classify import classify, print_report

    if args.report:  # classify again (the rules may have changed) and print
        stored = json.loads(pathlib.Path(args.report).read_text())
        print_report({name: {t: (k, r, classify(k, r, t)) for t, (k, r, _) in tests.items()}
                      for name, tests in stored.items()})
        return 0

    with tempfile.TemporaryDirectory(prefix="cudapy-") as tmp:
        src = fetch_pypi(tmp) if args.pypi else pathlib.Path(args.src)
        tests_dir = find_tests(src)
        make_package(tests_dir, tmp)
        names = [f.removesuffix(".py") for f in args.files] or sorted(
            p.stem for p in tests_dir.glob("test_*.py"))
        results = {}
        start = time.time()
        for name in names:
            t0 = time.time()
            env = dict(os.environ, PYTHONPATH=os.pathsep.join(
                [str(HERE.parent / "src"), tmp, str(HERE), os.environ.get("PYTHONPATH", "")]))
            try:
                proc = subprocess.run(
                    [sys.executable, __file__, "--child", tmp, name, "--timeout", str(args.timeout)],
                    capture_output=True, text=True, timeout=args.file_timeout, env=env)
                line = [ln for ln in proc.stdout.splitlines() if ln.startswith("@@RESULT ")]
                out = json.loads(line[-1][9:]) if line else {
                    name: ["ERROR", f"process died (rc {proc.returncode}): "
                           + _why(proc.stderr or "no output")]}
            except subprocess.TimeoutExpired:
                out = {name: ["ERROR", f"Timeout: file ran past {args.file_timeout} s"]}
            results[name] = out
            counts = {}
            for kind, _ in out.values():
                counts[kind] = counts.get(kind, 0) + 1
            print(f"{name:45} {counts} {time.time() - t0:.0f} s", flush=True)
        print(f"total time {time.time() - start:.0f} s")
    classified = {name: {t: (k, r, classify(k, r, t)) for t, (k, r) in out.items()}
                  for name, out in results.items()}
    print_report(classified)
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(classified, indent=1))
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(HERE))
    sys.exit(main(sys.argv[1:]))
