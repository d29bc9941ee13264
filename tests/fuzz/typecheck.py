"""Run a typegen program with numba.njit and as a kernel, compare, and minimise failures.

Comparison: integers and bools bit for bit; floats bit for bit too (any NaN
equals any NaN: NaN payloads and signs are not specified by IEEE 754),
except where the device may round differently. Vulkan requires correct
rounding of + - * conversions and comparisons but not of division, and `**`
on floats is only promised to a few ULP (docs/testing.md). lavapipe divides
correctly rounded, so there every output is compared exactly; on other devices
an output whose root is the only float `/` or `**` in its tree is compared
with that tolerance, and one with such an op deeper down (where a rounding
difference can flip a comparison or a truncation) is not compared; nor is an
integer or bool output made from such a float there. On a device that flushes
float32 subnormals (NVIDIA; docs/math.md) a float32 output whose exact value
is subnormal may be the zero of its sign, and an output of another type made
from a float32 operation is not compared there (seed 2881 on the H200:
`np.float64(not np.float32(x % 1e-38))`, a subnormal flushed to zero).

NVK_TYPEFUZZ_JIT may hold a JSON dict of nv.jit options (e.g. '{"narrow": false}');
the default is nv.jit's defaults.
"""

import copy
import json
import linecache
import os
import random

import numpy as np
from numba import njit
from numba.core import ir, types

import typegen

N = 64  # invocations per launch
RUNS = 2  # launches per program, each with fresh inputs and scalar values
MINIMISE_BUDGET = 60  # compile pairs tried while minimising one failure


def jit_options():
    return json.loads(os.environ.get("NVK_TYPEFUZZ_JIT") or "{}")


def make_inputs(program, n=N, runs=RUNS):
    """Per run: (arrays, scalars), deterministic in the seed."""
    rng = random.Random(program.seed * 7919 + 17)
    out = []
    for _ in range(runs):
        arrays = [typegen.random_values(rng, dt, n) for _, dt in program.arrays]
        scalars = [typegen.scalar_value(rng, ty) for _, ty in program.scalars]
        out.append((arrays, scalars))
    return out


def _load(src, name, namespace):
    filename = f"<typefuzz {name} {abs(hash(src))}>"
    linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)
    exec(compile(src, filename, "exec"), namespace)  # noqa: S102
    return namespace[name]


def _outputs(program, n):
    return [np.zeros(n, d) for d in program.out_dtypes()]


def compile_cpu(program):
    return njit(error_model="numpy")(_load(program.cpu_src(), "fuzz_cpu", {"np": np}))


def check_types(program, fn):
    """njit's types of the stored values must be the generator's (else a generator bug)."""
    cres = fn.overloads[fn.signatures[0]]
    ann = cres.type_annotation
    found = {}
    for block in ann.blocks.values():
        for stmt in block.body:
            if isinstance(stmt, ir.SetItem) and stmt.target.name.startswith("out"):
                found[stmt.target.name] = types.unliteral(ann.typemap[stmt.value.name])
    for k, e in enumerate(program.exprs):
        want = types.unliteral(e.ty)
        if found.get(f"out{k}") != want:
            got = found.get(f"out{k}")
            raise AssertionError(f"generator bug: out{k} is {want}, njit: {got}: {e.render()}")


def run_cpu(program, inputs, fn=None):
    """(njit function, outputs per run, overflow masks per run: [output][element])."""
    fn = fn or compile_cpu(program)
    results, masks = [], []
    for arrays, scalars in inputs:
        n = arrays[0].size
        outs = _outputs(program, n)
        probes = [np.zeros(n, d) for d in program.probe_dtypes()]
        fn(*arrays, *scalars, *outs, *probes)
        results.append(outs)
        masks.append(overflowed(program, probes, n))
    return fn, results, masks


_I64 = (-(2**63), 2**63 - 1)


def _wrap64(v):
    return (int(v) + 2**63) % 2**64 - 2**63


def overflowed(program, probes, n):
    """Per output, the elements where a signed `+ - * **` overflowed in int64 (poison in njit).

    Operands are first converted to the (64-bit signed) result type as Numba does;
    `**` counts as overflowing when x * x does too (the squaring loop computes it).
    """
    masks = [np.zeros(n, bool) for _ in program.exprs]
    for j, (k, node, _) in enumerate(program.probes()):
        xs, ys = probes[2 * j], probes[2 * j + 1]
        for e in range(n):
            x, y = _wrap64(xs[e]), _wrap64(ys[e])
            if node.op == "+":
                v = [x + y]
            elif node.op == "-":
                v = [x - y]
            elif node.op == "*":
                v = [x * y]
            else:
                v = [x**y] + ([x * x] if y >= 1 else [])
            if any(not (_I64[0] <= t <= _I64[1]) for t in v):
                masks[k][e] = True
    return masks


