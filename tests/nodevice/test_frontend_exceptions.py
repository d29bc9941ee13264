"""Front end + backend: kernels that raise, assert, check indices or divisors, and print
compile to valid SPIR-V in every narrowing mode; the hidden status argument comes last
and only where a kernel needs it; what cannot be recorded is refused by name.

PYTEST_DONT_REWRITE: the kernels' own assert statements must stay Python asserts."""

import numba
import numpy as np
import pytest
from kir_host import EXACT, INDEX64, INTS, NARROW

from numba_vulkan import _core, errors, frontend, sites
from numba_vulkan.typing import pipeline


def lower(fn, argtypes, mode=EXACT, boundscheck=False, error_model="numpy"):
    options = pipeline.Options(boundscheck=boundscheck, error_model=error_model)
    typed = pipeline.type_kernel(fn, tuple(argtypes), options)
    return frontend.lower_kernel(typed.func_ir, typed.typemap, typed.calltypes, tuple(argtypes),
                                 mode, fn.__name__, boundscheck=boundscheck,
                                 error_model=error_model)  # fmt: skip


@numba.njit
def _helper(x):
    assert x >= 0, "negative input"
    return x * 2


def _raises(a, n):
    i = numba.int64(0)
    if a[0] < 0:
        raise ValueError("negative")
    if n > 3:
        raise KeyError
    assert n != 2, "two"
    a[i] = _helper(n)


def _prints(a, n, f):
    print("n =", n, "f =", f, (n, a[0]), True, np.int8(-3), np.uint64(n))
    print()


def _indexes(a, b, c, i):
    a[i] = b[i, i] + c[i, 1, -1]


def _divides(a, x, y):
    a[0] = x // y + x % y + x / y
    a[1] = a[0] // a[1] + a[0] % a[1] + a[0] / a[1]


CASES = [
    (_raises, [numba.float32[:], numba.int64], {}),
    (_prints, [numba.float64[:], numba.int64, numba.float32], {}),
    (_indexes, [numba.float64[:], numba.int32[:, :], numba.int64[:, :, :], numba.int64],
     {"boundscheck": True}),
    (_indexes, [numba.float64[:], numba.int32[:, :], numba.int64[:, :, :], numba.uint32],
     {"boundscheck": True}),
    (_divides, [numba.float64[:], numba.int64, numba.int32], {"error_model": "python"}),
]  # fmt: skip


@pytest.mark.parametrize("case", range(len(CASES)))
@pytest.mark.parametrize("mode", [INTS, EXACT, NARROW, INDEX64],
                         ids=["ints", "exact", "narrow", "index64"])  # fmt: skip
def test_kernels_that_raise_or_print_compile_to_valid_spirv(case, mode):
    fn, argtypes, options = CASES[case]
    lk = lower(fn, argtypes, mode, **options)
    lk.module.verify()
    ck = _core.compile(lk.module)
    _core.validate(ck.words)
    assert lk.sites
    # The status buffer: the last hidden array, one hidden u64 parameter (frontend/status.py).
    assert len(lk.writes) == len(argtypes)
    assert lk.hidden[-1] == ("status", ("status", None))
    (decl,) = [a for a in lk.args if a.name == "status.addr"]
    assert decl.kind == "hidden" and _core.memory_bytes(decl.slot) == 8
    assert decl.written == any(isinstance(s, sites.PrintSite) for s in lk.sites)


def test_kernels_without_checks_have_no_status_argument():
    lk = lower(_indexes, CASES[2][1])  # no boundscheck: plain indexing
    assert not lk.sites and not lk.hidden
    lk = lower(_divides, CASES[4][1])  # error_model numpy
    assert not lk.sites and not lk.hidden


def test_sites_describe_what_the_host_raises():
    lk = lower(_raises, CASES[0][1])
    raised = {(s.exc_class, s.args) for s in lk.sites}
    assert raised == {(ValueError, ("negative",)), (KeyError, ()), (AssertionError, ("two",)),
                      (AssertionError, ("negative input",))}  # fmt: skip
    lines = {s.line for s in lk.sites if s.exc_class is ValueError}
    assert lines == {_raises.__code__.co_firstlineno + 3}
    lk = lower(*CASES[2][:2], boundscheck=True)
    messages = sorted(s.template.format(9, 4) for s in lk.sites)
    assert messages[0] == "index 9 is out of bounds for axis 0 with size 4 (array 'a')"
    assert len(messages) == 1 + 2 + 3  # one check per axis of each access


def test_a_print_site_formats_like_numba_njit():
    lk = lower(*CASES[1][:2])
    first, empty = lk.sites
    n, f, a0 = -7, np.float32(0.1), 2.5
    words = []
    for v, bits in ((n, 64), (f, 32), (n, 64), (a0, 64)):  # n, f, (n, a[0])
        if isinstance(v, np.float32):
            words.append(int(np.array(v).view(np.uint32)))
        elif isinstance(v, float):
            raw = int(np.array(v).view(np.uint64))
            words += [raw & 0xFFFFFFFF, raw >> 32]
        else:
            words += [v & 0xFFFFFFFF, (v >> 32) & 0xFFFFFFFF]
    words += [1, (-3) & 0xFFFFFFFF, (-7) & 0xFFFFFFFF, 0xFFFFFFFF]  # True, int8, uint64(-7)
    assert first.words() == len(words)
    expected = f"n = -7 f = {float(f)} (-7, 2.5) True -3 {2**64 - 7}"
    assert first.format(words) == expected
    assert empty.format([]) == ""


def _prints_runtime_string(a, s):
    print(s)


def _bare_raise(a):
    if a[0] > 1:
        raise


@pytest.mark.parametrize("fn,argtypes,words", [
    (_prints_runtime_string, [numba.float32[:], numba.types.unicode_type], "kernel arguments"),
    (_bare_raise, [numba.float32[:]], "a bare 'raise'"),
])  # fmt: skip
def test_what_cannot_be_recorded_is_refused_by_name(fn, argtypes, words):
    with pytest.raises(errors.VulkanUnsupportedError, match=words):
        lower(fn, argtypes)
