"""Random control-flow programs, run by CPython and as numba_vulkan kernels.

A program is the body of a function of one int32 input `x` over three int
variables `a`, `b`, `c`. Its result is the final (a, b, c). The generator mixes
nested if/elif/else, while loops, for-range loops with positive, negative and
variable steps, break, continue, for-else, early returns (also from inside
nested loops), `and`/`or` short circuits, `not`, chained comparisons and
conditional expressions.

The same statement list is rendered twice:

* as a plain Python function ``fuzz_py(x) -> (a, b, c)``, run by CPython once
  per input value;
* as a kernel ``fuzz_kernel(inp, out)`` in which invocation i runs the body on
  ``x = inp[i]`` and writes ``out[i, 0..2]``; a ``return`` of the Python
  version becomes "write the three outputs, then return".

Termination: every while loop has its own counter, incremented first thing in
its body (so `continue` cannot skip it) and bounded in its condition; for loops
run over short constant-bounded ranges; loop variables are never assigned.

Overflow: CPython's ints are unbounded and the kernel's are 32 bits, so values
are kept small. Variables are reassigned only as ``v = (expr) % M`` with
|M| <= 1000, inputs lie in [-1000, 1000], loop variables in [-12, 12];
multiplication takes two leaves only, so no expression exceeds ~10^7 in
magnitude. Divisors are nonzero constants or ``(v | 1)`` (odd, either sign),
so CPython never raises ZeroDivisionError.
"""

import linecache
import random
import re
from dataclasses import dataclass

import numpy as np

VARS = ("a", "b", "c")
RESULT = "__RESULT__"  # a line that returns the current (a, b, c)


@dataclass
class Program:
    seed: int
    python_src: str
    kernel_src: str
    features: frozenset  # the constructs it uses, for coverage checks

    def source(self):
        return self.python_src


