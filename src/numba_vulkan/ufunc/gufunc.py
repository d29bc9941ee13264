"""``guvectorize(target="vulkan")``: a core function over the loop dimensions, on the device.

A generalized ufunc has a layout such as ``"(m,n),(n)->(m)"``: each argument's
last dimensions are its core dimensions, the dimensions before them are loop
dimensions, broadcast together as in NumPy. One invocation runs the core
function once, on views of the core dimensions::

    def _nv_gufunc(x0, x1, x2):
        i = global_id(0)
        if i < x0.shape[0]:
            core(x0[i], x1[i], x2[i])

Every operand is first brought to the shape ``(loop,) + core shape``: loop
dimensions broadcast (stride 0), merged into one where every operand allows
it, else cut into one launch per index of the leading ones. A ``()`` operand
whose signature type is an array (outputs, as in Numba: ``out[0] = ...``) gets
a trailing axis of 1; one whose type is a scalar is read as ``x[i]``, or passed
as a kernel scalar when the argument is a scalar. Kernels are cached per
signature, operand kinds and core ranks; arrays must have the signature's
dtypes (device arrays of another dtype are converted by an element-wise
kernel first, host arrays on the host).
"""

import inspect
import itertools

import numpy as np
from numba.core import sigutils, types
from numba.np import numpy_support
from numba.np.ufunc.sigparse import parse_signature

from .. import forksafe
from ..runtime.array import DeviceArray
from ..runtime.compiler_hook import jit
from ..runtime.creation import to_device
from ..runtime.reduce import _narrow_option
from ..stubs import global_id
from . import elementwise, operands
from .vectorizer import kernel_scalar, scalar_fits

_kernels = {}
_lock = forksafe.lock()
_serial = itertools.count()


def _kernel(core_fn, key, kinds, narrow, options):
    full = (key, kinds, narrow, options)
    k = _kernels.get(full)
    if k is not None:
        return k
    with _lock:
        k = _kernels.get(full)
        if k is None:
            params = [f"x{j}" for j in range(len(kinds))]
            first = kinds.index("a")
            args = [f"x{j}[i]" if kind == "a" else f"x{j}" for j, kind in enumerate(kinds)]
            source = (
                f"def _nv_gufunc({', '.join(params)}):\n"
                "    i = global_id(0)\n"
                f"    if i < x{first}.shape[0]:\n"
                f"        core({', '.join(args)})\n"
            )
            namespace = {"global_id": global_id, "core": core_fn}
            exec(compile(source, "<numba_vulkan gufunc>", "exec"), namespace)
            k = jit(narrow=narrow, **dict(options))(namespace["_nv_gufunc"])
            _kernels[full] = k
    return k


class VulkanGUVectorize:
    """The builder ``numba.guvectorize(..., target="vulkan")`` uses."""

    def __init__(self, func, signature, identity=None, cache=False, targetoptions=None,
                 writable_args=()):  # fmt: skip
        self.pyfunc = func
        self.layout = signature
        self.options = dict(targetoptions or {})
        self.options.pop("is_dynamic", None)
        self.signatures = []

    def add(self, sig):
        self.signatures.append(sig)

    def disable_compile(self):
        """Called after explicit signatures: calls must match one of them."""

    def build_ufunc(self):
        return VulkanGUFunc(self.pyfunc, self.layout, self.signatures, self.options)


