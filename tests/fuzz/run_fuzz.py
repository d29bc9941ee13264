"""Run the control-flow fuzzer over a range of seeds.

    python3 tests/fuzz/run_fuzz.py --seeds 0:500        # device vs CPython
    python3 tests/fuzz/run_fuzz.py --seeds 7 --show     # print one program
    python3 tests/fuzz/run_fuzz.py --seeds 0:2000 --python-only   # generator only

Prints every failing program with its source and exits with status 1 if any
seed failed.
"""

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen  # noqa: E402


def parse_seeds(text):
    if ":" in text:
        start, stop = text.split(":")
        return range(int(start), int(stop))
    return [int(s) for s in text.split(",")]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", default="0:500", help="START:STOP or a comma-separated list")
    parser.add_argument("--n", type=int, default=64, help="inputs per program")
    parser.add_argument("--show", action="store_true", help="print each program's sources")
    parser.add_argument("--python-only", action="store_true",
                        help="only generate and run with CPython (checks the generator)")
    parser.add_argument("--stop-after", type=int, default=0, help="stop after this many failures")
    args = parser.parse_args(argv)

    failures = []
    start = time.perf_counter()
    seeds = parse_seeds(args.seeds)
    for seed in seeds:
        program = gen.generate(seed)
        if args.show:
            print(f"# seed {seed}\n{program.python_src}\n{program.kernel_src}")
        if args.python_only:
            gen.run_python(program, gen.inputs(seed, args.n))
            continue
        report = gen.check(seed, args.n)
        if report:
            failures.append(seed)
            print(report, flush=True)
            if args.stop_after and len(failures) >= args.stop_after:
                break
    elapsed = time.perf_counter() - start
    print(f"{len(seeds)} seeds, {len(failures)} failed in {elapsed:.1f} s"
          + (f": {failures}" if failures else ""))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
