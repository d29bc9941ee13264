"""Shrink a failing control-flow fuzz program (gen.py) to a small one that still fails.

    python3 tests/fuzz/reduce.py 386            # seed 386's program, reduced, printed

The program's body lines (after the prologue) are removed one at a time, and whole
blocks (a line and the more indented lines under it), as long as the device and CPython
still disagree on some input of the seed and CPython itself still runs. What remains is
printed as the kernel source and the CPython function, with the inputs that differ.
"""

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen  # noqa: E402

def _body(seed):
    """The body lines of the seed's program (prologue included; gen.sources' form, returns
    as gen.RESULT), read back from its CPython function."""
    lines = gen.generate(seed).python_src.splitlines()[1:-1]  # no def, no final return
    return [_unreturn(line[4:]) for line in lines]


def _unreturn(line):
    stripped = line.lstrip()
    if stripped != "return (a, b, c)":
        return line
    return line[: len(line) - len(stripped)] + gen.RESULT


def _differ(body, xs):
    """Indices of xs where the device and CPython disagree; None if the body is no program."""
    import numba_vulkan as nv

    py_src, kern_src = gen.sources(body)
    try:
        f = gen._load(py_src, "fuzz_py", {})
        want = np.array([_bounded(f, int(x)) for x in xs], dtype=np.int64)
        k = nv.jit(gen._load(kern_src, "fuzz_kernel", {"nv": nv}))
    except Exception:  # noqa: BLE001 - a broken candidate (indentation, endless loop): not kept
        return None
    out = np.full((xs.size, 3), -77777, np.int32)
    try:
        k.forall(xs.size)(xs, out)
    except Exception:  # noqa: BLE001 - the compiler refusing it is another finding
        return None
    return np.flatnonzero((out.astype(np.int64) != want).any(axis=1))


class _Endless(Exception):
    pass


def _bounded(f, x, lines=20_000):
    """f(x), or _Endless after `lines` traced lines (a candidate may lose its loop's exit)."""
    count = [0]

    def trace(frame, event, arg):
        count[0] += 1
        if count[0] > lines:
            raise _Endless
        return trace

    sys.settrace(trace)
    try:
        return f(x)
    finally:
        sys.settrace(None)


def _block_end(body, start):
    indent = len(body[start]) - len(body[start].lstrip())
    end = start + 1
    while end < len(body) and len(body[end]) - len(body[end].lstrip()) > indent:
        end += 1
    return end


def reduce(seed):
    xs = gen.inputs(seed)
    body = _body(seed)
    bad = _differ(body, xs)
    if bad is None or bad.size == 0:
        raise SystemExit(f"seed {seed} does not fail here")
    changed = True
    while changed:
        changed = False
        for start in range(len(body) - 1, 2, -1):  # the three prologue lines stay
            if start >= len(body):
                continue
            for end in (_block_end(body, start), start + 1):
                candidate = body[:start] + body[end:]
                found = _differ(candidate, xs)
                if found is not None and found.size:
                    body, bad, changed = candidate, found, True
                    break
    return body, xs, bad


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("seed", type=int)
    args = parser.parse_args(argv)
    import warnings

    warnings.simplefilter("ignore")
    body, xs, bad = reduce(args.seed)
    py_src, kern_src = gen.sources(body)
    f = gen._load(py_src, "fuzz_py", {})
    print(f"# seed {args.seed}: {len(body)} lines; inputs that differ: "
          f"{[int(xs[j]) for j in bad[:8]]} (CPython {[f(int(xs[j])) for j in bad[:3]]})")
    print(kern_src)
    print(py_src)


if __name__ == "__main__":
    main()
