"""Host-side helpers for the front-end tests: type and lower a kernel with
the compiler's own Numba pipeline, then run its KIR in the interpreter
(``_core.interpret``) and compare the arrays with CPython's results."""

import numba
import numpy as np

from numba_vulkan import _core, compiler, frontend, narrowing

INTS = narrowing.Mode(ints=True, floats=False)
EXACT = narrowing.Mode(ints=False, floats=False)
NARROW = narrowing.Mode(ints=True, floats=True)
INDEX64 = narrowing.Mode(index64=True)


def lower(fn, argtypes, mode=EXACT):
    typed = compiler.type_kernel(fn, tuple(argtypes), compiler.Options())
    return frontend.lower_kernel(
        typed.func_ir, typed.typemap, typed.calltypes, tuple(argtypes), mode, fn.__name__
    )


def _storage_dtype(dtype, mode):
    if dtype == np.bool_:
        return np.dtype(np.int32)
    if not mode.float64_storage and dtype == np.float64:
        return np.dtype(np.float32)
    return dtype


def _param_bits(value, kind):
    K = _core.Kind
    if kind in (K.f32,):
        return int(np.array(value, np.float32).view(np.uint32))
    if kind == K.f64:
        return int(np.array(value, np.float64).view(np.uint64))
    bits = 32 if kind in (K.i32, K.u32) else 64
    return int(value) & ((1 << bits) - 1)


def run_kir(fn, args, mode=EXACT, builtins=(), max_steps=2_000_000):
    """Lower `fn` for `args`, run it in the KIR interpreter; returns the arrays after the run."""
    argtypes = [numba.typeof(a) for a in args]
    lk = lower(fn, argtypes, mode)
    lk.module.verify()
    params, memory, outs = [], [], []
    base = 1 << 20
    K = _core.Kind
    for a, spec in zip(args, lk.argspecs):
        if spec[0] == "array":
            host = np.ascontiguousarray(a).astype(_storage_dtype(a.dtype, mode))
            memory.append((base, host.tobytes()))
            outs.append((a, host))
            ik = K.i32 if spec[6] == 4 else K.i64
            params.append(base)
            params += [_param_bits(e, ik) for e in a.shape]
            params += [_param_bits(s // a.itemsize, ik) for s in a.strides]
            base += max(host.nbytes, 8) + (1 << 16)
        else:
            _, _, code, nbytes, _ = spec
            if code == "b":
                params.append(1 if a else 0)
            else:
                kind = {("f", 4): K.f32, ("f", 8): K.f64, ("i", 4): K.i32, ("i", 8): K.i64,
                        ("u", 4): K.u32, ("u", 8): K.u64}[(code, nbytes)]  # fmt: skip
                params.append(_param_bits(a, kind))
    finished, _, regions = _core.interpret(lk.module, params, list(builtins), memory, max_steps)
    assert finished, "the kernel did not finish (endless loop?)"
    results = []
    for (a, host), raw in zip(outs, regions):
        out = np.frombuffer(raw, dtype=host.dtype).reshape(a.shape)
        results.append(out.astype(a.dtype))
    return results


def check(fn, *args, mode=EXACT, rtol=0.0):
    """Run `fn` in CPython and in KIR; every array must match."""
    expected = [np.array(a, copy=True) if isinstance(a, np.ndarray) else a for a in args]
    fn(*expected)
    got = run_kir(fn, args, mode)
    exp_arrays = [e for e in expected if isinstance(e, np.ndarray)]
    for g, e in zip(got, exp_arrays):
        if rtol:
            np.testing.assert_allclose(g, e, rtol=rtol)
        else:
            np.testing.assert_array_equal(g, e)
    return got
