"""Correctly rounded float32 division without float64 where the device's Fma rounds once
(kir/float_division.h): the Fma sequence from the driver's reciprocal in the safe range, the
float64 way in a branch for the other operands. Every quotient must be NumPy's, bit for bit.

lavapipe divides exactly and is given neither control, and its Fma rounds twice, so here the
controls are forced as for NVIDIA (divide_f32_in_f64 and fused_fma), with each Fma of the
sequence computed exactly in float64 (divide_f32_exact_fma, where the device's Fma is not
known to round once) and, in the "loose" variants, the driver's reciprocal moved by up to
3 ulps (divide_f32_test_ulps), as loose as Vulkan lets a driver's be. On NVIDIA and AMD the
"fused" variant runs the device's own Fma and reciprocal. The operands (div32_cases.py, about
140,000 pairs) are built to hit the hard cases; tests/fuzz/div32_sweep.py runs 10^8."""

import numba
import numpy as np
import pytest
from div32_cases import hard_pairs, in_safe_range
from math_support import (
    _kernel,
    assert_all_same_bits,
    assert_same_bits,
    operands,
    plain_arith_comparable,
)

import numba_vulkan as nv
from numba_vulkan import launchers

pytestmark = [pytest.mark.device, pytest.mark.usefixtures("device")]

#: variant -> CodegenControls fields (besides divide_f32_in_f64 and fused_fma)
VARIANTS = {"float64": {}, "fused": {"ulps": 0}, "loose": {"ulps": 3}}


def force(monkeypatch, variant):
    """Compile every kernel of the test with the float32 division of `variant`."""
    real = launchers.codegen_controls
    spec = VARIANTS[variant]

    def controls(device):
        c = real(device)
        if variant == "float64":
            return c._replace(divide_f32_in_f64=True, fused_fma=False)
        # the vendor's Fma rounds once (without a device: not known)
        fused = device is not None and launchers.fused_fma(device.info, "")
        return c._replace(divide_f32_in_f64=True, fused_fma=True,
                          divide_f32_exact_fma=not fused, divide_f32_test_ulps=spec["ulps"])

    monkeypatch.setattr(launchers, "codegen_controls", controls)


def numpy_quotients(x, y):
    with np.errstate(all="ignore"):
        return np.divide(x, y)


def check(out, x, y, ref=None):
    ref = numpy_quotients(x, y) if ref is None else ref
    keep = plain_arith_comparable(x, y, ref)  # a flushing device: subnormals left out
    assert keep.sum() > 0.9 * keep.size or not keep.all()
    assert_same_bits(out[keep], ref[keep], (x[keep], y[keep]))


@pytest.fixture(scope="module")
def pairs():
    return hard_pairs(100_000, seed=1)


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_hard_pairs(monkeypatch, variant, pairs):
    x, y = pairs
    force(monkeypatch, variant)
    kernel = _kernel(["x / y"], 2)
    out = np.zeros_like(x)
    kernel.forall(x.size)(x, y, out)
    text = kernel.inspect_spirv(x, y, out)
    assert text.count("OpFDiv %double") == 1, text  # the float64 way, once
    if variant != "float64":
        assert text.count("OpFDiv %float") == 1  # the driver's reciprocal
        assert text.count("OpBranchConditional") == 2  # the kernel's `if`, the rare branch
    check(out, x, y)


def test_the_hard_pairs_take_both_ways(pairs):
    """The operands reach the sequence mostly, and the float64 branch often (the safe range
    of kir/float_division.h)."""
    x, y = pairs
    safe = in_safe_range(x, y)
    assert 0.5 < safe.mean() < 0.8


