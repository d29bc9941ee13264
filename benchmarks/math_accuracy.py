"""Accuracy sweep of the kernel math library: worst error per function and width over many samples.

For each function and width it runs one kernel over N operands (default 10^6:
edge cases, random floats over the whole exponent range, and dense samples over
the function's interesting interval) and compares with a reference:

- exact functions: NumPy's result, bit for bit (any NaN matches any NaN);
  the column is the number of differing elements (0 is the promise);
- accurate functions: the exact value computed in x86 extended precision
  (np.longdouble, 64-bit significand: its own error is below 2^-10 ulp of
  float64) and the error in ulps of the result's width (ulp of the binade of
  the exact value; subnormals in units of the smallest subnormal). Where the
  exact result is inf/NaN or beyond the largest float, the device must give
  the IEEE value (else the error is reported as inf).

It writes the table into docs/math.md between the accuracy-table markers
(--write; with --fastmath the second table, of the functions fastmath changes) and prints it.

    python3 benchmarks/math_accuracy.py                    # 10^6 samples each, print
    python3 benchmarks/math_accuracy.py --n 100000 --write # quicker, update docs/math.md
    python3 benchmarks/math_accuracy.py --fastmath         # the fastmath path
"""

import argparse
import linecache
import math
import re
import sys
import time
import zlib
from pathlib import Path

import numpy as np

# The source tree's package where it has a built extension; otherwise the installed one.
_TREE = Path(__file__).resolve().parents[1] / "src"
if list((_TREE / "numba_vulkan").glob("_core*.so")):
    sys.path.insert(0, str(_TREE))
import numba_vulkan as nv

LD = np.longdouble
DOC = Path(__file__).resolve().parents[1] / "docs" / "math.md"
MARKERS = {False: ("<!-- accuracy table begin -->", "<!-- accuracy table end -->"),
           True: ("<!-- fastmath table begin -->", "<!-- fastmath table end -->")}
# fastmath changes only these (the driver's built-ins, mathlib/fast.py); the others are the
# accurate path's, so --fastmath measures these unless --only says otherwise
FASTMATH_NAMES = ["sqrt", "exp", "log", "sin", "cos", "tan", "tanh"]


def special(dtype):
    fi = np.finfo(dtype)
    v = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 0.5, 2.0, float(fi.tiny),
         float(fi.smallest_subnormal), float(fi.max), -float(fi.max), float(fi.eps)]  # fmt: skip
    return np.array(v, dtype)


def wide(dtype, n, rng, positive=False):
    """Random signs, exponents over the whole range (subnormals included), random mantissas."""
    fi = np.finfo(dtype)
    e = rng.integers(fi.minexp - fi.nmant, fi.maxexp, n)
    m = rng.uniform(1.0, 2.0, n)
    s = 1.0 if positive else rng.choice([-1.0, 1.0], n)
    with np.errstate(all="ignore"):
        return (s * np.ldexp(m, e)).astype(dtype)


