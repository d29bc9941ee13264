"""Control flow in kernels against CPython.

Every kernel here calls nothing: its body is an ordinary Python function body,
and the host runs the very same function (undecorated) per element with CPython
to get the expected values. Integers stay far below 2**31, so the device's
32-bit arithmetic and CPython's unbounded ints agree.

Early `return` in a kernel leaves the output element as the kernel last wrote
it, so the kernels write a sentinel first and the CPython versions return the
value the kernel would have written.
"""

import numpy as np
import pytest

import numba_vulkan as nv

pytestmark = [pytest.mark.device, pytest.mark.usefixtures("device")]

N = 96
XS = np.arange(-N // 2, N // 2, dtype=np.int32) * 7 + 3


def run(kernel, xs=XS):
    out = np.full(xs.size, -12345, np.int32)
    kernel.forall(xs.size)(xs, out)
    return out


def check(kernel, reference, xs=XS):
    out = run(kernel, xs)
    expected = np.array([reference(int(x)) for x in xs], np.int32)
    bad = np.flatnonzero(out != expected)
    assert bad.size == 0, [(int(xs[j]), int(out[j]), int(expected[j])) for j in bad[:8]]


# --------------------------------------------------------------------- if / elif


def py_if_elif(x):
    if x < -100:
        r = 1
    elif x < 0:
        r = 2
    elif x == 3:
        r = 3
    elif x % 2 == 0:
        r = 4
    else:
        r = 5
    return r * 10 + (1 if x > 50 else 0)


@nv.jit
def k_if_elif(xs, out):
    i = nv.global_id(0)
    if i < xs.size:
        x = xs[i]
        if x < -100:
            r = 1
        elif x < 0:
            r = 2
        elif x == 3:
            r = 3
        elif x % 2 == 0:
            r = 4
        else:
            r = 5
        out[i] = r * 10 + (1 if x > 50 else 0)


def test_if_elif_else_and_conditional_expression():
    check(k_if_elif, py_if_elif)


def py_short_circuit(x):
    # The right operands divide by values that are zero exactly when the left
    # operand decides: short circuits must skip them (and // 0 gives 0 anyway).
    d = x % 5
    a = d != 0 and 100 // d > 30
    b = d == 0 or x // d < -10
    c = not (x > 10 and x < 200) or (x % 3 == 0 and x % 7 != 0)
    return int(a) + 2 * int(b) + 4 * int(c) + 8 * int(a and b or c)


@nv.jit
def k_short_circuit(xs, out):
    i = nv.global_id(0)
    if i < xs.size:
        x = xs[i]
        d = x % 5
        a = d != 0 and 100 // d > 30
        b = d == 0 or x // d < -10
        c = not (x > 10 and x < 200) or (x % 3 == 0 and x % 7 != 0)
        out[i] = int(a) + 2 * int(b) + 4 * int(c) + 8 * int(a and b or c)


def test_and_or_short_circuits():
    check(k_short_circuit, py_short_circuit)


# ------------------------------------------------------------------------ loops


def py_while(x):
    n = 0
    v = abs(x) + 1
    while v != 1 and n < 200:  # Collatz steps
        v = v // 2 if v % 2 == 0 else 3 * v + 1
        n += 1
    return n


@nv.jit
def k_while(xs, out):
    i = nv.global_id(0)
    if i < xs.size:
        n = 0
        v = abs(xs[i]) + 1
        while v != 1 and n < 200:
            v = v // 2 if v % 2 == 0 else 3 * v + 1
            n += 1
        out[i] = n


def test_while_loop():
    check(k_while, py_while)


def py_ranges(x):
    s = 0
    for k in range(x % 9):
        s += k
    for k in range(10, x % 7 - 3, -3):
        s = s * 3 + k
    for k in range(-5, 5, 2):
        s -= k * x
    for k in range(x % 4, -x % 11, (x % 3) + 1):
        s += 100
    for k in range(20, -20, -(x % 5) - 1):
        s += k
    for k in range(5, 5):
        s = -1
    return s % 100003


@nv.jit
def k_ranges(xs, out):
    i = nv.global_id(0)
    if i < xs.size:
        x = xs[i]
        s = 0
        for k in range(x % 9):
            s += k
        for k in range(10, x % 7 - 3, -3):
            s = s * 3 + k
        for k in range(-5, 5, 2):
            s -= k * x
        for k in range(x % 4, -x % 11, (x % 3) + 1):
            s += 100
        for k in range(20, -20, -(x % 5) - 1):
            s += k
        for k in range(5, 5):
            s = -1
        out[i] = s % 100003


def test_for_range_positive_negative_and_variable_steps():
    check(k_ranges, py_ranges)


def py_break_continue(x):
    s = 0
    for k in range(50):
        if k % 3 == x % 3:
            continue
        if k > abs(x) % 40:
            break
        s += k
        j = 0
        while True:
            j += 1
            if j % 4 == 0:
                continue
            if j > k % 7:
                break
            s += j
    else:
        s += 1000  # only when the loop did not break
    return s


@nv.jit
def k_break_continue(xs, out):
    i = nv.global_id(0)
    if i < xs.size:
        x = xs[i]
        s = 0
        for k in range(50):
            if k % 3 == x % 3:
                continue
            if k > abs(x) % 40:
                break
            s += k
            j = 0
            while True:
                j += 1
                if j % 4 == 0:
                    continue
                if j > k % 7:
                    break
                s += j
        else:
            s += 1000
        out[i] = s


def test_break_continue_in_nested_loops_and_for_else():
    check(k_break_continue, py_break_continue)


# ---------------------------------------------------------------- early returns


def py_early_return(x):
    if x < -200:
        return 1
    for a in range(6):
        for b in range(6, 0, -1):
            k = 0
            while k < 4:
                k += 1
                if (a * 7 + b * 3 + k + x) % 23 == 0:
                    return 100 * a + 10 * b + k
        if a * x > 300:
            return -a
    if x % 2 == 0:
        return 2
    return 3


@nv.jit
def k_early_return(xs, out):
    i = nv.global_id(0)
    if i >= xs.size:
        return
    x = xs[i]
    if x < -200:
        out[i] = 1
        return
    for a in range(6):
        for b in range(6, 0, -1):
            k = 0
            while k < 4:
                k += 1
                if (a * 7 + b * 3 + k + x) % 23 == 0:
                    out[i] = 100 * a + 10 * b + k
                    return
        if a * x > 300:
            out[i] = -a
            return
    if x % 2 == 0:
        out[i] = 2
        return
    out[i] = 3


def test_early_return_from_nested_loops():
    check(k_early_return, py_early_return)


def test_early_return_leaves_output_untouched():
    @nv.jit
    def k(xs, out):
        i = nv.global_id(0)
        if i < xs.size:
            if xs[i] % 2 == 0:
                return
            out[i] = xs[i]

    out = run(k)
    expected = np.where(XS % 2 == 0, -12345, XS)
    np.testing.assert_array_equal(out, expected)


def py_loop_in_conditional_expression(x):
    total = 0
    k = x
    while True:
        k = k - 3 if k > 0 else k + 5
        total += 1 if k % 2 == 0 else 2
        if -3 < k <= 0 or total > 60:
            break
    return total * 1000 + k


@nv.jit
def k_loop_in_conditional_expression(xs, out):
    i = nv.global_id(0)
    if i < xs.size:
        total = 0
        k = xs[i]
        while True:
            k = k - 3 if k > 0 else k + 5
            total += 1 if k % 2 == 0 else 2
            if -3 < k <= 0 or total > 60:
                break
        out[i] = total * 1000 + k


def test_while_true_with_break_and_conditional_expressions():
    check(k_loop_in_conditional_expression, py_loop_in_conditional_expression)


def py_float_loop(x):
    # A float accumulator in a loop with data-dependent exit (exact values: halves).
    acc = 0.0
    for k in range(abs(x) % 13):
        acc = acc * 0.5 + k
        if acc > 8.0:
            break
    return int(acc * 1024.0)


@nv.jit
def k_float_loop(xs, out):
    i = nv.global_id(0)
    if i < xs.size:
        acc = 0.0
        for k in range(abs(xs[i]) % 13):
            acc = acc * 0.5 + k
            if acc > 8.0:
                break
        out[i] = int(acc * 1024.0)


def test_float_accumulator_in_loop():
    check(k_float_loop, py_float_loop)
