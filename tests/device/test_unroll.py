"""Counted loops unrolled under a trip-count guard (src/core/unroll/unroll.h).

Each kernel runs its loop in one invocation per case and must match
numba.njit on the same function bit for bit: iteration counts 0 to 9 around
the unroll factor, steps of 1 to 7, float sums whose order must not change,
a bound next to the int64 maximum, and loops the pass must leave alone (the
bound or the step changes inside, a branch in the body). The KIR after the
pass shows whether a loop was unrolled (blocks named *.unrolled).
"""

import numba
import numpy as np
import pytest

import numba_vulkan as nv

pytestmark = [pytest.mark.device, pytest.mark.usefixtures("device")]

I64_MAX = np.iinfo(np.int64).max


def strided_sum(x, start, step, n, out):
    acc = np.float32(0.0)
    count = 0
    i = start
    while i < n:
        acc += x[i] * np.float32(1.0001)
        count += 1
        i += step
    out[0] = acc
    out[1] = count
    out[2] = i


def near_max(start, step, n, out):
    count = 0
    last = 0
    i = start
    while i < n:
        count += 1
        last = i & 1023
        i += step
    out[0] = count
    out[1] = last
    out[2] = i - start


def bound_changes(start, step, n, out):
    count = 0
    i = start
    while i < n:
        count += 1
        n -= 1
        i += step
    out[0] = count
    out[1] = n


def step_changes(start, step, n, out):
    count = 0
    i = start
    while i < n:
        count += i
        i += step
        step += 1
    out[0] = count
    out[1] = step


def branchy(x, start, step, n, out):
    acc = 0
    i = start
    while i < n:
        if x[i] > 0.5:
            acc += 1
        i += step
    out[0] = acc


def range_sum(x, start, step, n, out):
    acc = np.float32(0.0)
    count = 0
    for i in range(start, n, step):
        acc += x[i] * np.float32(1.0001)
        count += 1
    out[0] = acc
    out[1] = count


def _kernel(fn):
    """A kernel whose invocation 0 calls device function `fn` with the kernel's arguments."""
    params = ", ".join(fn.py_func.__code__.co_varnames[: fn.py_func.__code__.co_argcount])
    ns = {"nv": nv, "fn": fn}
    exec(f"def kernel({params}):\n    if nv.global_id(0) == 0:\n        fn({params})\n", ns)
    return ns["kernel"]


KERNELS = {}


def _compiled(fn):
    if fn not in KERNELS:
        jfn = nv.jit(device=True)(fn)
        KERNELS[fn] = nv.jit(_kernel(jfn))
    return KERNELS[fn]


ORACLES = {}


def _run(fn, out_dtype, *args):
    got = np.zeros(3, out_dtype)
    _compiled(fn)[1, 1](*args, got)
    want = np.zeros(3, out_dtype)
    if fn not in ORACLES:
        ORACLES[fn] = numba.njit(fn)  # one dispatcher: compiled once per signature
    ORACLES[fn](*args, want)
    return got, want


@pytest.mark.parametrize("step", [1, 2, 3, 7])
def test_float_sum_in_order_for_every_trip_count(step):
    x = (np.random.default_rng(step).random(80) * 1000).astype(np.float32)
    for start in (0, 1, 3):
        for trips in range(10):
            n = start + (trips - 1) * step + 1 if trips else start
            got, want = _run(strided_sum, np.float32, x, start, step, n)
            assert got.tobytes() == want.tobytes(), (start, step, n, got, want)


def test_grid_stride_loops_are_unrolled():
    x = np.zeros(8, np.float32)
    kir = _compiled(strided_sum).inspect_kir(x, 0, 1, 8, np.zeros(3, np.float32), narrowed=True)
    assert ".unrolled" in kir


