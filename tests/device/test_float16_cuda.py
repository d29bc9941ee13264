"""numba.cuda's cuda.fp16 names on float16 values, against NumPy and the exact fused
multiply-add.

The oracle and its rules are test_float16.py's (NumPy; NaN matches NaN).
"""
import math

import numpy as np
import pytest
from conftest import run_python
from float16_support import SPECIALS, random_halves
from half_support import assert_same, assert_ulps, every_pair
from half_support import bits as _bits
from numba.core.errors import TypingError

from numba_vulkan import cuda
from numba_vulkan.errors import VulkanUnsupportedError

pytestmark = [
    pytest.mark.device,
    pytest.mark.usefixtures("device"),
]


# ---------------------------------------------------------------- numba.cuda's cuda.fp16


@cuda.jit
def _fp16_kernel(out, flags, a, b, c):
    i = cuda.grid(1)
    if i < a.size:
        x, y, z = a[i], b[i], c[i]
        out[0, i] = cuda.fp16.hadd(x, y)
        out[1, i] = cuda.fp16.hsub(x, y)
        out[2, i] = cuda.fp16.hmul(x, y)
        out[3, i] = cuda.fp16.hdiv(x, y)
        out[4, i] = cuda.fp16.hneg(x)
        out[5, i] = cuda.fp16.habs(x)
        out[6, i] = cuda.fp16.hfma(x, y, z)
        out[7, i] = cuda.fp16.hsqrt(x)
        out[8, i] = cuda.fp16.hrcp(x)
        out[9, i] = cuda.fp16.hceil(x)
        out[10, i] = cuda.fp16.hfloor(x)
        out[11, i] = cuda.fp16.htrunc(x)
        out[12, i] = cuda.fp16.hrint(x)
        out[13, i] = cuda.fp16.hmax(x, y)
        out[14, i] = cuda.fp16.hmin(x, y)
        out[15, i] = cuda.fp16.hexp(x)
        out[16, i] = cuda.fp16.hexp2(x)
        out[17, i] = cuda.fp16.hexp10(x)
        out[18, i] = cuda.fp16.hlog(x)
        out[19, i] = cuda.fp16.hlog2(x)
        out[20, i] = cuda.fp16.hlog10(x)
        out[21, i] = cuda.fp16.hsin(x)
        out[22, i] = cuda.fp16.hcos(x)
        out[23, i] = cuda.fp16.htanh(x)
        out[24, i] = cuda.fp16.hrsqrt(x)
        flags[0, i] = cuda.fp16.heq(x, y)
        flags[1, i] = cuda.fp16.hne(x, y)
        flags[2, i] = cuda.fp16.hge(x, y)
        flags[3, i] = cuda.fp16.hgt(x, y)
        flags[4, i] = cuda.fp16.hle(x, y)
        flags[5, i] = cuda.fp16.hlt(x, y)


def _exact_fma(a, b, c):
    """RN16(a * b + c) from the exact sum (integers in units of 2^-48; rounding it to
    float64 first is harmless: 53 >= 2 * 11 + 2)."""
    out = []
    for x, y, z in zip(a.tolist(), b.tolist(), c.tolist()):
        if not (math.isfinite(x) and math.isfinite(y) and math.isfinite(z)):
            with np.errstate(all="ignore"):
                out.append(np.float16(np.float64(x) * y + z))
            continue
        exact = round(x * 2**24) * round(y * 2**24) + round(z * 2**24) * 2**24
        with np.errstate(over="ignore"):
            out.append(np.float16(float(exact) * 2.0**-48))
    return np.array(out, np.float16)


def _fma_traps():
    """Triples where rounding a * b + c through float32 (1 + 2^-10 + 2^-11 - 2^-31 becomes a
    tie) or rounding a * b first gives another float16 than the fused result."""
    one = 1 + 2.0**-10
    rows = [(one, 2.0**-11 * (1 - 2.0**-10), one), (-one, 2.0**-11 * (1 - 2.0**-10), -one)]
    rng = np.random.default_rng(11)
    x, y = rng.uniform(1, 2, 4000).astype(np.float16), rng.uniform(1, 2, 4000).astype(np.float16)
    rows += list(zip(x, y, -(x * y)))  # the product's rounding error alone
    a, b, c = (np.array(col, np.float16) for col in zip(*rows))
    return a, b, c