class VulkanGUFunc:
    """A generalized ufunc run on a Vulkan device (see the module docstring).

    Call it with the inputs, optionally followed by the outputs, or with
    ``out=``; outputs not given are allocated (their core dimensions must
    appear among the inputs'). Returns NumPy arrays for host arguments and
    device arrays when any argument is one.
    """

    def __init__(self, pyfunc, layout, signatures, options):
        self._made_from = (pyfunc, layout, list(signatures), dict(options))
        self.pyfunc = pyfunc
        self.__name__ = getattr(pyfunc, "__name__", "gufunc")
        self.__doc__ = getattr(pyfunc, "__doc__", None)
        self.layout = layout
        self._ins, self._outs = parse_signature(layout)
        self.nin, self.nout = len(self._ins), len(self._outs)
        nparams = len(inspect.signature(pyfunc).parameters)
        if nparams != self.nin + self.nout:
            raise TypeError(f"{self.__name__} takes {nparams} arguments, the layout {layout!r} "
                            f"has {self.nin + self.nout}")  # fmt: skip
        options = dict(options)
        self._default_device = options.pop("device", None)
        unknown = sorted(set(options) - {"fastmath", "nopython", "cache", "opt"})
        if unknown:
            raise TypeError(f"guvectorize(target='vulkan') got unknown option(s) {unknown}")
        if options.get("nopython", True) is not True:  # kernels are nopython code only
            raise TypeError("nopython flag must be True")
        fastmath = bool(options.get("fastmath", False))
        self._options = (("fastmath", True),) if fastmath else ()
        self._core = jit(device=True, fastmath=fastmath)(pyfunc)
        self._signatures = [self._parse(sig) for sig in signatures]
        self._key = next(_serial)  # not id(self): ids are reused once an object is gone

    def _parse(self, sig):
        args, ret = sigutils.normalize_signature(sig)
        if ret not in (None, types.none):  # the outputs are arguments: a return value is lost
            raise TypeError(f"{self.__name__}: guvectorized functions cannot return values: "
                            f"signature {sig!r} specifies {ret} return type")  # fmt: skip
        if len(args) != self.nin + self.nout:
            raise TypeError(f"{self.__name__}: signature {sig!r} has {len(args)} arguments, "
                            f"the layout {self.nin + self.nout}")  # fmt: skip
        parsed = []
        for t, dims in zip(args, self._ins + self._outs):
            if isinstance(t, types.Array):
                if t.ndim not in (len(dims), 1 if not dims else -1):
                    raise TypeError(f"{self.__name__}: {t} does not fit core dimensions {dims}")
                parsed.append((numpy_support.as_dtype(t.dtype), True))
            else:
                if dims:
                    raise TypeError(f"{self.__name__}: scalar {t} for core dimensions {dims}")
                parsed.append((numpy_support.as_dtype(t), False))
        return tuple(parsed)

    def __repr__(self):
        return f"<numba_vulkan gufunc {self.__name__!r} {self.layout!r}>"

    def __reduce__(self):
        """Pickled (cloudpickle; Dask's ``distributed``) as what made it: the receiving
        process compiles on its first call."""
        return VulkanGUFunc, self._made_from

    def __call__(self, *args, out=None, device=None, stream=None):
        if len(args) not in (self.nin, self.nin + self.nout):
            raise TypeError(f"{self.__name__} takes {self.nin} inputs (and optionally "
                            f"{self.nout} outputs), {len(args)} given")  # fmt: skip
        if len(args) == self.nin and out is None and any(
                hasattr(a, "__dask_graph__") for a in args):
            from ..dask.ufuncs import generalized  # Dask arrays: one call per block

            return generalized(self, args)
        outs = list(args[self.nin:]) or [None] * self.nout
        if out is not None:
            if args[self.nin:]:
                raise TypeError("outputs given both as arguments and as out=")
            outs = list(out) if isinstance(out, tuple) else [out]
        values = [operands.as_operand(a) for a in args[: self.nin]]
        for o in outs:
            if o is not None and not isinstance(o, (DeviceArray, np.ndarray)):
                raise TypeError(f"outputs must be device or NumPy arrays, not {type(o).__name__}")
        spec = self._select(values, outs)
        if isinstance(stream, int) and stream == 0:  # numba.cuda's default stream
            stream = None
        if stream is not None and device is None:
            device = stream.device
        dev = operands.device_of(values + [o for o in outs if o is not None],
                                 device or self._default_device)  # fmt: skip
        loop_shape, sizes = self._shapes(values, outs)
        # Operands as device arrays (or kernel scalars) of the signature's dtypes.
        ins = [self._input(v, dt, dev) for v, (dt, _) in zip(values, spec[: self.nin])]
        targets, host_outs = [], []
        for o, (dt, _), dims in zip(outs, spec[self.nin :], self._outs):
            shape = loop_shape + tuple(sizes[d] for d in dims)
            if o is None:
                targets.append(DeviceArray(dev, shape, dt))
                host_outs.append(None)
            else:
                if o.dtype != dt:
                    raise TypeError(f"{self.__name__}: output of dtype {o.dtype}, the "
                                    f"signature has {dt}")  # fmt: skip
                if tuple(o.shape) != shape:
                    raise ValueError(f"{self.__name__}: output of shape {o.shape}, expected "
                                     f"{shape}")  # fmt: skip
                targets.append(o if isinstance(o, DeviceArray) else to_device(o, dev))
                host_outs.append(o if isinstance(o, np.ndarray) else None)
        self._launch(spec, ins + targets, loop_shape, dev, stream)
        on_device = any(isinstance(a, DeviceArray) for a in values + outs)
        results = []
        for t, h in zip(targets, host_outs):
            if h is not None:
                t.copy_to_host(out=h) if h.flags.c_contiguous else np.copyto(h, t.copy_to_host())
                results.append(h)
            else:
                results.append(t if on_device else t.copy_to_host())
        return results[0] if len(results) == 1 else tuple(results)

    def _select(self, values, outs):
        """Per argument (dtype, is array in the core function)."""
        have = []
        for v, dims in zip(list(values) + outs, self._ins + self._outs):
            if v is None:
                have.append(None)
            elif operands.is_python_scalar(v):
                have.append(("py", v))
            else:
                have.append(("dt", np.dtype(v.dtype)))
        if not self._signatures:
            if any(h is None for h in have):
                raise TypeError(f"{self.__name__}: without signatures the outputs must be "
                                "given (their types cannot be inferred)")  # fmt: skip
            return tuple(
                (np.dtype(np.result_type(h[1])) if h[0] == "py" else h[1],
                 bool(dims) or j >= self.nin or (h[0] == "dt" and np.ndim(v) > 0))
                for j, (h, v, dims) in enumerate(zip(have, list(values) + outs,
                                                     self._ins + self._outs))
            )  # fmt: skip
        # An exact match first, then one the arguments cast to safely, then (numba-cuda's
        # rule: the first signature the inputs can be cast to) one of the same kind, such as
        # float64 arrays into a float32 signature.
        for casting in ("equiv", "safe", "same_kind"):
            for spec in self._signatures:
                ok = True
                for h, (dt, _) in zip(have, spec):
                    if h is None:
                        continue
                    if h[0] == "py":
                        ok = scalar_fits(h[1], dt)
                    else:
                        ok = h[1] == dt if casting == "equiv" else np.can_cast(h[1], dt, casting)
                    if not ok:
                        break
                if ok:
                    return spec
        got = ", ".join("?" if h is None else (type(h[1]).__name__ if h[0] == "py" else str(h[1]))
                        for h in have)  # fmt: skip
        raise TypeError(f"{self.__name__}: no signature accepts arguments of types ({got})")

    def _shapes(self, values, outs):
        """The broadcast loop shape and the size of every core-dimension symbol."""
        sizes, loops = {}, []
        for v, dims in zip(list(values) + outs, self._ins + self._outs):
            if v is None:
                continue
            shape = tuple(np.shape(v)) if not operands.is_python_scalar(v) else ()
            if len(shape) < len(dims):
                raise ValueError(f"{self.__name__}: an operand of shape {shape} has fewer "
                                 f"dimensions than its core dimensions {dims}")  # fmt: skip
            core = shape[len(shape) - len(dims):]
            for d, n in zip(dims, core):
                if sizes.setdefault(d, n) != n:
                    raise ValueError(f"{self.__name__}: core dimension {d!r} is {sizes[d]} in "
                                     f"one operand and {n} in another")  # fmt: skip
            loops.append(shape[: len(shape) - len(dims)])
        for dims in self._outs:
            for d in dims:
                if d not in sizes:
                    raise ValueError(f"{self.__name__}: the size of output dimension {d!r} is "
                                     "not given by any input; pass the output")  # fmt: skip
        return tuple(np.broadcast_shapes(*loops)) if loops else (), sizes

    def _input(self, v, dtype, dev):
        if isinstance(v, DeviceArray):
            if v.dtype == dtype:
                return v
            return elementwise.cast_on_device(v, dtype)
        if operands.is_python_scalar(v) or (isinstance(v, np.generic)):
            return kernel_scalar(v, dtype)
        return to_device(np.asarray(v).astype(dtype, copy=False), dev)

    def _launch(self, spec, arrays, loop_shape, dev, stream=None):
        dims_all = self._ins + self._outs
        kinds, prepared = [], []
        for a, (_, as_array), dims in zip(arrays, spec, dims_all):
            if not isinstance(a, DeviceArray):
                kinds.append("s")
                prepared.append(a)
                continue
            core_shape = a.shape[a.ndim - len(dims):] if dims else ()
            a = operands.broadcast_to(a, loop_shape + core_shape)
            if not dims and as_array:  # a () operand the core function sees as a 1-element array
                a = operands.view(a, a.shape + (1,), a._dev_strides + (a._itemsize,))
            kinds.append("a")
            prepared.append(a)
        if loop_shape and any(n == 0 for n in loop_shape):
            return
        narrow = _narrow_option(dev)
        kinds = tuple(kinds)
        key = ("gufunc", self._key, spec)
        kernel = _kernel(self._core, key, kinds, narrow, self._options)
        nloop = len(loop_shape)
        arrays_only = [p for p in prepared if isinstance(p, DeviceArray)]
        if any(p.ndim - nloop > 2 for p in arrays_only):
            raise ValueError(f"{self.__name__}: more than 2 core dimensions per operand are not "
                             "supported (kernels take arrays of rank 1 to 3)")  # fmt: skip
        for views in _loop_views(arrays_only, loop_shape):
            it = iter(views)
            args = [next(it) if k == "a" else p for k, p in zip(kinds, prepared)]
            n = views[0].shape[0]
            kernel.forall(n, device=dev, stream=stream)(*args)


def _loop_views(arrays, loop_shape):
    """Per launch, the operands with their loop dimensions as one leading axis."""
    nloop = len(loop_shape)
    if nloop == 0:
        yield [operands.view(a, (1,) + a.shape, (0,) + a._dev_strides) for a in arrays]
        return
    loop_strides = [a._dev_strides[:nloop] for a in arrays]
    # Merge loop axes only (core axes stay as they are).
    shape, strides = list(loop_shape), [list(s) for s in loop_strides]
    axis = len(shape) - 1
    while axis > 0:
        if all(st[axis - 1] == st[axis] * shape[axis] for st in strides):
            shape[axis - 1] *= shape[axis]
            del shape[axis]
            for st in strides:
                st[axis - 1] = st[axis]
                del st[axis]
        axis -= 1
    for index in itertools.product(*(range(n) for n in shape[:-1])):
        views = []
        for a, st in zip(arrays, strides):
            offset = sum(i * s for i, s in zip(index, st[:-1]))
            core_shape, core_strides = a.shape[nloop:], a._dev_strides[nloop:]
            views.append(operands.view(a, (shape[-1],) + core_shape,
                                       (st[-1],) + core_strides, offset))  # fmt: skip
        yield views
