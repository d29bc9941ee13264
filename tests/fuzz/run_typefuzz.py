"""Run the differential type fuzzer (typegen.py) over a range of seeds.

    python3 tests/fuzz/run_typefuzz.py --seeds 0:5000 --jobs 2   # numba.njit vs the device
    python3 tests/fuzz/run_typefuzz.py --seeds 7 --show          # print one program

Seeds run in worker processes (run_fuzz.Worker): a seed that hangs or crashes
is reported after --timeout seconds and a fresh worker goes on. Each failing
seed is printed with its program, the differing elements and a minimised
repro; the exit status is 1 if any seed failed.
"""

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run_fuzz
import typecheck
import typegen


def describe(seed):
    return typegen.generate(seed).source()


def check(seed, n):
    return typecheck.check(seed, n)


def make_worker(n):
    return run_fuzz.Worker(n, check=check, describe=describe)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", default="0:200", help="START:STOP or a comma-separated list")
    parser.add_argument("--n", type=int, default=typecheck.N, help="invocations per launch")
    parser.add_argument("--timeout", type=float, default=120, help="seconds per seed")
    parser.add_argument("--jobs", type=int, default=1, help="worker processes")
    parser.add_argument("--show", action="store_true", help="print the programs, run nothing")
    parser.add_argument("--stop-after", type=int, default=0, help="stop after this many failures")
    parser.add_argument("--progress", type=int, default=0, help="a progress line every N seeds")
    args = parser.parse_args(argv)

    seeds = run_fuzz.parse_seeds(args.seeds)
    if args.show:
        for seed in seeds:
            print(describe(seed))
        return 0
    start = time.perf_counter()
    failures = run_fuzz.run_seeds(
        seeds, lambda: make_worker(args.n), args.timeout, args.stop_after, args.jobs, args.progress
    )
    elapsed = time.perf_counter() - start
    print(
        f"{len(seeds)} seeds, {len(failures)} failed in {elapsed:.1f} s"
        + (f": {failures}" if failures else "")
    )
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
