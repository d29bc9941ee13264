"""Session 22: what folding ``np.float32(0.5)`` and the like before typing saves
(typing/scalar_constants.py), with the fold on and off alternating in one process.

Two kernels, each a fresh function per compile: one with nine constructors of constants,
and bench_vs_cuda's first_call_devfn (five device functions, five foldable constructors),
launched once. Phases as benchmarks/profile_first_call.py times them.

    PYTHONPATH=src python3 benchmarks/experiments/s22_scalar_constants.py [rounds]
"""

import os
import statistics
import sys
import time
import warnings
from pathlib import Path

os.environ.setdefault("NUMBA_VULKAN_CACHE", "0")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import bench_vs_cuda as bench  # noqa: E402
import profile_first_call as prof  # noqa: E402
from numba_vulkan.typing import scalar_constants  # noqa: E402

NINE = """
def {name}(a, b):
    i = nv.global_id(0)
    if i < a.size:
        x = b[i]
        a[i] = (x * np.float32(1.5) + np.float32(2.0) - x * np.float32(0.5) + np.float32(3.0) * x
                + np.float32(4.0) - np.float32(5.0) * x + np.float32(6.0) + x * np.float32(7.0)
                + np.float32(8.0))
"""

_fold = scalar_constants.fold_scalar_constants
_on = [True]
scalar_constants.fold_scalar_constants = lambda func_ir: _fold(func_ir) if _on[0] else 0


def nine_first_calls(backend, count, spent):
    a, b, _ = bench.arrays(backend, 1024)
    rows = []
    for k in range(count):
        for phase in prof.PHASES:
            spent[phase] = 0.0
        src = NINE.format(name=f"nine_{k}_{time.monotonic_ns()}")
        ns = dict(backend.kernel_namespace())
        exec(compile(src, "<nine>", "exec"), ns)  # noqa: S102
        kernel = backend.nv.jit(next(v for key, v in ns.items() if key.startswith("nine_")))
        start = time.perf_counter()
        kernel.forall(1024)(a, b)
        backend.synchronize()
        row = {phase: spent[phase] * 1e3 for phase in prof.PHASES}
        row["total"] = (time.perf_counter() - start) * 1e3
        rows.append(row)
    return {key: statistics.median(r[key] for r in rows) for key in rows[0]}


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    warnings.simplefilter("ignore")
    backend = bench.VulkanBackend()
    spent = dict.fromkeys(prof.PHASES, 0.0)
    prof.instrument(spent)
    nine_first_calls(backend, 3, spent)
    bench.bench_first_call(backend, 3, source=bench.DEVFN_SOURCE)
    print("medians of 20 first calls, ms (typing, lowering, core: the phases; total: wall)")
    for _ in range(rounds):
        for on in (True, False):
            _on[0] = on
            label = "fold on " if on else "fold off"
            row = nine_first_calls(backend, 20, spent)
            print(f"nine constants    {label}", "  ".join(f"{k} {v:6.2f}" for k, v in row.items()))
            medians, _ = prof.first_calls(backend, bench.DEVFN_SOURCE, 20, spent)
            print(f"first_call_devfn  {label}",
                  "  ".join(f"{k} {v:6.2f}" for k, v in medians.items()))  # fmt: skip


if __name__ == "__main__":
    main()
