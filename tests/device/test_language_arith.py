"""Scalar arithmetic in kernels against CPython and NumPy, element by element.

Each test compiles a small kernel from an expression, runs it on the default
device (lavapipe in CI) over arrays of operands, and compares every element with
the same expression evaluated on the host: by CPython on Python ints for integer
types (values are chosen so that 32-bit computation cannot overflow), by NumPy
scalars for float types.

Exactness. The Vulkan environment for SPIR-V ("Precision and Operation of SPIR-V
Instructions", appendix spirvenv of the Vulkan specification) requires OpFAdd,
OpFSub, OpFMul and conversions between types to be correctly rounded and
comparisons to give the correct result; numba_vulkan promises IEEE-754 results
as NumPy computes them without `fastmath` (API.md, section 1), so those are
compared bit for bit, signed zeros and infinities included. The same table only
requires OpFDiv to be within 2.5 ULP (for |y| in [2^-126, 2^126]), and says that
double precision is at least as precise as single precision: division is checked
with those tolerances, nothing else is. Denormal results may be flushed to zero
by default, so no operand or result here is denormal.
"""

import itertools
import linecache
import textwrap

import numpy as np
import pytest
from conftest import requires_feature

import numba_vulkan as nv

pytestmark = [pytest.mark.device, pytest.mark.usefixtures("device")]

_names = itertools.count()


def make_kernel(body, params=("a", "b", "out"), **options):
    """A kernel whose invocation i runs `body` when i < out.size.

    The source is registered with linecache so that Numba and error messages
    can show it, as they can for functions written in a file.
    """
    name = f"arith_kernel_{next(_names)}"
    src = (
        f"def {name}({', '.join(params)}):\n"
        "    i = nv.global_id(0)\n"
        "    if i < out.size:\n" + textwrap.indent(textwrap.dedent(body), " " * 8)
    )
    filename = f"<{name}>"
    linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)
    namespace = {"nv": nv, "np": np}
    exec(compile(src, filename, "exec"), namespace)  # noqa: S102
    return nv.jit(**options)(namespace[name])


def run_binary(expr, x, y, out_dtype, **options):
    """Run `out[i] = expr` with x = a[i], y = b[i] on the device."""
    kernel = make_kernel(f"x = a[i]\ny = b[i]\nout[i] = {expr}\n", **options)
    out = np.zeros(x.shape, out_dtype)
    kernel.forall(x.size)(x, y, out)
    return out


def run_unary(expr, x, out_dtype, **options):
    kernel = make_kernel(f"x = a[i]\nout[i] = {expr}\n", params=("a", "out"), **options)
    out = np.zeros(x.shape, out_dtype)
    kernel.forall(x.size)(x, out)
    return out


def int_reference(expr, x, y=None):
    """`expr` on Python ints, with the NumPy error model: x // 0 == x % 0 == 0."""
    result = []
    names = {"abs": abs, "min": min, "max": max, "np": _IntNumPy}
    for k in range(x.size):
        env = {"x": int(x[k]), "y": None if y is None else int(y[k])}
        try:
            result.append(eval(expr, names, env))
        except ZeroDivisionError:
            result.append(0)
    return result


class _IntNumPy:
    """Stands for `np` in integer references: np.uint32(3) is the Python int 3 there."""

    uint32 = int32 = int64 = staticmethod(int)


def float_reference(expr, x, y=None, dtype=None):
    """`expr` on NumPy scalars of the operands' type (IEEE results, no warnings)."""
    dtype = dtype or x.dtype
    out = np.empty(x.size, dtype)
    with np.errstate(all="ignore"):
        for k in range(x.size):
            env = {"x": x.dtype.type(x[k]), "y": None if y is None else y.dtype.type(y[k])}
            out[k] = eval(expr, {"np": np, "abs": abs, "min": min, "max": max}, env)
    return out


