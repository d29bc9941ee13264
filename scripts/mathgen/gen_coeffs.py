"""Generate src/numba_vulkan/frontend/mathlib/coeffs.py and coeffs_special.py: polynomial
coefficients of the math library.

Each polynomial is the Chebyshev interpolant (near-minimax: within a small factor
of the best uniform approximation) of its function on its reduction interval,
computed with mpmath at 60 digits, converted to the monomial basis in the
variable itself, then rounded to the target width (ERF_L, whose weight falls
by orders of magnitude across its interval, is a weighted least-squares fit
instead: weighted_fit). The script prints, for each
polynomial, the maximum error of the rounded coefficients over a dense grid,
relative to the size of the function's contribution, so that a reader can check
it is far below the target's ulp.

Usage: python3 scripts/mathgen/gen_coeffs.py  (needs `pip install mpmath`)
"""

import os
import struct

import mpmath as mp

mp.mp.dps = 60

MATHLIB = os.path.join(os.path.dirname(__file__), "..", "..", "src", "numba_vulkan", "frontend",
                       "mathlib")  # fmt: skip
# Two files: the elementary functions' coefficients, and erf/erfc/lgamma's (their tables are
# most of the lines), each read by the modules of its functions.
OUT = os.path.join(MATHLIB, "coeffs.py")
OUT_SPECIAL = os.path.join(MATHLIB, "coeffs_special.py")
SPECIAL = ("ERF", "ERX", "LGAMMA")  # names that begin so go to OUT_SPECIAL
WEIGHTED_FITS = ("ERF_L",)  # fitted by weighted_fit, the others by cheb_fit


def f32(v):
    return struct.unpack("f", struct.pack("f", float(v)))[0]


def cheb_fit(f, a, b, deg):
    """Monomial coefficients c[0..deg] of the Chebyshev interpolant of f on [a, b]."""
    a, b = mp.mpf(a), mp.mpf(b)
    n = deg + 1
    nodes = [mp.cos(mp.pi * (k + mp.mpf(1) / 2) / n) for k in range(n)]
    xs = [(b - a) / 2 * t + (b + a) / 2 for t in nodes]
    ys = [f(x) for x in xs]
    # Solve the Vandermonde system in x directly (well enough conditioned at 60 digits).
    m = mp.matrix([[x**j for j in range(n)] for x in xs])
    return list(mp.lu_solve(m, mp.matrix(ys)))


def weighted_fit(f, a, b, deg, w, nodes=400):
    """Monomial coefficients c[0..deg] minimising the sum of (w (P - f))^2 over `nodes`
    Chebyshev points of [a, b]: near-minimax in the weighted error where the weight falls
    steeply across the interval (erf's ERF_L), where the plain interpolant spends its degree on
    the part that hardly counts."""
    a, b = mp.mpf(a), mp.mpf(b)
    xs = [(b - a) / 2 * mp.cos(mp.pi * (k + mp.mpf(1) / 2) / nodes) + (b + a) / 2
          for k in range(nodes)]  # fmt: skip
    m = mp.matrix([[w(x) * x**j for j in range(deg + 1)] for x in xs])
    return list(mp.qr_solve(m, mp.matrix([w(x) * f(x) for x in xs]))[0])


def horner(c, x):
    r = mp.mpf(0)
    for v in reversed(c):
        r = r * x + v
    return r


def check(name, f, a, b, c, scale):
    worst = mp.mpf(0)
    for i in range(2001):
        x = mp.mpf(a) + (mp.mpf(b) - mp.mpf(a)) * i / 2000
        e = abs(horner(c, x) - f(x)) * scale(x)
        worst = max(worst, e)
    print(f"{name}: degree {len(c) - 1}, max weighted error {mp.nstr(worst, 3)}")
    return worst


def exp_p(x):
    """(e^x - 1 - x) / x^2, so that e^x = 1 + (x + x^2 p(x))."""
    if abs(x) < mp.mpf("1e-20"):
        return mp.mpf(1) / 2
    return (mp.exp(x) - 1 - x) / x**2


def exp2_p(x):
    """(2^x - 1 - x ln2) / x^2, so that 2^x = 1 + (x ln2 + x^2 p(x))."""
    if abs(x) < mp.mpf("1e-20"):
        return mp.log(2) ** 2 / 2
    return (mp.power(2, x) - 1 - x * mp.log(2)) / x**2


