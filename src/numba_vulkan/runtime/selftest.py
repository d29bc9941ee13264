"""The driver self-test: does the device compute exactly what the compiler relies on?

Vulkan promises exact float rounding to integers, correctly rounded float
additions and products, exact integer arithmetic; drivers do not always keep
the promise, and not the same way on every machine. lavapipe on a CPU without
AVX-512 truncates float64 through a 64-bit integer (trunc(-0.5) = +0.0,
trunc(1e10 + 0.25) unchanged) while the same Mesa on an AVX-512 CPU is exact;
lavapipe folds arithmetic on constant zeros (x + 0.0 = x for x = -0.0) on every
CPU; NVIDIA's float32 division may be 2.5 ulp off. Our oracle is CPU Numba, so
the first time a driver is used, one probe kernel (numba_vulkan.selftest_kernel, built in
KIR with the front end's lowering of each operation, so that no Numba typing slows the
first use) runs each primitive on operands chosen to expose such faults (signed zeros,
halves, the last fractional values, subnormals, infinities, NaN, random bit patterns)
and compares with NumPy bit for bit (NaN with NaN, whatever its payload).

Each primitive gets a verdict: "exact", "wrong: ..." (how many operands, the
first example) or "not run: ..." (the device lacks the type, or the
compiler cannot express the probe there). A wrong primitive that has a
software form (SOFT_FORMS) switches kernels for that device to the form; one
without is reported by a VulkanDriverFaultWarning when the device is opened,
naming the primitive. The verdicts are cached with the loop cap in
``driver_probes.json`` (disk.py) under the driver's key, which for a CPU
driver includes the CPU's features and the Mesa variables that change its
code (disk.driver_key); they show in ``python3 -m numba_vulkan`` and in
``DeviceInfo.selftest`` / ``DeviceInfo.soft_forms``.

Decided by what the probe sees, not by vendor, with one exception: that
GLSL.std.450 Fma rounds once ("fused" or "not fused: ..."). A probe shows only
that the Fma it ran did; the compiler relies on every Fma doing so, which only
the hardware's design (FUSED_FMA_VENDORS) says. So the probe can only take
fusion away from a listed vendor's device, never grant it to another.

NUMBA_VULKAN_SOFT_FORMS=all (or a list of names) forces software forms on,
so that lavapipe tests each of them; NUMBA_VULKAN_SELFTEST=0 skips the test
(the forms are then guessed from the driver's name, as before it existed).
"""

import contextvars
import warnings
from fractions import Fraction

import numpy as np

from .. import config
from ..errors import VulkanDriverFaultWarning

#: Bump when a probe changes: cached verdicts of other versions are not trusted.
VERSION = 5

#: The software forms, and the primitive whose fault calls for each.
SOFT_FORMS = {
    "rounding_f32": "float32 floor, ceil and trunc from the bits (kir/soft_rounding.h)",
    "rounding_f64": "float64 floor, ceil and trunc from the bits (kir/soft_rounding.h)",
    "float_zeros": "float constants +0.0 and -0.0 read from a hidden parameter (kir/float_zeros.h)",
    "division_f32": "float32 division computed in float64 and rounded once (kir/float_division.h)",
}
_FORM_OF = {
    "rounding_f32": "rounding_f32",
    "rounding_f64": "rounding_f64",
    "float_zeros_f32": "float_zeros",
    "float_zeros_f64": "float_zeros",
    "division_f32": "division_f32",
}

#: Vendors whose Vulkan drivers compile GLSL.std.450 Fma to the hardware's fused multiply-add
#: (one rounding) on every GPU they ship: NVIDIA (FFMA/DFMA) and AMD (v_fma_f32/f64). Only
#: their devices get the math library's fused forms (see the module doc).
FUSED_FMA_VENDORS = (0x10DE, 0x1002)

#: While set, kernels compile for the raw driver: no software form, whatever the verdicts
#: (launchers.codegen_controls); the self-test's own kernels see the driver as it is.
RAW = contextvars.ContextVar("numba_vulkan_selftest_raw", default=False)


# ---------------------------------------------------------------- operands


