"""Run every numba-cuda documentation kernel we hold (only the import changed) and print
PASS/FAIL per kernel, then the counts docs/cuda-compat.md records.

Usage: python3 scripts/run_cuda_docs.py [--json OUT] [pytest options, e.g. -k matmul]

The kernels live in tests/device/test_cuda_doc_examples.py (examples.rst),
test_cuda_doc_guide.py (the other user guide pages) and test_cuda_doc_refused.py
(those Vulkan cannot run, which must give our VulkanUnsupportedError); each file's
DOC_KERNELS says which page and which kernels each test runs. This runs those tests
through pytest on the default device (lavapipe here, the GPU on the H200: set
NUMBA_VULKAN_DEVICE to pick another) at the documentation's own sizes, with the time of
each, and counts what ran: @cuda.jit kernels, other documented functions (cuda.reduce,
vectorize, device functions) and refusals.
"""

import argparse
import importlib
import importlib.util
import json
import os
import pathlib
import sys
import time

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
FILES = ("test_cuda_doc_examples", "test_cuda_doc_guide", "test_cuda_doc_refused")


class _Collect:
    """A pytest plugin keeping each test's outcome, duration and first error line."""

    def __init__(self):
        self.results = {}

    def pytest_runtest_logreport(self, report):
        if report.when == "call" or (report.when == "setup" and report.outcome != "passed"):
            name = report.nodeid.split("::")[-1]
            why = ""
            if report.failed:
                text = str(report.longrepr).strip().splitlines()
                errors = [ln for ln in text if ln.startswith("E ")]
                why = (errors[0][1:].strip() if errors else text[-1])[:200]
            outcome = {"passed": "PASS", "failed": "FAIL", "skipped": "SKIP"}[report.outcome]
            self.results[name] = (outcome, report.duration, why)


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", help="write the per-test results here")
    args, extra = parser.parse_known_args(argv)
    tests = ROOT / "tests"
    # The source tree's package only where no built one is importable (a GPU host
    # installs it elsewhere, and the tree there has no _core extension).
    built = importlib.util.find_spec("numba_vulkan") is not None
    sys.path[:0] = [str(tests / "device")] + ([] if built else [str(ROOT / "src")])
    tables = {f: importlib.import_module(f).DOC_KERNELS for f in FILES}
    collect = _Collect()
    started = time.perf_counter()
    os.environ["NVK_DOC_FULL"] = "1"  # random_3d at the documentation's size
    pytest.main([str(tests / "device" / f"{f}.py") for f in FILES]
                + ["-q", "-p", "no:cacheprovider", "-p", "no:warnings", "--rootdir", str(tests)]
                + extra, plugins=[collect])
    wall = time.perf_counter() - started

    counts = {}  # kind -> [passed, total]
    rows = []
    for f in FILES:
        for test, (page, kinds) in tables[f].items():
            if test not in collect.results:
                continue  # deselected (-k)
            outcome, seconds, why = collect.results[test]
            for kind, names in kinds.items():
                key = "refused with our error" if kind.startswith("refused") else kind
                c = counts.setdefault(key, [0, 0])
                c[0] += len(names) if outcome == "PASS" else 0
                c[1] += len(names)
            label = "; ".join(f"{k}: {', '.join(v)}" for k, v in kinds.items())
            print(f"{outcome:4} {seconds:7.2f}s  {page} -- {label}"
                  + (f"\n           {why}" if why else ""))
            rows.append({"file": f, "test": test, "page": page, "runs": kinds,
                         "outcome": outcome, "seconds": round(seconds, 3), "error": why})
    print()
    for kind, (ok, total) in counts.items():
        print(f"{kind}: {ok} of {total}")
    print(f"wall time {wall:.1f} s")
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(
            {"counts": counts, "wall_s": round(wall, 1), "results": rows}, indent=1))
    return 0 if all(r["outcome"] == "PASS" for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