@pytest.mark.parametrize("step", [1, 2, 7, -1, -3])
def test_range_loops_in_order_for_every_trip_count(step):
    """`for i in range(start, n, step)` with the step known only at run time: rotated into
    one block and unrolled (unroll.h), the iterations in order for either sign."""
    x = (np.random.default_rng(abs(step)).random(80) * 1000).astype(np.float32)
    for start in (0, 1, 3, 40):
        for trips in range(10):
            n = start + trips * step if step < 0 else start + (trips - 1) * step + 1 if trips \
                else start
            if not all(0 <= i < x.size for i in range(start, n, step)):
                continue  # the loop would read past x
            got, want = _run(range_sum, np.float32, x, start, step, n)
            assert got.tobytes() == want.tobytes(), (start, step, n, got, want)
    kir = _compiled(range_sum).inspect_kir(x, 0, 1, 8, np.zeros(3, np.float32), narrowed=True)
    assert ".unrolled" in kir


def test_range_loops_with_known_trip_counts_are_left_to_the_driver():
    """The kernel's own range loops whose trip counts are constants are not rotated (the
    driver unrolls those itself; an inlined device function's are not told apart)."""

    @nv.jit
    def static_range(x, out):
        acc = np.float32(0.0)
        for i in range(6):
            acc += x[i]
        out[0] = acc

    x = np.arange(8, dtype=np.float32)
    out = np.zeros(1, np.float32)
    static_range[1, 1](x, out)
    assert out[0] == 15
    assert ".unrolled" not in static_range.inspect_kir(x, out, narrowed=True)


def test_bound_next_to_int64_max():
    # (bound - start) % step == 0: the last i is the bound itself, so the loop
    # ends without wrapping around (as the CPU loop must, to end at all).
    cases = ((I64_MAX - 20, 4), (I64_MAX - 9, 3), (I64_MAX - 98, 7), (I64_MAX - 520, 13))
    for start, step in cases:
        got, want = _run(near_max, np.int64, start, step, I64_MAX)
        assert got.tolist() == want.tolist(), (start, step)


def test_huge_steps_fall_back_to_the_loop():
    i64_min = -I64_MAX - 1
    cases = ((-(2**62), 2**61, 2**62 + 1), (i64_min, 2**62, 2**62), (i64_min + 1, I64_MAX, 0))
    for start, step, n in cases:
        got, want = _run(near_max, np.int64, start, step, n)
        assert got.tolist() == want.tolist(), step


@pytest.mark.parametrize("fn", [bound_changes, step_changes])
def test_changing_bound_or_step_is_left_alone(fn):
    for start, step, n in ((0, 1, 20), (3, 2, 40), (5, 1, 5)):
        got, want = _run(fn, np.int64, start, step, n)
        assert got.tolist() == want.tolist(), (fn.__name__, start, step, n)
    kir = _compiled(fn).inspect_kir(0, 1, 20, np.zeros(3, np.int64), narrowed=True)
    assert ".unrolled" not in kir


def test_branch_in_body():
    x = np.random.default_rng(1).random(100).astype(np.float32)
    for start, step, n in ((0, 1, 100), (1, 3, 99), (2, 5, 7)):
        got, want = _run(branchy, np.int64, x, start, step, n)
        assert got.tolist() == want.tolist()


def test_histogram_with_atomics_counts_every_element():
    @nv.jit
    def hist(data, h):
        i = nv.global_id(0)
        stride = nv.num_groups(0) * nv.local_size(0)
        while i < data.size:
            nv.atomic.add(h, data[i], 1)
            i += stride

    data = np.random.default_rng(3).integers(0, 16, 10_007).astype(np.int64)
    for groups in (1, 3, 40):
        h = np.zeros(16, np.int32)
        hist[groups, 64](data, h)
        assert h.tolist() == np.bincount(data, minlength=16).tolist(), groups
    assert ".unrolled" in hist.inspect_kir(data, h, narrowed=True)


def test_unroll_1_disables(monkeypatch):
    from numba_vulkan import config

    monkeypatch.setattr(config, "UNROLL", 1)

    k = nv.jit(_kernel(nv.jit(device=True)(strided_sum)))  # a new dispatcher: compiled afresh
    x = np.ones(8, np.float32)
    assert ".unrolled" not in k.inspect_kir(x, 0, 1, 8, np.zeros(3, np.float32), narrowed=True)


@nv.jit
def _grid_stride_count(x, out, stride, shift):
    for i in range(nv.global_id(0) + shift, x.shape[0], stride):
        nv.atomic.add(out, i, 1)


