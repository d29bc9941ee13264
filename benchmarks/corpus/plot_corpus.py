"""Draw a corpus run (run_corpus.py's JSON): numba.cuda's time over ours per kernel.

Usage: python3 benchmarks/corpus/plot_corpus.py RESULTS.json [--out PNG]

One bar per kernel both backends ran, sorted; above 1 numba_vulkan is faster. The median
(kernels at the corpus's sizes) and 1.0 are marked; kernels fixed at one block or one thread
by their own code (their time is the launch's) are drawn light. Default output:
docs/_generated/corpus_ratios.png (docs/corpus.md). Needs matplotlib.
"""

import argparse
import json
import pathlib
import statistics
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

ROOT = pathlib.Path(__file__).resolve().parents[2]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("results")
    ap.add_argument("--out", default=str(ROOT / "docs" / "_generated" / "corpus_ratios.png"))
    args = ap.parse_args(argv)
    run = json.loads(pathlib.Path(args.results).read_text())
    rows = sorted((k for k in run["kernels"] if k.get("ratio")), key=lambda k: k["ratio"])
    if not rows:
        print("no kernel ran on both backends: nothing to draw")
        return 1
    sized = [k["ratio"] for k in rows if not k["fixed"]]
    fig, ax = plt.subplots(figsize=(7.5, 0.22 * len(rows) + 1.4))
    ax.barh(range(len(rows)), [k["ratio"] for k in rows],
            color=["#c9a0a1" if k["fixed"] else "#a41e22" for k in rows])
    for y, k in enumerate(rows):
        ax.text(k["ratio"], y, f" {k['ratio']:.2f}", va="center", fontsize=6)
    ax.axvline(1.0, color="black", lw=0.8)
    if sized:
        median = statistics.median(sized)
        ax.axvline(median, color="#76b900", lw=1.2, ls="--", label=f"median {median:.2f}")
        ax.legend(loc="lower right", fontsize=8)
    ax.set_yticks(range(len(rows)), [k["id"] for k in rows], fontsize=6)
    machine = run["machine"].get("numba_vulkan", {})
    device = machine.get("device", "?") if isinstance(machine, dict) else "?"
    ax.set_xlabel("numba.cuda time / numba_vulkan time (above 1: numba_vulkan faster)\n"
                  "light bars: one block or one thread by the kernel's code (the launch)",
                  fontsize=7)
    ax.set_title(f"Public numba.cuda kernels, same source on both backends ({device})",
                 fontsize=9)
    ax.margins(x=0.12)
    fig.tight_layout()
    out = pathlib.Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110)
    print(f"written {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
