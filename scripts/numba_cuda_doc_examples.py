"""Run numba-cuda's documentation examples with only the numba.cuda imports changed.

Usage: python3 scripts/numba_cuda_doc_examples.py PATH_TO_NUMBA_CUDA_CHECKOUT [name ...]

numba-cuda keeps its documentation examples as unittest files
(numba_cuda/numba/cuda/tests/doc_examples/test_*.py; docs/source/user/examples.rst
includes them). This script reads each file from the checkout (nothing is copied
into this repository), changes the example's imports of numba.cuda
(``from numba import cuda`` -> ``from numba_vulkan import cuda``,
``from numba.cuda...`` -> ``from numba_vulkan.cuda...``), points the test scaffolding
imports at stand-ins (numba.cuda.tests.support at numba.tests.support, the installed
Numba's copy; numba.cuda.testing at a module whose CUDATestCase is unittest.TestCase
and whose skip_* decorators skip nothing, since those would probe for a CUDA driver),
runs the tests and prints one line per test: PASS, FAIL or ERROR with the first line
of the error. docs/cuda-compat.md records the results.
"""

import io
import pathlib
import re
import sys
import types
import unittest

EXAMPLES = "numba_cuda/numba/cuda/tests/doc_examples"


def port(source):
    """The example's source with its numba.cuda imports changed (and only those)."""
    source = source.replace("from numba.cuda.tests.support import", "from numba.tests.support import")
    source = source.replace("from numba.cuda.testing import", "from _nvk_doc_testing import")
    lines = []
    for line in source.splitlines():
        stripped = line.lstrip()
        indent = line[: len(line) - len(stripped)]
        if indent and re.match(r"from numba import cuda\b", stripped):
            rest = stripped[len("from numba import cuda"):].lstrip(", ")
            line = indent + "from numba_vulkan import cuda" + (
                f"; from numba import {rest}" if rest else "")
        elif indent and re.match(r"from numba\.cuda[. ]", stripped):
            line = indent + stripped.replace("from numba.cuda", "from numba_vulkan.cuda", 1)
        lines.append(line)
    return "\n".join(lines) + "\n"


def _testing_stand_in():
    """numba.cuda.testing's names the examples use: CUDATestCase and skip decorators."""
    module = types.ModuleType("_nvk_doc_testing")
    module.CUDATestCase = unittest.TestCase

    def __getattr__(name):
        if name.startswith("skip"):
            return lambda *args, **kwargs: (
                args[0] if len(args) == 1 and callable(args[0]) and not kwargs else
                (lambda obj: obj))
        raise AttributeError(name)

    module.__getattr__ = __getattr__
    sys.modules[module.__name__] = module


def run_file(path):
    _testing_stand_in()
    module = types.ModuleType(path.stem)
    module.__file__ = str(path)
    exec(compile(port(path.read_text()), str(path), "exec"), module.__dict__)
    suite = unittest.defaultTestLoader.loadTestsFromModule(module)
    for name, obj in vars(module).items():  # pytest-style test functions (test_matmul.py)
        if name.startswith("test") and isinstance(obj, types.FunctionType):
            suite.addTest(unittest.FunctionTestCase(obj, description=name))
    result = unittest.TestResult()
    outcomes = {test.id(): ("PASS", "") for test in _tests(suite)}  # run() empties the suite
    suite.run(result)
    for kind, items in (("FAIL", result.failures), ("ERROR", result.errors)):
        for test, trace in items:
            plain = re.sub(r"\x1b\[[0-9;]*m", "", trace)
            lines = [ln for ln in plain.splitlines() if re.match(r"[\w.]+(Error|Exception)\b", ln)]
            outcomes[test.id()] = (kind, (lines[-1] if lines else plain.strip()[-200:])[:240])
    for test, why in result.skipped:
        outcomes[test.id()] = ("SKIP", why)
    return outcomes


def _tests(suite):
    for t in suite:
        if isinstance(t, unittest.TestSuite):
            yield from _tests(t)
        else:
            yield t


def main(argv):
    root = pathlib.Path(argv[1]) / EXAMPLES
    names = argv[2:] or sorted(p.stem for p in root.glob("test_*.py"))
    counts = {}
    for name in names:
        try:
            outcomes = run_file(root / f"{name}.py")
        except Exception as e:  # noqa: BLE001 - an import that fails is a result too
            outcomes = {name: ("ERROR", f"{type(e).__name__}: {str(e).splitlines()[0][:200]}")}
        for test, (kind, why) in outcomes.items():
            counts[kind] = counts.get(kind, 0) + 1
            print(f"{kind:5} {test} {why}")
    print(counts)


if __name__ == "__main__":
    sys.stdout = io.TextIOWrapper(sys.stdout.buffer, line_buffering=True)
    main(sys.argv)
