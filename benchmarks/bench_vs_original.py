"""This package against the original numba-vulkan 0.1.0 on PyPI, side by side on the same
device (issue 40: on lavapipe, integer-heavy kernels at least as fast as 0.1.0).

Both packages are imported as ``numba_vulkan``, so each runs in its own process: this
script starts itself with ``--worker`` once under the current interpreter (this tree, or
the installed package) and once under ``--original PYTHON``, the interpreter of a virtual
environment holding numba-vulkan 0.1.0 (``python3 -m venv v010 && v010/bin/pip install
numba-vulkan==0.1.0``). The kernels use only the API both have (``@nv.jit``,
``nv.global_id``, ``kernel[groups, size]``, ``nv.to_device``, ``nv.device_array``,
``nv.synchronize``):

- xorshift: 64 rounds of Marsaglia's xorshift32 over 2^20 uint32 seeds (integer shifts
  and xors in a loop of compile-time length);
- mandelbrot: 1024 x 1024 float32 pixels, at most 256 iterations (a loop whose length
  depends on the data).

Each worker times each kernel as the minimum of ``--repeats`` launches, each followed by
``nv.synchronize()``, after one untimed launch (the compile); the two workers alternate for
``--rounds`` rounds (the machine's load drifts) and each figure is the median of its
rounds. Both outputs are hashed: the packages must agree bit for bit (a disagreement is
reported as WRONG).

    python3 benchmarks/bench_vs_original.py --original /tmp/v010/bin/python \\
        --out benchmarks/results/lavapipe_DATE_vs_original.json
"""

import argparse
import datetime
import hashlib
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

N_SEEDS = 1 << 20
SIDE = 1024
ITERATIONS = 256


def _kernels(nv):
    @nv.jit
    def xorshift(out, seeds):
        i = nv.global_id(0)
        if i < seeds.size:
            x = seeds[i]
            for _ in range(64):
                x ^= (x << np.uint32(13)) & np.uint32(0xFFFFFFFF)
                x ^= x >> np.uint32(17)
                x ^= (x << np.uint32(5)) & np.uint32(0xFFFFFFFF)
            out[i] = x

    @nv.jit
    def mandelbrot(out, w, h, iters):
        i = nv.global_id(0)
        if i < w * h:
            px = i % w
            py = i // w
            cr = np.float32(-2.0) + np.float32(3.0) * np.float32(px) / np.float32(w)
            ci = np.float32(-1.5) + np.float32(3.0) * np.float32(py) / np.float32(h)
            zr = np.float32(0.0)
            zi = np.float32(0.0)
            k = 0
            while k < iters and zr * zr + zi * zi < np.float32(4.0):
                t = zr * zr - zi * zi + cr
                zi = np.float32(2.0) * zr * zi + ci
                zr = t
                k += 1
            out[i] = k

    return xorshift, mandelbrot


def _min_time(run, sync, repeats):
    run()
    sync()
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        run()
        sync()
        times.append(time.perf_counter() - t)
    return min(times)


def worker(repeats):
    """One process's figures (ms) and output hashes, as JSON on stdout."""
    import numba_vulkan as nv

    xorshift, mandelbrot = _kernels(nv)
    seeds = (np.arange(N_SEEDS, dtype=np.uint32) * np.uint32(2654435761)) | np.uint32(1)
    d_seeds, d_out = nv.to_device(seeds), nv.device_array(N_SEEDS, np.uint32)
    d_pixels = nv.device_array(SIDE * SIDE, np.int32)
    figures = {
        "xorshift": _min_time(lambda: xorshift[N_SEEDS // 256, 256](d_out, d_seeds),
                              nv.synchronize, repeats),
        "mandelbrot": _min_time(
            lambda: mandelbrot[SIDE * SIDE // 256, 256](d_pixels, np.int32(SIDE),
                                                        np.int32(SIDE), np.int32(ITERATIONS)),
            nv.synchronize, repeats),
    }
    hashes = {name: hashlib.sha256(d.copy_to_host().tobytes()).hexdigest()
              for name, d in (("xorshift", d_out), ("mandelbrot", d_pixels))}
    from importlib import metadata

    version = getattr(nv, "__version__", None) or metadata.version("numba-vulkan")
    device = nv.get_device()
    name = getattr(getattr(device, "info", None), "name", None) or str(device)
    print(json.dumps({"ms": {k: v * 1e3 for k, v in figures.items()}, "hashes": hashes,
                      "version": version, "device": name}))


def _run_worker(python, env, repeats):
    out = subprocess.run([python, __file__, "--worker", "--repeats", str(repeats)], env=env,
                         capture_output=True, text=True, check=False, timeout=600)
    if out.returncode:
        raise RuntimeError(f"{python} --worker failed:\n{out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--original", required=False,
                        help="the Python interpreter of an environment with numba-vulkan 0.1.0")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--out", help="write the results here (JSON)")
    args = parser.parse_args(argv)
    if args.worker:
        worker(args.repeats)
        return 0
    if not args.original:
        parser.error("--original PYTHON is required (an interpreter with numba-vulkan 0.1.0)")
    from backends import cpu_name, report, versions

    ours_env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    original_env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    runs = {"numba_vulkan": [], "numba-vulkan 0.1.0": []}
    for _ in range(args.rounds):
        runs["numba_vulkan"].append(_run_worker(sys.executable, ours_env, args.repeats))
        runs["numba-vulkan 0.1.0"].append(_run_worker(args.original, original_env, args.repeats))
    results, hashes = {}, {}
    for who, rs in runs.items():
        results[who] = {k: {"ms": statistics.median(r["ms"][k] for r in rs),
                            "rounds_ms": [r["ms"][k] for r in rs]} for k in rs[0]["ms"]}
        results[who]["version"] = rs[0]["version"]
        results[who]["device"] = rs[0]["device"]
        hashes[who] = rs[0]["hashes"]
    ours, original = results["numba_vulkan"], results["numba-vulkan 0.1.0"]
    for k in ("xorshift", "mandelbrot"):
        same = hashes["numba_vulkan"][k] == hashes["numba-vulkan 0.1.0"][k]
        ours[k]["same_output_as_original"] = same
        ours[k]["speed_vs_original"] = original[k]["ms"] / ours[k]["ms"]
        print(f"{k:<11} numba_vulkan {ours[k]['ms']:8.1f} ms   0.1.0 {original[k]['ms']:8.1f} ms"
              f"   {ours[k]['speed_vs_original']:.2f}x{'' if same else '   WRONG: outputs differ'}")
    report({"benchmark": "bench_vs_original",
            "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "machine": {"cpu": cpu_name(), "cores": os.cpu_count()},
            "versions": versions(),
            "parameters": {"seeds": N_SEEDS, "side": SIDE, "iterations": ITERATIONS,
                           "rounds": args.rounds, "repeats": args.repeats},
            "results": results}, args.out, show=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