def log_r(z):
    """R(z) with log((1+s)/(1-s)) = 2s + s R(s^2) (fdlibm's form): R(z) = sum 2 z^n / (2n+1)."""
    if z < mp.mpf("1e-30"):
        return mp.mpf(0)
    s = mp.sqrt(z)
    return (mp.log((1 + s) / (1 - s)) - 2 * s) / s


def round_bits(v, bits):
    """v rounded to `bits` significant bits (so that small multiples of it are exact)."""
    e = mp.floor(mp.log(abs(v), 2))
    scale = mp.mpf(2) ** (bits - 1 - e)
    return mp.nint(v * scale) / scale


def split_constants():
    """Cody-Waite style hi + lo pairs: hi has few bits (its products with small ints or with
    short-mantissa values are exact), lo is the rest rounded to the width."""
    consts = {
        "LN2": mp.log(2), "INV_LN2": 1 / mp.log(2), "INV_LN10": 1 / mp.log(10),
        "LOG10_2": mp.log10(2), "TWO_THIRDS": mp.mpf(2) / 3, "ATAN_HALF": mp.atan(0.5),
        "HALF_LN_2PI": mp.log(2 * mp.pi) / 2, "LN_PI": mp.log(mp.pi), "TWELFTH": mp.mpf(1) / 12,
        "ATAN_ONE": mp.pi / 4, "ATAN_1P5": mp.atan(1.5), "HALF_PI": mp.pi / 2, "PI": mp.pi,
    }  # fmt: skip
    hi_bits = {"F64": 32, "F32": 12}
    out = []
    for name, v in consts.items():
        for width, bits in hi_bits.items():
            conv = float if width == "F64" else f32
            hi = round_bits(v, bits)
            out.append(f"{name}_HI_{width} = {conv(hi)!r}")
            out.append(f"{name}_LO_{width} = {conv(v - hi)!r}")
            out.append(f"{name}_{width} = {conv(v)!r}")
            out.append(f"{name}_R_{width} = {conv(v - mp.mpf(conv(v)))!r}  # v - {name}_{width}")
    return out + [""]


def log_q(z):
    if z < mp.mpf("1e-30"):
        return mp.mpf(2) / 5
    s = mp.sqrt(z)
    return (mp.log((1 + s) / (1 - s)) - 2 * s - 2 * s**3 / 3) / s**5


def atan_p(z):
    if z < mp.mpf("1e-30"):
        return mp.mpf(1) / 3
    x = mp.sqrt(z)
    return (1 - mp.atan(x) / x) / z


def odd_series(f, z):
    """(f(x) - x) / x^3 at x = sqrt(z), for an odd f with f'(0) = 1."""
    if z < mp.mpf("1e-30"):
        return mp.diff(f, 0, 3) / 6
    x = mp.sqrt(z)
    return (f(x) - x) / x**3


ERFC_EDGES = ("1.25", "2", "3", "4.5", "6.5", "9", "13", "19", "27.5")


def erfc_edge(i):
    return mp.mpf(ERFC_EDGES[i])


def erfc_mid(i):
    return (erfc_edge(i) + erfc_edge(i + 1)) / 2


def erfc_g(x):
    """erfc(x) e^(x^2): smooth, about 1/(x sqrt(pi)); fitted piecewise around each midpoint."""
    return mp.erfc(x) * mp.exp(x * x)


# erf beyond its small interval (erf.py): erf(x) = 1 - 2^L(x), L = -(x + x P(x)) with P a fit of
# -log2(erfc(x))/x - 1 from 0.84375 to where erf rounds to 1 (float32 from about 3.92 on, float64
# 5.86), weighted by x erfc(x): an error d in P moves L by x d and erf by ln2 erfc(x) x d. 2^f
# for |f| <= 1/2 is 1 + f E(f), E a fit of (2^f - 1)/f (its error d moves erf by erfc(x) f d).
ERF_L_EDGES = {"F32": ("0.84375", "4"), "F64": ("0.84375", "6")}


def erf_l(x):
    return -mp.log(mp.erfc(x), 2) / x - 1


def erf_e(f):
    return (mp.power(2, f) - 1) / f if f else mp.log(2)


def erx():
    """erf(1) rounded to 12 bits, so that 1 + ERX and 1 - ERX are exact in either width."""
    return round_bits(mp.erf(1), 12)