class _Gen:
    def __init__(self, seed, max_depth=3, max_block=4):
        self.rng = random.Random(seed)
        self.max_depth = max_depth
        self.max_block = max_block
        self.lines = []  # (indent, text)
        self.counter = 0  # unique names for loop counters and loop variables
        self.features = set()
        self.budget = 28  # statements left for the whole program

    # ------------------------------------------------------------- expressions

    def leaf(self, readable):
        r = self.rng.random()
        if r < 0.6:
            return self.rng.choice(readable)
        return str(self.rng.randint(-20, 20))

    def divisor(self):
        if self.rng.random() < 0.7:
            return str(self.rng.choice([k for k in range(-9, 10) if k != 0]))
        self.features.add("var_divisor")
        return f"({self.rng.choice(VARS)} | 1)"

    def expr(self, readable, depth=2):
        rng = self.rng
        if depth <= 0 or rng.random() < 0.25:
            return self.leaf(readable)
        kind = rng.choice(["add", "add", "mul", "div", "mod", "ifexp", "call", "neg"])
        if kind == "add":
            op = rng.choice(["+", "-"])
            return f"({self.expr(readable, depth - 1)} {op} {self.expr(readable, depth - 1)})"
        if kind == "mul":
            return f"({self.leaf(readable)} * {self.leaf(readable)})"
        if kind == "div":
            self.features.add("floordiv")
            return f"({self.expr(readable, depth - 1)} // {self.divisor()})"
        if kind == "mod":
            self.features.add("mod")
            return f"({self.expr(readable, depth - 1)} % {self.divisor()})"
        if kind == "ifexp":
            self.features.add("ifexp")
            return (
                f"({self.expr(readable, depth - 1)} if {self.cond(readable, 1)} "
                f"else {self.expr(readable, depth - 1)})"
            )
        if kind == "call":
            f = rng.choice(["abs", "min", "max"])
            if f == "abs":
                return f"abs({self.expr(readable, depth - 1)})"
            return f"{f}({self.expr(readable, depth - 1)}, {self.expr(readable, depth - 1)})"
        return f"(-{self.expr(readable, depth - 1)})"

    def cond(self, readable, depth=2):
        rng = self.rng
        r = rng.random()
        if depth <= 0 or r < 0.45:
            kind = rng.random()
            if kind < 0.6:
                op = rng.choice(["<", "<=", ">", ">=", "==", "!="])
                return f"{self.expr(readable, 1)} {op} {self.expr(readable, 1)}"
            if kind < 0.85:
                m = rng.randint(2, 5)
                return f"{self.expr(readable, 1)} % {m} == {rng.randint(0, m - 1)}"
            self.features.add("chained")
            return f"{self.leaf(readable)} < {self.expr(readable, 1)} <= {self.leaf(readable)}"
        if r < 0.6:
            self.features.add("not")
            return f"not ({self.cond(readable, depth - 1)})"
        op = "and" if r < 0.8 else "or"
        self.features.add(op)
        return f"({self.cond(readable, depth - 1)}) {op} ({self.cond(readable, depth - 1)})"

    # -------------------------------------------------------------- statements

    def emit(self, indent, text):
        self.lines.append((indent, text))

    def assign(self, indent, readable):
        v = self.rng.choice(VARS)
        m = self.rng.choice([1000, 997, 331, -1000, -97])
        if self.rng.random() < 0.3:
            self.emit(indent, f"{v} = ({v} + {self.expr(readable)}) % {m}")
        else:
            self.emit(indent, f"{v} = {self.expr(readable)} % {m}")

    def block(self, indent, readable, depth, loop_depth):
        """A non-empty block; returns True if it ended with a jump (nothing may follow)."""
        count = self.rng.randint(1, self.max_block)
        for n in range(count):
            if self.budget <= 0 and n > 0:
                break
            self.budget -= 1
            if self.statement(indent, readable, depth, loop_depth):
                return True
        return False

    def statement(self, indent, readable, depth, loop_depth):
        """One statement; True if it was an unconditional jump."""
        rng = self.rng
        choices = ["assign"] * 4
        if depth < self.max_depth and self.budget > 0:
            choices += ["if"] * 3 + ["while", "for", "for"] * (loop_depth < 3)
        if loop_depth:
            choices += ["break_if", "continue_if"]
        choices += ["return_if"]
        kind = rng.choice(choices)
        if kind == "assign":
            self.assign(indent, readable)
        elif kind == "if":
            self.emit(indent, f"if {self.cond(readable)}:")
            self.block(indent + 1, readable, depth + 1, loop_depth)
            for _ in range(rng.choice([0, 0, 1, 2])):
                self.features.add("elif")
                self.emit(indent, f"elif {self.cond(readable)}:")
                self.block(indent + 1, readable, depth + 1, loop_depth)
            if rng.random() < 0.5:
                self.features.add("else")
                self.emit(indent, "else:")
                self.block(indent + 1, readable, depth + 1, loop_depth)
        elif kind == "while":
            self.while_loop(indent, readable, depth, loop_depth)
        elif kind == "for":
            self.for_loop(indent, readable, depth, loop_depth)
        elif kind in ("break_if", "continue_if"):
            word = kind.split("_")[0]
            self.features.add(word)
            if rng.random() < 0.15:
                self.emit(indent, word)
                return True
            self.emit(indent, f"if {self.cond(readable)}:")
            if rng.random() < 0.4:
                self.assign(indent + 1, readable)
            self.emit(indent + 1, word)
        else:  # return
            self.features.add("return_in_loop" if loop_depth else "return")
            if loop_depth >= 2:
                self.features.add("return_in_nested_loop")
            self.emit(indent, f"if {self.cond(readable)}:")
            if rng.random() < 0.4:
                self.assign(indent + 1, readable)
            self.emit(indent + 1, RESULT)
        return False

    def while_loop(self, indent, readable, depth, loop_depth):
        rng = self.rng
        w = f"w{self.counter}"
        self.counter += 1
        limit = rng.randint(1, 6)
        self.emit(indent, f"{w} = 0")
        if rng.random() < 0.3:
            self.features.add("while_true")
            self.emit(indent, "while True:")
            self.emit(indent + 1, f"{w} += 1")
            self.emit(indent + 1, f"if {w} > {limit}:")
            self.emit(indent + 2, "break")
        else:
            self.features.add("while")
            cond = f"{w} < {limit}"
            if rng.random() < 0.6:
                cond = f"{cond} and ({self.cond(readable, 1)})"
            self.emit(indent, f"while {cond}:")
            self.emit(indent + 1, f"{w} += 1")
        self.block(indent + 1, readable + [w], depth + 1, loop_depth + 1)
        self.loop_else(indent, readable, depth, loop_depth)

    def for_loop(self, indent, readable, depth, loop_depth):
        rng = self.rng
        k = f"k{self.counter}"
        self.counter += 1
        step = rng.choice([1, 1, 2, 3, -1, -1, -2, -3, None])

        def bound():
            if rng.random() < 0.6:
                return str(rng.randint(-8, 8))
            self.features.add("var_bound")
            return f"{rng.choice(VARS)} % {rng.randint(3, 9)}"  # in [0, 8]

        if step is None:
            self.features.add("var_step")
            args = f"{bound()}, {bound()}, {rng.choice(['', '-'])}({rng.choice(VARS)} % 3 + 1)"
        elif step == 1 and rng.random() < 0.4:
            args = bound()
        elif step == 1:
            args = f"{bound()}, {bound()}"
        else:
            self.features.add("neg_step" if step < 0 else "pos_step")
            args = f"{bound()}, {bound()}, {step}"
        self.emit(indent, f"for {k} in range({args}):")
        self.block(indent + 1, readable + [k], depth + 1, loop_depth + 1)
        self.loop_else(indent, readable, depth, loop_depth)

    def loop_else(self, indent, readable, depth, loop_depth):
        if self.rng.random() < 0.15:
            self.features.add("loop_else")
            self.emit(indent, "else:")
            self.assign(indent + 1, readable)


