"""What the float16 tests share (test_float16*.py): every value, random patterns, the
special values and NaNs made quiet."""

import numpy as np
from half_support import bits, every_pattern, random_patterns

ALL = every_pattern(np.float16)


def random_halves(rng, n):
    return random_patterns(rng, n, np.float16)


def quiet(x):
    """x with its NaNs made quiet (the first mantissa bit set), as float16."""
    return np.where(np.isnan(x), (bits(x) | 0x0200).view(np.float16), x)


#: zeros, subnormals, the smallest normal, ties' neighbours, the largest finite, infinities,
#: NaN (half_support.every_pair makes every pair of them).
_TINY, _SUB_MAX, _NORMAL_MIN = 2.0**-24, 2.0**-14 - 2.0**-24, 2.0**-14
_POSITIVE = [0.0, _TINY, 2 * _TINY, 3 * _TINY, _SUB_MAX, _NORMAL_MIN, _NORMAL_MIN + _TINY, 0.1,
             0.5, 1.0, 1 + 2.0**-10, 1.5, 2.0, 3.0, 7.0, 2048.0, 2049.0, 32768.0, 65504.0,
             float("inf")]  # fmt: skip
SPECIALS = np.array(_POSITIVE + [-v for v in _POSITIVE] + [float("nan")], np.float16)
