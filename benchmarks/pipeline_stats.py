"""The drivers' pipeline statistics recorded in benchmark JSON files, one line per kernel.

bench_parallel.py, bench_math.py and bench_math_funcs.py record, per figure and
backend, what the driver reports of the kernel's pipeline: numba_vulkan's
``inspect_pipeline`` (VK_KHR_pipeline_executable_properties; NVIDIA: registers,
code size, ...) and numba.cuda's registers per thread, local and shared memory.

    python3 benchmarks/pipeline_stats.py benchmarks/results/h200_*.json

benchmarks/results/history.json is read run by run (each line named by the run's id).
"""

import json
import sys


def rows(record, path=()):
    """(figure path, backend, statistics) of every "pipeline" entry in a result record."""
    if isinstance(record, dict):
        if isinstance(record.get("pipeline"), dict):
            yield path, record["pipeline"]
        for key, value in record.items():
            if key != "pipeline":
                yield from rows(value, path + (str(key),))


def main(paths):
    for path in paths:
        try:
            record = json.loads(open(path).read())
        except (OSError, ValueError):
            continue
        if isinstance(record.get("runs"), list):  # history.json: the runs it holds itself
            records = [
                (run["id"], run["data"])
                for run in record["runs"]
                if isinstance(run.get("data"), dict)
            ]
        else:
            records = [(path.rsplit("/", 1)[-1], record)]
        for name, one in records:
            for where, stats in rows(one.get("results", {})):
                if "error" in stats:
                    continue
                text = ", ".join(f"{k}={v}" for k, v in stats.items())
                print(f"{name} {'/'.join(where)}: {text}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
