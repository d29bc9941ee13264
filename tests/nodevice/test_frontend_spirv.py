"""Front end + backend: every test kernel compiles to SPIR-V that the validator accepts,
in every narrowing mode."""

import numba
import pytest
from kir_host import EXACT, INTS, NARROW, lower
from test_frontend_kernels import (
    _and_or,
    _arrays,
    _early_return,
    _globals_and_tuples,
    _inplace_and_tuple_index,
    _intrinsics,
    _loops,
    _saxpy,
)
from test_frontend_operators import _f32_pow, _float_ops, _int_div_raw, _int_ops, _int_pow, _shifts

from numba_vulkan import _core

COMPILE_CASES = [
    (_int_ops, [numba.int64[:], numba.int64, numba.int64]),
    (_int_div_raw, [numba.int64[:], numba.int64, numba.int64]),
    (_shifts, [numba.int32[:], numba.int32, numba.int32]),
    (_int_pow, [numba.int64[:], numba.int64, numba.int64]),
    (_float_ops, [numba.float64[:], numba.float64, numba.float64]),
    (_f32_pow, [numba.float32[:], numba.float32, numba.float32]),
    (_loops, [numba.int64[:], numba.int64, numba.int64]),
    (_early_return, [numba.int64[:], numba.int64]),
    (_and_or, [numba.int64[:], numba.int64, numba.int64, numba.boolean]),
    (_arrays, [numba.float64[:], numba.int64[:, :], numba.int32[:, :, :], numba.boolean[:]]),
    (_saxpy, [numba.float32[:]] * 3 + [numba.float32]),
    (_intrinsics, [numba.int64[:]]),
    (_globals_and_tuples, [numba.float64[:], numba.int64, numba.int64]),
    (_inplace_and_tuple_index, [numba.float64[:], numba.int32[:, :], numba.int64]),
]


@pytest.mark.parametrize("fn,argtypes", COMPILE_CASES, ids=[c[0].__name__ for c in COMPILE_CASES])
@pytest.mark.parametrize("mode", [INTS, EXACT, NARROW], ids=["ints", "exact", "narrow"])
def test_kernels_compile_to_valid_spirv(fn, argtypes, mode):
    lk = lower(fn, argtypes, mode)
    lk.module.verify()
    ck = _core.compile(lk.module)
    assert ck.param_size == lk.param_size
    _core.validate(ck.words)


def test_float_controls_are_requested_at_the_widths_used():
    """Without fastmath a kernel asks the driver to keep signed zeros, inf/NaN and
    subnormals at each float width it computes in (NVIDIA flushes float32 subnormals
    otherwise); with fastmath it asks for neither."""
    from numba import float32, float64

    from numba_vulkan import compiler, narrowing
    from numba_vulkan.frontend.mathlib import denormals
    from numba_vulkan.typing import pipeline

    def half(a, out):
        out[0] = a[0] * 0.5

    argtypes = (float32[::1], float64[::1])
    controls = compiler.CodegenControls(
        nan_preserve=(16, 32, 64), denorm_preserve=(32, 64), subnormals=denormals.PRESERVE
    )
    text = compiler.compile_kernel(
        half, argtypes, pipeline.Options(), narrowing.Mode(), codegen_controls=controls
    ).disassemble()
    for width in (32, 64):
        assert f"OpExecutionMode %main SignedZeroInfNanPreserve {width}" in text
        assert f"OpExecutionMode %main DenormPreserve {width}" in text
    assert "SignedZeroInfNanPreserve 16" not in text  # no float16 in the kernel
    fast = compiler.compile_kernel(
        half, argtypes, pipeline.Options(fastmath=True), narrowing.Mode(), codegen_controls=controls
    ).disassemble()
    assert "DenormPreserve" not in fast and "SignedZeroInfNanPreserve" not in fast


def test_float32_division_with_fused_fma():
    """NVIDIA's controls (divide_f32_in_f64 and fused_fma): a kernel's float32 `/` is the
    driver's reciprocal refined with six Fma, and the float64 division runs only in a branch
    of its own (kir/float_division.h); the quotient joins in one OpPhi. Without fused_fma the
    float64 way has no branch; fastmath keeps the driver's division alone."""
    from numba import float32

    from numba_vulkan import compiler, narrowing
    from numba_vulkan.typing import pipeline

    def div(x, y, out):
        out[0] = x[0] / y[0]

    def text(fastmath=False, **controls):
        c = compiler.CodegenControls(divide_f32_in_f64=True, **controls)
        options = pipeline.Options(fastmath=fastmath)
        return compiler.compile_kernel(div, (float32[::1],) * 3, options, narrowing.Mode(),
                                       codegen_controls=c).disassemble()

    fused = text(fused_fma=True)
    assert fused.count(" Fma ") == 6 and fused.count("OpFDiv %float") == 1
    assert fused.count("OpFDiv %double") == 1 and fused.count("OpFConvert") == 3
    assert fused.count("OpBranchConditional") == 1 and fused.count("OpPhi %float") == 1
    plain = text(fused_fma=False)
    assert " Fma " not in plain and "OpBranchConditional" not in plain
    assert plain.count("OpFDiv %double") == 1
    fast = text(fastmath=True, fused_fma=True)
    assert " Fma " not in fast and "OpFDiv %double" not in fast and fast.count("OpFDiv %float") == 1


def test_fused_fma_makes_exact_products_from_fma():
    """With CodegenControls.fused_fma (NVIDIA, AMD: launchers.fused_fma) the math library builds
    Dekker's products and its polynomials from GLSL.std.450 Fma; without it, from no Fma at all
    (Vulkan does not promise that Fma rounds once: lavapipe's does not)."""
    import math

    from numba import float64

    from numba_vulkan import compiler, launchers, narrowing
    from numba_vulkan.typing import pipeline

    def root(a, out):
        out[0] = math.sqrt(a[0]) + math.exp(a[1])

    def text(fused):
        controls = compiler.CodegenControls(fused_fma=fused)
        return compiler.compile_kernel(root, (float64[::1], float64[::1]), pipeline.Options(),
                                       narrowing.Mode(), codegen_controls=controls).disassemble()

    assert " Fma " in text(True)
    assert " Fma " not in text(False)

    class Info:
        vendor_id = 0x10DE

    assert launchers.fused_fma(Info())
    assert not launchers.fused_fma(Info(), "off")
    Info.vendor_id = 0x10005  # Mesa (lavapipe)
    assert not launchers.fused_fma(Info())
    assert launchers.fused_fma(Info(), "fused")