def test_cuda_fp16_functions():
    rng = np.random.default_rng(7)
    n = 1 << 16
    a, b, c = random_halves(rng, n), random_halves(rng, n), random_halves(rng, n)
    ta, tb, tc = _fma_traps()
    sa, sb = every_pair(SPECIALS)
    a, b = np.concatenate([a, ta, sa]), np.concatenate([b, tb, sb])
    c = np.concatenate([c, tc, random_halves(rng, sa.size)])
    out = np.zeros((25, a.size), np.float16)
    flags = np.zeros((6, a.size), np.bool_)
    _fp16_kernel[(a.size + 63) // 64, 64](out, flags, a, b, c)
    fused = _exact_fma(a, b, c)
    with np.errstate(all="ignore"):
        exact = [(a + b, "hadd"), (a - b, "hsub"), (a * b, "hmul"), (a / b, "hdiv"),
                 (-a, "hneg"), (np.abs(a), "habs"), (fused, "hfma"), (np.sqrt(a), "hsqrt"),
                 (np.float16(1) / a, "hrcp"), (np.ceil(a), "hceil"), (np.floor(a), "hfloor"),
                 (np.trunc(a), "htrunc"), (np.rint(a), "hrint")]  # fmt: skip
        for k, (want, name) in enumerate(exact):
            assert_same(out[k], want, f"cuda.fp16.{name}", (a, b, c))
        # CUDA's __hmax/__hmin: the number where one is NaN, +0.0 above -0.0
        zeros = (a == 0) & (b == 0)
        both_negative, one_negative = np.signbit(a) & np.signbit(b), np.signbit(a) | np.signbit(b)
        hmax = np.where(zeros, np.where(both_negative, a, np.abs(a)), np.fmax(a, b))
        hmin = np.where(zeros, np.where(one_negative, -np.abs(a), a), np.fmin(a, b))
        assert_same(out[13], hmax, "cuda.fp16.hmax", (a, b))
        assert_same(out[14], hmin, "cuda.fp16.hmin", (a, b))
        x32, x64 = a.astype(np.float32), a.astype(np.float64)
        approx = [(np.exp(x32), "hexp"), (np.exp2(x32), "hexp2"), (10.0**x64, "hexp10"),
                  (np.log(x32), "hlog"), (np.log2(x32), "hlog2"), (np.log10(x32), "hlog10"),
                  (np.sin(x32), "hsin"), (np.cos(x32), "hcos"), (np.tanh(x32), "htanh"),
                  (1 / np.sqrt(x64), "hrsqrt")]  # fmt: skip
        for k, (want, name) in enumerate(approx, start=15):
            assert_ulps(out[k], want.astype(np.float16), 1, f"cuda.fp16.{name}", (a,))
        for k, (want, name) in enumerate([(a == b, "heq"), ((a < b) | (a > b), "hne"),
                                          (a >= b, "hge"), (a > b, "hgt"), (a <= b, "hle"),
                                          (a < b, "hlt")]):  # fmt: skip
            assert_same(flags[k], want, f"cuda.fp16.{name}", (a, b))
        # the traps tell a fused result from the others
        unfused = (ta * tb) + tc
        via32 = (ta.astype(np.float32) * tb + tc).astype(np.float16)
        want = fused[n: n + ta.size]
        assert (_bits(unfused) != _bits(want)).sum() > 1000
        assert _bits(via32)[0] != _bits(want)[0] and _bits(via32)[1] != _bits(want)[1]


def test_cuda_fp16_refusals():
    assert hasattr(cuda.fp16, "hfma") and not hasattr(cuda.fp16, "__hadd_sat")
    with pytest.raises(VulkanUnsupportedError, match="__float2half_rz"):
        cuda.fp16.__float2half_rz  # noqa: B018
    with pytest.raises(NotImplementedError, match="inside a kernel"):
        cuda.fp16.hadd(np.float16(1), np.float16(2))

    @cuda.jit
    def bad(out, a):
        out[0] = cuda.fp16.hadd(a, a)

    with pytest.raises((TypingError, VulkanUnsupportedError), match="float16"):
        bad[1, 1](np.zeros(1, np.float16), np.zeros(2, np.float16))


def test_cuda_fp16_first_loaded_inside_a_kernel():
    """cuda.fp16 is imported on first use, which can be in the middle of typing a kernel:
    its templates must be there for that kernel (a fresh process, after another kernel)."""
    out = run_python(
        "import numpy as np\n"
        "from numba_vulkan import cuda\n"
        "@cuda.jit\n"
        "def first(o):\n"
        "    o[0] = 1\n"
        "first[1, 1](np.zeros(1, np.float32))\n"
        "@cuda.jit\n"
        "def k(o, a):\n"
        "    o[0] = cuda.fp16.hadd(a[0], a[0])\n"
        "o = np.zeros(1, np.float16)\n"
        "k[1, 1](o, np.ones(1, np.float16))\n"
        "print(o[0])\n", timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == "2.0", out.stdout + out.stderr