def run_device(program, inputs):
    import numba_vulkan as nv

    fn = _load(program.kernel_src(), "fuzz_kernel", {"np": np, "nv": nv})
    kernel = nv.jit(**jit_options())(fn)
    results = []
    for arrays, scalars in inputs:
        n = arrays[0].size
        outs = _outputs(program, n)
        for o in outs:  # a value the kernel must overwrite
            o.view(np.uint8)[:] = 0xA5
        kernel.forall(n)(*arrays, *scalars, *outs)
        results.append(outs)
    return results


def exact_device():
    """True where every float op is compared bit for bit (lavapipe rounds correctly)."""
    if os.environ.get("NVK_TYPEFUZZ_EXACT"):
        return os.environ["NVK_TYPEFUZZ_EXACT"] != "0"
    import numba_vulkan as nv

    return "llvmpipe" in nv.get_device().info.name.lower()


def _ulps(dtype):
    return {np.float32: 3, np.float64: 2**29 + 4}[dtype.type]  # float64 `/`: single precision


def _ordinal(a):
    """Floats as integers that count ULPs (for values of one sign, which is all it is used for)."""
    bits = a.view({4: np.int32, 8: np.int64}[a.itemsize]).astype(object)
    return np.array([abs(int(b)) for b in bits], dtype=object)


def flushes_float32():
    """True where the device flushes float32 subnormals (float32 not in its denorm_preserve)."""
    if os.environ.get("NVK_TYPEFUZZ_FLUSH32"):
        return os.environ["NVK_TYPEFUZZ_FLUSH32"] != "0"
    import numba_vulkan as nv

    info = nv.get_device().info
    return "llvmpipe" not in info.name.lower() and 32 not in tuple(info.denorm_preserve)


def differing(expr, want, got, exact=True):
    """Indices where got differs from want (see the module docstring); None if not compared."""
    if _FLUSH32[0] and want.dtype != np.float32 and expr.computes_float32():
        return None  # made from a float32 the device may have flushed to zero
    if want.dtype.kind != "f":
        if not exact and expr.inexact():
            return None  # an integer or bool made from an inexact float: rounding may flip it
        return np.flatnonzero(want != got)
    bits = {4: np.uint32, 8: np.uint64}[want.dtype.itemsize]
    same = (want.view(bits) == got.view(bits)) | (np.isnan(want) & np.isnan(got))
    if not exact and expr.inexact():
        inexact_kids = any(k.inexact() for k in expr.kids)
        if not (expr.kind == "bin" and expr.op in typegen.INEXACT) or inexact_kids:
            return None
        ulps = np.abs(_ordinal(want) - _ordinal(got))
        same |= (ulps <= _ulps(want.dtype)) & (np.sign(want) == np.sign(got))
    if want.dtype == np.float32 and _FLUSH32[0]:
        # A device that flushes float32 subnormals (docs/math.md, "Subnormals and
        # devices": NVIDIA) gives a zero of the same sign for a subnormal result.
        subnormal = (want != 0) & (np.abs(want) < np.finfo(np.float32).tiny)
        flushed = (got == 0) & (np.signbit(got) == np.signbit(want))
        same |= subnormal & flushed
    return np.flatnonzero(~same)


_FLUSH32 = [False]  # set by check() from flushes_float32()


def compare(program, inputs, want, got, masks, exact=True):
    """[(output, run, indices)] of the outputs that differ where njit's result is defined."""
    bad = []
    for r, (w_run, g_run) in enumerate(zip(want, got)):
        for k, (e, w, g) in enumerate(zip(program.exprs, w_run, g_run)):
            idx = differing(e, w, g, exact)
            if idx is not None:
                idx = idx[~masks[r][k][idx]]
            if idx is not None and idx.size:
                bad.append((k, r, idx))
    return bad


def outcome(program, inputs, exact=True):
    """None if the CPU and the device agree; else ("mismatch", details) or ("error", text)."""
    fn, want, masks = run_cpu(program, inputs)
    check_types(program, fn)
    try:
        got = run_device(program, inputs)
    except Exception as e:  # noqa: BLE001 - a compile or launch failure is a finding too
        return ("error", f"{type(e).__name__}: {e}")
    bad = compare(program, inputs, want, got, masks, exact)
    if not bad:
        return None
    return ("mismatch", (bad, want, got))


