"""What the float16 and bfloat16 tests share: bit patterns, steps between values, and a
bit-for-bit comparison that names the operands of the first differences."""

import numpy as np
import pytest


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


def assert_same(got, want, what, operands=()):
    """Equal bits, or both NaN, for results of any dtype; the failure shows 16-bit float
    operands and results as their bits."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype, f"{what}: dtype {got.dtype}, the reference's is {want.dtype}"
    if got.dtype.kind == "V" or got.dtype == np.float16 or got.dtype.name == "bfloat16":
        ok = (bits(got) == bits(want)) | (isnan(got) & isnan(want))
    elif got.dtype.kind == "f":
        ok = (got.view(np.uint8).reshape(got.size, -1) ==
              want.view(np.uint8).reshape(want.size, -1)).all(axis=1) | (
                  np.isnan(got) & np.isnan(want))  # fmt: skip
    else:
        ok = got == want
    bad = np.nonzero(~np.asarray(ok).ravel())[0]
    if bad.size:

        def show(o, j):
            o = np.asarray(o).ravel()
            if o.dtype == np.float16 or o.dtype.name == "bfloat16":
                return hex(int(bits(o[j : j + 1])[0]))
            return o[j]

        shown = [tuple(show(o, j) for o in (*operands, got, want)) for j in bad[:5]]
        pytest.fail(f"{what}: {bad.size} of {ok.size} differ (operands, got, want): {shown}")


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
