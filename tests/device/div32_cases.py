"""float32 division operands that are hard to get right (test_float32_division.py and the long
sweep, tests/fuzz/div32_sweep.py): NumPy only, no device.

`hard_pairs(n, seed)` mixes, in about equal parts:

- random bits (every exponent, NaN, infinities, subnormals, zeros now and then);
- quotients near 1 and near powers of two (b times 2^j, moved by a few ulps);
- exact quotients (12-bit mantissas) and their neighbours;
- quotients nearest to a midpoint between floats: 2^24 A - (2M + 1) B = N for the 24-bit
  integers A, B of a and b and |N| <= 5 (2^25 A for A < B), the hardest to round;
- quotients near overflow and near and below the smallest normal (subnormal results);
- operands at the bounds of the fused sequence's safe range (kir/float_division.h): exponents
  of a around -79, of b around +-125, mantissas of b near 2 (from 0x7ffd00 up), ea - eb
  around -124 and 125;
- zeros, infinities, NaNs and subnormals against everything (the specials' cross product).
"""

import numpy as np

SPECIALS = np.array(
    [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 2.0, 3.0, 0.1, 1e-45, -1e-45, 5.9e-39,
     1.1754942e-38, 1.17549435e-38, 2.3509887e-38, 3.4028235e38, -3.4028235e38, 1.7014118e38,
     8.507059e37, 1.9999999, 1.9999998, 2.9387359e-39, 4.3e-38, 1e30, 1e-30],
    np.float32,
)


def _signs(rng, n):
    return np.where(rng.random(n) < 0.5, 1, -1).astype(np.float32)


def _float(rng, n, lo_exp, hi_exp, mant_lo=1.0, mant_hi=2.0):
    """Random mantissas times 2^[lo_exp, hi_exp], as float32 (rounded once; may overflow)."""
    with np.errstate(over="ignore"):
        m = rng.uniform(mant_lo, mant_hi, n)
        return (m * np.exp2(rng.integers(lo_exp, hi_exp + 1, n).astype(np.float64))).astype(
            np.float32)


def _bits(u):
    return np.asarray(u, np.uint32).view(np.float32)


def _move(x, k):
    """x moved by k ulps (on the bits; the sign kept)."""
    b = x.view(np.int32).astype(np.int64) + k
    return np.clip(b, -(2**31), 2**31 - 1).astype(np.int32).view(np.float32)


def _midpoint_pairs(rng, n):
    """a / b within |N| / B ulp-scaled of a midpoint (the closest a quotient gets)."""
    a, b = [], []
    while len(a) < n:
        B = int(rng.integers(2**22, 2**23)) * 2 + 1  # odd, 24 bits
        N = int(rng.choice([-5, -3, -2, -1, 1, 2, 3, 5]))
        big = bool(rng.integers(0, 2))  # A >= B: 2^24 A - (2M + 1) B = N; else 2^25 A
        shift = 24 if big else 25
        A = (N * pow(2**shift, -1, B)) % B
        if big:
            A += B
            if A >= 2**24:
                continue
        elif A < 2**23:
            continue
        a.append(A)
        b.append(B)
    ea = rng.integers(-20, 21, n).astype(np.float64)
    eb = rng.integers(-20, 21, n).astype(np.float64)
    x = (np.array(a, np.float64) * np.exp2(ea - 23)).astype(np.float32)
    y = (np.array(b, np.float64) * np.exp2(eb - 23)).astype(np.float32)
    return x * _signs(rng, n), y * _signs(rng, n)