def float_operands(dtype, n, rng):
    """(n, 3) operands: column 0 for rounding and zeros, columns 1 and 2 for division,
    multiply-add and sqrt; edge cases first, then random bit patterns."""
    f = np.finfo(dtype)
    one_ulp = 2.0 ** (f.nmant)  # 2^mantissa: from there on every value is an integer
    edges = [0.0, -0.0, 0.5, -0.5, 0.4, -0.4, 1.5, -1.5, 2.5, -2.5, 0.49999997, -0.99999994,
             float(f.smallest_subnormal), -float(f.smallest_subnormal), float(f.tiny),
             -float(f.tiny), float(f.max), -float(f.max), np.inf, -np.inf, np.nan,
             one_ulp, -one_ulp, one_ulp / 2 + 0.5, -(one_ulp / 2 + 0.5), one_ulp / 4 + 0.25,
             -(one_ulp / 4 + 0.25), 2.0**31 + 0.5, -(2.0**31 + 0.5), 2.0**63, -(2.0**63),
             1e10 + 0.25, -(1e10 + 0.25), 2.0**24 + 2, 3.7, -3.7]  # fmt: skip
    edges = np.array(edges).astype(dtype)
    # The neighbours of 2^mantissa and of 1 on both sides.
    near = [np.nextafter(dtype(v), dtype(t)) for v in (one_ulp, -one_ulp, 1.0, -1.0)
            for t in (np.inf, -np.inf)]  # fmt: skip
    uint = np.uint64 if dtype == np.float64 else np.uint32
    bits = rng.integers(0, np.iinfo(uint).max, size=(n, 3), dtype=uint, endpoint=True)
    x = bits.view(dtype).copy()
    head = np.concatenate([edges, np.array(near, dtype)])
    x[: head.size, 0] = head
    # Divisions, multiply-adds and square roots of ordinary magnitudes (random bits are mostly
    # huge or tiny): mantissas in [1, 2) times modest powers of two.
    m = rng.random((n // 2, 2)) + 1.0
    e = rng.integers(-20, 21, size=(n // 2, 2))
    x[n // 2 :, 1:] = np.ldexp(m, e).astype(dtype) * np.where(rng.random((n // 2, 2)) < 0.5, -1, 1)
    # Rows where Fma's one rounding shows: (1 + 2^-k)(1 - 2^-k) - 1 is -2^-2k exactly,
    # while the product rounded first is 1 and the sum 0 (k past half the precision).
    k = np.arange(f.nmant // 2 + 1, f.nmant // 2 + 9)
    rows = slice(n // 2 - k.size, n // 2)
    x[rows, 0] = -1.0
    x[rows, 1] = (1.0 + np.ldexp(1.0, -k)).astype(dtype)
    x[rows, 2] = (1.0 - np.ldexp(1.0, -k)).astype(dtype)
    return x


def int_operands(n, rng):
    """(n, 2) int64 operands: edges against edges, then random; divisors never 0."""
    e = np.array([0, 1, -1, 2, -2, 3, 7, -7, 255, 256, -256, 2**31 - 1, -2**31, 2**32 - 1, 2**32,
                  2**62 + 5, 2**63 - 1, -2**63, -2**63 + 1, 0x0123456789ABCDEF,
                  -0x0123456789ABCDEF], np.int64)  # fmt: skip
    a = rng.integers(-2**63, 2**63 - 1, size=(n, 2), dtype=np.int64, endpoint=True)
    pairs = np.array(np.meshgrid(e, e)).reshape(2, -1).T
    a[: pairs.shape[0]] = pairs
    a[:, 1][a[:, 1] == 0] = 3
    a[:, 1][(a[:, 0] == -2**63) & (a[:, 1] == -1)] = 5  # INT_MIN // -1: undefined in LLVM too
    return a


def conversion_operands(n, rng):
    """(n, 6) float64 values within the ranges of int8, uint8, int32, uint32, int64 and uint64
    (columns), with their edges and fractions."""
    ranges = [(-128, 127), (0, 255), (-2**31, 2**31 - 1), (0, 2**32 - 1), (-2**63, 2**63 - 1024),
              (0, 2**64 - 2048)]  # fmt: skip
    out = np.empty((n, len(ranges)))
    for j, (lo, hi) in enumerate(ranges):
        col = rng.uniform(float(lo), float(hi), n)
        edges = [lo, hi, lo + 0.5, hi - 0.5, lo + 0.75, hi + 0.75 if hi < 2**53 else hi, 0.0, -0.0,
                 0.999, -0.999 if lo < 0 else 0.5]  # fmt: skip
        col[: len(edges)] = edges
        out[:, j] = col
    return out


# ---------------------------------------------------------------- the probe kernels


# ---------------------------------------------------------------- verdicts


def _same(got, want):
    """Indices where `got` differs from `want` bit for bit (any NaN equals any NaN)."""
    got = np.asarray(got)
    want = np.asarray(want)
    if got.dtype.kind == "f":
        both_nan = np.isnan(got) & np.isnan(want)
        differ = got.view(f"u{got.itemsize}") != want.view(f"u{want.itemsize}")
        return np.nonzero(differ & ~both_nan)[0]
    return np.nonzero(got != want)[0]


def _subnormal(a):
    a = np.asarray(a)
    if a.dtype.kind != "f":
        return np.zeros(a.shape, bool)
    return (a != 0) & (np.abs(a) < np.finfo(a.dtype).tiny)


def _verdict(checks, subnormals=True):
    """'exact', or 'wrong: ...' naming the first check that differs and its first operand.
    Without `subnormals` (a width whose subnormals the device does not promise to keep:
    DeviceInfo.denorm_preserve), operands and results that are subnormal are left out:
    flushing them is the device's documented right, which the math library allows for."""
    for label, got, want, operands in checks:
        if not subnormals:
            keep = ~(_subnormal(got) | _subnormal(want))
            for o in operands:
                keep &= ~_subnormal(o)
            got, want, operands = got[keep], want[keep], [np.asarray(o)[keep] for o in operands]
        bad = _same(got, want)
        if bad.size:
            j = bad[0]
            ops = ", ".join(repr(np.asarray(o)[j].item()) for o in operands)
            return (f"wrong: {label} on {bad.size} of {got.size} operands, e.g. ({ops}) gave "
                    f"{got[j].item()!r}, not {want[j].item()!r}")
    return "exact"


def float_verdicts(dtype, got, x, subnormals=True):
    tag = "f32" if dtype == np.float32 else "f64"
    v, a, b = x[:, 0], x[:, 1], x[:, 2]
    zero = dtype(0.0)
    with np.errstate(all="ignore"):
        zeros = [("x + 0.0", v + zero), ("0.0 - x", zero - v), ("x * 0.0", v * zero),
                 ("0.0 / x", zero / v), ("x / 0.0", np.where(v != 1.0, v / zero, v))]
        checks = {
            f"rounding_{tag}": [("floor", got[:, 0], np.floor(v), (v,)),
                                ("ceil", got[:, 1], np.ceil(v), (v,)),
                                ("trunc", got[:, 2], np.trunc(v), (v,))],
            f"float_zeros_{tag}": [(label, got[:, 3 + j], w, (v,))
                                   for j, (label, w) in enumerate(zeros)],
            f"division_{tag}": [("x / y", got[:, 8], a / b, (a, b))],
            f"contraction_{tag}": [("x * y + z", got[:, 9], a * b + v, (a, b, v))],
            f"sqrt_{tag}": [("sqrt", got[:, 10], np.sqrt(np.abs(a)), (a,))],
        }  # fmt: skip
    return {name: _verdict(c, subnormals) for name, c in checks.items()}


def fma_verdict(dtype, got, x, subnormals=True):
    """'fused' where every result is x * y + z rounded once (computed exactly with fractions),
    else 'not fused: ...'. Overflowing products and, where the device flushes them,
    subnormals are left out."""
    v, a, b = x[:, 0], x[:, 1], x[:, 2]
    ordinary = np.arange(x.shape[0]) >= x.shape[0] // 2 - 8  # designed and modest operands
    with np.errstate(all="ignore"):
        finite = ordinary & np.isfinite(v) & np.isfinite(a) & np.isfinite(b)
        finite &= np.abs(a.astype(np.float64) * b) < float(np.finfo(dtype).max) / 4
    if not subnormals:
        finite &= ~(_subnormal(v) | _subnormal(a) | _subnormal(b) | _subnormal(got))
    rows = np.nonzero(finite)[0]
    want = np.array([_round_once(Fraction(float(a[j])) * Fraction(float(b[j])) +
                                 Fraction(float(v[j])), dtype) for j in rows], dtype)  # fmt: skip
    if not subnormals:
        keep = ~_subnormal(want)
        rows, want = rows[keep], want[keep]
    bad = _same(got[rows], want)
    if bad.size == 0:
        return "fused"
    j = rows[bad[0]]
    return (f"not fused: {bad.size} of {rows.size} differ from x * y + z rounded once, e.g. "
            f"({a[j].item()!r}, {b[j].item()!r}, {v[j].item()!r}) gave {got[j].item()!r}")


def _round_once(exact, dtype):
    """The `dtype` value nearest the Fraction `exact`, ties to even."""
    if dtype == np.float64:
        return np.float64(float(exact))  # Fraction's float() rounds once
    with np.errstate(over="ignore"):  # float32(float()) rounds twice: look at the neighbours
        near = dtype(float(exact))
        candidates = [near, np.nextafter(near, dtype(np.inf)), np.nextafter(near, dtype(-np.inf))]
    finite = [c for c in candidates if np.isfinite(c)]
    if not finite:
        return near

    def key(c):
        bits = np.array(c).view(f"u{np.dtype(dtype).itemsize}").item()
        return (abs(Fraction(float(c)) - exact), bits & 1)

    return min(finite, key=key)


#: Columns of the float probe (numba_vulkan.selftest_kernel).
COLUMNS = 12

#: The integer types of the conversion probe, one column of conversion_operands each.
CONVERSION_KINDS = (np.int8, np.uint8, np.int32, np.uint32, np.int64, np.uint64)


def int_verdicts(a, f, out, uout, conv):
    x, y = a[:, 0], a[:, 1]
    ux, uy = x.view(np.uint64), y.view(np.uint64)
    s = uy & np.uint64(63)
    si = s.astype(np.int64)
    with np.errstate(all="ignore"):
        checks = {
            "int64_division": [("int64 //", out[:, 0], x // y, (x, y)),
                               ("int64 %", out[:, 1], x % y, (x, y)),
                               ("uint64 //", uout[:, 0], ux // uy, (ux, uy)),
                               ("uint64 %", uout[:, 1], ux % uy, (ux, uy))],
            "int64_shifts": [("int64 >>", out[:, 2], x >> si, (x, si)),
                             ("int64 <<", out[:, 3], x << si, (x, si)),
                             ("uint64 >>", uout[:, 2], ux >> s, (ux, s))],
            "int64_compares": [("int64 <", out[:, 4], (x < y).astype(np.int64), (x, y)),
                               ("int64 <=", out[:, 5], (x <= y).astype(np.int64), (x, y)),
                               ("uint64 <", uout[:, 3], (ux < uy).astype(np.uint64), (ux, uy))],
            "float_to_int": [(f"float64 to {np.dtype(k).name}", conv[j], np.trunc(f[:, j]).astype(k),
                              (f[:, j],)) for j, k in enumerate(CONVERSION_KINDS)],
        }  # fmt: skip
    return {name: _verdict(c) for name, c in checks.items()}


#: The primitives in the order they are reported; each verdict's meaning is in the module doc.
PRIMITIVES = ("rounding_f32", "rounding_f64", "float_zeros_f32", "float_zeros_f64", "division_f32",
              "division_f64", "contraction_f32", "contraction_f64", "sqrt_f32", "sqrt_f64",
              "fma_f32", "fma_f64", "int64_division", "int64_shifts", "int64_compares",
              "float_to_int", "sqrt_f32_one_step")  # fmt: skip


def faulty(verdicts):
    """The primitives the verdicts call wrong."""
    return tuple(p for p, v in verdicts.items() if v.startswith("wrong"))


def forced_forms(setting=None):
    """The software forms NUMBA_VULKAN_SOFT_FORMS asks for (a tuple of SOFT_FORMS names);
    unknown names are reported once and ignored."""
    setting = config.SOFT_FORMS if setting is None else setting
    names = [s.strip().lower() for s in setting.split(",") if s.strip()]
    if "all" in names:
        return tuple(SOFT_FORMS)
    unknown = [s for s in names if s not in SOFT_FORMS]
    if unknown:
        warnings.warn(f"NUMBA_VULKAN_SOFT_FORMS: unknown software forms {unknown} ignored; "
                      f"known: all, {', '.join(SOFT_FORMS)}", RuntimeWarning, stacklevel=2)
    return tuple(s for s in SOFT_FORMS if s in names)


def soft_forms(verdicts):
    """The software forms the verdicts call for, with those forced on."""
    wanted = {_FORM_OF[p] for p in faulty(verdicts) if p in _FORM_OF}
    wanted.update(forced_forms())
    return tuple(s for s in SOFT_FORMS if s in wanted)


def unmended(verdicts):
    """Wrong primitives that no software form mends."""
    return tuple(p for p in faulty(verdicts) if p not in _FORM_OF)


def warn_unmended(info):
    """A VulkanDriverFaultWarning naming the wrong primitives of `info` without a software form."""
    verdicts = dict(info.selftest)
    left = unmended(verdicts)
    if left:
        said = "; ".join(f"{p}: {verdicts[p]}" for p in left)
        warnings.warn(
            f"the driver of {info.name!r} ({info.driver_name} {info.driver_info}) computes "
            f"{', '.join(left)} wrongly and numba_vulkan has no software form for "
            f"{'it' if len(left) == 1 else 'them'}: kernels that use "
            f"{'it' if len(left) == 1 else 'them'} may give results that differ from "
            f"numba.njit's ({said}). Please report it with `python3 -m numba_vulkan`.",
            VulkanDriverFaultWarning,
            stacklevel=3,
        )
