"""``vectorize(target="vulkan")``: a scalar function applied element by element on the device.

Numba's ``numba.vectorize`` looks the target up in ``Vectorize.target_registry``
(registry.py puts ``"vulkan"`` there); the builder (``VulkanVectorize``)
collects the signatures and ``build_ufunc`` returns a ``VulkanUFunc``. As with
``target="cuda"``, that is not a ``numpy.ufunc``: it is called directly with
NumPy arrays, device arrays and scalars, broadcasts them as NumPy does, and
returns a NumPy array for host inputs and a device array when any input (or
``out``) is one.

Types. With signatures, a call takes the first signature whose inputs match
the arguments' dtypes exactly, else the first one they cast to safely (NumPy's
loop search); Python scalars are weak (NumPy 2): they fit any signature whose
type holds their value. Without signatures the function is compiled for the
arguments' own types (a Python scalar takes the type NumPy would give it next
to the array arguments: ``x * 2.0`` stays float32 for a float32 ``x``), and
the result type is what Numba's typing infers for the function.
"""

import inspect
import itertools

import numpy as np
from numba.core import sigutils

from ..runtime.array import DeviceArray
from ..runtime.compiler_hook import jit
from ..runtime.creation import to_device
from ..typing import bfloat16
from ..typing.pipeline import Options, type_kernel_for_user
from . import elementwise, operands
from .reduction import tree_reduce

_serial = itertools.count()


def _inferred_return(pyfunc, args):
    """The return type numba.njit infers for `pyfunc` at argument types `args`."""
    import numba

    dispatcher = numba.njit(pyfunc)
    dispatcher.compile(tuple(args))
    return dispatcher.overloads[tuple(args)].signature.return_type


def parse_signatures(signatures, pyfunc=None):
    """Numba signatures (strings or Signature objects) as (arg dtypes, return dtype) pairs.
    A signature without a return type (``'(int16, int16)'``) gets the one numba.njit
    infers for `pyfunc` at those argument types, as numba-cuda does."""
    parsed = []
    for sig in signatures:
        args, restype = sigutils.normalize_signature(sig)
        if restype is None and pyfunc is not None:
            restype = _inferred_return(pyfunc, args)
        if restype is None:
            raise TypeError(f"vectorize signature {sig!r} needs a return type")
        try:
            dtypes = tuple(bfloat16.as_dtype(t) for t in args)  # Numba's, and bfloat16
            ret = bfloat16.as_dtype(restype)
        except NotImplementedError as e:
            raise TypeError(f"vectorize signature {sig!r}: {e}") from None
        parsed.append((dtypes, ret))
    return parsed


def scalar_fits(value, dtype):
    """Whether a weak Python scalar can become `dtype` without loss of kind or range."""
    if isinstance(value, bool):
        return True
    if isinstance(value, int):
        if dtype.kind in "fc":
            return True
        if dtype.kind in "iu":
            info = np.iinfo(dtype)
            return info.min <= value <= info.max
        return False
    if isinstance(value, float):
        return dtype.kind in "fc"
    return dtype.kind == "c"


def _accepts(value, dtype, exact):
    if operands.is_python_scalar(value):
        return scalar_fits(value, dtype)
    have = value.dtype
    return have == dtype if exact else np.can_cast(have, dtype, "safe")


def select(signatures, values, name):
    """The (arg dtypes, return dtype) of the signature a call takes, or TypeError."""
    for exact in (True, False):
        for dtypes, ret in signatures:
            if all(_accepts(v, d, exact) for v, d in zip(values, dtypes)):
                return dtypes, ret
    have = ", ".join(
        type(v).__name__ if operands.is_python_scalar(v) else str(v.dtype) for v in values
    )
    known = "; ".join(
        f"({', '.join(map(str, d))}) -> {r}" for d, r in signatures
    )
    raise TypeError(f"{name}: no signature accepts arguments of types ({have}); it has {known}")