@pytest.mark.parametrize("variant", ["fused", "loose"])
def test_every_way_to_divide(monkeypatch, variant, pairs):
    """Operator `/` and `/=`, np.divide and np.true_divide in a kernel, a float32 ufunc from
    numba.vectorize, and NumPy's division of device arrays (the array-expression kernels)."""
    x, y = (a[:20000] for a in pairs)
    force(monkeypatch, variant)
    kernel = _kernel(["np.divide(x, y)", "np.true_divide(x, y)"], 2)
    o0, o1 = np.zeros_like(x), np.zeros_like(x)
    kernel.forall(x.size)(x, y, o0, o1)
    check(o0, x, y)
    check(o1, x, y)

    @nv.jit
    def in_place(x, y, out):
        i = nv.global_id(0)
        if i < out.size:
            t = x[i]
            t /= y[i]
            out[i] = t

    out = np.zeros_like(x)
    in_place.forall(x.size)(x, y, out)
    check(out, x, y)

    @numba.vectorize(["float32(float32, float32)"], target="vulkan")
    def vdiv(a, b):
        return a / b

    check(vdiv(x, y), x, y)
    dx, dy = nv.to_device(x), nv.to_device(y)
    check((dx / dy).copy_to_host(), x, y)
    check(np.divide(dx, dy).copy_to_host(), x, y)


@pytest.mark.parametrize("variant", ["fused", "loose"])
def test_divisions_in_loops_and_branches(monkeypatch, variant, pairs):
    """Several divisions in one block, in a loop and under a branch, whose quotients feed
    each other (the values that cross the blocks the rewrite makes): the same bits as the
    float64 way, and as numba.njit."""
    x, y = (a[:4000] for a in pairs)

    def body(x, y, out):
        i = nv.global_id(0)
        if i < out.size:
            a = x[i]
            b = y[i]
            s = a / b
            t = s / b
            if s > t:
                t = (t / a) / s
            acc = np.float32(0)
            for j in range(3):
                acc += a / (b + np.float32(j))
            out[i, 0] = s
            out[i, 1] = t
            out[i, 2] = acc

    outs = {}
    for v in ("float64", variant):
        with monkeypatch.context() as m:
            force(m, v)
            out = np.zeros((x.size, 3), np.float32)
            nv.jit(body).forall(x.size)(x, y, out)
            outs[v] = out
    for k in range(3):
        keep = plain_arith_comparable(x, y, outs["float64"][:, k], outs[variant][:, k])
        assert_same_bits(outs[variant][keep, k], outs["float64"][keep, k], (x[keep], y[keep]))

    # The intermediates too: a device that flushes float32 subnormals flushes them in
    # the plain arithmetic around the divisions (both of its ways alike), and a flushed
    # intermediate can change an output that is not itself subnormal.
    @numba.njit(error_model="numpy")
    def host(x, y, out, mid):
        for i in range(x.size):
            a = x[i]
            b = y[i]
            s = a / b
            t = s / b
            mid[i, 0] = t
            if s > t:
                mid[i, 1] = t / a
                t = (t / a) / s
            acc = np.float32(0)
            for j in range(3):
                mid[i, 2 + 2 * j] = b + np.float32(j)
                mid[i, 3 + 2 * j] = a / (b + np.float32(j))
                acc += a / (b + np.float32(j))
            out[i, 0] = s
            out[i, 1] = t
            out[i, 2] = acc

    ref = np.zeros_like(outs[variant])
    mid = np.zeros((x.size, 8), np.float32)
    with np.errstate(all="ignore"):
        host(x, y, ref, mid)
    keep = plain_arith_comparable(x, y, ref, outs[variant], mid)
    assert_same_bits(outs[variant][keep].ravel(), ref[keep].ravel())


def test_complex64_division_as_float64_way(monkeypatch, pairs):
    """complex64 division divides float32 parts: the same bits either way."""
    x, y = (a[:8000] for a in pairs)
    z = x[:4000] + np.complex64(1j) * x[4000:]
    w = y[:4000] + np.complex64(1j) * y[4000:]
    outs = []
    for v in ("float64", "loose"):
        with monkeypatch.context() as m:
            force(m, v)
            k = _kernel(["x / y"], 2)
            out = np.zeros_like(z)
            k.forall(z.size)(z, w, out)
            assert "OpFDiv %double" in k.inspect_spirv(z, w, out)  # rewritten f32 divisions
            outs.append(out)
    keep = plain_arith_comparable(z, w, outs[0], outs[1])
    assert_same_bits(outs[1][keep].view(np.float32), outs[0][keep].view(np.float32))


