"""NumPy's comparison, logical and bitwise ufuncs, shifts, invert and reciprocal on scalars in
kernels, bit for bit against numba.njit, over operands of mixed types (NumPy's loop choice,
e.g. int8 with uint8 as int16, and the exact mixed int64/uint64 comparisons).

benchmarks/ has no sweep of these: this file covers 8 type pairs per ufunc; all 64 pairs of
the 8 types were checked once by hand (2026-12-01: none wrong, none refused).
"""

import numba
import numpy as np
import pytest
from conftest import requires_feature

import numba_vulkan as nv

pytestmark = [pytest.mark.device, pytest.mark.usefixtures("device"),
              requires_feature("int64"), requires_feature("float64")]  # fmt: skip

BINARY = [np.less, np.less_equal, np.greater, np.greater_equal, np.equal, np.not_equal,
          np.logical_and, np.logical_or, np.logical_xor, np.bitwise_and, np.bitwise_or,
          np.bitwise_xor, np.left_shift, np.right_shift]  # fmt: skip
UNARY = [np.logical_not, np.invert, np.reciprocal]
PAIRS = [(np.bool_, np.bool_), (np.int8, np.uint8), (np.int32, np.int32), (np.int64, np.uint64),
         (np.uint64, np.int8), (np.float32, np.int32), (np.float64, np.float32),
         (np.uint8, np.float64)]  # fmt: skip
SINGLES = [np.bool_, np.int8, np.uint8, np.int32, np.int64, np.uint64, np.float32, np.float64]
N = 64


def _data(dtype, seed):
    rng = np.random.default_rng(seed)
    if dtype == np.bool_:
        return rng.random(N) < 0.5
    if np.dtype(dtype).kind == "f":
        v = (rng.standard_normal(N) * 4).astype(dtype)
        v[:4] = [np.nan, 0.0, -0.0, np.inf]
        return v
    info = np.iinfo(dtype)
    v = rng.integers(info.min, info.max, N, dtype=dtype, endpoint=True)
    v[:4] = [0, 1, info.max, info.min]
    v[4:8] = [2, 3, 40, 70]  # shift counts within and beyond the width
    return v


def _check(ufunc, dtypes):
    names = [f"a{j}" for j in range(len(dtypes))]
    call = f"UF({', '.join(f'{n}[i]' for n in names)})"
    ns = {"nv": nv, "UF": ufunc}
    exec(f"def k({', '.join(names)}, out):\n    i = nv.global_id(0)\n"  # noqa: S102
         f"    if i < out.size:\n        out[i] = {call}\n", ns)  # fmt: skip
    cpu_ns = {"UF": ufunc}
    exec(f"def k({', '.join(names)}, out):\n    for i in range(out.size):\n"  # noqa: S102
         f"        out[i] = {call}\n", cpu_ns)  # fmt: skip
    args = [_data(d, seed) for seed, d in enumerate(dtypes)]
    try:
        first = numba.njit(lambda *a: ufunc(*a))(*[a[0] for a in args])
    except numba.core.errors.TypingError:  # no loop for these types: the kernel refuses too
        with pytest.raises(numba.core.errors.NumbaError):
            nv.jit(ns["k"]).forall(N)(*args, np.zeros(N))
        return
    want = np.zeros(N, np.asarray(first).dtype)
    got = np.zeros_like(want)
    numba.njit(cpu_ns["k"])(*args, want)
    nv.jit(ns["k"]).forall(N)(*args, got)
    # Bit for bit, except that a NaN matches any NaN: its payload is not numba.njit's promise
    # (x86 passes the operand's NaN through 1 / x, NVIDIA gives its canonical NaN).
    nan = np.isnan(want) & np.isnan(got) if want.dtype.kind == "f" else np.zeros(N, bool)
    differ = [j for j in range(N) if want[j].tobytes() != got[j].tobytes() and not nan[j]]
    assert not differ, (ufunc.__name__, [a[differ[0]] for a in args], want[differ[0]], got[differ[0]])


@pytest.mark.parametrize("dtypes", PAIRS, ids=lambda p: "-".join(np.dtype(d).name for d in p))
@pytest.mark.parametrize("ufunc", BINARY, ids=lambda u: u.__name__)
def test_binary(ufunc, dtypes):
    _check(ufunc, dtypes)


@pytest.mark.parametrize("dtype", SINGLES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("ufunc", UNARY, ids=lambda u: u.__name__)
def test_unary(ufunc, dtype):
    _check(ufunc, (dtype,))
