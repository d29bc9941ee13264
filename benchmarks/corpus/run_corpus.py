"""Run the corpus of public numba.cuda kernels on numba_vulkan.cuda and numba.cuda.

Usage:
    python3 benchmarks/corpus/run_corpus.py                     # GPU host: full sizes, timed
    python3 benchmarks/corpus/run_corpus.py --size small --no-time --backends numba_vulkan
    python3 benchmarks/corpus/run_corpus.py --fetch-only         # download the sources only

Every kernel of manifest.py is read from its package (sources.py: installed, cached or
downloaded from PyPI), compiled from the same words by each backend (numba_vulkan's copy
with the numba.cuda import changed), run on the same inputs, and its results checked against
NumPy and against the other backend. numba.cuda runs where it imports and finds a CUDA GPU.
Timing (``--time``, the default at full size): ``--rounds`` rounds, the backends in turn
within each, each the median over ``--repeats`` of ``--inner`` launches between
synchronisations; the figure is the median of the rounds. The ratio is numba.cuda's time over
ours (above 1: we are faster). Writes JSON (``--out``, default
benchmarks/results/corpus_<date>.json).
"""

import argparse
import datetime
import json
import linecache
import os
import pathlib
import re
import statistics
import sys
import time
import traceback

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # benchmarks/: this package, and backends.py

from corpus import manifest, sources

BACKENDS = ("numba_vulkan", "numba.cuda")


def cuda_module(backend):
    """The backend's `cuda` module, or raise where it cannot run here."""
    if backend == "numba_vulkan":
        from numba_vulkan import cuda

        if not cuda.is_available():
            raise RuntimeError("no Vulkan device")
        return cuda
    if not hasattr(np, "row_stack"):
        np.row_stack = np.vstack  # numba-cuda 0.30.4 still refers to it
    from numba import cuda

    if not cuda.is_available():
        raise RuntimeError("numba.cuda finds no CUDA GPU")
    return cuda


def warp_size(backend, cuda):
    if backend == "numba_vulkan":
        import numba_vulkan as nv

        return nv.get_device().info.subgroup_size
    return 32


def kernel_source(entry, backend, download=True):
    """The entry's source as the backend compiles it (ported for numba_vulkan)."""
    version = manifest.PACKAGES[entry.package]
    path = sources.package_root(entry.package, version, download=download) / entry.file
    expected = manifest.FILE_SHA256.get(f"{entry.package}=={version}:{entry.file}")
    if expected and sources.file_sha256(path) != expected:
        raise sources.SourceUnavailable(f"{path} is not the file the manifest was written for")
    text = sources.extract(path, entry.names, entry.scope)
    return sources.port(text) if backend == "numba_vulkan" else text


def _materialise(value, cuda):
    if isinstance(value, manifest.FromCuda):
        return value.make(cuda)
    if isinstance(value, np.ndarray):
        return cuda.to_device(value)
    return value


class Prepared:
    """One entry compiled and checked on one backend, ready to be timed."""

    def __init__(self, entry, backend, size, seed=0):
        self.entry, self.backend = entry, backend
        self.cuda = cuda = cuda_module(backend)
        self.case = entry.case(entry.sizes[size], np.random.default_rng(seed))
        if callable(self.case.expect):
            self.case.expect = self.case.expect(warp_size(backend, cuda))
        source = kernel_source(entry, backend)
        filename = str(sources.cache_dir() / "ported" / f"{entry.id}.{backend}.py")
        sources.write_atomically(filename, source)  # tracebacks and Numba's locations read it
        linecache.checkcache(filename)
        namespace = {"__name__": f"corpus_{entry.id}", "__file__": filename}
        namespace.update({k: _materialise(v, cuda) if isinstance(v, manifest.FromCuda) else v
                          for k, v in self.case.env.items()})
        exec(compile(source, filename, "exec"), namespace)  # noqa: S102
        kernel = namespace[entry.kernel]
        self.kernel = entry.jit(cuda, kernel) if entry.jit else kernel
        self.args = [_materialise(a, cuda) for a in self.case.args]
        self.launcher = self.kernel[self.case.launch]

    def run(self):
        """Launch once on fresh inputs and return the outputs copied back."""
        self.args = [_materialise(a, self.cuda) for a in self.case.args]
        self.launcher(*self.args)
        self.cuda.synchronize()
        outputs = self.case.expect.keys() or [
            i for i, a in enumerate(self.case.args) if isinstance(a, np.ndarray)]
        return {i: self.args[i].copy_to_host() for i in outputs}

    def time(self, inner):
        t0 = time.perf_counter()
        for _ in range(inner):
            self.launcher(*self.args)
        self.cuda.synchronize()
        return (time.perf_counter() - t0) / inner * 1e3


