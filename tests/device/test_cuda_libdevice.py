"""``cuda.libdevice``'s exact names (integer functions, classification, exact float operations,
conversions with their rounding modes, the correctly rounded ``_rn`` arithmetic), each
compared element by element with Python's or NumPy's result, bit for bit, on operands that
include the edges (integer extremes, halfway cases, NaN, infinities, signed zeros, values
beyond an integer type's range). One kernel per group of names, a column per name."""

import decimal
import math

import numpy as np
import pytest
from math_support import exact_fma

from numba_vulkan import cuda
from numba_vulkan.cuda import libdevice  # noqa: F401  (the kernels' namespace)

pytestmark = [pytest.mark.device, pytest.mark.usefixtures("device")]

I32 = np.iinfo(np.int32)
I64 = np.iinfo(np.int64)
M32, M64 = (1 << 32) - 1, (1 << 64) - 1


def _kernel(names, nargs):
    """out[i, k] = libdevice.<names[k]>(x[i], ...) for the first `nargs` operand arrays."""
    operands = ", ".join(f"{a}[i]" for a in "xyz"[:nargs])
    lines = [f"        out[i, {k}] = libdevice.{n}({operands})" for k, n in enumerate(names)]
    src = (f"def kern(out, {', '.join('xyz'[:nargs])}):\n    i = cuda.grid(1)\n"
           "    if i < out.shape[0]:\n" + "\n".join(lines) + "\n")  # fmt: skip
    ns = {"cuda": cuda, "libdevice": libdevice}
    exec(compile(src, "<libdevice kernel>", "exec"), ns)  # noqa: S102
    return cuda.jit(ns["kern"])