def test_grid_stride_range_loops_with_steps_near_the_int64_end():
    """A grid-stride range loop (unrolled where its guard allows) with steps from 1 to
    2^63 - 1: each element is visited as often as CPython's ranges visit it. A cursor
    that wraps past int64's end while still valid stops at the bound; one that wraps
    once invalid (here after a step of 2^62 + 3) must still end the loop at the unrolled
    loop's latch, which tests cursor - step (it once ran another iteration there and wrote
    past the array)."""
    n = 5000
    x = nv.to_device(np.zeros(n, np.int64))
    for shift in (0, n - 1024):
        for stride in (1, 3, 7, 1000, 1024, 2**31 - 1, 2**31, 2**40, 2**62 + 3, I64_MAX):
            out = nv.to_device(np.zeros(n, np.int64))
            _grid_stride_count[4, 256](x, out, stride, shift)
            want = np.zeros(n, np.int64)
            for start in range(shift, shift + 1024):
                want[start:n:stride] += 1
            np.testing.assert_array_equal(out.copy_to_host(), want, err_msg=f"{stride=} {shift=}")
    kir = _grid_stride_count.inspect_kir(x, out, 3, 0, narrowed=True)
    assert ".unrolled" in kir


@numba.njit
def _first_five(start, stop, step):
    """How many of range(start, stop, step)'s first five values a loop sees, and the
    last of them (kernels call it; so does the CPU, as the reference)."""
    count = 0
    last = start - start  # start's type (0 alone would make a uint64 loop's last a float)
    for k in range(start, stop, step):
        count += 1
        last = k
        if count == 5:
            break
    return count, last


@nv.jit
def _first_fives(bounds, out):
    i = nv.global_id(0)
    if i < bounds.shape[0]:
        count, last = _first_five(bounds[i, 0], bounds[i, 1], bounds[i, 2])
        out[i, 0] = count
        out[i, 1] = last


@nv.jit
def _first_fives_by_three(starts, out):
    i = nv.global_id(0)
    if i < starts.shape[0]:
        count = 0
        for k in range(starts[i], 9223372036854775807, 3):
            count += 1
            if count == 5:
                break
        out[i] = count


def test_range_steps_that_would_wrap_past_the_int64_ends():
    """A cursor within a step of int64's end stops there instead of wrapping round
    (range(0, 2**63 - 1, 2**62) is 0, 2**62; the wrapped cursor -2**63 once passed the
    test again): numba.njit's values, and CPython's where njit's own stop - start wraps
    (docs/kernels.md); a run-time step and a literal one."""
    big, small = I64_MAX, -(2**63)
    cases = [(0, big, 2**62), (0, big, 2**62 + 5), (5, big, big), (big - 5, big, 4),
             (-5, small, -(2**62)), (small + 7, small, -3), (0, 10, 3), (10, 0, -3),
             (-5, 5, 2**62), (5, -5, -(2**62)), (small, big, big), (big - 1, small, small + 1)]
    out = np.zeros((len(cases), 2), np.int64)
    _first_fives.forall(len(cases))(np.array(cases, np.int64), out)
    for (start, stop, step), got in zip(cases, out):
        r = range(start, stop, step)[:5]
        python = (len(r), r[-1] if len(r) else 0)
        fits = small <= stop - start <= big  # njit's difference does not wrap
        want = _first_five(start, stop, step) if fits else python
        assert tuple(got) == tuple(want), (start, stop, step, got, want)
    unsigned = np.array([(2**64 - 5, 2**64 - 1, 3), (2**64 - 9, 2**64 - 2, 4),
                         (2**63, 2**64 - 1, 2**62 + 1)], np.uint64)  # wraps past 2**64 - 1
    got = np.zeros((len(unsigned), 2), np.uint64)
    _first_fives.forall(len(unsigned))(unsigned, got)
    for (start, stop, step), row in zip(unsigned, got):
        assert tuple(row) == tuple(_first_five(start, stop, step)), (start, stop, step, row)
    starts = np.array([I64_MAX - 1, I64_MAX - 3, I64_MAX - 4, I64_MAX - 7, 0], np.int64)
    counts = np.zeros(5, np.int64)
    _first_fives_by_three.forall(5)(starts, counts)
    assert list(counts) == [len(range(s, I64_MAX, 3)[:5]) for s in starts]