def natural_dtypes(values):
    """The dtypes a call without signatures compiles for (weak Python scalars as NumPy 2)."""
    arrays = [v.dtype for v in values if not operands.is_python_scalar(v)]
    out = []
    for v in values:
        if not operands.is_python_scalar(v):
            out.append(np.dtype(v.dtype))
        elif isinstance(v, bool):
            out.append(np.dtype(np.bool_))
        elif arrays:
            out.append(np.result_type(*arrays, v))
        else:
            out.append(np.result_type(v))
    return out


def prepare_inputs(values, dtypes, device):
    """Inputs for elementwise.run: device arrays (cast in the kernel), host arrays copied
    to the device in the wanted dtype, scalars converted on the host. -> (inputs, casts)"""
    inputs, casts = [], []
    for v, dtype in zip(values, dtypes):
        if isinstance(v, DeviceArray):
            inputs.append(v)
            casts.append("{}" if v.dtype == dtype else elementwise.cast_expr(dtype))
        elif isinstance(v, np.ndarray) and v.ndim > 0:
            inputs.append(to_device(v.astype(dtype, copy=False), device))
            casts.append("{}")
        elif np.dtype(dtype).kind == "c":  # kernels take no complex scalars: a 0-d array
            inputs.append(to_device(np.asarray(kernel_scalar(v, dtype)), device))
            casts.append("{}")
        else:
            inputs.append(kernel_scalar(v, dtype))
            casts.append("{}")
    return inputs, casts


def kernel_scalar(value, dtype):
    """`value` as the exact scalar type a kernel argument of `dtype` needs.

    Raises OverflowError (NumPy 2's) for a Python int outside `dtype`'s range."""
    dtype = np.dtype(dtype)
    if operands.is_python_scalar(value):
        if isinstance(value, int) and not isinstance(value, bool) and dtype.kind in "iu":
            info = np.iinfo(dtype)
            if not info.min <= value <= info.max:
                raise OverflowError(f"Python integer {value} out of bounds for {dtype}")
    value = np.asarray(value).astype(dtype)[()]
    if dtype.kind == "b":
        return bool(value)
    return value


class VulkanVectorize:
    """The builder ``numba.vectorize(..., target="vulkan")`` uses (Numba's protocol:
    ``add(sig)``, ``disable_compile()``, ``build_ufunc()``)."""

    def __init__(self, func, identity=None, cache=False, targetoptions=None):
        self.pyfunc = func
        self.identity = identity
        self.options = dict(targetoptions or {})
        self.signatures = []

    def add(self, sig):
        self.signatures.append(sig)

    def disable_compile(self):
        """Numba calls this after explicit signatures: calls must then match one of them."""

    def build_ufunc(self):
        return VulkanUFunc(self.pyfunc, self.signatures, self.options, self.identity)