def _describe(program, inputs, bad, want, got, limit=4):
    lines = []
    for k, r, idx in bad[:limit]:
        arrays, scalars = inputs[r]
        lines.append(f"  out{k} ({program.out_dtypes()[k]}), run {r}: {idx.size} of "
                     f"{want[r][k].size} differ: {program.exprs[k].render()}")  # fmt: skip
        for j in idx[:3]:
            args = [f"{n}={a[j]!r}" for (n, _), a in zip(program.arrays, arrays)]
            args += [f"{n}={type(v).__name__}({v!r})"
                     for (n, _), v in zip(program.scalars, scalars)]  # fmt: skip
            lines.append(f"    i={j}: njit {want[r][k][j]!r} device {got[r][k][j]!r}"
                         f"  <- {', '.join(args)}")  # fmt: skip
    return "\n".join(lines)


# ---------------------------------------------------------------- minimising


def _paths(node, path=()):
    yield path
    for n, kid in enumerate(node.kids):
        yield from _paths(kid, path + (n,))


def _at(node, path):
    for n in path:
        node = node.kids[n]
    return node


def _replaced(root, path, new):
    if not path:
        return copy.deepcopy(new)
    root = copy.deepcopy(root)
    parent = _at(root, path[:-1])
    kids = list(parent.kids)
    kids[path[-1]] = copy.deepcopy(new)
    parent.kids = tuple(kids)
    return root


def _same_failure(program, inputs, first, exact):
    try:
        typegen.retype(program.exprs[0])
        result = outcome(program, inputs, exact)
    except (typegen.Untypable, AssertionError):
        return False
    except Exception:  # noqa: BLE001 - njit rejects the candidate
        return False
    return result is not None and result[0] == first[0]


def minimise(program, inputs, first, exact=True):
    """The smallest failing one-output program found greedily: (program, inputs)."""
    if first[0] == "mismatch":
        k, r, idx = first[1][0][0]
        arrays, scalars = inputs[r]
        j = int(idx[0])
        inputs = [([a[j : j + 1] for a in arrays], scalars)]
        exprs = [program.exprs[k]]
    else:
        exprs, inputs = list(program.exprs), inputs[:1]
        for k in range(len(exprs)):  # keep only one output that still fails
            p = typegen.Program(program.seed, program.arrays, program.scalars, [exprs[k]])
            if _same_failure(p, inputs, first, exact):
                exprs = [exprs[k]]
                break
    best = typegen.Program(program.seed, program.arrays, program.scalars, exprs[:1])
    budget = MINIMISE_BUDGET
    progress = True
    while progress and budget > 0:
        progress = False
        root = best.exprs[0]
        for path in _paths(root):
            node = _at(root, path)
            for kid in node.kids:
                if budget <= 0:
                    break
                budget -= 1
                cand = typegen.Program(best.seed, best.arrays, best.scalars,
                                       [_replaced(root, path, kid)])  # fmt: skip
                if _same_failure(cand, inputs, first, exact):
                    best, progress = cand, True
                    break
            if progress:
                break
    return best, inputs


def repro(program, inputs, exact=True):
    """A short text: the minimised expression, its inputs and both answers."""
    result = outcome(program, inputs, exact)
    arrays, scalars = inputs[0]
    vals = [f"{n}={np.dtype(d).name}({a[0]!r})" for (n, d), a in zip(program.arrays, arrays)]
    vals += [f"{n}={type(v).__name__}({v!r})" for (n, _), v in zip(program.scalars, scalars)]
    head = f"  minimised: out ({program.out_dtypes()[0]}) = {program.exprs[0].render()}\n"
    head += f"  inputs: {', '.join(vals)}\n"
    if result is None:
        return head + "  (the minimised program passes: the failure needs the full program)"
    if result[0] == "error":
        return head + f"  device: {result[1]}"
    bad, want, got = result[1]
    k, r, idx = bad[0]
    return head + f"  njit {want[r][k][idx[0]]!r}, device {got[r][k][idx[0]]!r}"


def check(seed, n=N, minimise_failures=True):
    """None if the CPU and the device agree on a seed; otherwise a report with a minimised repro."""
    program = typegen.generate(seed)
    inputs = make_inputs(program, n)
    exact = exact_device()
    _FLUSH32[0] = flushes_float32()
    first = outcome(program, inputs, exact)
    if first is None:
        return None
    if first[0] == "error":
        text = f"seed {seed}: {first[1]}\n{program.source()}"
    else:
        details = _describe(program, inputs, *first[1])
        text = f"seed {seed}: outputs differ\n{details}\n{program.source()}"
    if minimise_failures:
        try:
            small, small_inputs = minimise(program, inputs, first, exact)
            text += "\n" + repro(small, small_inputs, exact)
        except Exception as e:  # noqa: BLE001 - the report matters more than the repro
            text += f"\n  (minimising failed: {type(e).__name__}: {e})"
    return text
