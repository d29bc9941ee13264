"""What the float16 and bfloat16 tests share: bit patterns, steps between values, operand
sets, a kernel of every binary operation with its checks, kernels of one row per function,
the types of mixed operations, and comparisons (bit for bit, NaN against any NaN, or within
steps) that name the operands of the first differences."""

import linecache
import math
import operator

import numpy as np
import pytest
from numba.core import types

import numba_vulkan as nv
from numba_vulkan.typing import pipeline

# ---------------------------------------------------------------- values


def bits(x):
    """The 16-bit words of float16 or bfloat16 values."""
    return np.ascontiguousarray(x).view(np.uint16)


def isnan(x):
    """NaN test for float16 and bfloat16 (NumPy has no isnan loop for the latter)."""
    return np.isnan(np.asarray(x).astype(np.float32))


def every_pattern(dtype):
    """All 65,536 values of a 16-bit float dtype, in bit order."""
    return np.arange(1 << 16, dtype=np.uint32).astype(np.uint16).view(dtype)


def random_patterns(rng, n, dtype):
    return rng.integers(0, 1 << 16, n, dtype=np.uint16).view(dtype)


def every_pair(values):
    """(a, b): every pair of `values`."""
    a, b = np.meshgrid(values, values)
    return a.ravel(), b.ravel()


def ties(rng, n, dtype, significand, smallest, largest):
    """Pairs (x, y) whose sum (or difference) lies exactly halfway between two values of
    `dtype` (`significand` bits): y is half a unit of x's last place, or three halves, of
    either sign; x's magnitude within [smallest, largest)."""
    x = random_patterns(rng, n, dtype)
    x32 = x.astype(np.float32)
    x = x[np.isfinite(x32) & (np.abs(x32) >= smallest) & (np.abs(x32) < largest)]
    e = np.floor(np.log2(np.abs(x.astype(np.float64))))
    half_ulp = np.ldexp(1.0, (e - significand).astype(int))
    y = (half_ulp * rng.choice([1.0, -1.0, 3.0, -3.0], x.size)).astype(dtype)
    exact = x.astype(np.float64) + y.astype(np.float64)
    tie = exact != exact.astype(dtype).astype(np.float64)  # not where a binade is crossed
    return x[tie], y[tie]


def operand_pairs(rng, n, specials, tie_pairs):
    """(a, b): n random bit-pattern pairs of specials' dtype, every pair of `specials`, and
    the pairs (x, y) of tie_pairs(rng) in both orders (drawn after the random ones)."""
    a, b = random_patterns(rng, n, specials.dtype), random_patterns(rng, n, specials.dtype)
    sa, sb = every_pair(specials)
    ta, tb = tie_pairs(rng)
    return np.concatenate([a, sa, ta, tb]), np.concatenate([b, sb, tb, ta])


def ulps(x, y):
    """Distance in steps of the 16-bit format (NaN against NaN: 0; against a number:
    2^16)."""

    def order(v):
        i = bits(v).astype(np.int32)
        return np.where(i & 0x8000, 0x8000 - i, i)

    d = np.abs(order(x) - order(y))
    d[isnan(x) & isnan(y)] = 0
    d[isnan(x) != isnan(y)] = 1 << 16
    return d


# ---------------------------------------------------------------- comparisons


_FLUSHES = {}


def flushes_float32():
    """Whether the default device's plain float32 arithmetic flushes subnormals (NVIDIA's
    does; docs/math.md, "Subnormals and devices"): a probe, x * y of x = 2^-140 and y = 1
    read from memory (a constant 1 the driver would fold away, and NVIDIA's does)."""
    device = nv.get_device()
    if device.info.name not in _FLUSHES:

        @nv.jit
        def times_one(out, x):
            out[0] = x[0] * x[1]

        out = np.ones(1, np.float32)
        times_one[1, 1](out, np.array([2.0**-140, 1.0], np.float32))
        _FLUSHES[device.info.name] = bool(out[0] == 0)
    return _FLUSHES[device.info.name]


def float32_normal(*values):
    """Where every one of `values` (converted to float32) is zero, normal, inf or NaN: the
    elements plain float32 arithmetic computes alike on every device."""
    ok = True
    for v in values:
        v = np.abs(np.asarray(v, dtype=np.float32))
        ok = ok & ~((v > 0) & (v < np.finfo(np.float32).tiny))
    return ok


def _is_half(a):
    return a.dtype == np.float16 or a.dtype.name == "bfloat16"


def _fail_where_not(ok, what, operands, got, want, how="differ"):
    """pytest.fail naming the first five elements where `ok` is false: their operands and
    results, 16-bit floats as their bits."""
    bad = np.nonzero(~np.asarray(ok).ravel())[0]
    if bad.size:

        def show(o, j):
            o = np.asarray(o).ravel()
            return hex(int(bits(o[j : j + 1])[0])) if _is_half(o) else o[j]

        shown = [tuple(show(o, j) for o in (*operands, got, want)) for j in bad[:5]]
        pytest.fail(f"{what}: {bad.size} of {np.size(ok)} {how} (operands, got, want): {shown}")


def _same_dtype(got, want, what):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype, f"{what}: dtype {got.dtype}, the reference's is {want.dtype}"
    return got, want