class VulkanUFunc:
    """An element-wise function run on a Vulkan device (see the module docstring).

    Call it as ``f(x, y, out=None, device=None, stream=None)`` (launches go on `stream`
    where one is given). ``out`` (a device
    or NumPy array of the result's shape) receives the result, converted to its
    dtype where NumPy's ``same_kind`` casting allows. Kernels are generated per
    signature, operand kinds and rank and cached.

    Attributes
    ----------
    nin, nout : int
    identity : object
    types : list of str
        The signatures in NumPy's notation (``"ff->f"``).
    """

    def __init__(self, pyfunc, signatures, options, identity=None):
        self._made_from = (pyfunc, list(signatures), dict(options), identity)
        self.pyfunc = pyfunc
        self.__name__ = getattr(pyfunc, "__name__", "ufunc")
        self.__doc__ = getattr(pyfunc, "__doc__", None)
        self.identity = identity
        options = dict(options)
        unknown = sorted(set(options) - {"fastmath", "cache", "nopython", "device", "opt"})
        if unknown:
            raise TypeError(f"vectorize(target='vulkan') got unknown option(s) {unknown}")
        self._default_device = options.pop("device", None)
        fastmath = bool(options.get("fastmath", False))
        self._options = (("fastmath", True),) if fastmath else ()
        self._core = jit(device=True, fastmath=fastmath)(pyfunc)
        self.nin = len(inspect.signature(pyfunc).parameters)
        self.nout = 1
        self._signatures = parse_signatures(signatures, pyfunc)
        for dtypes, _ in self._signatures:
            if len(dtypes) != self.nin:
                raise TypeError(f"{self.__name__}: a signature has {len(dtypes)} arguments, "
                                f"the function {self.nin}")  # fmt: skip
        self._return_types = {}  # arg dtypes -> result dtype, without signatures
        # Identifies this function in the kernel cache (an id() could be reused by a later
        # object once this one is gone, and find this one's kernels).
        self._key = next(_serial)

    def __reduce__(self):
        """Pickled (cloudpickle; Dask's ``distributed``) as what made it: the receiving
        process compiles on its first call."""
        return VulkanUFunc, self._made_from

    @property
    def types(self):
        return [
            "".join(d.char for d in dtypes) + "->" + ret.char for dtypes, ret in self._signatures
        ]

    def __repr__(self):
        return f"<numba_vulkan ufunc {self.__name__!r}, {len(self._signatures)} signature(s)>"

    def _result_dtype(self, dtypes):
        key = tuple(dtypes)
        found = self._return_types.get(key)
        if found is None:
            found = infer_return_dtype(self.pyfunc, dtypes, self.__name__)
            self._return_types[key] = found
        return found

    def result_dtype(self, values):
        """The dtype of ``self(*values)`` for operands `values` (NumPy arrays or scalars), as a
        call selects it: the first signature they cast to, else Numba's typing."""
        if self._signatures:
            return select(self._signatures, values, self.__name__)[1]
        return self._result_dtype(natural_dtypes(values))

    def __call__(self, *args, out=None, device=None, stream=None):
        if len(args) != self.nin:
            raise TypeError(f"{self.__name__} takes {self.nin} arguments, {len(args)} given")
        if out is None and any(hasattr(a, "__dask_graph__") for a in args):
            from ..dask.ufuncs import elementwise  # Dask arrays: one call per block

            return elementwise(self, args)
        values = [operands.as_operand(a) for a in args]
        if self._signatures:
            dtypes, ret = select(self._signatures, values, self.__name__)
        else:
            dtypes = natural_dtypes(values)
            ret = self._result_dtype(dtypes)
        if isinstance(stream, int) and stream == 0:  # numba.cuda's default stream
            stream = None
        if stream is not None and device is None:
            device = stream.device
        return apply(self._core, ("vectorize", self._key, tuple(dtypes)), values, dtypes, [ret],
                     out, device or self._default_device, self._options, stream)  # fmt: skip

    def reduce(self, array, axis=0, device=None):
        """Reduce a 1-d array (or any array with ``axis=None``) with this binary function,
        in a tree on the device (so float results may differ from a left-to-right fold
        in rounding, as with numba.cuda's ``reduce``)."""
        if self.nin != 2:
            raise TypeError(f"{self.__name__}.reduce needs a function of two arguments")
        return tree_reduce(self, array, axis, self.identity, device)


def infer_return_dtype(pyfunc, dtypes, name):
    """The dtype Numba's typing (our typing context) gives `pyfunc`'s result for `dtypes`."""
    argtypes = tuple(bfloat16.from_dtype(d) for d in dtypes)  # Numba's, and bfloat16
    typed = type_kernel_for_user(pyfunc, argtypes, Options())
    try:
        return bfloat16.as_dtype(typed.return_type)
    except NotImplementedError:
        raise TypeError(
            f"{name} returns {typed.return_type} for arguments {list(map(str, dtypes))}: "
            "an element-wise function must return a scalar number"
        ) from None