def test_fastmath_and_no_fused_fma_keep_their_division(monkeypatch):
    """fastmath keeps the driver's division; without fused_fma the float64 way stays."""
    x = np.linspace(1, 2, 64, dtype=np.float32)
    out = np.zeros_like(x)
    force(monkeypatch, "fused")
    fast = _kernel(["x / y"], 2, fastmath=True)
    fast.forall(x.size)(x, x, out)
    text = fast.inspect_spirv(x, x, out)
    assert "OpFDiv %double" not in text and " Fma " not in text
    force(monkeypatch, "float64")
    plain = _kernel(["x / y"], 2)
    plain.forall(x.size)(x, x, out)
    text = plain.inspect_spirv(x, x, out)
    assert text.count("OpFDiv %double") == 1 and " Fma " not in text
    assert text.count("OpBranchConditional") == 1  # the kernel's own `if i < o0.size`


@pytest.mark.parametrize("variant", ["loose"])
def test_barrier_after_a_division(monkeypatch, variant, pairs):
    """A barrier in the block of a division ends up after the division's rare branch (the
    merge block, where every invocation of the group arrives): the shared values are right."""
    x, y = (a[:4096] for a in pairs)
    force(monkeypatch, variant)

    @nv.jit
    def rotate(x, y, out):
        s = nv.shared.array(64, np.float32)
        t = nv.local_id(0)
        i = nv.global_id(0)
        s[t] = x[i] / y[i]
        nv.syncthreads()
        out[i] = s[(t + 1) % 64]

    out = np.zeros_like(x)
    rotate[x.size // 64, 64](x, y, out)
    ref = numpy_quotients(x, y).reshape(-1, 64)
    ref = np.roll(ref, -1, axis=1).ravel()
    xr = np.roll(x.reshape(-1, 64), -1, axis=1).ravel()
    yr = np.roll(y.reshape(-1, 64), -1, axis=1).ravel()
    check(out, xr, yr, ref)


#: Divisions by constants: powers of two of magnitude >= 1 (multiplications by the exact
#: reciprocal, kir/float_division.h's DivideByPowersOfTwo) and others that stay divisions
#: (3, 0.5, 2^127 in float32, whose reciprocal is subnormal)
BY_CONSTANTS = ["x / np.float32(2)", "x / np.float32(-4)", "x / np.float32(2.0 ** 126)",
                "x / 2", "x / -1.0", "x / 1024.0", "x / np.float32(3)", "x / np.float32(0.5)",
                "x / np.float32(2.0 ** 127)", "x / 2.0 ** 1022"]


@pytest.mark.parametrize("variant", [None, *VARIANTS])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_division_by_constant_powers_of_two(monkeypatch, variant, dtype):
    """x / c for a constant c = +-2^k, k >= 0, is a multiplication by 1/c: numba.njit's
    quotients bit for bit (zeros, infinities, NaN, subnormals, the extremes), with the
    device's own division or the forced float32 sequences; other constants stay divisions."""
    if variant is not None:
        force(monkeypatch, variant)
    x = operands(dtype, 4000, seed=3)
    assert_all_same_bits(BY_CONSTANTS, x, plain_arith=True)

    @nv.jit
    def halves(x, out):
        i = nv.global_id(0)
        if i < out.size:
            out[i] = x[i] / 2 + x[i] / 3.0

    text = halves.inspect_kir(nv.to_device(x.astype(np.float64)),
                              nv.device_array(x.size, np.float64), narrowed=True)
    assert "const 0.5 : f64" in text and text.count(" = div ") == 1, text
