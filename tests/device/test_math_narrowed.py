"""float64 math on a device without float64 (simulated on lavapipe by a DeviceInfo with
float64=False, as test_runtime.py does): by default the kernel computes its float64 values,
math included, in float32 with one VulkanPrecisionWarning, and gives exactly what the float32
kernel gives on the same (rounded) operands; narrow=False refuses it with VulkanSupportError;
narrow="floats" asks for float32 on any device, without the warning."""

import dataclasses
import warnings

import numpy as np
import pytest
from math_support import operands, run_kernel

import numba_vulkan as nv

pytestmark = [pytest.mark.device]

EXPR = ("math.exp(x) + math.sin(x) * math.gamma(x) - math.log1p(abs(x)) + math.erf(x)"
        " + math.sqrt(abs(x)) + math.atan2(x, 2.0) + x ** 1.5")  # fmt: skip


@pytest.fixture
def no_float64(device, monkeypatch):
    monkeypatch.setattr(device, "info", dataclasses.replace(device.info, float64=False))
    return device


def _x():
    return operands(np.float64, 300, lo_exp=-30, hi_exp=8)


def test_float64_math_in_float32_with_a_warning(no_float64):
    x = _x()
    with pytest.warns(nv.VulkanPrecisionWarning, match="computes its float64 values in float32"):
        out = run_kernel(EXPR, x)
    assert out.dtype == np.float64
    with np.errstate(all="ignore"):
        ref = run_kernel(EXPR, x.astype(np.float32)).astype(np.float64)
    assert np.array_equal(out, ref, equal_nan=True)


def test_float64_math_refused_with_narrow_false(no_float64):
    with pytest.raises(nv.VulkanSupportError, match="float64"):
        run_kernel("math.exp(x)", _x(), narrow=False)


def test_narrow_floats_asks_for_float32_math(device):
    x = _x()
    with warnings.catch_warnings():
        warnings.simplefilter("error", nv.VulkanPrecisionWarning)
        out = run_kernel(EXPR, x, narrow="floats")
    # (float constants such as 2.0 are float64 to Numba: the float32 kernel narrows too)
    with np.errstate(all="ignore"):
        ref = run_kernel(EXPR, x.astype(np.float32), narrow="floats").astype(np.float64)
    assert np.array_equal(out, ref, equal_nan=True)