def assert_exact(actual, expected):
    """Equal as values of the same dtype; for floats bit for bit, any NaN matching any NaN."""
    actual = np.asarray(actual)
    expected = np.asarray(expected, dtype=actual.dtype)
    assert actual.shape == expected.shape
    if actual.dtype.kind == "f":
        nan_a, nan_e = np.isnan(actual), np.isnan(expected)
        bad = (nan_a != nan_e) | (
            ~nan_e & (actual.view(f"u{actual.itemsize}") != expected.view(f"u{actual.itemsize}"))
        )
    else:
        bad = actual != expected
    if bad.any():
        idx = np.flatnonzero(bad)[:10]
        pairs = ", ".join(f"[{j}] got {actual.flat[j]!r} want {expected.flat[j]!r}" for j in idx)
        raise AssertionError(f"{bad.sum()} of {bad.size} elements differ: {pairs}")


def ulp_steps(actual, expected):
    """How many representable values lie between two float arrays, element by element."""
    bits = {4: np.int32, 8: np.int64}[actual.itemsize]
    mask = int(np.iinfo(bits).max)

    def line(values):
        # Sign-magnitude bit patterns mapped onto one monotonic integer line (-0.0 == 0.0).
        return [-(k & mask) if k < 0 else k for k in map(int, values.view(bits))]

    return np.array([abs(a - e) for a, e in zip(line(actual), line(expected))])


RNG = np.random.default_rng(20240611)

# Operand pairs covering every sign combination, exact multiples and remainders.
X_EDGE = np.array([7, -7, 7, -7, 6, -6, 6, -6, 0, 0, 1, -1, 999, -999, 1000, -1000], np.int32)
Y_EDGE = np.array([2, 2, -2, -2, 3, 3, -3, -3, 5, -5, 7, 7, 10, 10, -13, -13], np.int32)


