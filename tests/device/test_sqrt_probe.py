"""The self-test's check of float32 sqrt's one correction step (runtime/sqrt_probe.py): it
finds a step that is not correctly rounded (lavapipe's Fma rounds twice, so its step misses
many floats) and passes a correct one; and its verdict alone lets kernels leave the rounding
decision out (launchers.sqrt_one_step, roots._sqrt_fused)."""

import types

import pytest

from numba_vulkan import compiler, config, launchers, narrowing
from numba_vulkan.frontend.mathlib import denormals, roots
from numba_vulkan.runtime import sqrt_probe
from numba_vulkan.typing import pipeline

pytestmark = [pytest.mark.device, pytest.mark.usefixtures("device")]

ONE_BINADE = (127 << 23, (128 << 23) - 1)  # float32 [1, 2): 2^23 floats


def test_not_run_where_fma_may_round_twice(device, monkeypatch):
    monkeypatch.setattr(config, "FMA", "off")
    assert sqrt_probe.verdict(device, *ONE_BINADE).startswith("not run: ")


def test_a_step_that_misses_is_found(device, monkeypatch):
    if not dict(device.info.selftest).get("fma_f32", "").startswith("not fused"):
        pytest.skip("this device's Fma rounds once: its real step may well hold")
    monkeypatch.setattr(config, "FMA", "fused")  # lavapipe: the step's residual is rounded
    found = sqrt_probe.verdict(device, *ONE_BINADE)
    assert found.startswith("fails: ") and "of 8388608 floats" in found, found


def test_a_correctly_rounded_step_holds(device, monkeypatch):
    """The probe's reference and comparison: the step replaced by the library's correctly
    rounded float32 sqrt (Dekker's products, right on any device) holds over a binade and at
    the range's ends; moved by one ulp, it fails on every float."""
    if not device.info.float64:
        pytest.skip("no float64: the probe's reference")
    monkeypatch.setattr(config, "FMA", "fused")

    def exact(b, x):
        return roots._sqrt_direct(denormals.wrap(b.raw, denormals.PRESERVE), x)

    monkeypatch.setattr(roots, "one_step32", exact)
    assert sqrt_probe.verdict(device, *ONE_BINADE) == "holds"
    assert sqrt_probe.verdict(device, sqrt_probe.FIRST, sqrt_probe.FIRST + 4096) == "holds"
    assert sqrt_probe.verdict(device, sqrt_probe.LAST - 4096, sqrt_probe.LAST) == "holds"

    def off_by_one(b, x):
        word = b.bitcast(roots.K.i32, exact(b, x))
        return b.bitcast(roots.K.f32, b.binary(roots.Op.add, word, roots.const(b, roots.K.i32, 1)))

    monkeypatch.setattr(roots, "one_step32", off_by_one)
    assert sqrt_probe.verdict(device, 127 << 23, (127 << 23) + 999) == \
        "fails: 1000 of 1000 floats, the first x = 1.0"  # fmt: skip


def _sqrt_kernel_fmas(one_step):
    import math

    def kern(x, out):
        for i in range(x.size):
            out[i] = math.sqrt(x[i])

    from numba import float32

    controls = compiler.CodegenControls(fused_fma=True, sqrt_one_step=one_step,
                                        subnormals=denormals.PRESERVE)  # fmt: skip
    text = compiler.compile_kernel(kern, (float32[::1], float32[::1]), pipeline.Options(),
                                   narrowing.Mode(), codegen_controls=controls).disassemble()
    return text.count(" Fma ")


def test_the_verdict_alone_removes_the_rounding_decision():
    """With the verdict each float32 root in the code loses the decision's two Fma of four (a
    scalar call has two: the short path's and the general form's); the step needs a fused Fma
    and the verdict "holds" (launchers.sqrt_one_step)."""
    assert _sqrt_kernel_fmas(True) * 2 == _sqrt_kernel_fmas(False) > 0
    nvidia = types.SimpleNamespace(vendor_id=0x10DE, selftest=(("sqrt_f32_one_step", "holds"),))
    assert launchers.sqrt_one_step(nvidia)
    assert not launchers.sqrt_one_step(nvidia, "off")
    failing = types.SimpleNamespace(vendor_id=0x10DE,
                                    selftest=(("sqrt_f32_one_step", "fails: 3 of 9"),))
    assert not launchers.sqrt_one_step(failing)
    other = types.SimpleNamespace(vendor_id=0x8086, selftest=(("sqrt_f32_one_step", "holds"),))
    assert not launchers.sqrt_one_step(other)
