"""Run the control-flow fuzzer over a range of seeds.

    python3 tests/fuzz/run_fuzz.py --seeds 0:500        # device vs CPython
    python3 tests/fuzz/run_fuzz.py --seeds 7 --show     # print one program
    python3 tests/fuzz/run_fuzz.py --seeds 0:2000 --python-only   # generator only
    python3 tests/fuzz/run_fuzz.py --seeds 0:500 --memory   # variables in device memory

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


def _worker(tasks, results, check, describe, n):
    while True:
        seed = tasks.get()
        if seed is None:
            return
        try:
            report = check(seed, n)
        except BaseException as e:  # noqa: BLE001 - report everything
            report = f"seed {seed}: {type(e).__name__}: {e}\n{describe(seed)}"
        results.put((seed, report))


def describe_program(seed):
    return gen.generate(seed).kernel_src


def describe_in_memory(seed):
    return gen.in_memory(gen.generate(seed).kernel_src)


class Worker:
    """A process that checks seeds one at a time; replaced when one hangs or crashes.

    `check(seed, n)` returns None or a failure report; `describe(seed)` gives
    the program's text for a seed whose worker hung or died. Both must be
    module-level functions (the worker is a spawned process).
    """

    def __init__(self, n, check=gen.check, describe=describe_program):
        ctx = mp.get_context("spawn")
        self.describe = describe
        self.tasks, self.results = ctx.Queue(), ctx.Queue()
        self.proc = ctx.Process(
            target=_worker, args=(self.tasks, self.results, check, describe, n), daemon=True
        )
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
                        f"{self.describe(seed)}"
                    ), False
        self.proc.kill()
        self.proc.join()
        return f"seed {seed}: no result within {timeout} s (hang?)\n{self.describe(seed)}", False

    def close(self):
        if self.proc.is_alive():
            self.tasks.put(None)
            self.proc.join(5)
            if self.proc.is_alive():
                self.proc.kill()


def run_seeds(seeds, make_worker, timeout, stop_after=0, jobs=1, progress=0):
    """Check `seeds` in `jobs` worker processes, printing each failure as it comes.

    Returns the failing seeds (sorted). A worker that hangs or dies is replaced.
    With `progress`, a line every `progress` seeds says how many are done: all
    seeds below the smallest one still running have passed or been reported.
    """
    import threading

    failures = []
    lock = threading.Lock()
    todo = iter(seeds)
    stop = threading.Event()
    running, done = set(), [0]
    start = time.perf_counter()

    def loop():
        worker = None
        while not stop.is_set():
            with lock:
                seed = next(todo, None)
                if seed is not None:
                    running.add(seed)
            if seed is None:
                break
            worker = worker or make_worker()
            report, healthy = worker.check(seed, timeout)
            if not healthy:
                worker = None
            with lock:
                running.discard(seed)
                done[0] += 1
                if report:
                    failures.append(seed)
                    print(report, flush=True)
                    if stop_after and len(failures) >= stop_after:
                        stop.set()
                if progress and done[0] % progress == 0:
                    low = min(running) if running else None
                    print(f"[{done[0]} seeds done, {len(failures)} failed, "
                          f"{time.perf_counter() - start:.0f} s; none running below {low}]",
                          flush=True)  # fmt: skip
        if worker:
            worker.close()

    threads = [threading.Thread(target=loop) for _ in range(max(1, jobs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return sorted(failures)


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
    parser.add_argument("--jobs", type=int, default=1, help="worker processes")
    parser.add_argument("--memory", action="store_true",
                        help="the kernels keep their variables in device memory (gen.in_memory)")
    args = parser.parse_args(argv)

    start = time.perf_counter()
    seeds = parse_seeds(args.seeds)
    if args.show or args.python_only:
        for seed in seeds:
            program = gen.generate(seed)
            if args.show:
                kernel = gen.in_memory(program.kernel_src) if args.memory else program.kernel_src
                print(f"# seed {seed}\n{program.python_src}\n{kernel}")
            if args.python_only:
                gen.run_python(program, gen.inputs(seed, args.n))
        if args.python_only:
            return 0
    check, describe = ((gen.check_in_memory, describe_in_memory) if args.memory
                       else (gen.check, describe_program))
    failures = run_seeds(
        seeds, lambda: Worker(args.n, check, describe), args.timeout, args.stop_after, args.jobs
    )
    elapsed = time.perf_counter() - start
    print(
        f"{len(seeds)} seeds, {len(failures)} failed in {elapsed:.1f} s"
        + (f": {failures}" if failures else "")
    )
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