def int32_operands(n=240, low=-1000, high=1000, nonzero_y=True):
    x = np.concatenate([X_EDGE, RNG.integers(low, high, n, dtype=np.int32)])
    y = np.concatenate([Y_EDGE, RNG.integers(low // 10, high // 10, n, dtype=np.int32)])
    if nonzero_y:
        y[y == 0] = 3
    return x, y


# --------------------------------------------------------------------------- int32


@pytest.mark.parametrize(
    "expr",
    [
        "x + y",
        "x - y",
        "x * y",
        "x // y",
        "x % y",
        "-x",
        "+x - y",
        "x * 3 - y // 2",
        "(x + y) % 7",
        "x // -4",
        "x % -4",
        "x // y * y + x % y",
    ],
)
def test_int32_arithmetic_python_semantics(expr):
    x, y = int32_operands()
    out = run_binary(expr, x, y, np.int32)
    assert_exact(out, int_reference(expr, x, y))


def test_int32_floordiv_mod_negative_operands_known_values():
    # Python rounds the quotient towards minus infinity; the remainder has the divisor's sign.
    x = np.array([7, -7, 7, -7, -1, 1, -6, 6], np.int32)
    y = np.array([2, 2, -2, -2, 3, -3, 3, -3], np.int32)
    assert_exact(run_binary("x // y", x, y, np.int32), [3, -4, -4, 3, -1, -1, -2, -2])
    assert_exact(run_binary("x % y", x, y, np.int32), [1, 1, -1, -1, 2, -2, 0, 0])


@pytest.mark.parametrize("expr", ["x // y", "x % y"])
def test_int_division_by_zero_gives_zero(expr):
    # error_model="numpy" (the default): integer division and modulo by zero give 0.
    x = np.array([5, -5, 0, 1000, -1000, 7], np.int32)
    y = np.zeros_like(x)
    assert_exact(run_binary(expr, x, y, np.int32), np.zeros(6, np.int32))


def test_int_power():
    x = RNG.integers(-20, 20, 200, dtype=np.int32)
    y = RNG.integers(0, 6, 200, dtype=np.int32)
    x[:4] = [0, 0, -1, -1]
    y[:4] = [0, 3, 4, 5]
    assert_exact(run_binary("x ** y", x, y, np.int32), int_reference("x ** y", x, y))
    assert_exact(run_binary("x ** 3", x, y, np.int32), int_reference("x ** 3", x, y))


@pytest.mark.parametrize(
    "expr",
    [
        "x & y",
        "x | y",
        "x ^ y",
        "~x",
        "x << (y % 20)",
        "x >> (y % 20)",
        "(x ^ y) & 0xFF",
        "~(x | y) >> 3",
    ],
)
def test_int32_bit_operations(expr):
    x = RNG.integers(-1000, 1000, 256, dtype=np.int32)
    y = RNG.integers(0, 64, 256, dtype=np.int32)
    assert_exact(run_binary(expr, x, y, np.int32), int_reference(expr, x, y))


@pytest.mark.parametrize(
    "expr",
    ["abs(x)", "min(x, y)", "max(x, y)", "min(x, y, 3)", "max(abs(x), abs(y))", "abs(x - y) % 100"],
)
def test_int32_abs_min_max(expr):
    x, y = int32_operands(nonzero_y=False)
    assert_exact(run_binary(expr, x, y, np.int32), int_reference(expr, x, y))


@pytest.mark.parametrize("op", ["<", "<=", "==", "!=", ">", ">="])
def test_int32_comparisons(op):
    x = RNG.integers(-5, 5, 200, dtype=np.int32)
    y = RNG.integers(-5, 5, 200, dtype=np.int32)
    expr = f"x {op} y"
    out = run_binary(expr, x, y, np.bool_)
    assert_exact(out, np.array(int_reference(expr, x, y), np.bool_))


def test_chained_comparison():
    x = RNG.integers(-5, 5, 200, dtype=np.int32)
    y = RNG.integers(-5, 5, 200, dtype=np.int32)
    expr = "-2 <= x < y <= 3"
    assert_exact(run_binary(expr, x, y, np.bool_), np.array(int_reference(expr, x, y), np.bool_))


# -------------------------------------------------------------------------- uint32


@pytest.mark.parametrize(
    "expr",
    [
        "x + y",
        "x - y",
        "x * y",
        "x // y",
        "x % y",
        "x & y",
        "x | y",
        "x ^ y",
        "x >> np.uint32(3)",
        "x < y",
        "x >= y",
        "max(x, y)",
        "min(x, y)",
    ],
)
def test_uint32_wraps_and_compares_unsigned(expr):
    # Values above 2**31 catch signed division, shifts and comparisons.
    x = RNG.integers(0, 2**32, 256, dtype=np.uint64).astype(np.uint32)
    y = RNG.integers(1, 2**32, 256, dtype=np.uint64).astype(np.uint32)
    x[:4] = [2**32 - 1, 2**31, 5, 0]
    y[:4] = [2, 2**31 + 1, 2**32 - 1, 7]
    expected = [v % 2**32 for v in int_reference(expr, x, y)]
    out_dtype = np.bool_ if "<" in expr or ">=" in expr else np.uint32
    assert_exact(run_binary(expr, x, y, out_dtype), np.array(expected).astype(out_dtype))


# --------------------------------------------------------------------------- int64


@requires_feature("int64")
@pytest.mark.parametrize(
    "expr", ["x + y", "x - y", "x * y", "x // y", "x % y", "x >> 7", "x < y", "abs(x) + y"]
)
def test_int64_exact_with_narrow_false(expr):
    x = RNG.integers(-(2**40), 2**40, 200, dtype=np.int64)
    y = RNG.integers(-(2**20), 2**20, 200, dtype=np.int64)
    y[y == 0] = 1
    x[:4] = [2**40, -(2**40), 2**62 // 3, -(2**62 // 3)]
    y[:4] = [-3, -3, 2, 1]
    out_dtype = np.bool_ if "<" in expr else np.int64
    out = run_binary(expr, x, y, out_dtype, narrow=False)
    assert_exact(out, np.array(int_reference(expr, x, y), dtype=out_dtype))


# ------------------------------------------------------------------------- float32


def float32_operands(n=256):
    # Normal numbers only (denormals may be flushed); exact halves and quarters
    # make the floor division and modulo cases hit exact multiples too.
    x = np.concatenate(
        [
            np.array([7, -7, 7, -7, 3, -3, 0.5, -0.5, 0.0, -0.0, 1.5, 1000.25], np.float32),
            (RNG.integers(-400, 400, n // 2) / 4).astype(np.float32),
            RNG.uniform(-1e3, 1e3, n // 2).astype(np.float32),
        ]
    )
    y = np.concatenate(
        [
            np.array([2, 2, -2, -2, 1.5, 1.5, 1, -1, -1, 1, 0.5, 0.125], np.float32),
            (RNG.integers(1, 40, n // 2) / 4 * RNG.choice([-1, 1], n // 2)).astype(np.float32),
            RNG.uniform(-50, 50, n // 2).astype(np.float32),
        ]
    )
    y[np.abs(y) < 1e-3] = 0.75
    return x, y


@pytest.mark.parametrize(
    "expr",
    [
        "x + y",
        "x - y",
        "x * y",
        "-x",
        "x * y - x",
        "(x + y) * (x - y)",
        "abs(x)",
        "min(x, y)",
        "max(x, y)",
    ],
)
def test_float32_correctly_rounded_ops_bitwise(expr):
    x, y = float32_operands()
    assert_exact(run_binary(expr, x, y, np.float32), float_reference(expr, x, y))


@pytest.mark.parametrize("expr", ["x // y", "x % y"])
def test_float32_floordiv_mod_python_semantics_bitwise(expr):
    # Python's float // and % (the divisor's sign, -0.0 where Python gives it) are
    # exact functions of their operands: an implementation built on an exact fmod
    # gets every bit right, so no tolerance applies here.
    x, y = float32_operands()
    assert_exact(run_binary(expr, x, y, np.float32), float_reference(expr, x, y))


def test_float32_division_within_spec_ulps():
    # Vulkan: OpFDiv is within 2.5 ULP of the exact quotient for |y| in [2^-126, 2^126];
    # NumPy's correctly rounded quotient is within 0.5 ULP of it, so 3 steps at most.
    x, y = float32_operands()
    out = run_binary("x / y", x, y, np.float32)
    expected = float_reference("x / y", x, y)
    steps = ulp_steps(out, expected)
    assert steps.max() <= 3, f"max {steps.max()} ULP at {np.argmax(steps)}"


@pytest.mark.parametrize(
    "expr, want",
    [
        ("x / y", [np.inf, -np.inf, -np.inf, np.inf, np.nan, np.nan]),
        ("x // y", [np.inf, -np.inf, -np.inf, np.inf, np.nan, np.nan]),
        ("x % y", [np.nan] * 6),
    ],
)
def test_float_division_by_zero_follows_numpy(expr, want):
    # Vulkan: dividing a non-zero by a zero gives the appropriately signed infinity.
    # error_model="numpy": no exception; NumPy's results.
    x = np.array([1.5, -1.5, 1.5, -1.5, 0.0, np.nan], np.float32)
    y = np.array([0.0, 0.0, -0.0, -0.0, 0.0, 0.0], np.float32)
    out = run_binary(expr, x, y, np.float32)
    assert_exact(out, float_reference(expr, x, y))
    assert_exact(out, np.array(want, np.float32))


@pytest.mark.parametrize("op", ["<", "<=", "==", "!=", ">", ">="])
def test_float_comparisons_with_nan_inf_and_signed_zero(op):
    vals = np.array([np.nan, -np.inf, -1.5, -0.0, 0.0, 2.0, np.inf], np.float32)
    x = np.repeat(vals, vals.size)
    y = np.tile(vals, vals.size)
    expr = f"x {op} y"
    with np.errstate(invalid="ignore"):
        expected = eval(expr, {}, {"x": x, "y": y})
    assert_exact(run_binary(expr, x, y, np.bool_), expected)


def test_float32_power():
    # pow is not a core SPIR-V instruction: numba_vulkan's own library computes it
    # (mathlib/power.py, within 1 ulp; docs/math.md).
    x = RNG.uniform(0.1, 10.0, 200).astype(np.float32)
    y = RNG.uniform(-4.0, 4.0, 200).astype(np.float32)
    x[:3], y[:3] = [2.0, 3.0, 10.0], [10.0, 2.0, -1.0]
    out = run_binary("x ** y", x, y, np.float32)
    expected = float_reference("x ** y", x, y)
    assert ulp_steps(out, expected).max() <= 1


# ------------------------------------------------------------------------- float64


@requires_feature("float64")
@pytest.mark.parametrize(
    "expr",
    [
        "x + y",
        "x - y",
        "x * y",
        "x // y",
        "x % y",
        "-x * y",
        "abs(x) - y",
        "min(x, y) + max(x, y)",
        "x * 0.1 + 2.5",
    ],
)
def test_float64_bitwise(expr):
    x, y = (v.astype(np.float64) for v in float32_operands())
    x[20:40] = RNG.uniform(-1e10, 1e10, 20)
    assert_exact(run_binary(expr, x, y, np.float64), float_reference(expr, x, y))


@requires_feature("float64")
def test_float64_division():
    # Vulkan only requires double precision to be at least as precise as single
    # precision: 2.5 float32 ULP, a relative error of 2.5 * 2^-23 at most.
    x, y = (v.astype(np.float64) for v in float32_operands())
    out = run_binary("x / y", x, y, np.float64)
    expected = x / y
    finite = np.isfinite(expected) & (expected != 0)
    rel = np.abs(out[finite] - expected[finite]) / np.abs(expected[finite])
    assert rel.max() <= 2.5 * 2.0**-23
    assert_exact(out[~finite], expected[~finite])


@requires_feature("float64")
def test_int_true_division_gives_float64():
    x, y = int32_operands()
    out = run_binary("x / y", x, y, np.float64)
    expected = np.array([int(a) / int(b) for a, b in zip(x, y)])
    rel = np.abs(out - expected) / np.maximum(np.abs(expected), 1e-300)
    assert rel.max() <= 2.5 * 2.0**-23  # as for float64 division above


# --------------------------------------------------------------------------- casts


def test_float_to_int_truncates_towards_zero():
    x = np.concatenate(
        [
            np.array([2.5, -2.5, 0.99, -0.99, 1e6, -1e6, 7.0, -7.0], np.float32),
            RNG.uniform(-1e6, 1e6, 200).astype(np.float32),
        ]
    )
    want = np.trunc(x).astype(np.int32)
    assert_exact(run_unary("int(x)", x, np.int32), want)
    assert_exact(run_unary("np.int32(x)", x, np.int32), want)
    assert_exact(run_unary("x", x, np.int32), want)  # the store converts as well


def test_int_to_float_conversions_round_correctly():
    x = np.concatenate(
        [
            np.array([0, 1, -1, 2**24 + 1, -(2**24 + 3), 2**31 - 1, -(2**31)], np.int32),
            RNG.integers(-(2**31), 2**31 - 1, 200, dtype=np.int32),
        ]
    )
    assert_exact(run_unary("np.float32(x)", x, np.float32), x.astype(np.float32))
    assert_exact(run_unary("float(x)", x, np.float64), x.astype(np.float64))


@requires_feature("int64")
def test_int64_to_float64_rounds_correctly():
    x = RNG.integers(-(2**62), 2**62, 200, dtype=np.int64)
    x[:3] = [2**53 + 1, 2**53 + 3, -(2**60) - 1]
    assert_exact(run_unary("float(x)", x, np.float64, narrow=False), x.astype(np.float64))


@requires_feature("float64")
def test_float32_float64_conversions():
    x = RNG.uniform(-1e3, 1e3, 200)
    assert_exact(run_unary("np.float32(x)", x, np.float32), x.astype(np.float32))
    x32 = x.astype(np.float32)
    assert_exact(run_unary("np.float64(x) * 3.0", x32, np.float64), x32.astype(np.float64) * 3.0)


def test_bool_conversions():
    x = np.array([0, 1, -1, 5, 0, -7], np.int32)
    assert_exact(run_unary("bool(x)", x, np.bool_), x != 0)
    want = (x != 0).astype(np.int32) + (x > 0).astype(np.int32)
    assert_exact(run_unary("int(x != 0) + int(x > 0)", x, np.int32), want)
    f = np.array([0.0, -0.0, 0.5, np.nan, -np.inf], np.float32)
    assert_exact(run_unary("bool(x)", f, np.bool_), np.array([False, False, True, True, True]))


# ---------------------------------------------------------------------------- bool


@pytest.mark.parametrize(
    "expr",
    [
        "x & y",
        "x | y",
        "x ^ y",
        "not x",
        "x and y",
        "x or y",
        "x == y",
        "x != y",
        "(x or y) and not (x and y)",
    ],
)
def test_bool_operations(expr):
    x = np.array([False, False, True, True] * 8)
    y = np.array([False, True, False, True] * 8)
    expected = np.array([bool(eval(expr, {}, {"x": bool(a), "y": bool(b)})) for a, b in zip(x, y)])
    assert_exact(run_binary(expr, x, y, np.bool_), expected)


def test_bool_arithmetic_counts_as_int():
    x = np.array([False, True, True, False])
    y = np.array([True, True, False, False])
    assert_exact(run_binary("x + y * 2", x, y, np.int32), [2, 3, 1, 0])


def test_scalar_arguments():
    kernel = make_kernel("out[i] = a * i + b\n")
    out = np.zeros(10, np.int32)
    kernel.forall(10)(np.int32(3), 5, out)
    assert_exact(out, 3 * np.arange(10) + 5)
    f = np.zeros(10, np.float32)
    kernel.forall(10)(np.float32(0.5), np.float32(-1.25), f)
    assert_exact(f, (np.float32(0.5) * np.arange(10, dtype=np.float32)) + np.float32(-1.25))


# ------------------------------------------------------ Numba's integer corner cases


@requires_feature("int64")
def test_int64_min_floordiv_minus_one_gives_zero():
    # Numba's integer division returns 0 (quotient and remainder) for MIN // -1,
    # the one overflowing case, as it does for a zero divisor (int_divmod_signed).
    x = np.array([-(2**63), -(2**63), -7, -(2**63) + 1], np.int64)
    y = np.array([-1, 1, -1, -1], np.int64)
    assert_exact(run_binary("x // y", x, y, np.int64, narrow=False), [0, -(2**63), 7, 2**63 - 1])
    assert_exact(run_binary("x % y", x, y, np.int64, narrow=False), [0, 0, 0, 0])


@requires_feature("int64")
@pytest.mark.parametrize(
    "dtype, values, want",
    [
        # Numba negates an integer in its own width, then widens (int_negate_impl):
        # -int32(-2**31) is -2**31 as int64, -uint8(100) is 156 as uint64.
        (np.int32, [-(2**31), 5, -3, 0], [-(2**31), -5, 3, 0]),
        (np.int8, [-128, 127, 1, 0], [-128, -127, -1, 0]),
        (np.uint8, [100, 0, 255, 1], [156, 0, 1, 255]),
        (np.uint32, [1, 0, 2**32 - 1, 2**31], [2**32 - 1, 0, 1, 2**31]),
        (np.bool_, [True, False, True, False], [-1, 0, -1, 0]),
    ],
)
def test_negation_happens_in_the_operand_width(dtype, values, want):
    x = np.array(values, dtype)
    out_dtype = np.uint64 if np.dtype(dtype).kind == "u" else np.int64
    assert_exact(run_unary("-x", x, out_dtype, narrow=False), np.array(want).astype(out_dtype))
