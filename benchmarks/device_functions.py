"""Compile time and module size of a kernel calling five device functions (issue 6, item 1).

Compares the kernel that calls five @nv.jit helpers (inlined by the front end)
with the same arithmetic written by hand in one kernel, and shows how the
module grows when one helper is called 1, 5 and 20 times. Each compile uses
fresh Dispatcher objects, so nothing is cached between runs. No device needed.

    PYTHONPATH=src python3 benchmarks/device_functions.py
"""

import statistics
import time

import numba_vulkan as nv
from numba_vulkan import _core, compiler

_spent = {"typing": 0.0, "core": 0.0}


def _timed(fn, key):
    def wrapper(*args, **kwargs):
        t0 = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            _spent[key] += time.perf_counter() - t0

    return wrapper


# Split the compile time: Numba's typing (kernel and callees) and the C++ half.
compiler.type_kernel_for_user = _timed(compiler.type_kernel_for_user, "typing")
_core.compile = _timed(_core.compile, "core")

SIG = "void(float32[::1], float32[::1])"


def make_helpers():
    @nv.jit(device=True)
    def f1(x):
        return x * 1.5 + 2.0

    @nv.jit(device=True)
    def f2(x, y):
        if x > y:
            return x - y
        return y - x

    @nv.jit(device=True)
    def f3(x):
        acc = 0.0
        for k in range(4):
            acc += x * k
        return acc

    @nv.jit(device=True)
    def f4(x):
        return min(max(x, -1.0), 1.0)

    @nv.jit(device=True)
    def f5(x, y):
        return f1(x) * f4(y)

    return f1, f2, f3, f4, f5


def five_calls():
    f1, f2, f3, f4, f5 = make_helpers()

    def kernel(out, a):
        i = nv.global_id(0)
        if i < out.size:
            x = a[i]
            out[i] = f1(x) + f2(x, 0.5) + f3(x) + f4(x) + f5(x, 0.25)

    return nv.jit(kernel)


def hand_inlined():
    def kernel(out, a):
        i = nv.global_id(0)
        if i < out.size:
            x = a[i]
            r1 = x * 1.5 + 2.0
            r2 = x - 0.5 if x > 0.5 else 0.5 - x
            acc = 0.0
            for k in range(4):
                acc += x * k
            r4 = min(max(x, -1.0), 1.0)
            r5 = (x * 1.5 + 2.0) * min(max(0.25, -1.0), 1.0)
            out[i] = r1 + r2 + acc + r4 + r5

    return nv.jit(kernel)


def repeated(n):
    f1 = make_helpers()[1]
    body = " + ".join(f"f({i}.0 * x, x)" for i in range(n))
    src = (
        "def kernel(out, a):\n"
        "    i = nv.global_id(0)\n"
        "    if i < out.size:\n"
        "        x = a[i]\n"
        f"        out[i] = {body}\n"
    )
    g = {"nv": nv, "f": f1}
    exec(compile(src, f"<repeated {n}>", "exec"), g)
    return nv.jit(g["kernel"])


def measure(make, runs=5):
    times, typing, core, words = [], [], [], None
    for _ in range(runs):
        k = make()
        _spent.update(typing=0.0, core=0.0)
        t0 = time.perf_counter()
        compiled = k.compile(SIG)
        times.append(time.perf_counter() - t0)
        typing.append(_spent["typing"])
        core.append(_spent["core"])
        words = int(compiled.words.size)
    med = statistics.median
    return med(times), med(typing), med(core), words


def main():
    measure(five_calls, runs=1)  # warm up Numba's typing machinery
    rows = [
        ("kernel calling 5 helpers (inlined)", five_calls),
        ("same code written by hand", hand_inlined),
        ("1 call of a 2-branch helper", lambda: repeated(1)),
        ("5 calls of it", lambda: repeated(5)),
        ("20 calls of it", lambda: repeated(20)),
    ]
    print(f"| {'case':38s} | total ms | typing ms | C++ ms | SPIR-V bytes |")
    print(f"| {'-' * 38} | -------: | --------: | -----: | -----------: |")
    for name, make in rows:
        t, typ, core, words = measure(make)
        cells = f"{t * 1e3:8.1f} | {typ * 1e3:9.1f} | {core * 1e3:6.1f} | {words * 4:12d}"
        print(f"| {name:38s} | {cells} |")


if __name__ == "__main__":
    main()
