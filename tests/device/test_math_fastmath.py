"""fastmath=True: float32 exp/log/sin/cos/tan/tanh and sqrt (both widths) become the driver's
GLSL.std.450 built-ins (mathlib/fast.py) and the kernel's float ops lose NoContraction; the
accurate path keeps NoContraction on every float op; functions without a built-in stay on the
accurate library under fastmath."""

import math

import numpy as np
import pytest
from conftest import requires_feature
from math_support import _kernel, run_kernel

pytestmark = [pytest.mark.device, pytest.mark.usefixtures("device")]

FAST32 = {"math.exp(x)": ("Exp", np.exp, (-20, 20)), "math.log(x)": ("Log", np.log, (0.01, 100)),
          "math.sin(x)": ("Sin", np.sin, (-3, 3)), "math.cos(x)": ("Cos", np.cos, (-3, 3)),
          "math.tan(x)": ("Tan", np.tan, (-1.2, 1.2)), "math.tanh(x)": ("Tanh", np.tanh, (-5, 5)),
          "math.sqrt(x)": ("Sqrt", np.sqrt, (0, 100))}  # fmt: skip


def _disassembly(expr, dtype, fastmath):
    from numba import from_dtype

    t = from_dtype(np.dtype(dtype))
    return _kernel([expr], 1, fastmath=fastmath).compile((t[::1], t[::1])).disassemble()


@pytest.mark.parametrize("expr", sorted(FAST32))
def test_float32_builtins(expr):
    inst, ref, (lo, hi) = FAST32[expr]
    text = _disassembly(expr, np.float32, True)
    assert f" {inst} " in text and "NoContraction" not in text, text[-2000:]
    x = np.random.default_rng(5).uniform(lo, hi, 2000).astype(np.float32)
    out = run_kernel(expr, x, fastmath=True)
    want = ref(x.astype(np.float64))
    # loose but not wrong: Vulkan allows 3 ulp (exp, log) and 2^-11 absolute (sin, cos)
    assert np.all(np.abs(out - want) <= 2.0**-11 + 2.0**-18 * np.abs(want)), expr


def test_accurate_path_has_no_contraction_and_no_builtin():
    text = _disassembly("math.exp(x) * x + x", np.float32, False)
    assert "NoContraction" in text and " Exp " not in text


@requires_feature("float64")
def test_float64_keeps_the_library_but_sqrt():
    """GLSL.std.450 has no float64 transcendentals: float64 exp stays accurate under fastmath;
    float64 Sqrt exists and is used."""
    x = np.linspace(-30, 30, 1001)
    out = run_kernel("math.exp(x)", x, fastmath=True)
    assert np.all(np.abs(out - np.exp(x)) <= np.spacing(np.exp(x)))
    assert " Sqrt " in _disassembly("math.sqrt(x)", np.float64, True)
    assert " Exp " not in _disassembly("math.exp(x)", np.float64, True)


def test_pow_stays_accurate():
    """No built-in is used for pow (GLSL's Pow is undefined for a negative base): the kernel
    keeps exact float ops, erf's fastmath form included."""
    x = np.array([-2.0, -3.0, 0.5, 2.0], np.float32)
    out = run_kernel("x ** np.float32(2.0) + math.erf(x)", x, fastmath=True)
    want = (x.astype(np.float64) ** 2 + np.array([math.erf(v) for v in x])).astype(np.float32)
    assert np.allclose(out, want, rtol=2e-7), out
    assert "NoContraction" in _disassembly("x ** np.float32(2.0) + math.erf(x)", np.float32, True)


def test_float32_erf_on_the_exp_builtin():
    """float32 erf under fastmath: the library's two intervals with e^L by the driver's Exp
    (erf.py), no exact building block, so the kernel keeps fastmath's freedoms; within 4 ulp
    here (lavapipe's Exp; 1.6 measured), the special values as C99's. float64 erf stays
    accurate."""
    text = _disassembly("math.erf(x)", np.float32, True)
    assert " Exp " in text and "NoContraction" not in text, text[-2000:]
    rng = np.random.default_rng(7)
    x = np.concatenate([rng.uniform(-4.5, 4.5, 20000), np.linspace(-1, 1, 2001),
                        [0.84375, -0.84375, 3.92, 4.0, 1e-30, 2.0**-125]]).astype(np.float32)  # fmt: skip
    out = run_kernel("math.erf(x)", x, fastmath=True)
    want = np.array([math.erf(v) for v in x.astype(np.float64)])
    bad = np.abs(out - want) > 4 * np.spacing(np.abs(want).astype(np.float32))
    assert not bad.any(), (x[bad][:5], out[bad][:5])
    special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan], np.float32)
    got = run_kernel("math.erf(x)", special, fastmath=True)
    np.testing.assert_array_equal(got, [0.0, -0.0, 1.0, -1.0, np.nan])
    assert np.signbit(got[1])
    assert " Exp " not in _disassembly("math.erf(x)", np.float64, True)


def test_numba_flag_sets():
    """fastmath={'afn', ...} uses the built-ins; a set without 'afn' only relaxes the arithmetic
    (math calls stay accurate); an unknown flag is refused."""
    import numba_vulkan as nv
    from numba import float32

    sig = (float32[::1], float32[::1])
    afn = _kernel(["math.exp(x)"], 1, fastmath={"afn", "contract"}).compile(sig).disassemble()
    assert " Exp " in afn
    contract = _kernel(["math.exp(x)"], 1, fastmath={"contract"}).compile(sig).disassemble()
    assert " Exp " not in contract
    x = np.linspace(-5, 5, 101).astype(np.float32)
    out = run_kernel("math.exp(x)", x, fastmath={"nsz"})
    assert np.array_equal(out, run_kernel("math.exp(x)", x))
    with pytest.raises(ValueError, match="fastmath flag"):
        nv.jit(fastmath={"fastest"})
