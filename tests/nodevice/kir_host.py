"""Host-side helpers for the front-end tests: type and lower a kernel with
the compiler's own Numba pipeline, then run its KIR in the interpreter
(``_core.interpret``) and compare the arrays with CPython's results."""

from types import SimpleNamespace

import numba
import numpy as np

from numba_vulkan import _core, frontend, narrowing
from numba_vulkan.runtime.array import storage_dtype
from numba_vulkan.typing import pipeline

INTS = narrowing.Mode(ints=True, floats=False)
EXACT = narrowing.Mode(ints=False, floats=False)
NARROW = narrowing.Mode(ints=True, floats=True)
INDEX64 = narrowing.Mode(index64=True)


def lower(fn, argtypes, mode=EXACT, group_loop=False):
    typed = pipeline.type_kernel(fn, tuple(argtypes), pipeline.Options())
    return frontend.lower_kernel(
        typed.func_ir, typed.typemap, typed.calltypes, tuple(argtypes), mode, fn.__name__,
        group_loop=group_loop,
    )


def _storage_dtype(dtype, mode):
    """How the device stores `dtype` under `mode` (the runtime's rule, kir/abi.h)."""
    info = SimpleNamespace(int64=mode.int64_storage, float64=mode.float64_storage)
    return storage_dtype(dtype, info)


def _param_bits(value, kind):
    K = _core.Kind
    if kind in (K.f32,):
        return int(np.array(value, np.float32).view(np.uint32))
    if kind == K.f64:
        return int(np.array(value, np.float64).view(np.uint64))
    bits = 32 if kind in (K.i32, K.u32) else 64
    return int(value) & ((1 << bits) - 1)


def _order(a):
    """"F" for an F-contiguous array that is not C-contiguous, else "C"."""
    return "F" if a.flags.f_contiguous and not a.flags.c_contiguous else "C"


def run_kir(fn, args, mode=EXACT, builtins=(), max_steps=2_000_000, grid_base=(0, 0, 0),
            group_loop=False, grid_stride=1):
    """Lower `fn` for `args`, run it in the KIR interpreter; returns the arrays after the run.
    With `group_loop`, the dispatch has `grid_stride` workgroups along x (frontend/grid.py)."""
    argtypes = [numba.typeof(a) for a in args]
    lk = lower(fn, argtypes, mode, group_loop)
    lk.module.verify()
    params, memory, outs = [], [], []
    base = 1 << 20
    K = _core.Kind
    decls = [d for d in lk.args if d.kind != "hidden"]
    for a, decl in zip(args, decls):
        if decl.kind == "array":
            # Contiguous in the array's own order (an F-contiguous one stays F, as its type)
            order = _order(a)
            host = np.asarray(a, order=order).astype(_storage_dtype(a.dtype, mode), order=order)
            memory.append((base, host.tobytes(order=order)))
            outs.append((a, host))
            params.append(base)
            params += [_param_bits(e, decl.index) for e in a.shape]
            params += [_param_bits(s // host.itemsize, decl.index) for s in host.strides]
            base += max(host.nbytes, 8) + (1 << 16)
        elif decl.type == K.bool:
            params.append(1 if a else 0)
        else:
            params.append(_param_bits(a, decl.slot))
    builtins, params = _grid(lk.module, list(builtins), params, grid_base, grid_stride)
    finished, _, regions = _core.interpret(lk.module, params, builtins, memory, max_steps)
    assert finished, "the kernel did not finish (endless loop?)"
    # The integer narrowing pass (docs/narrowing.md) must not change any result:
    # every front-end test runs the narrowed module too.
    narrowed = _core.narrow_ints(lk.module)
    n_finished, _, n_regions = _core.interpret(narrowed, params, list(builtins), memory, max_steps)
    assert n_finished, "the narrowed kernel did not finish"
    assert [bytes(r) for r in n_regions] == [bytes(r) for r in regions], (
        "integer narrowing changed the results:\n" + narrowed.print()
    )
    results = []
    for (a, host), raw in zip(outs, regions):
        out = np.frombuffer(raw, dtype=host.dtype).reshape(a.shape, order=_order(host))
        results.append(out.astype(a.dtype))
    return results


def _grid(module, builtins, params, base=(0, 0, 0), stride=1):
    """The builtins and hidden grid parameters (frontend/grid.py) of one invocation.

    The kernel computes global_id from group_id, local_size and local_id: a
    given global_id g becomes group g of one invocation. The grid is one
    dispatch whose first workgroup is `base` (a piece of a split grid), of the
    given num_groups (1 by default), of `stride` workgroups along x (a group loop's).
    """
    B = _core.Builtin
    given = {(b, axis): v for b, axis, v in builtins}
    for (b, axis), v in list(given.items()):
        if b == B.global_id:
            given.setdefault((B.group_id, axis), v)
            given.setdefault((B.local_size, axis), 1)
            given.setdefault((B.local_id, axis), 0)
    for axis in range(3):
        for b, default in ((B.group_id, 0), (B.local_size, 1), (B.local_id, 0)):
            given.setdefault((b, axis), default)
    params = list(params)
    for index in range(len(params), module.num_params):
        name = module.param_name(index)  # grid.base.x ... grid.groups.z, grid.stride.x
        axis = "xyz".index(name[-1])
        if name.startswith("grid.base"):
            params.append(base[axis])
        elif name.startswith("grid.stride"):
            params.append(stride)
        else:
            params.append(given.get((B.num_groups, axis), 1))
    return [(b, axis, v) for (b, axis), v in given.items()], params


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