def sampler(kind):
    """kind: (lo, hi) uniform interval per width or 'wide'/'positive'; a third of the samples
    is spread over the whole exponent range, the rest is dense on the interval."""

    def make(dtype, n, rng):
        parts = [special(dtype)]
        if kind == "wide":
            parts.append(wide(dtype, n, rng))
        elif kind == "positive":
            parts += [wide(dtype, n // 2, rng, True),
                      (1 + rng.uniform(-0.3, 0.42, n - n // 2)).astype(dtype)]  # fmt: skip
        else:
            lo, hi = kind[dtype]
            parts += [wide(dtype, n // 3, rng), rng.uniform(lo, hi, n - n // 3).astype(dtype)]
        return np.concatenate(parts)

    return make


EXP_RANGE = {np.float32: (-104.0, 89.0), np.float64: (-746.0, 710.0)}
EXP2_RANGE = {np.float32: (-150.0, 128.0), np.float64: (-1075.0, 1024.0)}
M1_RANGE = {np.float32: (-1.0, 3.0), np.float64: (-1.0, 3.0)}
TRIG_RANGE = {np.float32: (-100.0, 100.0), np.float64: (-100.0, 100.0)}
ERF_RANGE = {np.float32: (-10.5, 10.5), np.float64: (-28.0, 28.0)}


# Processes for one function's mpmath references (--ref-jobs): gamma float64 at 10^6 samples
# takes over 400 s in one process.
REF_JOBS = 1


def _mp_values(fn, values):
    """fn's values at `values` (floats) as long double strings: 40 digits, 30 printed."""
    import mpmath as mp

    with mp.workdps(40):
        return [mp.nstr(fn(mp.mpf(v)), 30) for v in values]


def _mp_ref(fn):
    """A reference from mpmath (NumPy has no erf): 40 digits, rounded to long double by strtold;
    over REF_JOBS processes (spawned: fn must be a module-level function) for large inputs."""

    def ref(x):
        values = [float(v) for v in x.ravel()]
        if REF_JOBS > 1 and len(values) > 10_000:
            import concurrent.futures
            import multiprocessing

            step = -(-len(values) // (4 * REF_JOBS))
            chunks = [values[i:i + step] for i in range(0, len(values), step)]
            ctx = multiprocessing.get_context("spawn")
            with concurrent.futures.ProcessPoolExecutor(REF_JOBS, mp_context=ctx) as pool:
                text = [t for part in pool.map(_mp_values, [fn] * len(chunks), chunks) for t in part]
        else:
            text = _mp_values(fn, values)
        return np.array([np.longdouble(t) for t in text], LD).reshape(x.shape)

    return ref


def _erf(v):
    import mpmath as mp

    return mp.erf(v)


def _erfc(v):
    import mpmath as mp

    return mp.erfc(v) if mp.isnan(v) or abs(v) < 100 else mp.mpf(2 if v < 0 else 0)


GAMMA_RANGE = {np.float32: (-40.0, 36.0), np.float64: (-180.0, 172.0)}


def _gamma(v):
    import mpmath as mp

    if v <= 0 and v == mp.floor(v) or mp.isinf(v) and v < 0:
        return mp.nan  # (zeros, whose infinities carry the sign mpmath lacks, are left out)
    return mp.gamma(v)


def _gamma_sampler(dtype, n, rng):
    x = sampler(GAMMA_RANGE)(dtype, n, rng)
    return x[x != 0]


def _lgamma(v):
    import mpmath as mp

    if mp.isinf(v) or (v <= 0 and v == mp.floor(v)):
        return mp.inf
    return mp.re(mp.loggamma(v))


def _lgamma_sampler(dtype, n, rng):
    x = sampler({np.float32: (-40.0, 40.0), np.float64: (-180.0, 180.0)})(dtype, n, rng)
    return x[~((x >= -11.0001) & (x <= -2.2637))]


def POW_Y(dtype, n, rng):
    """pow's exponents: mostly moderate (the results stay in range for most bases), some huge."""
    y = rng.uniform(-40, 40, n)
    y[: n // 10] = rng.uniform(-2000, 2000, n // 10)
    return y.astype(dtype)


def ATAN2_X(dtype, n, rng):
    """atan2's second operand: half wide random floats, half moderate of either sign."""
    return np.concatenate([wide(dtype, n // 2, rng), rng.uniform(-3, 3, n - n // 2).astype(dtype)])


# name -> (kernel expression, reference on longdouble (None: exact, NumPy on the same dtype),
#          NumPy reference for exact ones, sampler)
ACCURATE = {
    "exp": ("math.exp(x)", np.exp, sampler(EXP_RANGE)),
    "exp2": ("np.exp2(x)", np.exp2, sampler(EXP2_RANGE)),
    "expm1": ("math.expm1(x)", np.expm1, sampler(EXP_RANGE)),
    "log": ("math.log(x)", np.log, sampler("positive")),
    "log2": ("math.log2(x)", np.log2, sampler("positive")),
    "log10": ("math.log10(x)", np.log10, sampler("positive")),
    "log1p": ("math.log1p(x)", np.log1p, sampler(M1_RANGE)),
    "cbrt": ("np.cbrt(x)", np.cbrt, sampler("wide")),
    "atan": (
        "math.atan(x)",
        np.arctan,
        sampler({np.float32: (-4.0, 4.0), np.float64: (-4.0, 4.0)}),
    ),
    # trig: a third over the whole exponent range (the Payne-Hanek reduction), the rest moderate
    "erf": ("math.erf(x)", _mp_ref(_erf), sampler(ERF_RANGE)),
    "erfc": ("math.erfc(x)", _mp_ref(_erfc), sampler(ERF_RANGE)),
    "gamma": ("math.gamma(x)", _mp_ref(_gamma), _gamma_sampler),
    # lgamma: its error is absolute near its zeros in [-11.0001, -2.2637] (left out here, as
    # libdevice's documented bound does; tests/device/test_math_gamma.py checks them)
    "lgamma": ("math.lgamma(x)", _mp_ref(_lgamma), _lgamma_sampler),
    "sin": ("math.sin(x)", np.sin, sampler(TRIG_RANGE)),
    "cos": ("math.cos(x)", np.cos, sampler(TRIG_RANGE)),
    "tan": ("math.tan(x)", np.tan, sampler(TRIG_RANGE)),
    "tanh": (
        "math.tanh(x)",
        np.tanh,
        sampler({np.float32: (-10.0, 10.0), np.float64: (-23.0, 23.0)}),
    ),
    "sinh": (
        "math.sinh(x)",
        np.sinh,
        sampler({np.float32: (-90.0, 90.0), np.float64: (-711.0, 711.0)}),
    ),
    "cosh": (
        "math.cosh(x)",
        np.cosh,
        sampler({np.float32: (-90.0, 90.0), np.float64: (-711.0, 711.0)}),
    ),
    "asinh": (
        "math.asinh(x)",
        np.arcsinh,
        sampler({np.float32: (-5.0, 5.0), np.float64: (-5.0, 5.0)}),
    ),
    "acosh": (
        "math.acosh(x)",
        np.arccosh,
        sampler({np.float32: (1.0, 5.0), np.float64: (1.0, 5.0)}),
    ),
    "atanh": (
        "math.atanh(x)",
        np.arctanh,
        sampler({np.float32: (-1.0, 1.0), np.float64: (-1.0, 1.0)}),
    ),
    "asin": (
        "math.asin(x)",
        np.arcsin,
        sampler({np.float32: (-1.0, 1.0), np.float64: (-1.0, 1.0)}),
    ),
    "acos": (
        "math.acos(x)",
        np.arccos,
        sampler({np.float32: (-1.0, 1.0), np.float64: (-1.0, 1.0)}),
    ),
    "atan2": ("math.atan2(x, y)", np.arctan2, sampler("wide")),
    "pow": ("x ** y", np.power, sampler("positive")),
    "hypot(x, 1.5)": ("math.hypot(x, 1.5)", lambda v: np.hypot(v, LD(1.5)), sampler("wide")),
}
EXACT = {
    "sqrt": ("math.sqrt(x)", np.sqrt, sampler("positive")),
    "floor": ("np.floor(x)", np.floor, sampler("wide")),
    "ceil": ("np.ceil(x)", np.ceil, sampler("wide")),
    "trunc": ("np.trunc(x)", np.trunc, sampler("wide")),
    "rint": ("np.rint(x)", np.rint, sampler("wide")),
    "fabs": ("math.fabs(x)", np.fabs, sampler("wide")),
    "nextafter(x, 0)": (
        "np.nextafter(x, x - x)",
        lambda v: np.nextafter(v, v - v),
        sampler("wide"),
    ),
    "ldexp(x, 7)": ("math.ldexp(x, 7)", lambda v: np.ldexp(v, 7), sampler("wide")),
    "ldexp(x, -60)": ("math.ldexp(x, -60)", lambda v: np.ldexp(v, -60), sampler("wide")),
    "frexp(x)[0]": ("math.frexp(x)[0]", lambda v: np.frexp(v)[0], sampler("wide")),
    "copysign(x, -1)": ("math.copysign(x, -1.0)", lambda v: np.copysign(v, -1), sampler("wide")),
    "fmod(x, 3)": ("np.fmod(x, 3.0)", lambda v: np.fmod(v, v.dtype.type(3)), sampler("wide")),
}


def kernel(expr, fastmath):
    name = f"acc_{zlib.crc32(expr.encode())}_{int(fastmath)}"
    src = (f"def {name}(a, c, out):\n    i = nv.global_id(0)\n    if i < out.size:\n"
           f"        x = a[i]\n        y = c[i]\n        out[i] = {expr}\n")  # fmt: skip
    filename = f"<{name}>"
    linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)
    ns = {"nv": nv, "np": np, "math": math}
    exec(compile(src, filename, "exec"), ns)  # noqa: S102
    return nv.jit(fastmath=fastmath)(ns[name])


def run(expr, x, y, fastmath):
    out = np.zeros_like(x)
    k = kernel(expr, fastmath)
    chunk = 1 << 18  # keeps each dispatch short on a software device
    for s in range(0, x.size, chunk):
        o = np.zeros(min(chunk, x.size - s), x.dtype)
        k.forall(o.size)(np.ascontiguousarray(x[s : s + chunk]),
                         np.ascontiguousarray(y[s : s + chunk]), o)  # fmt: skip
        out[s : s + chunk] = o
    return out


def ulp_errors(out, exact, dtype):
    fi = np.finfo(dtype)
    out_l = out.astype(LD)
    with np.errstate(all="ignore"):
        a = np.abs(exact)
        _, e = np.frexp(np.maximum(a, LD(fi.tiny)))
        ulp = np.ldexp(LD(1), e - 1 - fi.nmant)
        err = np.abs(out_l - exact) / ulp
    nan_ok = np.isnan(exact) & np.isnan(out_l)
    # Beyond the largest finite (by at least half an ulp) the result must be inf.
    big = a >= LD(fi.max) * (1 + LD(2.0) ** (-fi.nmant - 2))
    inf_ok = big & np.isinf(out_l) & (np.sign(out_l) == np.sign(exact))
    err = np.where(nan_ok | inf_ok | (out_l == exact), 0.0, err)
    err = np.where(np.isnan(err), np.inf, err)
    return err


def measure(n, fastmath, names=None):
    rows = []
    for table, exact_kind in ((EXACT, True), (ACCURATE, False)):
        for name, (expr, ref, make) in table.items():
            if names and name not in names:
                continue
            for dtype in (np.float32, np.float64):
                rng = np.random.default_rng(zlib.crc32(name.encode()))  # reproducible
                x = make(dtype, n, rng)
                second = {"pow": POW_Y, "atan2": ATAN2_X}.get(name)
                y = second(dtype, x.size, rng) if second else x
                t = time.time()
                try:
                    out = run(expr, x, y, fastmath)
                except nv.VulkanUnsupportedError as e:
                    rows.append((name, dtype.__name__, x.size, "refused", str(e).splitlines()[0]))
                    continue
                with np.errstate(all="ignore"):
                    if exact_kind:
                        r = ref(x)
                        ib = {4: np.int32, 8: np.int64}[x.itemsize]
                        bad = (out.view(ib) != r.view(ib)) & ~(np.isnan(out) & np.isnan(r))
                        cell = f"{int(bad.sum())} differ" if bad.any() else "bit-exact"
                        at = repr(x[np.argmax(bad)]) if bad.any() else ""
                    else:
                        two = name in ("pow", "atan2")
                        exact = ref(x.astype(LD), y.astype(LD)) if two else ref(x.astype(LD))
                        err = ulp_errors(out, exact, dtype)
                        i = int(np.argmax(err))
                        cell, at = f"{err[i]:.3f} ulp", repr(float(x[i]))
                        if two:
                            at += f", y = {float(y[i])!r}"
                rows.append((name, dtype.__name__, x.size, cell, at))
                print(f"{name:18s} {dtype.__name__:8s} {x.size:9d} {cell:14s} {at} "
                      f"({time.time() - t:.1f} s)", flush=True)  # fmt: skip
    return rows


def measure_in_parallel(n, fastmath, names, jobs):
    """measure() with one function per task over `jobs` processes (the references are
    computed on the host's cores), rows in measure()'s order."""
    import concurrent.futures
    import multiprocessing

    order = [name for name in (*EXACT, *ACCURATE) if not names or name in names]
    ctx = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(jobs, mp_context=ctx) as pool:
        parts = pool.map(measure, [n] * len(order), [fastmath] * len(order),
                         [[name] for name in order])
        return [row for part in parts for row in part]


def table(rows, device, fastmath, n):
    path = "fastmath" if fastmath else "accurate"
    head = (
        f"Device: {device}; path: {path}; about {n} samples per function and width "
        "(benchmarks/math_accuracy.py)."
    )
    lines = [head, "", "| function | width | samples | worst | at x |", "|---|---|---|---|---|"]
    lines += [f"| {a} | {b} | {c} | {d} | {e} |" for a, b, c, d, e in rows]
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1_000_000, help="samples per function and width")
    ap.add_argument("--fastmath", action="store_true")
    ap.add_argument("--only", nargs="*", help="function names to run (default: all)")
    ap.add_argument("--write", action="store_true", help="update the table in docs/math.md")
    ap.add_argument("--jobs", type=int, default=1,
                    help="processes sharing the device, one function at a time each")
    ap.add_argument("--ref-jobs", type=int, default=1,
                    help="processes computing one function's mpmath references (with --jobs 1)")
    args = ap.parse_args()
    assert np.finfo(LD).nmant >= 63, "needs x86 extended precision for the reference"
    from numba_vulkan import runtime

    device = runtime.get_device().info.name
    names = args.only or (FASTMATH_NAMES if args.fastmath else None)
    global REF_JOBS
    REF_JOBS = args.ref_jobs
    if args.jobs > 1:
        rows = measure_in_parallel(args.n, args.fastmath, names, args.jobs)
    else:
        rows = measure(args.n, args.fastmath, names)
    text = table(rows, device, args.fastmath, args.n)
    print(text)
    if args.write:
        doc = DOC.read_text()
        begin, end = MARKERS[args.fastmath]
        new = re.sub(re.escape(begin) + ".*?" + re.escape(end), begin + "\n" + text + "\n" + end,
                     doc, flags=re.DOTALL)  # fmt: skip
        DOC.write_text(new)


if __name__ == "__main__":
    main()
