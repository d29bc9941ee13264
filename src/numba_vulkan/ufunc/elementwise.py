"""Element-wise kernels: one invocation per output element, calling a scalar core function.

Both ``vectorize(target="vulkan")`` and NumPy's ufuncs on device arrays
(``np.add(d, 1)``, ``d + 1``) come here. A kernel is generated from a template
for (core function, which inputs are arrays and which scalars, the casts,
rank 1-3, number of outputs), compiled by our compiler like any ``@nv.jit``
kernel and cached; the dispatcher then specialises it per argument types.
For rank 3 a launch looks like ::

    def _nv_elementwise(x0, x1, o0):
        i0 = global_id(0)            # the last axis: neighbouring invocations
        i1 = global_id(1)            # touch neighbouring elements
        i2 = global_id(2)
        if i0 < o0.shape[2] and i1 < o0.shape[1] and i2 < o0.shape[0]:
            o0[i2, i1, i0] = O0(core(C0(x0[i2, i1, i0]), x1))

where ``x1`` is a scalar argument (already of the loop's type on the host),
``C0`` the cast of an array input to the type the core takes and ``O0`` the
cast to the output's type. Operands arrive as views prepared by
``operands.launches`` (broadcast with stride 0, axes merged, rank <= 3).
"""

import numpy as np

from .. import bfloat16_host, forksafe
from ..runtime.compiler_hook import jit
from ..runtime.reduce import _narrow_option
from ..stubs import global_id
from . import operands

_kernels = {}
_lock = forksafe.lock()
#: core_key[0] of kernels whose core is ours (NumPy's ufuncs, casts), not user code.
_LIBRARY_KERNELS = ("np", "np-constant", "astype")


def cast_expr(dtype, to_bool_ok=True):
    """Python source that converts ``{}`` to `dtype` in a kernel ("{}" for no cast)."""
    if dtype is None:
        return "{}"
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return "({} != 0)"
    if bfloat16_host.is_dtype(dtype):  # ml_dtypes.bfloat16 (a kernel's conversion rounds)
        return "bfloat16({})"
    return f"np.{dtype.name}({{}})"


def _index(rank):
    return ", ".join(f"i{k}" for k in reversed(range(rank)))


def _source(name, kinds, in_casts, out_casts, rank):
    nin = len(kinds)
    params = [f"x{k}" for k in range(nin)] + [f"o{k}" for k in range(len(out_casts))]
    idx = _index(rank)
    lines = [f"def {name}({', '.join(params)}):"]
    for k in range(rank):
        lines.append(f"    i{k} = global_id({k})")
    bounds = " and ".join(f"i{k} < o0.shape[{rank - 1 - k}]" for k in range(rank))
    lines.append(f"    if {bounds}:")
    args = []
    for k, (kind, cast) in enumerate(zip(kinds, in_casts)):
        value = f"x{k}[{idx}]" if kind == "a" else f"x{k}"
        args.append(cast.format(value))
    call = f"core({', '.join(args)})"
    if len(out_casts) == 1:
        lines.append(f"        o0[{idx}] = {out_casts[0].format(call)}")
    else:
        lines.append(f"        r = {call}")
        for k, cast in enumerate(out_casts):
            lines.append(f"        o{k}[{idx}] = {cast.format(f'r[{k}]')}")
    return "\n".join(lines) + "\n"


class _EveryDevice:
    """Stands in for the dispatcher's set of devices already warned about lavapipe's loop
    cap (Dispatcher._warn_loop_limit): kernels of NumPy's ufuncs loop only inside the math
    library and the integer power, whose loops are short (at most 64 iterations or the
    library's fixed counts), so the warning would only mislead."""

    def __contains__(self, device):
        return True

    def add(self, device):
        pass


def kernel(core, core_key, kinds, in_casts, out_casts, rank, narrow, options=()):
    """The cached jit kernel for one template instance (see the module docstring).

    `options` are further ``jit`` options as sorted (name, value) pairs: those of
    the core function that must match the kernel's (``fastmath``)."""
    key = (core_key, kinds, in_casts, out_casts, rank, narrow, options)
    k = _kernels.get(key)
    if k is not None:
        return k
    with _lock:
        k = _kernels.get(key)
        if k is not None:
            return k
        name = "_nv_elementwise_" + "".join(c if c.isalnum() else "_" for c in str(core_key[0]))
        source = _source(name, kinds, in_casts, out_casts, rank)
        namespace = {"np": np, "global_id": global_id, "core": core}
        if "bfloat16(" in source:
            namespace["bfloat16"] = bfloat16_host.scalar_type()
        exec(compile(source, f"<numba_vulkan element-wise {name}>", "exec"), namespace)
        k = jit(narrow=narrow, **dict(options))(namespace[name])
        if core_key[0] in _LIBRARY_KERNELS:
            k.__dict__["_loop_warned"] = _EveryDevice()
        _kernels[key] = k
    return k


def run(core, core_key, inputs, in_casts, outputs, out_casts, device, options=(), stream=None):
    """Launch ``outputs[k][...] = core(*inputs)[k]`` element by element.

    Parameters
    ----------
    core : Dispatcher
        The scalar device function (one result, or a tuple of ``len(outputs)``).
    core_key : hashable
        Identifies `core` and what it computes in the kernel cache.
    inputs : list
        DeviceArrays (broadcast to the outputs' shape here) or scalars of the
        exact type the kernel should receive.
    in_casts, out_casts : tuple of str
        ``cast_expr`` strings per input and per output.
    outputs : list of DeviceArray
        Of one shape, written in place.
    device : Device
    options : tuple of (str, object)
        Further ``jit`` options of the kernel (see `kernel`).
    stream : Stream, optional
        Launch on this stream.
    """
    shape = outputs[0].shape
    if any(n == 0 for n in shape):
        return
    arrays = [operands.broadcast_to(x, shape) for x in inputs if _is_array(x)]
    arrays += list(outputs)
    kinds = tuple("a" if _is_array(x) else "s" for x in inputs)
    narrow = _narrow_option(device)
    nin_arrays = sum(1 for k in kinds if k == "a")
    for launch_shape, views in operands.launches(arrays, shape):
        k = kernel(core, core_key, kinds, tuple(in_casts), tuple(out_casts),
                   len(launch_shape), narrow, options)  # fmt: skip
        it = iter(views[:nin_arrays])
        args = [next(it) if kind == "a" else x for kind, x in zip(kinds, inputs)]
        args += views[nin_arrays:]
        k.forall(tuple(reversed(launch_shape)), device=device, stream=stream)(*args)


def _is_array(x):
    return isinstance(x, operands.DeviceArray)


def _identity(x):
    return x


_cast_core = None


def cast_on_device(array, dtype):
    """A new device array holding `array`'s elements converted to `dtype` (NumPy's astype)."""
    global _cast_core
    if _cast_core is None:
        _cast_core = jit(device=True)(_identity)
    out = type(array)(array.device, array.shape, dtype)
    run(_cast_core, ("astype",), [array], ["{}"], [out], [cast_expr(dtype)],
        array.device)
    return out