def generate(seed):
    """The program of a seed (deterministic)."""
    g = _Gen(seed)
    body_indent = 0
    g.block(body_indent, ["x", *VARS], 0, 0)
    prologue = [
        "a = x % 17",
        "b = 5 - x // 100",
        "c = abs(x) % 7",
    ]
    body = prologue + ["    " * ind + text for ind, text in g.lines]
    return Program(seed, *sources(body), frozenset(g.features))


def sources(body):
    """(CPython source, kernel source) of a body: lines at the function's own indentation
    (4-space units), RESULT marking a return of the current (a, b, c)."""
    py = ["def fuzz_py(x):"]
    for line in body:
        stripped = line.lstrip()
        pad = line[: len(line) - len(stripped)]
        py.append("    " + (pad + "return (a, b, c)" if stripped == RESULT else line))
    py.append("    return (a, b, c)")

    kern = [
        "def fuzz_kernel(inp, out):",
        "    i = nv.global_id(0)",
        "    if i >= inp.size:",
        "        return",
        "    x = inp[i]",
    ]
    for line in body:
        stripped = line.lstrip()
        pad = "    " + line[: len(line) - len(stripped)]
        if stripped == RESULT:
            kern += [pad + f"out[i, {k}] = {v}" for k, v in enumerate(VARS)] + [pad + "return"]
        else:
            kern.append("    " + line)
    kern += [f"    out[i, {k}] = {v}" for k, v in enumerate(VARS)]
    return "\n".join(py) + "\n", "\n".join(kern) + "\n"


def in_memory(kernel_src):
    """The kernel with a, b and c kept in device memory, row i of an int64 array `st` (a
    third argument), in place of its locals: its loops then load and store array elements
    at one address each (spirv/loop_promotion.h keeps them in registers)."""
    lines = kernel_src.splitlines()
    assert lines[0] == "def fuzz_kernel(inp, out):"
    names = {v: f"st[i, {k}]" for k, v in enumerate(VARS)}
    body = [re.sub(r"\b[abc]\b", lambda m: names[m.group(0)], line) for line in lines[1:]]
    return "\n".join(["def fuzz_kernel(inp, out, st):", *body]) + "\n"


def inputs(seed, n=64):
    """Input values for a seed: edge values then random ones in [-1000, 1000]."""
    rng = np.random.default_rng(seed + 1_000_003)
    edge = np.array([0, 1, -1, 2, -2, 3, 7, -7, 100, -100, 999, -999, 1000, -1000], np.int32)
    rest = rng.integers(-1000, 1001, max(n - edge.size, 0), dtype=np.int32)
    return np.concatenate([edge, rest])[:n]


def _load(src, name, namespace):
    filename = f"<fuzz {name}>"
    linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)
    exec(compile(src, filename, "exec"), namespace)  # noqa: S102
    return namespace[name]


def run_python(program, xs):
    f = _load(program.python_src, "fuzz_py", {})
    return np.array([f(int(x)) for x in xs], dtype=np.int64)


def run_device(program, xs, memory=False):
    import numba_vulkan as nv

    source = in_memory(program.kernel_src) if memory else program.kernel_src
    kernel = nv.jit(_load(source, "fuzz_kernel", {"nv": nv}))
    out = np.full((xs.size, 3), -77777, np.int32)
    state = (np.zeros((xs.size, 3), np.int64),) if memory else ()
    kernel.forall(xs.size)(xs, out, *state)
    return out.astype(np.int64)


def check(seed, n=64, memory=False):
    """None if device and CPython agree on every input; otherwise a report. `memory`: the
    kernel keeps its variables in device memory (``in_memory``)."""
    program = generate(seed)
    xs = inputs(seed, n)
    want = run_python(program, xs)
    assert np.abs(want).max() < 2**31, "generator bug: values out of int32 range"
    try:
        got = run_device(program, xs, memory)
    except Exception as e:  # noqa: BLE001 - a compile or launch failure is a finding too
        source = in_memory(program.kernel_src) if memory else program.kernel_src
        return f"seed {seed}: {type(e).__name__}: {e}\n{source}"
    bad = np.flatnonzero((got != want).any(axis=1))
    if bad.size == 0:
        return None
    rows = "\n".join(
        f"  x={int(xs[j])}: device {tuple(got[j])} cpython {tuple(want[j])}" for j in bad[:8]
    )
    return f"seed {seed}: {bad.size} of {xs.size} inputs differ\n{rows}\n{program.python_src}"


def check_in_memory(seed, n=64):
    """``check`` of the kernel that keeps its variables in device memory."""
    return check(seed, n, memory=True)
