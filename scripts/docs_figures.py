"""The benchmark figures of the documentation, drawn from benchmarks/results/history.json.

Writes docs/_generated/bench_*.png (numba_vulkan beside numba.cuda, from the same run on
the same GPU) for docs/benchmarks.md, corpus_ratios.png (the latest GPU run of the
corpus, benchmarks/corpus/plot_corpus.py) for docs/corpus.md, and matrix_tflops.png (the
latest kept GPU run of bench_matrix.py) for docs/matrix.md. Run by scripts/docs.sh; needs
matplotlib.
"""

import json
import pathlib
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"
OUT = ROOT / "docs" / "_generated"
SIDES = ("numba_vulkan", "numba.cuda")
COLOURS = {"numba_vulkan": "#a41e22", "numba.cuda": "#76b900"}


def _load(run_id):
    """The record of one run in history.json ("id"): its own data, or its kept file's."""
    history = json.loads((RESULTS / "history.json").read_text())
    for run in history["runs"]:
        if run["id"] == run_id:
            return run["data"] if "data" in run else json.loads((RESULTS / run["file"]).read_text())
    raise KeyError(f"no run {run_id!r} in {RESULTS / 'history.json'}")


def _bars(path, title, unit, rows, better):
    """One horizontal bar pair per row: rows are (label, {side: value})."""
    fig, ax = plt.subplots(figsize=(7.5, 0.62 * len(rows) + 1.3))
    height = 0.38
    for k, side in enumerate(SIDES):
        ys = [i + (k - 0.5) * height for i in range(len(rows))]
        values = [r[1].get(side) or 0 for r in rows]
        ax.barh(ys, values, height, label=side, color=COLOURS[side])
        for y, v in zip(ys, values):
            if v:
                text = f" {v:,.0f}" if v >= 100 else f" {v:.3g}"
                ax.text(v, y, text, va="center", fontsize=8)
    ax.set_yticks(range(len(rows)), [r[0] for r in rows])
    ax.invert_yaxis()
    ax.set_xlabel(f"{unit} ({better} is better)")
    ax.set_title(title, fontsize=10)
    ax.legend(loc="lower right", fontsize=8)
    ax.margins(x=0.18)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _matrix(path, run):
    """bench_matrix.py's rows of one kept run: TFLOP/s of each whole call, ours beside
    cuBLAS's and numba.cuda's."""
    data = json.loads((RESULTS / run["file"]).read_text())
    rows = [(name, row["tflops"]) for name, row in data["rows"].items() if "tflops" in row]
    colour = {"cuBLAS": "#555555", "numba.cuda": COLOURS["numba.cuda"]}
    fig, ax = plt.subplots(figsize=(7.5, 0.34 * len(rows) + 1.3))
    for i, (name, value) in enumerate(rows):
        ax.barh(i, value, 0.7, color=colour.get(name.split(" ")[0], COLOURS["numba_vulkan"]))
        ax.text(value, i, f" {value:,.1f}", va="center", fontsize=8)
    ax.set_yticks(range(len(rows)), [name for name, _ in rows], fontsize=8)
    ax.invert_yaxis()
    ax.set_xscale("log")
    ax.set_xlabel("TFLOP/s (int8 rows: TOPS), whole call (higher is better; log scale)")
    ax.set_title(f"Matrix products, {data['size']}³ ({run['device'].upper()}, "
                 f"{run['date']} {run['time']}): numba_vulkan in red", fontsize=10)
    ax.margins(x=0.12)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    # One H200 run of 2026-12-01: every row of bench_vs_cuda and bench_parallel, measured together.
    new = _load("h200 2026-12-01 03:02 final")
    par = _load("h200 2026-12-01 03:03 parallel")
    gpu = new["machine"]["gpu"]
    r, p = new["results"], par["results"]

    def get(src, side, *keys):
        value = src.get(side, {})
        for k in keys:
            if not isinstance(value, dict) or k not in value:
                return None
            value = value[k]
        return value

    _bars(OUT / "bench_latency.png", f"Host time per launch and first calls ({gpu})", "time",
          [("async launch, µs", {s: get(r, s, "launch", "us_per_launch") for s in SIDES}),
           ("first call of a kernel, ms",
            {s: get(r, s, "first_call", "ms_median") for s in SIDES}),
           ("first call, 5 device functions, ms",
            {s: get(r, s, "first_call_devfn", "ms_median") for s in SIDES})],
          "lower")  # fmt: skip
    def both(src, *keys):
        return {s: get(src, s, *keys) for s in SIDES}

    _bars(OUT / "bench_throughput.png", f"Kernels: throughput ({gpu})", "GB/s or GFLOP/s",
          [("STREAM triad 2^28 f32, GB/s", both(r, "triad", "GBps_median")),
           ("naive matmul 2048² coalesced, GFLOP/s",
            both(r, "matmul_coalesced", "GFLOPs_median")),
           ("naive matmul 2048², GFLOP/s", both(r, "matmul", "GFLOPs_median")),
           ("16×16 tiled matmul 4096², GFLOP/s", both(p, "tiled_matmul", "gflops")),
           ("shared-memory reduction 2^28 f32, GB/s", both(p, "reduction", "gbs")),
           ("histogram 2^28 bytes, GB/s", both(p, "histogram", "gbs"))],
          "higher")  # fmt: skip
    # The corpus of public numba.cuda kernels on a GPU (docs/corpus.md).
    sys.path.insert(0, str(ROOT / "benchmarks" / "corpus"))
    import plot_corpus

    history = json.loads((RESULTS / "history.json").read_text())
    corpus = [run for run in history["runs"] if run.get("benchmark") == "run_corpus"
              and run.get("device") != "lavapipe" and run.get("file")]
    plot_corpus.main([str(RESULTS / corpus[-1]["file"]), "--out", str(OUT / "corpus_ratios.png")])
    # Matrix products on tensor cores beside cuBLAS and numba.cuda (docs/matrix.md).
    matrix = [run for run in history["runs"] if run.get("benchmark") == "bench_matrix"
              and run.get("device") != "lavapipe" and run.get("file")]
    _matrix(OUT / "matrix_tflops.png", matrix[-1])
    print(f"figures written to {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