def erf_a(z):
    """erf(x)/x - 1 at x = sqrt(z)."""
    if z < mp.mpf("1e-30"):
        return 2 / mp.sqrt(mp.pi) - 1
    x = mp.sqrt(z)
    return mp.erf(x) / x - 1


# lgamma: Stirling's formula from LGAMMA_STIRLING on; t P(t) around its zeros 1 and 2.
LGAMMA_STIRLING = 8
LGAMMA_NEAR = mp.mpf(1) / 32


def stirling_r(z):
    """R(z) with ln Gamma(y) = (y - 1/2) ln y - y + ln(2 pi)/2 + 1/(12 y) + z R(z) / y,
    z = 1/y^2 (the tail of Stirling's series, smooth in z down to 0)."""
    if z < mp.mpf("1e-40"):
        return mp.mpf(-1) / 360
    y = 1 / mp.sqrt(z)
    s = mp.loggamma(y) - ((y - mp.mpf(1) / 2) * mp.log(y) - y + mp.log(2 * mp.pi) / 2)
    return (s * y - mp.mpf(1) / 12) / z


def lgamma_over_t(center, t):
    """lgamma(center + t) / t (center 1 or 2, where lgamma vanishes)."""
    if abs(t) < mp.mpf("1e-40"):
        return mp.diff(mp.loggamma, center)
    return mp.loggamma(center + t) / t


def cos_c(z):
    """(cos(x) - 1 + x^2/2) / x^4 at x = sqrt(z)."""
    if z < mp.mpf("1e-20"):
        return mp.mpf(1) / 24
    x = mp.sqrt(z)
    return (mp.cos(x) - 1 + z / 2) / z**2


def trig_constants():
    """2/pi in chunks of `prec` bits (integers: chunk j holds the bits of weight
    2^-(prec j + 1) .. 2^-(prec (j + 1))), enough for the largest finite operand plus the
    reduction's working precision; and pi/2 as an exact double word."""
    out = []
    old = mp.mp.dps
    mp.mp.dps = 450  # 1400 bits
    two_over_pi = 2 / mp.pi
    for width, prec, count in (("F64", 53, 26), ("F32", 24, 12)):
        chunks = []
        rest = two_over_pi
        for _ in range(count):
            rest *= mp.mpf(2) ** prec
            c = int(mp.floor(rest))
            chunks.append(c)
            rest -= c
        out.append(f"TWO_OVER_PI_CHUNKS_{width} = {tuple(chunks)!r}")
        conv = float if width == "F64" else f32
        hi = conv(mp.pi / 2)
        out.append(f"PIO2_DW_HI_{width} = {hi!r}")
        out.append(f"PIO2_DW_LO_{width} = {conv(mp.pi / 2 - mp.mpf(hi))!r}")
    # pi/2 for the Cody-Waite reduction of moderate operands (trig.py): words of `bits` bits
    # (n * word exact for n < 2^(prec - bits)), the last one the rest rounded to the width.
    for width, bits, words in (("F64", 33, 3), ("F32", 14, 4)):
        conv = float if width == "F64" else f32
        rest, parts = mp.pi / 2, []
        for _ in range(words):
            scale = mp.mpf(2) ** (bits * (len(parts) + 1) - 1)  # pi/2 < 2: leading bit 2^0
            w = mp.floor(rest * scale) / scale
            parts.append(w)
            rest -= w
        parts.append(rest)
        out.append(f"PIO2_CW_{width} = {tuple(conv(v) for v in parts)!r}")
    # pi/2 in three words of full precision, each the rest rounded, for the reduction with a
    # fused Fma (trig.py: fma(-q, P0, x) is exact, q P1 an exact product by two ops)
    for width in ("F64", "F32"):
        conv = float if width == "F64" else f32
        rest, parts = mp.pi / 2, []
        for _ in range(3):
            parts.append(conv(rest))
            rest -= mp.mpf(parts[-1])
        out.append(f"PIO2_FMA_{width} = {tuple(parts)!r}")
    out.append(f"ERX = {float(erx())!r}")
    out.append(f"ERFC_EDGES = {tuple(float(v) for v in ERFC_EDGES)!r}")
    for width, edges in ERF_L_EDGES.items():
        out.append(f"ERF_L_{width}_EDGES = {tuple(float(v) for v in edges)!r}")
    out.append(f"LGAMMA_STIRLING = {float(LGAMMA_STIRLING)!r}")
    out.append(f"LGAMMA_NEAR = {float(LGAMMA_NEAR)!r}")
    mp.mp.dps = old
    return out + [""]


