"""The driver self-test's kernel (runtime/selftest.py), built in KIR directly.

A kernel written in Python would spend most of the self-test's first use in Numba's
typing (about 75 ms on a 2-core machine, for 50 lines); the probe needs no typing, so
it is built here with the front end's own lowering of each operation (array access,
Python's floor division and shifts, conversions, the math library's sqrt), in 15 ms.
Registered with runtime.compiler_hook when ``numba_vulkan`` is imported: the runtime
does not import the compiler.

The kernel, one invocation per row i of ``FLOAT_COLUMNS``-wide float arrays:

* for each float width w present: ``o_w[i, 0:12]`` = floor, ceil, trunc of v = x_w[i, 0];
  v + 0.0, 0.0 - v, v * 0.0, 0.0 / v, v / 0.0 (constant zeros); x / y; x * y + v
  (rounded twice); sqrt(|x|); GLSL.std.450 Fma(x, y, v); with x = x_w[i, 1], y = x_w[i, 2];
* with 64-bit types: int64 x // y, x % y, x >> (y & 63), x << (y & 63), x < y, x <= y;
  uint64 //, %, >> and <, on the same bits; and float64 to int8, uint8, int32, uint32,
  int64 and uint64 conversions of f[i, 0:6].
"""

import types as pytypes

from numba.core import types

from . import _core, config, launchers
from .frontend import arith
from .frontend.arrays import ArrayArg
from .frontend.mathlib import bits, denormals, roots, rounding

K = _core.Kind
Op = _core.Op
FLOAT_COLUMNS = 12
CONVERSIONS = (types.int8, types.uint8, types.int32, types.uint32, types.int64, types.uint64)


def _float_probe(b, lib, x, o, i):
    """Row i of one float width (the columns in the module doc)."""

    def at(arr, col):
        return [i, arith.const(b, b.kind(i), col)]

    k = x.compute
    v = x.load(b, at(x, 0), None)
    p, q = x.load(b, at(x, 1), None), x.load(b, at(x, 2), None)
    zero = arith.const(b, k, 0.0)
    one = arith.const(b, k, 1.0)
    # v / 0.0 where v != 1.0, else v: a divisor the optimiser cannot fold away with the zero.
    by_zero = b.select(b.compare(Op.ne, v, one), b.binary(Op.div, v, zero), v)
    results = [
        rounding.floor(lib, v), rounding.ceil(lib, v), rounding.trunc(lib, v),
        b.binary(Op.add, v, zero), b.binary(Op.sub, zero, v), b.binary(Op.mul, v, zero),
        b.binary(Op.div, zero, v), by_zero, b.binary(Op.div, p, q),
        b.binary(Op.add, b.binary(Op.mul, p, q), v),
        roots.sqrt(lib, b.math(_core.MathFn.abs, [p])),
        b.math(_core.MathFn.fma, [p, q, v]),  # GLSL.std.450 Fma itself
    ]  # fmt: skip
    for col, r in enumerate(results):
        o.store(b, at(o, col), r, None)


def _int_probe(b, a, ua, f, out, uout, conv, i):
    def at(col):
        return [i, arith.const(b, b.kind(i), col)]

    x, y = a.load(b, at(0), None), a.load(b, at(1), None)
    ux, uy = ua.load(b, at(0), None), ua.load(b, at(1), None)
    s = b.binary(Op.and_, y, arith.const(b, K.i64, 63))
    us = b.binary(Op.and_, uy, arith.const(b, K.u64, 63))
    flag = lambda c, kind: arith.convert(b, c, kind)  # noqa: E731 - bool to 0 / 1
    signed = [arith.floordiv(b, x, y), arith.mod(b, x, y), arith.shift(b, Op.shr, x, s),
              arith.shift(b, Op.shl, x, s), flag(b.compare(Op.lt, x, y), K.i64),
              flag(b.compare(Op.le, x, y), K.i64)]  # fmt: skip
    unsigned = [arith.floordiv(b, ux, uy), arith.mod(b, ux, uy), arith.shift(b, Op.shr, ux, us),
                flag(b.compare(Op.lt, ux, uy), K.u64)]  # fmt: skip
    for col, r in enumerate(signed):
        out.store(b, at(col), r, None)
    for col, r in enumerate(unsigned):
        uout.store(b, at(col), r, None)
    for col, c in enumerate(conv):
        c.store(b, [i], arith.convert(b, f.load(b, at(col), None), c.compute), None)


