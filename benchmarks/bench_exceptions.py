"""What kernel exceptions cost when nothing is raised: a triad with and without checks.

Issue 9, item 1. The same STREAM triad (``a[i] = b[i] + s * c[i]``, float32)
compiled five ways, each run on the same device arrays:

- plain:        no checks (the default);
- assert:       ``assert b[i] == b[i], "NaN input"`` before the store (never fails);
- boundscheck:  ``boundscheck=True``: every index checked (three per invocation);
- divide:       ``a[i] = b[i] / c[i]`` with error_model="numpy" ...
- divide_python ... and with error_model="python" (a zero test per division).

Reported: GB/s (12 bytes per element) of the best of `--repeats` timings (the
best, not the median: other load on a shared CPU only ever slows a run down),
each of `--launches` asynchronous launches and one synchronize, and each
variant's ratio to its baseline (plain, or divide). numba.cuda is measured
alongside where it exists (its boundscheck is ignored on CUDA, and its
``assert`` is compiled out without ``debug=True``: its columns are baselines).

    python3 benchmarks/bench_exceptions.py                           # a GPU
    python3 benchmarks/bench_exceptions.py --log2 22 --launches 5 --repeats 5  # lavapipe
"""

import argparse
import datetime
import json
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent


def plain(a, b, c, s):
    i = _gid()
    if i < a.size:
        a[i] = b[i] + s * c[i]


def asserted(a, b, c, s):
    i = _gid()
    if i < a.size:
        assert b[i] == b[i], "NaN input"
        a[i] = b[i] + s * c[i]


def divide(a, b, c, s):
    i = _gid()
    if i < a.size:
        a[i] = b[i] / c[i]


def _gid():  # replaced by the backend's global id below
    raise NotImplementedError


def _time(run, sync, launches, repeats):
    run()
    sync()  # compile and warm up
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        for _ in range(launches):
            run()
        sync()
        times.append((time.perf_counter() - t) / launches)
    return min(times)


def bench_vulkan(args):
    import numba_vulkan as nv

    n = 1 << args.log2
    a = nv.device_array(n, np.float32)
    b = nv.to_device(np.ones(n, np.float32))
    c = nv.to_device(np.full(n, 2, np.float32))
    s = np.float32(3)
    dev = nv.get_device()
    kernels = {}
    for name, fn, options in [
        ("plain", plain, {}),
        ("assert", asserted, {}),
        ("boundscheck", plain, {"boundscheck": True}),
        ("divide", divide, {}),
        ("divide_python", divide, {"error_model": "python"}),
    ]:
        kernels[name] = nv.jit(**options)(_with_gid(fn, "nv.global_id(0)", nv=nv))
    out = {"device": dev.info.name}
    for name, k in kernels.items():
        launch = k.forall(n)
        seconds = _time(lambda: launch(a, b, c, s), dev.synchronize, args.launches, args.repeats)
        out[name + "_GBps"] = 12 * n / seconds / 1e9
        out[name + "_sites"] = len(next(iter(k._specialisations.values())).compiled.sites)
    expected = {"plain": 7.0, "divide": 0.5}
    for base in expected:  # the results are right (nothing raised, nothing skipped)
        k = kernels[base]
        k.forall(n)(a, b, c, s)
        assert float(a.copy_to_host()[n - 1]) == expected[base], base
    out["assert_ratio"] = out["assert_GBps"] / out["plain_GBps"]
    out["boundscheck_ratio"] = out["boundscheck_GBps"] / out["plain_GBps"]
    out["divide_python_ratio"] = out["divide_python_GBps"] / out["divide_GBps"]
    return out


def bench_cuda(args):
    try:
        from numba import cuda

        if not cuda.is_available():
            return {"missing": "no CUDA GPU"}
    except Exception as e:  # noqa: BLE001
        return {"missing": f"numba.cuda: {e}"}
    n = 1 << args.log2
    a = cuda.device_array(n, np.float32)
    b = cuda.to_device(np.ones(n, np.float32))
    c = cuda.to_device(np.full(n, 2, np.float32))
    s = np.float32(3)
    out = {}
    for name, fn, options in [("plain", plain, {}), ("assert", asserted, {}),
                              ("divide", divide, {}),
                              ("divide_python", divide, {"error_model": "python"})]:  # fmt: skip
        try:
            k = cuda.jit(**options)(_with_gid(fn, "cuda.grid(1)", cuda=cuda))
            launch = k[(n + 255) // 256, 256]
            seconds = _time(lambda: launch(a, b, c, s), cuda.synchronize, args.launches,
                            args.repeats)  # fmt: skip
        except Exception as e:  # noqa: BLE001 (an option numba.cuda does not take)
            out[name + "_error"] = f"{type(e).__name__}: {e}"
            continue
        out[name + "_GBps"] = 12 * n / seconds / 1e9
    return out


def _with_gid(fn, expression, **names):
    """`fn` recompiled with ``_gid()`` replaced by the backend's global id expression."""
    import inspect
    import textwrap

    source = textwrap.dedent(inspect.getsource(fn)).replace("_gid()", expression)
    scope = dict(names)
    exec(compile(source, f"<bench_exceptions {fn.__name__}>", "exec"), scope)
    return scope[fn.__name__]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--log2", type=int, default=26, help="log2 of the element count")
    parser.add_argument("--launches", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--backends", default="numba_vulkan,numba_cuda")
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    result = {"date": datetime.date.today().isoformat(), "elements": 1 << args.log2}
    if "numba_vulkan" in args.backends:
        result["numba_vulkan"] = bench_vulkan(args)
    if "numba_cuda" in args.backends:
        result["numba_cuda"] = bench_cuda(args)
    text = json.dumps(result, indent=2)
    print(text)
    if args.out:
        Path(args.out).write_text(text + "\n")


if __name__ == "__main__":
    main()
