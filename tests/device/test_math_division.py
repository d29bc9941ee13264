"""The math library's own divisions take the driver's quotient (mathlib/dd.driver_div, KIR
`div driver`): on a device whose float32 division is loose (NVIDIA) they are not rewritten into
float64 divisions as a kernel's `/` is (kir/float_division.h), and its results must stay within
their bounds with a quotient as loose as Vulkan allows.

lavapipe divides exactly and is not given the float64 rewrite, so here every test forces both,
as CodegenControls for an NVIDIA device would be, plus loose_division (config.DRIVER_DIV =
"loose": each driver quotient moved by 2 ulp; float64 by 2 ulp of float32) and the flushing of
float32 subnormals (config.SUBNORMALS32 = "simulate"). The accuracy tests of test_math_ulp.py,
test_math_gamma.py and test_math_exact.py's correctly rounded sqrt run again under them."""

import numpy as np
import pytest
from math_support import _kernel, run_kernel
from test_math_exact import test_sqrt_many  # noqa: F401  (run again here, under `nvidia_like`)
from test_math_gamma import test_gamma_ulp, test_lgamma_ulp  # noqa: F401
from test_math_ulp import test_atan2_ulp, test_pow_ulp, test_ulp  # noqa: F401

from numba_vulkan import config, launchers

pytestmark = [pytest.mark.device, pytest.mark.usefixtures("device")]


@pytest.fixture(autouse=True)
def nvidia_like(monkeypatch):
    real = launchers.codegen_controls
    monkeypatch.setattr(config, "SUBNORMALS32", "simulate")
    monkeypatch.setattr(launchers, "codegen_controls", lambda d: real(d)._replace(
        divide_f32_in_f64=True, loose_division=True))  # fmt: skip


def test_library_divisions_stay_float32():
    """log's s = f/(2+f) (dd.div: the driver's reciprocal, corrected) stays a float32 OpFDiv
    without the NVIDIA divisor scaling, once in the short path and once in the block of the
    other operands (explog.log); the kernel's own `/` is still divided in float64."""
    x = np.linspace(0.5, 3, 64, dtype=np.float32)
    out = np.zeros_like(x)
    lib = _kernel(["math.log(x)"], 1)
    lib.forall(x.size)(x, out)
    text = lib.inspect_spirv(x, out)
    assert text.count("OpFDiv %float") == 2 and "OpFDiv %double" not in text, text
    assert "OpFConvert %double" not in text  # no float64 at all
    mixed = _kernel(["math.log(x) / x"], 1)
    mixed.forall(x.size)(x, out)
    text = mixed.inspect_spirv(x, out)
    assert text.count("OpFDiv %float") == 2 and text.count("OpFDiv %double") == 1, text
    ref = np.log(x.astype(np.float64)) / x
    assert np.all(np.abs(out - ref) <= 2 * np.spacing(np.abs(ref).astype(np.float32)))


def test_loose_division_is_loose():
    """The simulation itself: a quotient the library leaves uncorrected moves by 2 ulp (the
    tests above would prove nothing if it did not)."""
    from numba_vulkan.frontend.mathlib import dd

    x = np.linspace(1, 3, 256, dtype=np.float32)
    q = run_kernel("math.log(x)", x)  # warm: the kernel above compiles with loose division
    saved = dd.div
    try:
        dd.div = lambda b, x, y, moderate=False: dd.driver_div(b, x, y)  # no Newton correction
        rough = run_kernel("math.log(x)", x)
    finally:
        dd.div = saved
    assert not np.array_equal(q, rough)