def build(device, with_64):
    """The probe compiled for `device` as the raw driver (the caller sets selftest.RAW):
    (the _core.CompiledKernel, the names of its array arguments in order). With `with_64`
    the kernel has the float64 and integer probes; otherwise float32 alone."""
    mode = device.mode
    module = _core.KirModule("numba_vulkan_selftest")
    b = _core.KirBuilder(module)
    b.create_block("entry")
    shim = pytypes.SimpleNamespace(b=b, module=module, mode=mode)
    names, arrays = [], {}

    def arg(name, dtype, ndim):
        arrays[name] = ArrayArg(shim, name, types.Array(dtype, ndim, "C"), None)
        names.append(name)
        return arrays[name]

    x32, o32 = arg("x32", types.float32, 2), arg("o32", types.float32, 2)
    if with_64:
        x64, o64 = arg("x64", types.float64, 2), arg("o64", types.float64, 2)
        a, ua = arg("a", types.int64, 2), arg("ua", types.uint64, 2)
        f = arg("f", types.float64, 2)
        out, uout = arg("out", types.int64, 2), arg("uout", types.uint64, 2)
        conv = [arg(f"c{t}", t, 1) for t in CONVERSIONS]
    controls = launchers.codegen_controls(device)
    lib = denormals.wrap(b, controls.subnormals, controls.fused_fma)
    ik = x32.index_kind
    i = arith.convert(b, b.builtin(_core.Builtin.global_id, 0), ik)
    body, done = b.create_block("body"), b.create_block("done")
    b.condbr(b.compare(Op.lt, i, x32.extents[0]), body, done)
    b.set_block(body)
    _float_probe(b, lib, x32, o32, i)
    if with_64:
        _float_probe(b, lib, x64, o64, i)
        _int_probe(b, a, ua, f, out, uout, conv, i)
    b.br(done)
    b.set_block(done)
    b.ret()
    for arr in arrays.values():
        if arr.written:
            module.mark_written(arr.arg_index)
    return _compile(module, device, controls), tuple(names)


def _compile(module, device, controls):
    """A probe's KIR module compiled for `device` with `controls` (its CodegenControls)."""
    return _core.compile(
        module,
        max_push_bytes=launchers.max_push(device),
        nan_preserve=list(controls.nan_preserve),
        denorm_preserve=list(controls.denorm_preserve),
        narrow_ints=device.mode.prove,
        validate=bool(config.VALIDATE),
        validate_emitted=config.VALIDATE >= 2,
        fused_fma=controls.fused_fma,
        max_local_size=list(controls.max_local_size) or None,
        max_groups=list(controls.max_groups) or None,
    )


def build_sqrt_probe(device, per):
    """The kernel of runtime/sqrt_probe.py for `device`, compiled with its controls: invocation
    g takes the float32 whose bits are span[0] + g * per + k for k < per (those below
    span[0] + span[1]) and compares roots.one_step32 (the correction step without the
    rounding decision) with the correctly rounded root (the float64 library's, rounded to
    float32: for sqrt, rounding 53 bits to 24 is as good as rounding once); where they differ
    it adds 1 to found[0] and lowers found[1] to the float's bits. (the _core.CompiledKernel,
    the names of its array arguments in order), or None where the device's Fma may round twice
    (the step needs it to round once: launchers.fused_fma)."""
    controls = launchers.codegen_controls(device)
    if not controls.fused_fma:
        return None
    mode = device.mode
    module = _core.KirModule("numba_vulkan_sqrt_probe")
    b = _core.KirBuilder(module)
    b.create_block("entry")
    shim = pytypes.SimpleNamespace(b=b, module=module, mode=mode)
    span = ArrayArg(shim, "span", types.Array(types.int32, 1, "C"), None)
    found = ArrayArg(shim, "found", types.Array(types.int32, 1, "C"), None)
    lib = denormals.wrap(b, controls.subnormals, controls.fused_fma)
    exact = denormals.wrap(b, controls.subnormals)  # Dekker's products: right on any device
    ik = span.index_kind
    c = lambda v: arith.const(b, K.i32, v)  # noqa: E731
    g = arith.convert(b, b.builtin(_core.Builtin.global_id, 0), K.i32)
    k_var = b.var(K.i32)
    b.store(k_var, c(0))
    head, body, step, done = (b.create_block(n) for n in ("head", "body", "step", "done"))
    b.br(head)
    b.set_block(head)
    b.condbr(b.compare(Op.lt, b.load(k_var), c(per)), body, done)
    b.set_block(body)
    idx = b.binary(Op.add, b.binary(Op.mul, g, c(per)), b.load(k_var))
    first, count = (span.load(b, [arith.const(b, ik, j)], None) for j in (0, 1))
    inside = b.compare(Op.lt, idx, count)
    word = b.binary(Op.add, first, b.select(inside, idx, c(0)))
    x = b.bitcast(K.f32, word)
    want = b.convert(K.f32, roots._sqrt_direct(exact, b.convert(K.f64, x)))
    got = roots.one_step32(lib, x)
    differ = bits.both(b, inside, b.compare(Op.ne, b.bitcast(K.i32, got), b.bitcast(K.i32, want)))
    bad = b.create_block("bad")
    b.condbr(differ, bad, step)
    b.set_block(bad)
    b.atomic(_core.AtomicOp.add, [found.element_ptr(b, [arith.const(b, ik, 0)], None), c(1)])
    idx = b.binary(Op.add, b.binary(Op.mul, g, c(per)), b.load(k_var))
    word = b.binary(Op.add, span.load(b, [arith.const(b, ik, 0)], None), idx)
    b.atomic(_core.AtomicOp.min, [found.element_ptr(b, [arith.const(b, ik, 1)], None), word])
    b.br(step)
    b.set_block(step)
    b.store(k_var, b.binary(Op.add, b.load(k_var), c(1)))
    b.br(head)
    b.set_block(done)
    b.ret()
    module.mark_written(found.arg_index)
    return _compile(module, device, controls), ("span", "found")