def apply(core, core_key, values, dtypes, out_dtypes, out, device, options=(), stream=None,
          casting="same_kind"):
    """Run `core` element-wise over `values` (converted to `dtypes`) into outputs of
    `out_dtypes` (allocated, or `out`), and return them as NumPy's ufuncs would. On a
    `stream`, launches with device arrays return at once (host results still wait)."""
    outs = _out_tuple(out, len(out_dtypes))
    dev = operands.device_of(list(values) + [o for o in outs if o is not None], device)
    shapes = [np.shape(v) for v in values if not operands.is_python_scalar(v)]
    shape = np.broadcast_shapes(*shapes) if shapes else ()
    given = [o for o in outs if o is not None]
    for o in given:
        if o.shape != shape:
            try:
                np.broadcast_shapes(o.shape, shape)
                assert np.broadcast_shapes(o.shape, shape) == tuple(o.shape)
            except (ValueError, AssertionError):
                raise ValueError(f"out has shape {o.shape}, the result {shape}") from None
        shape = tuple(o.shape)
    inputs, in_casts = prepare_inputs(values, dtypes, dev)
    targets, out_casts, copy_back = [], [], []
    for o, dt in zip(outs, out_dtypes):
        if o is None:
            targets.append(DeviceArray(dev, shape, dt))
            out_casts.append(elementwise.cast_expr(dt))
            copy_back.append(None)
            continue
        if not np.can_cast(dt, o.dtype, casting):
            raise TypeError(
                f"Cannot cast ufunc output from dtype('{dt}') to dtype('{o.dtype}') with "
                f"casting rule {casting!r}"
            )
        out_casts.append(elementwise.cast_expr(o.dtype))
        if isinstance(o, DeviceArray):
            targets.append(o)
            copy_back.append(None)
        else:
            targets.append(DeviceArray(dev, shape, o.dtype))
            copy_back.append(o)
    # Only outputs given by the caller can share memory with an input (ours are new).
    inputs = _separate_overlaps(inputs, [t for t, o in zip(targets, outs) if o is not None])
    elementwise.run(core, core_key, inputs, in_casts, targets, out_casts, dev, options, stream)
    on_device = any(isinstance(v, DeviceArray) for v in values) or any(
        isinstance(o, DeviceArray) for o in given
    )
    results = []
    for t, host_out in zip(targets, copy_back):
        if host_out is not None:
            np.copyto(host_out, t.copy_to_host())
            results.append(host_out)
        elif on_device:
            results.append(t)
        else:
            host = t.copy_to_host()
            results.append(host[()] if host.ndim == 0 else host)
    return results[0] if len(results) == 1 else tuple(results)


def _out_tuple(out, nout):
    if out is None:
        return [None] * nout
    if isinstance(out, tuple):
        if len(out) != nout:
            raise ValueError(f"out must have {nout} entries, not {len(out)}")
        outs = list(out)
    else:
        if nout != 1:
            raise ValueError(f"out must be a tuple of {nout} arrays")
        outs = [out]
    for o in outs:
        if o is not None and not isinstance(o, (DeviceArray, np.ndarray)):
            raise TypeError(f"out must be a device or NumPy array, not {type(o).__name__}")
        if isinstance(o, np.ndarray) and not o.flags.writeable:
            raise ValueError("out is read-only")
    return outs


def _separate_overlaps(inputs, targets):
    """Inputs that overlap an output other than element for element are copied first
    (NumPy's rule: the result is as if the inputs were read before any write)."""
    if not targets:
        return inputs
    fixed = []
    for x in inputs:
        if isinstance(x, DeviceArray):
            for t in targets:
                if operands.same_memory(x, t) and not operands.same_elements(
                    operands.broadcast_to(x, t.shape), t
                ):
                    x = elementwise.cast_on_device(x, x.dtype)  # a contiguous copy made on the device
                    break
        fixed.append(x)
    return fixed