def hard_pairs(n=100_000, seed=0):
    """(x, y) float32 arrays of about n pairs (the parts above, then shuffled)."""
    rng = np.random.default_rng(seed)
    part = max(1, n // 12)
    xs, ys = [], []

    def add(x, y):
        xs.append(np.asarray(x, np.float32))
        ys.append(np.asarray(y, np.float32))

    # random bits
    add(_bits(rng.integers(0, 2**32, part, dtype=np.uint64)),
        _bits(rng.integers(0, 2**32, part, dtype=np.uint64)))
    # near 1 and near powers of two
    b = _float(rng, part, -60, 60) * _signs(rng, part)
    k = rng.integers(-4, 5, part)
    add(_move(b, k), b)
    j = rng.integers(-40, 41, part).astype(np.float64)
    add(_move((b * np.exp2(j)).astype(np.float32), k), b)
    # exact quotients and neighbours
    q = (rng.integers(2**11, 2**12, part) * np.exp2(rng.integers(-30, 31, part) - 11.0))
    bb = (rng.integers(2**11, 2**12, part) * np.exp2(rng.integers(-30, 31, part) - 11.0))
    exact = (q * bb).astype(np.float32) * _signs(rng, part)
    add(np.concatenate([exact, _move(exact, rng.choice([-1, 1], part))]),
        np.concatenate([bb, bb]).astype(np.float32))
    # nearest to midpoints
    add(*_midpoint_pairs(rng, part))
    # near overflow and near underflow (normal and subnormal quotients)
    add(_float(rng, part, 110, 127) * _signs(rng, part), _float(rng, part, -20, 2))
    add(_float(rng, part, -126, -90) * _signs(rng, part), _float(rng, part, -10, 40))
    d = rng.integers(-152, -118, part).astype(np.float64)
    y = _float(rng, part, -20, 100)
    add((_float(rng, part, 0, 0) * np.exp2(d) * y.astype(np.float64)).astype(np.float32), y)
    # the safe range's bounds
    add(_float(rng, part, -82, -76) * _signs(rng, part), _float(rng, part, -4, 4))
    eb = rng.choice([-127, -126, -125, -124, 124, 125, 126, 127], part).astype(np.float64)
    y = (rng.uniform(1, 2, part) * np.exp2(eb)).astype(np.float32)
    add(_float(rng, part, -10, 10), y * _signs(rng, part))
    mant = rng.integers(0x7FFD00, 0x800000, part).astype(np.uint32)
    y = _bits((rng.integers(100, 150, part).astype(np.uint32) << 23) | mant)
    add(np.concatenate([_float(rng, part // 2, -20, 20), np.ones(part - part // 2, np.float32)]), y)
    de = rng.choice([-126, -125, -124, -123, 124, 125, 126, 127], part).astype(np.float64)
    eb = rng.integers(-60, 60, part).astype(np.float64)
    with np.errstate(over="ignore"):
        add((rng.uniform(1, 2, part) * np.exp2(np.clip(de + eb, -140, 127))).astype(np.float32),
            (rng.uniform(1, 2, part) * np.exp2(eb)).astype(np.float32))
    # zeros against everything, specials against specials and random values
    r = _float(rng, part, -149, 127) * _signs(rng, part)
    z = np.where(rng.random(part) < 0.5, np.float32(0), np.float32(-0.0)).astype(np.float32)
    add(np.concatenate([z, r]), np.concatenate([r, z]))
    sx, sy = np.meshgrid(SPECIALS, SPECIALS)
    add(sx.ravel(), sy.ravel())
    s = rng.choice(SPECIALS, part)
    add(np.concatenate([s, r]), np.concatenate([r, s]))
    x, y = np.concatenate(xs), np.concatenate(ys)
    order = rng.permutation(x.size)
    return x[order], y[order]


def in_safe_range(x, y):
    """Whether x / y lies in the safe range kir/float_division.h proves for the fused sequence,
    stated on the biased exponents (the pass tests a subset of it by float comparisons:
    tests/fuzz/div32_range_subset.py)."""
    ua, ub = x.view(np.uint32), y.view(np.uint32)
    ea = ((ua >> 23) & 0xFF).astype(np.int64)
    eb = ((ub >> 23) & 0xFF).astype(np.int64)
    b_ok = (eb >= 2) & (eb <= 252) & ((ub & 0x7FFFFF) < 0x7FFE00)
    d = ea - eb
    a_ok = (ea >= 48) & (ea <= 254) & (d >= -124) & (d <= 125)
    return b_ok & (((ua << np.uint32(1)) == 0) | a_ok)
