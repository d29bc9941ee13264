"""Where the first call of a kernel spends its time: phase by phase, and cProfile.

The kernels are bench_vs_cuda.py's first_call kernels (the triad, and the triad
through five device functions), each a fresh function with a constant of its own
as there (``--same-code``: without), with the disk caches off. The phases, timed
by wrapping the functions that do them:

    typing     Numba's front half (typing/pipeline.py), device functions included
    lowering   typed IR -> KIR (frontend/)
    core       the C++ half: verify, narrow, structurize, emit SPIR-V, optimise, validate
    pipeline   the device's shader module and pipeline layout (runtime: load_kernel)
    rest       argument typing, the driver's compilation of the pipeline (at the first
               launch of a workgroup size), launch and synchronisation (wall time less
               the phases)

    PYTHONPATH=src python3 benchmarks/profile_first_call.py              # phases, median of 20
    PYTHONPATH=src python3 benchmarks/profile_first_call.py --profile cumulative --top 40
    PYTHONPATH=src python3 benchmarks/profile_first_call.py --passes   # typing, pass by pass
"""

import argparse
import cProfile
import os
import pstats
import statistics
import sys
import time
import warnings
from pathlib import Path

os.environ.setdefault("NUMBA_VULKAN_CACHE", "0")
os.environ.setdefault("NUMBA_CACHE_DIR", "/nonexistent-numba-cache")
sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_vs_cuda as bench  # noqa: E402

PHASES = ("typing", "lowering", "core", "pipeline")
_clock = time.perf_counter  # --cpu: time.thread_time (this thread's CPU time: less noise
# on a loaded machine, but the device's own threads are not counted)


def _wrap(owner, attr, phase, spent):
    inner = getattr(owner, attr)

    def timed(*args, **kwargs):
        start = _clock()
        try:
            return inner(*args, **kwargs)
        finally:
            spent[phase] += _clock() - start

    setattr(owner, attr, timed)


def instrument(spent):
    """Time each phase by wrapping its entry point (module attributes, looked up per call)."""
    from numba_vulkan import _core, compiler, frontend, launchers

    _wrap(compiler, "type_kernel_for_user", "typing", spent)
    _wrap(frontend, "lower_kernel", "lowering", spent)
    _wrap(_core, "compile", "core", spent)
    # load_kernel is a method of the C++ device: time make_launcher, which calls it.
    _wrap(launchers, "make_launcher", "pipeline", spent)


def time_passes(spent_by_pass):
    """Time each of Numba's passes by wrapping LeanPassManager._runPass: each pass's own
    time, the nested pipelines of device functions typed inside it left out."""
    from numba_vulkan.typing import lean

    inner = lean.LeanPassManager._runPass
    nested = []

    def timed(self, index, pss, state):
        start = _clock()
        nested.append(0.0)
        try:
            return inner(self, index, pss, state)
        finally:
            spent = _clock() - start
            spent_by_pass[pss.name()] = spent_by_pass.get(pss.name(), 0.0) + spent - nested.pop()
            if nested:
                nested[-1] += spent

    lean.LeanPassManager._runPass = timed


def first_calls(backend, source, count, spent, same_code=False):
    rows = []
    for _ in range(count):
        for phase in PHASES:
            spent[phase] = 0.0
        result = bench.bench_first_call(backend, 1, source=source, same_code=same_code)
        total = result["all_ms"][0]
        row = {phase: spent[phase] * 1e3 for phase in PHASES}
        row["rest"] = total - sum(row.values())
        row["total"] = total
        rows.append(row)
    medians = {key: statistics.median(r[key] for r in rows) for key in rows[0]}
    minima = {key: min(r[key] for r in rows) for key in rows[0]}
    return medians, minima


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=20, help="fresh kernels per figure")
    parser.add_argument("--profile", default=None, help="cProfile sort key (cumulative, tottime)")
    parser.add_argument("--top", type=int, default=40, help="lines of the profile")
    parser.add_argument("--only", default="first_call,first_call_devfn")
    parser.add_argument("--cpu", action="store_true", help="phases in CPU time of this thread")
    parser.add_argument("--passes", action="store_true", help="typing's passes, each alone")
    parser.add_argument("--same-code", action="store_true",
                        help="the same code each time (the driver's pipeline cache answers)")
    args = parser.parse_args(argv)
    if args.cpu:
        global _clock
        _clock = time.thread_time
    warnings.simplefilter("ignore")
    backend = bench.VulkanBackend()
    sources = {"first_call": bench.KERNEL_SOURCE, "first_call_devfn": bench.DEVFN_SOURCE}
    spent = dict.fromkeys(PHASES, 0.0)
    instrument(spent)
    for source in sources.values():  # warm: imports, the device, first-time tables
        bench.bench_first_call(backend, 2, source=source)
    by_pass = {}
    if args.passes:
        time_passes(by_pass)
    for figure in args.only.split(","):
        by_pass.clear()
        if args.profile:
            profiler = cProfile.Profile()
            profiler.enable()
            bench.bench_first_call(backend, args.count, source=sources[figure],
                                   same_code=args.same_code)
            profiler.disable()
            print(f"== {figure}: cProfile of {args.count} first calls, by {args.profile}")
            pstats.Stats(profiler).sort_stats(args.profile).print_stats(args.top)
            continue
        medians, minima = first_calls(backend, sources[figure], args.count, spent,
                                      args.same_code)
        for what, row in (("median", medians), ("min", minima)):
            cells = "  ".join(f"{k} {v:6.2f}" for k, v in row.items())
            print(f"{figure:17s} ms ({what} of {args.count}): {cells}")
        for name, seconds in sorted(by_pass.items(), key=lambda item: -item[1]):
            print(f"    {name:45s} {seconds / args.count * 1e3:7.3f} ms a first call")


if __name__ == "__main__":
    main()
