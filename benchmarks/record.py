"""Record a benchmark's results file in benchmarks/results and its history.

    python3 benchmarks/record.py RESULT --device h100 --benchmark bench_graphs \
        --label graphs --name graphs [--time 00:03]

Copies RESULT to ``results/<device>_<date>_<name>.<ext>`` (the date and time from the
JSON's ``date`` where it has one, else today's and now, UTC) and appends the run to
``results/history.json``. The folder keeps the latest file per benchmark and device: an
earlier run of the same benchmark on the same device whose file is kept here has its
file's content moved into history.json ("data" for JSON, "text" otherwise) and the file
removed.
"""

import argparse
import datetime
import json
import pathlib
import shutil
import sys

RESULTS = pathlib.Path(__file__).resolve().parent / "results"


def _when(path, given_time):
    now = datetime.datetime.now(datetime.timezone.utc)
    date, time = now.strftime("%Y-%m-%d"), now.strftime("%H:%M")
    source = "commit"
    if path.suffix == ".json":
        stamp = json.loads(path.read_text()).get("date")
        if isinstance(stamp, str) and len(stamp) >= 10:
            date = stamp[:10]
            if len(stamp) >= 16:
                time, source = stamp[11:16], "run"
    if given_time:
        time, source = given_time, "run"
    return date, time, source


def record(path, device, benchmark, label, name, given_time=None):
    path = pathlib.Path(path)
    date, time, source = _when(path, given_time)
    history_file = RESULTS / "history.json"
    history = json.loads(history_file.read_text())
    kept = f"{device}_{date}_{name}{path.suffix}"
    for run in history["runs"]:
        if run.get("device") == device and run.get("benchmark") == benchmark and "file" in run:
            old = RESULTS / run.pop("file")
            if old.suffix == ".json":
                run["data"] = json.loads(old.read_text())
            else:
                run["text"] = old.read_text()
            if old.name != kept:
                old.unlink()
    shutil.copyfile(path, RESULTS / kept)
    run_id = f"{device} {date} {time} {label}"
    history["runs"].append({"id": run_id, "device": device, "date": date, "time": time,
                            "time_from": source, "benchmark": benchmark, "label": label,
                            "file": kept})
    history_file.write_text(_dumps(history))
    return run_id, kept


def _dumps(history):
    """history.json's layout: one run per line."""
    runs = ",\n".join(json.dumps(run) for run in history["runs"])
    return f'{{"about": {json.dumps(history["about"])},\n "runs": [\n{runs}\n]}}\n'


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("result")
    p.add_argument("--device", required=True, help="h100, h200, lavapipe, ...")
    p.add_argument("--benchmark", required=True, help="the script, e.g. bench_graphs")
    p.add_argument("--label", required=True, help="a few words naming the run")
    p.add_argument("--name", required=True, help="the kept file's name part")
    p.add_argument("--time", help="HH:MM (UTC) when the record has none")
    args = p.parse_args(argv)
    run_id, kept = record(args.result, args.device, args.benchmark, args.label, args.name,
                          args.time)
    print(f"{kept}: run {run_id!r}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
