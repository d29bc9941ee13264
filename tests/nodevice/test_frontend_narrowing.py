"""What integer narrowing proves on the front end's real output (docs/narrowing.md).

The pass relies on two things the front end provides: array extents in the
32-bit index specialisation are i32 parameters named ``NAME.shape[k]`` (never
negative), and loops test their counter in the block that branches. If either
changes, these counts change: the figures in docs/narrowing.md come from here.
"""

import numba
import numpy as np
from kir_host import EXACT, INDEX64, lower

import numba_vulkan as nv
from numba_vulkan import _core


def matmul(a, b, c):
    i = nv.global_id(0)
    j = nv.global_id(1)
    if i < c.shape[0] and j < c.shape[1]:
        acc = np.float32(0)
        for k in range(a.shape[1]):
            acc += a[i, k] * b[k, j]
        c[i, j] = acc


def stencil5(a, out):
    i = nv.global_id(0)
    j = nv.global_id(1)
    n = a.shape[0]
    m = a.shape[1]
    if i < n and j < m:
        if i == 0 or j == 0 or i == n - 1 or j == m - 1:
            out[i, j] = a[i, j]
        else:
            out[i, j] = a[i, j] - 0.25 * (a[i - 1, j] + a[i + 1, j] + a[i, j - 1] + a[i, j + 1])


def mandelbrot(xs, ys, max_iter, counts):
    i = nv.global_id(0)
    j = nv.global_id(1)
    if i < counts.shape[0] and j < counts.shape[1]:
        x0 = xs[j]
        y0 = ys[i]
        zr = x0 - x0
        zi = zr
        n = 0
        while n < max_iter:
            zr2 = zr * zr
            zi2 = zi * zi
            if zr2 + zi2 > 4.0:
                break
            zi = (zr + zr) * zi + y0
            zr = zr2 - zi2 + x0
            n += 1
        counts[i, j] = n


def counts(fn, args, mode=EXACT):
    module = lower(fn, [numba.typeof(a) for a in args], mode).module
    narrowed = _core.narrow_ints(module)
    return _core.count_wide_int_ops(module), _core.count_wide_int_ops(narrowed)


F32 = np.zeros((4, 4), np.float32)
F64 = np.zeros((4, 4))
XS = np.zeros(4)
CNT = np.zeros((4, 4), np.int32)


def test_matmul_index_math_is_all_32_bit():
    assert counts(matmul, (F32, F32, F32)) == (20, 0)


def test_stencil_index_math_is_all_32_bit():
    assert counts(stencil5, (F64, F64)) == (40, 0)


def test_mandelbrot_counter_bounded_by_an_int64_scalar():
    """The 32-bit-index specialisation passes an int64 max_iter in 32 bits (the dispatcher
    takes the 64-bit one for values beyond int32), so n counts in 32 bits as with an int32;
    the 64-bit specialisation keeps n in 64 bits (n < max_iter may count to 2^63 - 1)."""
    assert counts(mandelbrot, (XS, XS, 200, CNT)) == (20, 0)
    assert counts(mandelbrot, (XS, XS, np.int32(200), CNT)) == (17, 0)
    assert counts(mandelbrot, (XS, XS, 200, CNT), INDEX64) == (43, 43)


def test_64_bit_index_specialisation_keeps_its_index_math():
    before, after = counts(matmul, (F32, F32, F32), INDEX64)
    assert after < before and after > 0  # i64 extents bound nothing below 2^63
