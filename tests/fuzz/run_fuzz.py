"""Run the control-flow fuzzer over a range of seeds.

    python3 tests/fuzz/run_fuzz.py --seeds 0:500        # device vs CPython
    python3 tests/fuzz/run_fuzz.py --seeds 7 --show     # print one program
    python3 tests/fuzz/run_fuzz.py --seeds 0:2000 --python-only   # generator only

Seeds run in a worker process, so a seed that hangs the compiler or crashes
the process is reported (with its program) as a failure after --timeout
seconds and a fresh worker goes on with the next seed. Prints every failing
program and exits with status 1 if any seed failed.
"""

import argparse
import multiprocessing as mp
import os
import queue
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen


def parse_seeds(text):
    if ":" in text:
        start, stop = text.split(":")
        return list(range(int(start), int(stop)))
    return [int(s) for s in text.split(",")]


def _worker(tasks, results, n):
    while True:
        seed = tasks.get()
        if seed is None:
            return
        try:
            report = gen.check(seed, n)
        except BaseException as e:  # noqa: BLE001 - report everything
            report = f"seed {seed}: {type(e).__name__}: {e}\n{gen.generate(seed).kernel_src}"
        results.put((seed, report))


class Worker:
    """A process that checks seeds one at a time; replaced when one hangs or crashes."""

    def __init__(self, n):
        ctx = mp.get_context("spawn")
        self.tasks, self.results = ctx.Queue(), ctx.Queue()
        self.proc = ctx.Process(target=_worker, args=(self.tasks, self.results, n), daemon=True)
        self.proc.start()

    def check(self, seed, timeout):
        self.tasks.put(seed)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                return self.results.get(timeout=0.5)[1], True
            except queue.Empty:
                if not self.proc.is_alive():
                    return (
                        f"seed {seed}: worker died (exit code {self.proc.exitcode})\n"
                        f"{gen.generate(seed).kernel_src}"
                    ), False
        self.proc.kill()
        self.proc.join()
        return (
            f"seed {seed}: no result within {timeout} s (hang?)\n{gen.generate(seed).kernel_src}"
        ), False

    def close(self):
        if self.proc.is_alive():
            self.tasks.put(None)
            self.proc.join(5)
            if self.proc.is_alive():
                self.proc.kill()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", default="0:500", help="START:STOP or a comma-separated list")
    parser.add_argument("--n", type=int, default=64, help="inputs per program")
    parser.add_argument("--timeout", type=float, default=60, help="seconds per seed")
    parser.add_argument("--show", action="store_true", help="print each program's sources")
    parser.add_argument(
        "--python-only",
        action="store_true",
        help="only generate and run with CPython (checks the generator)",
    )
    parser.add_argument("--stop-after", type=int, default=0, help="stop after this many failures")
    args = parser.parse_args(argv)

    failures = []
    start = time.perf_counter()
    seeds = parse_seeds(args.seeds)
    worker = None
    for seed in seeds:
        program = gen.generate(seed)
        if args.show:
            print(f"# seed {seed}\n{program.python_src}\n{program.kernel_src}")
        if args.python_only:
            gen.run_python(program, gen.inputs(seed, args.n))
            continue
        worker = worker or Worker(args.n)
        report, healthy = worker.check(seed, args.timeout)
        if not healthy:
            worker = None
        if report:
            failures.append(seed)
            print(report, flush=True)
            if args.stop_after and len(failures) >= args.stop_after:
                break
    if worker:
        worker.close()
    elapsed = time.perf_counter() - start
    print(
        f"{len(seeds)} seeds, {len(failures)} failed in {elapsed:.1f} s"
        + (f": {failures}" if failures else "")
    )
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