def _run(names, out_dtype, *operands):
    out = np.zeros((operands[0].size, len(names)), out_dtype)
    _kernel(names, len(operands))[(operands[0].size + 63) // 64, 64](out, *operands)
    return {n: out[:, k] for k, n in enumerate(names)}


def _wrap(v, bits):
    v &= (1 << bits) - 1
    return v - (1 << bits) if v >> (bits - 1) else v


def _check(got, want, name):
    want = np.asarray(want, got.dtype)
    same = (got.view(f"u{got.itemsize}") == want.view(f"u{got.itemsize}"))
    if got.dtype.kind == "f":
        same |= np.isnan(got) & np.isnan(want)
    bad = np.flatnonzero(~same)
    assert not bad.size, f"{name}: {bad.size} differ, first at {bad[0]}: {got[bad[0]]!r} " \
                         f"against {want[bad[0]]!r}"  # fmt: skip


def _bit_oracles(xs, bits, suffix):
    """abs, popc, clz, ffs and brev of `bits`-bit integers (libdevice's names: `suffix` after
    the name, "ll" as a prefix of abs), from Python's integers."""
    mask = (1 << bits) - 1
    return {
        f"{suffix}abs": [_wrap(abs(a), bits) for a in xs],
        f"popc{suffix}": [bin(a & mask).count("1") for a in xs],
        f"clz{suffix}": [bits - (a & mask).bit_length() for a in xs],
        f"ffs{suffix}": [(a & -a & mask).bit_length() for a in xs],
        f"brev{suffix}": [_wrap(int(f"{a & mask:0{bits}b}"[::-1], 2), bits) for a in xs],
    }


def test_int32_names():
    rng = np.random.default_rng(11)
    edge = np.array([0, 1, -1, 2, -2, I32.max, I32.min, I32.max - 1, I32.min + 1, 0x7F00FF00,
                     0x12345678, -0x12345678], np.int32)  # fmt: skip
    x = np.concatenate([np.repeat(edge, edge.size), rng.integers(I32.min, I32.max, 300,
                                                                 dtype=np.int32)])
    y = np.concatenate([np.tile(edge, edge.size), rng.integers(I32.min, I32.max, 300,
                                                               dtype=np.int32)])
    z = rng.integers(0, 1 << 16, x.size).astype(np.int32)
    two = ("min", "max", "umin", "umax", "hadd", "rhadd", "uhadd", "urhadd", "mulhi", "umulhi")
    got = _run(two, np.int64, x, y)
    got.update(_run(("abs", "popc", "clz", "ffs", "brev"), np.int64, x))
    got.update(_run(("byte_perm",), np.int64, x, y, z))
    xs, ys, zs = (v.tolist() for v in (x, y, z))
    u = [(a & M32, b & M32) for a, b in zip(xs, ys)]
    want = {
        "min": [min(a, b) for a, b in zip(xs, ys)], "max": [max(a, b) for a, b in zip(xs, ys)],
        "umin": [_wrap(min(a, b), 32) for a, b in u], "umax": [_wrap(max(a, b), 32) for a, b in u],
        "hadd": [(a + b) >> 1 for a, b in zip(xs, ys)],
        "rhadd": [(a + b + 1) >> 1 for a, b in zip(xs, ys)],
        "uhadd": [_wrap((a + b) >> 1, 32) for a, b in u],
        "urhadd": [_wrap((a + b + 1) >> 1, 32) for a, b in u],
        "mulhi": [(a * b) >> 32 for a, b in zip(xs, ys)],
        "umulhi": [_wrap((a * b) >> 32, 32) for a, b in u],
        **_bit_oracles(xs, 32, ""),
        "byte_perm": [_wrap(sum(((((b & M32) << 32 | (a & M32)) >> (8 * ((s >> 4 * i) & 7)))
                                 & 0xFF) << 8 * i for i in range(4)), 32)
                      for a, b, s in zip(xs, ys, zs)],
    }  # fmt: skip
    for name, values in want.items():
        _check(got[name], np.array(values, np.int64), name)


def test_int64_names():
    rng = np.random.default_rng(12)
    edge = np.array([0, 1, -1, I64.max, I64.min, I64.max - 1, 1 << 32, (1 << 32) - 1,
                     -(1 << 32), 0x0123456789ABCDEF], np.int64)  # fmt: skip
    x = np.concatenate([np.repeat(edge, edge.size), rng.integers(I64.min, I64.max, 300,
                                                                 dtype=np.int64)])
    y = np.concatenate([np.tile(edge, edge.size), rng.integers(I64.min, I64.max, 300,
                                                               dtype=np.int64)])
    got = _run(("llmin", "llmax", "ullmin", "ullmax", "mul64hi", "umul64hi"), np.int64, x, y)
    got.update(_run(("llabs", "popcll", "clzll", "ffsll", "brevll"), np.int64, x))
    xs, ys = x.tolist(), y.tolist()
    u = [(a & M64, b & M64) for a, b in zip(xs, ys)]
    want = {
        "llmin": [min(a, b) for a, b in zip(xs, ys)],
        "llmax": [max(a, b) for a, b in zip(xs, ys)],
        "ullmin": [_wrap(min(a, b), 64) for a, b in u],
        "ullmax": [_wrap(max(a, b), 64) for a, b in u],
        "mul64hi": [_wrap((a * b) >> 64, 64) for a, b in zip(xs, ys)],
        "umul64hi": [_wrap((a * b) >> 64, 64) for a, b in u],
        **_bit_oracles(xs, 64, "ll"),
    }
    for name, values in want.items():
        _check(got[name], np.array(values, np.int64), name)


def _floats(dtype, rng):
    """Halfway cases, integer-range edges, specials, signed zeros, random magnitudes (float32:
    no subnormals, which a flushing device's arithmetic reads as zero)."""
    edges = [0.0, -0.0, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 0.49999999999999994, 1.0, -1.0,
             2.0**31 - 0.5, 2.0**31, -(2.0**31) - 1, -(2.0**31), 2.0**32, 2.0**32 - 1,
             2.0**63, -(2.0**63), 2.0**64, 1e300, -1e300, math.inf, -math.inf, math.nan,
             3.0, 1e-300, 7.5e-310]  # fmt: skip
    x = np.concatenate([edges, rng.uniform(-1e3, 1e3, 200),
                        np.exp2(rng.uniform(-60, 70, 200)) * rng.choice([-1, 1], 200)])
    with np.errstate(over="ignore"):
        x = x.astype(dtype)
    if dtype == np.float32:
        x[np.abs(x) < np.finfo(np.float32).tiny] = 0.0
    return x


def _round(v, mode):
    """v (a finite float) rounded to an integer by C's mode: rn (half even), rz, rd, ru, or
    "away" (round(): half away from zero)."""
    how = {"rn": decimal.ROUND_HALF_EVEN, "rz": decimal.ROUND_DOWN, "rd": decimal.ROUND_FLOOR,
           "ru": decimal.ROUND_CEILING, "away": decimal.ROUND_HALF_UP}[mode]
    return int(decimal.Decimal(v).to_integral_value(rounding=how))


def _saturated(v, mode, lo, hi, bits):
    if math.isnan(v):
        return 0
    if math.isinf(v):
        return _wrap(hi if v > 0 else lo, bits)
    return _wrap(min(max(_round(v, mode), lo), hi), bits)


_RANGES = {"int": (-(2**31), 2**31 - 1, 32), "uint": (0, 2**32 - 1, 32),
           "ll": (-(2**63), 2**63 - 1, 64), "ull": (0, 2**64 - 1, 64)}


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_float_to_integer_conversions_saturate(dtype):
    """double2int_rn ... float2ull_ru: rounded in the name's mode, NaN to 0, beyond the range
    to its ends (PTX's cvt), the unsigned forms' bits."""
    x = _floats(dtype, np.random.default_rng(13))
    src = "double" if dtype == np.float64 else "float"
    names = [f"{src}2{d}_{m}" for d in _RANGES for m in ("rn", "rz", "rd", "ru")]
    got = _run(names, np.int64, x)
    for name in names:
        (lo, hi, bits), mode = _RANGES[name[len(src) + 1:-3]], name[-2:]
        _check(got[name], [_saturated(float(v), mode, lo, hi, bits) for v in x], name)


def _ilogb(v):
    if math.isnan(v) or v == 0:
        return -(2**31)  # CUDA's FP_ILOGB0, FP_ILOGBNAN
    return 2**31 - 1 if math.isinf(v) else math.frexp(v)[1] - 1


def _logb(v):
    if math.isnan(v) or math.isinf(v):
        return abs(v)
    return -math.inf if v == 0 else float(math.frexp(v)[1] - 1)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_float_classification_and_exact_functions(dtype):
    x = _floats(dtype, np.random.default_rng(14))
    inside = np.where(np.abs(x) < 2.0**62, x, 0).astype(dtype)  # llrint/llround's range
    f, d = ("f", "f") if dtype == np.float32 else ("", "d")
    w = "f" if dtype == np.float32 else "d"  # the _rn names' prefix
    finite = "finitef" if f else "isfinited"
    got = _run([f"isnan{d}", f"isinf{d}", f"signbit{d}", finite, f"ilogb{f}"], np.int64, x)
    got.update(_run([f"llrint{f}", f"llround{f}"], np.int64, inside))
    got.update(_run([f"logb{f}", f"nearbyint{f}", f"round{f}", f"{w}sqrt_rn", f"{w}rcp_rn"],
                    dtype, x))  # fmt: skip
    xs = x.tolist()
    with np.errstate(all="ignore"):
        want = {
            f"isnan{d}": np.isnan(x), f"isinf{d}": np.isinf(x), f"signbit{d}": np.signbit(x),
            finite: np.isfinite(x), f"ilogb{f}": [_ilogb(v) for v in xs],
            f"llrint{f}": [_round(float(v), "rn") for v in inside],
            f"llround{f}": [_round(float(v), "away") for v in inside],
            f"logb{f}": [_logb(v) for v in xs], f"nearbyint{f}": np.rint(x),
            f"round{f}": [math.copysign(_round(v, "away"), v) if math.isfinite(v) else v
                          for v in xs],
            f"{w}sqrt_rn": np.sqrt(x), f"{w}rcp_rn": dtype(1) / x,
        }  # fmt: skip
    for name, values in want.items():
        _check(got[name], np.asarray(values).astype(got[name].dtype), name)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_float_binary_names(dtype):
    rng = np.random.default_rng(15)
    x = _floats(dtype, rng)
    y = np.roll(_floats(dtype, rng), 7)
    z = np.roll(x, 3)
    n = rng.integers(-40, 40, x.size).astype(np.int32)
    f = "f" if dtype == np.float32 else ""
    w = "f" if dtype == np.float32 else "d"
    arith = [f"{w}add_rn", f"{w}mul_rn", f"{w}div_rn"] + (["fsub_rn"] if f else [])
    got = _run([f"fmod{f}", f"remainder{f}", f"nextafter{f}"] + arith, dtype, x, y)
    got.update(_run([f"ldexp{f}", f"scalbn{f}"], dtype, x, n))
    got.update(_run([f"fma{f}_rn"], dtype, x, y, z))
    with np.errstate(all="ignore"):
        want = {
            f"fmod{f}": np.fmod(x, y), f"nextafter{f}": np.nextafter(x, y),
            f"remainder{f}": [math.remainder(a, b) if math.isfinite(a) and b != 0
                              and not math.isnan(b) else math.nan
                              for a, b in zip(x.tolist(), y.tolist())],
            f"{w}add_rn": x + y, f"{w}mul_rn": x * y, f"{w}div_rn": x / y,
            f"ldexp{f}": np.ldexp(x, n), f"scalbn{f}": np.ldexp(x, n),
            f"fma{f}_rn": [exact_fma(a, b, c, dtype) for a, b, c in
                           zip(x.tolist(), y.tolist(), z.tolist())],
        }  # fmt: skip
        if f:
            want["fsub_rn"] = x - y
    for name, values in want.items():
        _check(got[name], np.asarray(values).astype(dtype), name)


def _pair_kernel(name):
    ns = {"cuda": cuda, "libdevice": libdevice}
    exec(f"def kern(a, b, x):\n    i = cuda.grid(1)\n    if i < x.size:\n"
         f"        a[i], b[i] = libdevice.{name}(x[i])\n", ns)  # noqa: S102
    return cuda.jit(ns["kern"])


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_modf_gives_fraction_and_integral_part(dtype):
    x = _floats(dtype, np.random.default_rng(16))
    a, b = np.zeros_like(x), np.zeros_like(x)
    _pair_kernel("modff" if dtype == np.float32 else "modf")[(x.size + 63) // 64, 64](a, b, x)
    frac, whole = np.modf(x)
    _check(a, frac, "modf's fraction")
    _check(b, whole, "modf's integral part")


def test_integer_to_float_and_narrowing_conversions():
    rng = np.random.default_rng(17)
    i32 = np.concatenate([[0, 1, -1, I32.max, I32.min, 16777217, -16777217],
                          rng.integers(I32.min, I32.max, 300)]).astype(np.int32)
    i64 = np.concatenate([[0, 1, -1, I64.max, I64.min, (1 << 53) + 1, (1 << 24) + 1,
                           -(1 << 62) - 1], rng.integers(I64.min, I64.max, 300)]).astype(np.int64)
    got = _run(["int2double_rn", "uint2double_rn"], np.float64, i32)
    got.update(_run(["int2float_rn", "uint2float_rn"], np.float32, i32))
    got.update(_run(["ll2double_rn", "ull2double_rn"], np.float64, i64))
    got.update(_run(["ll2float_rn", "ull2float_rn"], np.float32, i64))
    d = _floats(np.float64, rng)
    got.update(_run(["double2float_rn"], np.float32, d))
    s = np.array([-0.5, -0.0, 0.0, 0.25, 1.0, 1.5, np.inf, -np.inf, np.nan, 0.9999999],
                 np.float32)  # fmt: skip
    got.update(_run(["saturatef"], np.float32, s))
    with np.errstate(over="ignore"):
        want = {"int2double_rn": i32.astype(np.float64),
                "uint2double_rn": i32.view(np.uint32).astype(np.float64),
                "int2float_rn": i32.astype(np.float32),
                "uint2float_rn": i32.view(np.uint32).astype(np.float32),
                "ll2double_rn": i64.astype(np.float64),
                "ull2double_rn": i64.view(np.uint64).astype(np.float64),
                "ll2float_rn": i64.astype(np.float32),
                "ull2float_rn": i64.view(np.uint64).astype(np.float32),
                "double2float_rn": d.astype(np.float32),
                "saturatef": np.nan_to_num(np.clip(s, 0, 1), nan=0.0)}  # fmt: skip
    for name, values in want.items():
        _check(got[name], values, name)


def test_fast_and_gamma_names_are_the_accurate_functions():
    """fast_fdividef, fast_powf, fast_sincosf, lgamma(f), tgamma(f): the math module's
    accurate functions in the kernel, bit for bit."""
    x = np.linspace(0.25, 7.5, 64).astype(np.float32)
    y = np.linspace(-2.0, 3.0, 64).astype(np.float32)

    @cuda.jit
    def both(out, x, y):
        i = cuda.grid(1)
        if i < x.size:
            out[i, 0] = libdevice.fast_fdividef(x[i], y[i])
            out[i, 1] = x[i] / y[i]
            out[i, 2] = libdevice.fast_powf(x[i], y[i])
            out[i, 3] = math.pow(x[i], y[i])
            s, c = libdevice.fast_sincosf(x[i])
            out[i, 4], out[i, 5] = s, math.sin(x[i])
            out[i, 6], out[i, 7] = c, math.cos(x[i])
            out[i, 8] = libdevice.lgammaf(x[i])
            out[i, 9] = math.lgamma(x[i])
            out[i, 10] = libdevice.tgamma(np.float64(x[i]))
            out[i, 11] = math.gamma(np.float64(x[i]))

    out = np.zeros((64, 12), np.float64)
    both[1, 64](out, x, y)
    for k in range(0, 12, 2):
        _check(out[:, k], out[:, k + 1], f"column {k}")
    np.testing.assert_allclose(out[:, 11], [math.gamma(v) for v in x.tolist()], rtol=1e-14)


def test_libdevice_bit_casts(device):
    @cuda.jit
    def casts(x, i32, i64, hi, lo, f32, f64, joined):
        i = cuda.grid(1)
        if i < x.size:
            i32[i] = libdevice.float_as_int(np.float32(x[i]))
            i64[i] = libdevice.double_as_longlong(x[i])
            hi[i] = libdevice.double2hiint(x[i])
            lo[i] = libdevice.double2loint(x[i])
            f32[i] = libdevice.int_as_float(i32[i])
            f64[i] = libdevice.longlong_as_double(i64[i])
            joined[i] = libdevice.hiloint2double(hi[i], lo[i])

    x = np.array([1.5, -0.0, np.nan, -3.25e300, 5e-324, np.inf, 1e-40, 2.0**-1074 * 3])
    out = [np.zeros(x.size, t) for t in (np.int32, np.int64, np.int32, np.int32, np.float32,
                                         np.float64, np.float64)]  # fmt: skip
    casts[1, 32](x, *out)
    with np.errstate(over="ignore"):
        x32 = x.astype(np.float32)
    words = x.view(np.int64)
    np.testing.assert_array_equal(out[0], x32.view(np.int32))
    np.testing.assert_array_equal(out[1], words)
    np.testing.assert_array_equal(out[2], (words >> 32).astype(np.int32))
    np.testing.assert_array_equal(out[3], (words & 0xFFFFFFFF).astype(np.uint32).view(np.int32))
    np.testing.assert_array_equal(out[4].view(np.int32), x32.view(np.int32))
    np.testing.assert_array_equal(out[5].view(np.int64), words)
    np.testing.assert_array_equal(out[6].view(np.int64), words)