def main():
    ln2 = mp.log(2)
    h = ln2 / 2 * mp.mpf("1.0001")
    smax = (mp.sqrt(2) - 1) / (mp.sqrt(2) + 1) * mp.mpf("1.0001")
    zmax = smax**2
    specs = {
        # name: (function, interval, degree per width, weight: error contribution per unit)
        "EXP": (exp_p, (-h, h), {"F64": 10, "F32": 5}, lambda x: x * x),
        "EXP2": (exp2_p, (mp.mpf(-0.5001), mp.mpf(0.5001)), {"F64": 10, "F32": 5},
                 lambda x: x * x),
        "LOG": (log_r, (0, zmax), {"F64": 7, "F32": 3}, lambda z: mp.sqrt(z) / 2),
        # pow's log tail: log((1+s)/(1-s)) = 2s + 2s^3/3 + s^5 Q(s^2), Q(z) = sum 2 z^n/(2n+5)
        "LOGQ": (log_q, (0, zmax), {"F64": 8, "F32": 3}, lambda z: z**2 * mp.sqrt(z)),
        # atan(x) = x - x z P(z), z = x^2, |x| <= 7/16 (fdlibm's s_atan.c form)
        "ATAN": (atan_p, (0, (mp.mpf(7) / 16) ** 2 * mp.mpf("1.0001")), {"F64": 12, "F32": 5},
                 lambda z: z),
        # sinh(x) = x + x^3 S(x^2), cosh(x) = 1 + x^2 C(x^2) on |x| <= 1; tanh(x) = x + x^3 T(x^2)
        # on |x| <= 0.3
        "SINH": (lambda z: odd_series(mp.sinh, z), (0, mp.mpf("1.0001")), {"F64": 10, "F32": 5},
                 lambda z: z),
        "COSH": (lambda z: (mp.cosh(mp.sqrt(z)) - 1) / z if z > 1e-30 else mp.mpf(1) / 2,
                 (0, mp.mpf("1.0001")), {"F64": 8, "F32": 4}, lambda z: z),
        "TANH": (lambda z: odd_series(mp.tanh, z), (0, mp.mpf("0.0901")), {"F64": 11, "F32": 5},
                 lambda z: z),
        # asin(x) = x + x^3 P(x^2) on |x| <= 1/2 (beyond: pi/2 - 2 asin(sqrt((1 - x)/2)))
        "ASIN": (lambda z: odd_series(mp.asin, z), (0, mp.mpf("0.2501")), {"F64": 12, "F32": 5},
                 lambda z: z),
        # sin(x) = x + x^3 S(x^2), cos(x) = 1 - x^2/2 + x^4 C(x^2) on |x| <= pi/4 (trig.py)
        "SIN": (lambda z: odd_series(mp.sin, z), (0, (mp.pi / 4) ** 2 * mp.mpf("1.001")),
                {"F64": 7, "F32": 4}, lambda z: z),
        "COS": (cos_c, (0, (mp.pi / 4) ** 2 * mp.mpf("1.001")), {"F64": 7, "F32": 4},
                lambda z: z * z),
        # the same, one degree less (cos float64: two; the rounded coefficients' error is the
        # same: far below an ulp; sin float64's degree 5 would be 0.17 ulp), for the short path
        # of scalar calls (trig._kernel), which evaluates both
        "SIN_SHORT": (lambda z: odd_series(mp.sin, z), (0, (mp.pi / 4) ** 2 * mp.mpf("1.001")),
                      {"F64": 6, "F32": 3}, lambda z: z),
        "COS_SHORT": (cos_c, (0, (mp.pi / 4) ** 2 * mp.mpf("1.001")), {"F64": 5, "F32": 3},
                      lambda z: z * z),
        # erf(x) = x + x P(x^2) on |x| < 0.84375; erf(1 + s) = ERX + B(s) on 0.5 <= |x| < 1.25
        "ERF_A": (erf_a, (0, mp.mpf("0.84375") ** 2 * mp.mpf("1.0001")), {"F64": 14, "F32": 7},
                  lambda z: 1),
        # (erfc uses B from 0.5: there 1 - ERX - B has no cancellation, 0.5 - (x - 0.5 + xP) has)
        "ERF_B": (lambda t: mp.erf(1 + t) - erx(), (mp.mpf(-0.5001), mp.mpf(0.25)),
                  {"F64": 22, "F32": 10}, lambda t: 1),
        # erfc(x) = exp(-x^2) G_i(x - mid_i) on the intervals ERFC_EDGES (x >= 1.25)
        **{f"ERFC_G{i}": (lambda t, i=i: erfc_g(t + erfc_mid(i)),
                          (erfc_edge(i) - erfc_mid(i), erfc_edge(i + 1) - erfc_mid(i)),
                          {"F64": 18, "F32": 8}, lambda t, i=i: 1 / erfc_g(t + erfc_mid(i)))
           for i in range(len(ERFC_EDGES) - 1)},
        "ERF_L": (erf_l, {w: tuple(mp.mpf(v) for v in e) for w, e in ERF_L_EDGES.items()},
                  {"F64": 18, "F32": 8}, lambda x: mp.log(2) * x * mp.erfc(x)),
        "ERF_E": (erf_e, (mp.mpf("-0.5001"), mp.mpf("0.5001")), {"F64": 11, "F32": 5},
                  lambda f: abs(f) * mp.erfc(ERF_L_EDGES["F32"][0])),
        # lgamma / gamma (gamma.py): Stirling's tail for y >= LGAMMA_STIRLING (weight: its
        # absolute contribution z^(3/2)); lgamma(c + t) = t P_c(t) on |t| <= LGAMMA_NEAR
        "LGAMMA_R": (stirling_r, (0, mp.mpf(1) / LGAMMA_STIRLING**2 * mp.mpf("1.0001")),
                     {"F64": 9, "F32": 3}, lambda z: z * mp.sqrt(z)),
        "LGAMMA_1": (lambda t: lgamma_over_t(1, t), (-LGAMMA_NEAR * mp.mpf("1.001"),
                     LGAMMA_NEAR * mp.mpf("1.001")), {"F64": 12, "F32": 5}, lambda t: 1),
        "LGAMMA_2": (lambda t: lgamma_over_t(2, t), (-LGAMMA_NEAR * mp.mpf("1.001"),
                     LGAMMA_NEAR * mp.mpf("1.001")), {"F64": 12, "F32": 5}, lambda t: 1),
        # a first guess only (Newton steps follow): x^(-1/3) on [0.5, 4)
        "RCBRT": (lambda x: mp.cbrt(x) ** -1, (mp.mpf(0.5), mp.mpf(4)), {"F64": 3, "F32": 3},
                  lambda x: mp.cbrt(x)),
    }  # fmt: skip
    lines = []
    for name, spec in specs.items():
        for width, deg in spec[2].items():
            # the function, interval and weight may differ by width (dicts keyed by it)
            f, (a, b), _, weight = (v[width] if isinstance(v, dict) else v for v in spec)
            c = (weighted_fit(f, a, b, deg, weight) if name in WEIGHTED_FITS
                 else cheb_fit(f, a, b, deg))  # fmt: skip
            rounded = [mp.mpf(float(v)) if width == "F64" else mp.mpf(f32(v)) for v in c]
            check(f"{name}_{width}", f, a, b, rounded, weight)
            vals = [float(v) if width == "F64" else f32(v) for v in c]
            body = "".join(f"    {v!r},\n" for v in vals)
            lines.append(f"{name}_{width} = (\n{body})")
            lines.append("")
            if name.startswith("ERFC_G"):  # the constant term as a double word (erf.py)
                lo = float(c[0] - rounded[0]) if width == "F64" else f32(c[0] - rounded[0])
                lines += [f"{name}_{width}_C0LO = {lo!r}", ""]
    lines += split_constants()
    lines += trig_constants()
    files = {OUT: "elementary functions", OUT_SPECIAL: "erf, erfc, lgamma and gamma"}
    parts = {
        path: [
            f'"""Polynomial coefficients of the math library: {what} (lowest degree first).',
            "",
            "GENERATED by scripts/mathgen/gen_coeffs.py (Chebyshev interpolants computed with "
            "mpmath);",
            'do not edit: change the script and run it again."""',
            "",
        ]
        for path, what in files.items()
    }
    path = OUT
    for line in lines:
        if line:  # an assignment; a blank line goes with the one before
            path = OUT_SPECIAL if line.startswith(SPECIAL) else OUT
        parts[path].append(line)
    for path, part in parts.items():
        with open(path, "w") as fh:
            fh.write("\n".join(part))
        print("wrote", os.path.normpath(path))


if __name__ == "__main__":
    main()
