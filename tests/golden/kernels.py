"""The golden corpus: one small kernel per language feature, compiled without a device.

Each entry of CASES is (kernel function, argument types). tests/golden/regen.py
writes each kernel's KIR (``<name>.kir``, as the front end built it) and SPIR-V
assembly (``<name>.spvasm``, after the backend and its optimiser) next to this
file; tests/nodevice/test_golden.py compiles them again and compares, so a change
in code generation shows up as a diff of these files in review. Compilation uses
the fixed description of ``kernel.compile(argtypes)`` without a device: float64
and int64 kept, 128 bytes of push constants, no float controls (docs/testing.md).

Keep the kernels small (a reviewer reads their output) and add one when a
language feature is added; keep existing ones unchanged so their diffs mean
something.
"""

import collections
import math

import numpy as np
from numba import boolean, complex64, complex128, float32, float64, from_dtype, int32, int64
from numba import types, uint8, uint32

import numba_vulkan as nv

# ---------------------------------------------------------------- scalars and control flow


def arith(out, a, b):
    i = nv.global_id(0)
    if i < out.size:
        x, y = a[i], b[i]
        out[i] = (x // 3 + x % -5) * y - (x << 2) + (x >> 1) ^ (y & 7) | -x
        out[i] += abs(x - y) + min(x, y) + max(x, 1)


def float_arith(out, a, s):
    i = nv.global_id(0)
    if i < out.size:
        x = a[i]
        out[i] = x * s + x / (s + 1) - x // 2 + x % 1.5 + float32(x > s)


def control_flow(out, n):
    i = nv.global_id(0)
    if i >= out.size:
        return
    acc = 0
    k = i
    while k > 0:
        if k % 2 == 0:
            k //= 2
            continue
        elif k % 3 == 0:
            break
        k = 3 * k + 1
        acc += 1
    for j in range(n, 0, -2):
        acc += j if j & 1 else -j
    out[i] = acc


# ---------------------------------------------------------------- functions


@nv.jit(device=True)
def _scale(x, factor=2):
    if x < 0:
        return -x * factor, True
    return x * factor, False


@nv.jit(device=True)
def _combine(x, y):
    s, neg = _scale(x)
    t, _ = _scale(y, factor=3)
    return s - t if neg else s + t


def device_functions(out, a):
    i = nv.global_id(0)
    if i < out.size:
        out[i] = _combine(a[i], i)


def math_calls(out, a):
    i = nv.global_id(0)
    if i < out.size:
        x = a[i]
        out[i] = math.sqrt(abs(x)) + math.floor(x) + np.fmin(x, 1.0) + math.copysign(2.0, x)


def math_library(out, a):
    i = nv.global_id(0)
    if i < out.size:
        out[i] = math.exp(a[i]) + math.log1p(abs(a[i]))


# ---------------------------------------------------------------- arrays


def views(out, m):
    i = nv.global_id(0)
    if i < out.shape[0]:
        row = m[i, ::2]
        col = m.T[i % m.shape[1]]
        s = 0.0
        for v in row:
            s += v
        for k, v in enumerate(col[1:-1]):
            s += k * v
        out[i] = s + row.sum() + len(col)


Pair = collections.namedtuple("Pair", "lo hi")


def tuples(out, a):
    i = nv.global_id(0)
    if i < out.size:
        p = Pair(a[i], a[i] * 2)
        q = (p.hi, p.lo, 3)
        lo, hi, c = q
        out[i] = lo - hi + c + q[2]


POINT = np.dtype([("x", np.float32), ("y", np.int64), ("flag", np.uint8)], align=True)


def records(out, pts):
    i = nv.global_id(0)
    if i < out.size:
        p = pts[i]
        out[i] = p.x * p.y
        if p.flag:
            pts[i].y = p.y + 1


def complex_numbers(out, z):
    i = nv.global_id(0)
    if i < out.size:
        w = z[i] * z[i].conjugate() + 1j
        out[i] = abs(w) + w.real - w.imag + (z[i] == w)


SMALL = np.array([3, 1, 4, 1, 5, 9, 2, 6], dtype=np.int32)
LARGE = np.arange(300, dtype=np.float32) * 0.5
OFFSET = 7
SHAPE = (2, 3)


def constants(out):
    i = nv.global_id(0)
    if i < out.size:
        out[i] = SMALL[i % 8] + LARGE[i % 300] + OFFSET + SHAPE[1] + len(LARGE)


# ---------------------------------------------------------------- arguments


def packed_arguments(out, t, z):
    i = nv.global_id(0)
    if i < out.size:
        a, b = t
        out[i] = a * i + b + (z * i).imag


# ---------------------------------------------------------------- parallel


def shared_memory(out, a):
    buf = nv.shared.array(64, float32)
    t = nv.local_id(0)
    g = nv.group_id(0)
    buf[t] = a[g * 64 + t]
    nv.barrier()
    step = 32
    while step > 0:
        if t < step:
            buf[t] += buf[t + step]
        nv.barrier()
        step //= 2
    if t == 0:
        out[g] = buf[0]


def local_arrays(out):
    i = nv.global_id(0)
    tmp = nv.local.array(4, int32)
    for k in range(4):
        tmp[k] = i * k
    if i < out.size:
        out[i] = tmp[0] + tmp[3]


def atomics(hist, data):
    i = nv.global_id(0)
    if i < data.size:
        nv.atomic.add(hist, data[i] % hist.size, 1)
        nv.atomic.max(hist, 0, data[i])


def subgroups(out, a):
    i = nv.global_id(0)
    if i < a.size:
        v = nv.subgroup.sum(a[i])
        if nv.subgroup.elect():
            out[i // nv.subgroup.size()] = v + nv.subgroup.shuffle_xor(a[i], 1)


def bools_and_bytes(out, flags, bytes_):
    i = nv.global_id(0)
    if i < out.size:
        out[i] = uint8(bytes_[i] + 200) if flags[i] and not flags[-1] else bytes_[i]


CASES = {
    "arith": (arith, (int64[::1], int64[::1], int64[::1])),
    "float_arith": (float_arith, (float32[::1], float32[::1], float32)),
    "control_flow": (control_flow, (int64[::1], int64)),
    "device_functions": (device_functions, (int64[::1], int64[::1])),
    "math_calls": (math_calls, (float64[::1], float64[::1])),
    "math_library": (math_library, (float32[::1], float32[::1])),
    "views": (views, (float64[::1], float64[:, ::1])),
    "tuples": (tuples, (int32[::1], int32[::1])),
    "records": (records, (float64[::1], from_dtype(POINT)[::1])),
    "complex": (complex_numbers, (float64[::1], complex128[::1])),
    "constants": (constants, (float32[::1],)),
    "packed_arguments": (packed_arguments, (float64[::1], types.UniTuple(int64, 2), complex64)),
    "shared_memory": (shared_memory, (float32[::1], float32[::1])),
    "local_arrays": (local_arrays, (int64[::1],)),
    "atomics": (atomics, (uint32[::1], uint32[::1])),
    "subgroups": (subgroups, (int32[::1], int32[::1])),
    "bools_and_bytes": (bools_and_bytes, (uint8[::1], boolean[::1], uint8[::1])),
}


def array_tuples(arrays, scale):
    x, out = arrays
    i = nv.global_id(0)
    if i < out.size:
        out[i] = x[i] * scale


CASES["array_tuples"] = (array_tuples, (types.UniTuple(float32[::1], 2), float32))


# ---------------------------------------------------------------- @intrinsic (LLVM IR translated)


def _popcount_intrinsic():
    from numba.extending import intrinsic

    @intrinsic
    def popcount(typingctx, x):
        def codegen(context, builder, sig, args):
            return builder.ctpop(args[0])

        return x(x), codegen

    return popcount


_popcount = _popcount_intrinsic()


def llvm_intrinsic(out, a):
    i = nv.global_id(0)
    if i < out.size:
        out[i] = _popcount(a[i])


CASES["llvm_intrinsic"] = (llvm_intrinsic, (uint32[::1], uint32[::1]))