def compare(got, want, rtol, atol):
    """None where `got` matches `want`, else what differs (first index, values)."""
    want = np.asarray(want)
    if got.shape != want.shape:
        return f"shape {got.shape}, expected {want.shape}"
    ok = np.isclose(got, want, rtol=rtol, atol=atol, equal_nan=True)
    if ok.all():
        return None
    bad = np.argwhere(~ok)
    first = tuple(int(i) for i in bad[0])
    return (f"{len(bad)} of {got.size} differ; at {first} got {got[first]!r}, "
            f"expected {want[first]!r}")


def check(entry, case, outputs):
    if case.check is not None:
        return case.check(outputs)
    for i, want in case.expect.items():
        wrong = compare(outputs[i], want, entry.rtol, entry.atol)
        if wrong:
            return f"argument {i}: {wrong}"
    return None


def refusal(exc):
    """'refused: ...' where numba_vulkan refused the kernel (a typed refusal), else None."""
    names = {c.__name__ for c in type(exc).__mro__}
    text = re.sub(r"\x1b\[[0-9;]*m", "", str(exc)).strip()
    if names & {"VulkanUnsupportedError", "UnmappedNameError", "VulkanSupportError"}:
        return "refused: " + text.splitlines()[0][:300]
    if "refused" in text or "not mapped" in text or "does not exist in Vulkan" in text:
        return "refused: " + " ".join(text.split())[:300]
    return None


def run_entry(entry, backends, size, timing, opts):
    """One entry on every backend: status, checks, times."""
    expect = entry.expect
    if "numba_vulkan" in backends:
        expect = entry.expected(warp_size("numba_vulkan", None))
    record = {"id": entry.id, "package": entry.package,
              "version": manifest.PACKAGES[entry.package], "file": entry.file,
              "scope": entry.scope, "names": list(entry.names), "size": repr(entry.sizes[size]),
              "fixed": entry.fixed, "expect": expect, "note": entry.note, "backends": {}}
    prepared, outputs = {}, {}
    for backend in backends:
        r = record["backends"][backend] = {}
        try:
            t0 = time.perf_counter()
            p = Prepared(entry, backend, size)
            out = p.run()
            r["first_call_s"] = round(time.perf_counter() - t0, 3)
        except Exception as e:  # noqa: BLE001 - every failure is a result
            why = refusal(e) if backend == "numba_vulkan" else None
            r["status"] = "refused" if why else "error"
            r["reason"] = why or f"{type(e).__name__}: {' '.join(str(e).split())[:400]}"
            if opts.get("traceback") and not why:
                traceback.print_exc()
            continue
        wrong = check(entry, p.case, out)
        r["status"] = "wrong" if wrong else "ok"
        if wrong:
            r["reason"] = f"against NumPy: {wrong}"
        prepared[backend], outputs[backend] = p, out
    if len(outputs) == 2:  # the backends against each other
        a, b = outputs.values()
        diffs = [compare(a[i], b[i], max(entry.rtol, 1e-6), entry.atol or 1e-12) for i in a]
        diffs = [d for d in diffs if d]
        record["backends_agree"] = not diffs
        if diffs:
            record["backends_differ"] = diffs[0]
    if timing and prepared:
        times = {b: [] for b in prepared}
        for rnd in range(opts["rounds"]):
            order = list(prepared) if rnd % 2 == 0 else list(prepared)[::-1]
            for b in order:
                prepared[b].time(1)  # warm
                times[b].append(statistics.median(
                    prepared[b].time(opts["inner"]) for _ in range(opts["repeats"])))
        for b, ts in times.items():
            record["backends"][b]["ms"] = round(statistics.median(ts), 4)
            record["backends"][b]["ms_rounds"] = [round(t, 4) for t in ts]
        if len(times) == 2:
            ours, theirs = (record["backends"][b]["ms"] for b in BACKENDS)
            record["ratio"] = round(theirs / ours, 3) if ours > 0 else None
    return record


