"""What the bfloat16 tests share (test_bfloat16*.py): ml_dtypes' type, every value, the
special values, random patterns, the signalling NaNs and the exact fused multiply-add."""

import math
from fractions import Fraction

import ml_dtypes
import numpy as np
from half_support import assert_bits, bits, every_pattern, random_patterns

import numba_vulkan as nv

BF = ml_dtypes.bfloat16

ALL = every_pattern(BF)

#: zeros, the smallest and largest subnormals, the smallest normal, ones, ties' neighbours,
#: the largest finite, infinity, quiet and signalling NaNs: both signs.
_SPECIAL_BITS = [0x0000, 0x0001, 0x0002, 0x007F, 0x0080, 0x0081, 0x3C00, 0x3F80, 0x3F81,
                 0x3FC0, 0x4000, 0x4040, 0x4B00, 0x4B80, 0x7F00, 0x7F7E, 0x7F7F, 0x7F80,
                 0x7FC0, 0x7F81]  # fmt: skip
SPECIALS = np.array(_SPECIAL_BITS + [b | 0x8000 for b in _SPECIAL_BITS], np.uint16).view(BF)


def random_bf16(rng, n):
    return random_patterns(rng, n, BF)


def signalling(x):
    """Which bfloat16 values are signalling NaNs."""
    w = bits(x)
    return (w & 0x7F80 == 0x7F80) & (w & 0x007F != 0) & (w & 0x0040 == 0)


def assert_sign_bits(out, a, b):
    """Rows 9 and 10 of half_support.run_binary(a, b), -a and abs(b): the sign bit flipped
    and cleared, NaNs too."""
    flipped, cleared = (bits(a) ^ 0x8000).astype(np.uint16), (bits(b) & 0x7FFF).astype(np.uint16)
    assert_bits(out[9], flipped.view(BF), "unary minus flips the sign bit", (a,))
    assert_bits(out[10], cleared.view(BF), "abs clears the sign bit", (b,))


def int64_operands(rng, n):
    """Magnitudes of every bit length, both signs; ties (an odd 9-bit number shifted) and
    their neighbours; the extremes."""
    lengths = rng.integers(0, 64, n)
    mags = rng.integers(0, 1 << 63, n, dtype=np.uint64) >> (63 - lengths).astype(np.uint64)
    signs = rng.integers(0, 2, n).astype(bool)
    values = np.where(signs, -mags.astype(np.int64), mags.astype(np.int64))
    k = n // 8
    odd = (2 * rng.integers(128, 256, k) + 1).astype(np.int64)
    shifted = odd << rng.integers(0, 54, k).astype(np.int64)
    near = np.concatenate([shifted, shifted + 1, shifted - 1, -shifted])
    extremes = np.array([0, 1, -1, 255, 256, 257, 2**63 - 1, -(2**63), -(2**63) + 1, 2**24 + 1,
                         2**60 + 2**52 + 1], np.int64)  # fmt: skip
    return np.concatenate([extremes, near, values])[:n]


@nv.jit
def copy(out, a):
    """out[i] = a[i]."""
    i = nv.global_id(0)
    if i < a.size:
        out[i] = a[i]


def exact_fma(a, b, c):
    """a * b + c rounded once to bfloat16, ties to even, from the exact rational value."""
    x, y, z = (v.astype(np.float64) for v in (a, b, c))
    with np.errstate(all="ignore"):
        plain = x * y + z  # x * y is exact: right for zeros, infinities and NaNs
    out = plain.astype(BF)
    limit = Fraction(2) ** 128 - Fraction(2) ** 119  # bfloat16's threshold of infinity
    for k in np.flatnonzero(np.isfinite(plain) & (plain != 0)):
        exact = Fraction(x[k]) * Fraction(y[k]) + Fraction(z[k])
        if abs(exact) >= limit:
            out[k] = BF(math.copysign(math.inf, exact))
            continue
        near = int(bits(out[k : k + 1])[0])  # at most one step from the answer
        best = None
        for w in (near - 1, near, near + 1):
            v = float(np.array([w % (1 << 16)], np.uint16).view(BF)[0])
            if not math.isfinite(v) or (v != 0 and (v > 0) != (exact > 0)):
                continue
            key = (abs(Fraction(v) - exact), w & 1)  # the nearest; of two, the even one
            if best is None or key < best[0]:
                best = (key, v)
        out[k] = BF(math.copysign(best[1], exact))
    return out