def assert_same(got, want, what, operands=(), where=True):
    """Equal bits, or both NaN, for results of any dtype (at the elements `where` is true);
    the failure shows 16-bit float operands and results as their bits."""
    got, want = _same_dtype(got, want, what)
    if got.dtype.kind == "V" or _is_half(got):
        ok = (bits(got) == bits(want)) | (isnan(got) & isnan(want))
    elif got.dtype.kind == "f":
        ok = (got.view(np.uint8).reshape(got.size, -1) ==
              want.view(np.uint8).reshape(want.size, -1)).all(axis=1) | (
                  np.isnan(got) & np.isnan(want))  # fmt: skip
    else:
        ok = got == want
    _fail_where_not(ok | ~np.asarray(where), what, operands, got, want)


def assert_bits(got, want, what, operands=()):
    """Equal bits, NaNs' sign and payload included (a value converted or moved, not
    computed), for results of any dtype."""
    got, want = _same_dtype(got, want, what)
    assert got.shape == want.shape, f"{what}: shape {got.shape}, the reference's is {want.shape}"
    unsigned = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}.get(got.dtype.itemsize)
    if unsigned is None:  # records, complex128 and the like: byte by byte
        words = [np.ascontiguousarray(v).view(np.uint8).reshape(v.size, -1) for v in (got, want)]
        ok = (words[0] == words[1]).all(axis=1)
    else:
        ok = np.ascontiguousarray(got).view(unsigned) == np.ascontiguousarray(want).view(unsigned)
    _fail_where_not(ok, what, operands, got, want)


def assert_ulps(got, want, most, what, operands=()):
    """At most `most` steps of the 16-bit format from `want` (a NaN only against a NaN);
    returns the steps."""
    d = ulps(got, want)
    _fail_where_not(d <= most, what, operands, got, want, f"more than {most} ulp from it")
    return d


# ---------------------------------------------------------------- kernels


@nv.jit
def binary(out, flags, a, b):
    """out's rows, in BINARY_ROWS' order: x op y, -x, abs(y) and two in-place chains;
    flags': the COMPARISONS."""
    i = nv.global_id(0)
    if i < a.size:
        x, y = a[i], b[i]
        out[0, i] = x + y
        out[1, i] = x - y
        out[2, i] = x * y
        out[3, i] = x / y
        out[4, i] = x // y
        out[5, i] = x % y
        out[6, i] = x**y
        out[7, i] = min(x, y)
        out[8, i] = max(x, y)
        out[9, i] = -x
        out[10, i] = abs(y)
        r = x
        r += y
        r *= y
        out[11, i] = r
        r -= x
        r /= y
        out[12, i] = r
        flags[0, i] = x == y
        flags[1, i] = x != y
        flags[2, i] = x < y
        flags[3, i] = x <= y
        flags[4, i] = x > y
        flags[5, i] = x >= y


BINARY_ROWS = ("+", "-", "*", "/", "//", "%", "**", "min", "max", "-x", "abs(y)",
               "+= *=", "+= *= -= /=")  # fmt: skip
COMPARISONS = (operator.eq, operator.ne, operator.lt, operator.le, operator.gt, operator.ge)


def run_binary(a, b):
    """(out, flags) of `binary` over the pairs (a[i], b[i])."""
    out = np.zeros((len(BINARY_ROWS), a.size), a.dtype)
    flags = np.zeros((len(COMPARISONS), a.size), np.bool_)
    binary.forall(a.size)(out, flags, a, b)
    return out, flags


def assert_binary(out, flags, a, b, name):
    """Every row of run_binary(a, b) but the power (row 6: each test has its oracle) as the
    host computes it in the dtype (`name`), NaN against any NaN: the operators and in-place
    chains as its own operations (NumPy's float16 loops, ml_dtypes' bfloat16 ones), min and
    max as CPython's (the first operand unless the second is strictly beyond it), -x and
    abs(y), and the comparisons of the operands widened to float32 (exactly)."""
    x, y = a.astype(np.float32), b.astype(np.float32)
    with np.errstate(all="ignore"):
        want = {0: a + b, 1: a - b, 2: a * b, 3: a / b, 4: a // b, 5: a % b,
                7: np.where(y < x, b, a), 8: np.where(y > x, b, a), 9: -a, 10: np.abs(b),
                11: (a + b) * b, 12: (((a + b) * b) - a) / b}  # fmt: skip
        for k, w in want.items():
            assert_same(out[k], w, f"{name} {BINARY_ROWS[k]}", (a, b))
        for k, op in enumerate(COMPARISONS):
            assert_same(flags[k], op(x, y), f"{name} {op.__name__}", (a, b))


def rows_kernel(params, lines, what):
    """A kernel of `params` (a string, "out, a, b") running `lines` (such as "x = a[i]",
    "out[3, i] = np.sin(x)") for every i below a.size; nv, np and math are its globals.
    `what` names its source, which tracebacks show."""
    src = (f"def rows({params}):\n    i = nv.global_id(0)\n    if i < a.size:\n"
           + "".join(f"        {line}\n" for line in lines))  # fmt: skip
    filename = f"<{what}>"
    linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)
    namespace = {"nv": nv, "np": np, "math": math}
    exec(compile(src, filename, "exec"), namespace)  # noqa: S102
    return nv.jit(namespace["rows"])


# ---------------------------------------------------------------- types


def typemap(fn, argtypes):
    """The types the kernel `fn` gives its variables for arguments of `argtypes`."""
    return pipeline.type_kernel(fn, tuple(argtypes), pipeline.Options()).typemap


def _mixed(out, x, y):
    p = x * y
    q = y / x
    c = x < y
    m = min(x, y)
    out[0] = p + q + c + m


def mixed_types(tx, ty):
    """The types of x * y, y / x, x < y and min(x, y) in a kernel, x of type tx, y of ty."""
    tm = typemap(_mixed, (types.float64[::1], tx, ty))
    return tm["p"], tm["q"], tm["c"], tm["m"]