def summary(records):
    ratios = [r["ratio"] for r in records if r.get("ratio") and not r["fixed"]]
    fixed = [r["ratio"] for r in records if r.get("ratio") and r["fixed"]]
    out = {"kernels": len(records)}
    for b in BACKENDS:
        statuses = [r["backends"].get(b, {}).get("status") for r in records]
        out[b] = {s: statuses.count(s) for s in sorted(set(statuses) - {None})}
    if ratios:
        worst = min((r for r in records if r.get("ratio") and not r["fixed"]),
                    key=lambda r: r["ratio"])
        out["ratio_median"] = round(statistics.median(ratios), 3)
        out["ratio_worst"] = {"id": worst["id"], "ratio": worst["ratio"]}
        out["ratio_geomean"] = round(float(np.exp(np.mean(np.log(ratios)))), 3)
    if fixed:
        out["ratio_median_fixed_size"] = round(statistics.median(fixed), 3)
    return out


def machine(backends):
    import backends as bench_backends

    info = {"host": os.uname().nodename, "cpu": bench_backends.cpu_name(),
            "versions": bench_backends.versions(), "driver": bench_backends.driver_version()}
    for b in backends:
        try:
            cuda = cuda_module(b)
        except Exception as e:  # noqa: BLE001
            info[b] = f"not run: {e}"
            continue
        if b == "numba_vulkan":
            import numba_vulkan as nv

            d = nv.get_device().info
            info[b] = {"device": d.name, "kind": d.kind,
                       "driver": getattr(d, "driver_info", None) or getattr(d, "driver", None)}
        else:
            dev = cuda.get_current_device()
            name = dev.name.decode() if isinstance(dev.name, bytes) else dev.name
            info[b] = {"device": name, "compute_capability": list(dev.compute_capability)}
    return info


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", choices=("small", "full"), default="full")
    ap.add_argument("--backends", default=",".join(BACKENDS))
    ap.add_argument("--only", default="", help="comma-separated ids")
    ap.add_argument("--time", dest="timing", action=argparse.BooleanOptionalAction, default=None)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--inner", type=int, default=10)
    ap.add_argument("--fetch-only", action="store_true")
    ap.add_argument("--traceback", action="store_true")
    ap.add_argument("--out")
    args = ap.parse_args(argv)
    for package, version in manifest.PACKAGES.items():
        root = sources.package_root(package, version)
        print(f"{package}=={version}: {root}")
    if args.fetch_only:
        return 0
    timing = args.size == "full" if args.timing is None else args.timing
    wanted = [b for b in args.backends.split(",") if b]
    usable = []
    for b in wanted:
        try:
            cuda_module(b)
            usable.append(b)
        except Exception as e:  # noqa: BLE001
            print(f"{b}: not run ({type(e).__name__}: {e})")
    only = set(filter(None, args.only.split(",")))
    entries = [e for e in manifest.KERNELS if not only or e.id in only]
    opts = vars(args)
    out = pathlib.Path(args.out) if args.out else (
        HERE.parent / "results" / f"corpus_{datetime.date.today()}.json")
    info = machine(usable)
    records = []
    result = write_result(out, args, info, records)
    for entry in entries:
        rec = run_entry(entry, usable, args.size, timing, opts)
        records.append(rec)
        cells = []
        for b in usable:
            r = rec["backends"][b]
            cells.append(f"{b} {r['status']}" + (f" {r['ms']:.3f} ms" if "ms" in r else ""))
        extra = f"  x{rec['ratio']}" if rec.get("ratio") else ""
        agree = "" if rec.get("backends_agree", True) else "  BACKENDS DIFFER"
        print(f"{entry.id:32} " + " | ".join(cells) + extra + agree, flush=True)
        for b in usable:
            if rec["backends"][b].get("reason"):
                print(f"    {b}: {rec['backends'][b]['reason']}")
        if rec.get("backends_differ"):
            print(f"    backends: {rec['backends_differ']}")
        # Written after every kernel, so a run cut short keeps what it measured.
        result = write_result(out, args, info, records)
    print(json.dumps(result["summary"], indent=1))
    print(f"written {out}")
    return 0


def write_result(out, args, info, records):
    result = {"date": datetime.datetime.now().isoformat(timespec="seconds"),
              "command": " ".join(sys.argv), "size": args.size, "machine": info,
              "summary": summary(records), "kernels": records,
              "not_run": [{"file": f, "names": n, "why": w} for f, n, w in manifest.NOT_RUN]}
    out.write_text(json.dumps(result, indent=1) + "\n")
    return result


if __name__ == "__main__":
    sys.exit(main())
