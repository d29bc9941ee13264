"""``@cuda.jit("void(int32[:], int32)")``: a kernel's signature fixes its scalar types.

numba.cuda compiles a kernel for its signature and converts each launch's arguments
to it: a Python int passed for an ``int32`` parameter *is* an int32 inside the kernel
(``cuda.clz(x)`` counts 32 bits, arithmetic wraps at 32 bits). Our kernels are compiled
per launch for the arguments' own types, where a Python int is an int64, so the same
program would compute something else. A kernel with one signature therefore converts
its scalar arguments to the signature's types at each launch, as C would (wrapping
integers, truncating floats), before the ordinary launch; array arguments are passed as
they are (their types come from the arrays). Several signatures (a list) leave the
arguments alone: numba.cuda then picks one by the arguments' types, which is what
compiling per launch does too.

A kernel with one signature is also typed for it at the decorator (numba.cuda compiles it
there), so that a typing error comes where the kernel is declared.
"""

import numpy as np
from numba.core import errors as numba_errors
from numba.core import sigutils, types
from numba.np.numpy_support import as_dtype

from .. import dispatcher as _dispatcher
from ..errors import VulkanUnsupportedError


def scalar_dtypes(signature):
    """Per parameter, the NumPy dtype a scalar argument is converted to, or None."""
    args, _ = sigutils.normalize_signature(signature)
    return tuple(as_dtype(t) if isinstance(t, (types.Integer, types.Float, types.Complex,
                                               types.Boolean)) else None for t in args)


def _convert(args, dtypes):
    out = list(args)
    for i, (arg, dtype) in enumerate(zip(args, dtypes)):
        if dtype is not None and isinstance(arg, (bool, int, float, complex, np.generic)):
            out[i] = np.asarray(arg).astype(dtype)[()]
    return out


def _type_eagerly(kernel, argtypes):
    """Compile `kernel` for its signature's types now, as numba.cuda does at the decorator,
    so that a kernel that cannot be typed for its own signature fails there, with the
    error its launch would raise (VulkanTypingError: Numba's TypingError in our words,
    typing/translate.py), rather than at the first launch. Launches still compile per
    argument types (a device array is C-contiguous where the signature says
    ``float32[:]``), so a failure after typing waits for the launch, which decides it for
    the launch's own types."""
    try:
        kernel.compile(argtypes)
    except numba_errors.TypingError:
        raise
    except Exception:  # noqa: BLE001 - decided at the launch, for the launch's own types
        pass


class _TypedLaunch:
    """A launch configuration whose call converts the scalar arguments first."""

    __slots__ = ("_launch", "_dtypes")

    def __init__(self, launch, dtypes):
        self._launch = launch
        self._dtypes = dtypes

    def __call__(self, *args):
        return self._launch(*_convert(args, self._dtypes))


class TypedDispatcher(_dispatcher.Dispatcher):
    """A kernel declared with one signature (module doc)."""

    scalar_dtypes = ()

    def __getitem__(self, config_):
        return _TypedLaunch(super().__getitem__(config_), self.scalar_dtypes)

    def forall(self, *args, **kwargs):
        return _TypedLaunch(super().forall(*args, **kwargs), self.scalar_dtypes)


def typed_kernel(kernel, signature):
    """`kernel` (a Dispatcher just made by jit) as a TypedDispatcher for `signature`.

    A pointer parameter (``types.CPointer(types.uint8)``, numba-cuda's raw device
    pointers) is refused here: the integer a launch would pass has no meaning for a
    Vulkan buffer, and the kernel would otherwise be typed for an integer argument."""
    args, _ = sigutils.normalize_signature(signature)
    for i, t in enumerate(args):
        if isinstance(t, (types.CPointer, types.RawPointer)):
            raise VulkanUnsupportedError(
                f"cuda.jit signature of {getattr(kernel, '__name__', 'kernel')!r}: parameter "
                f"{i} is a pointer ({t}); raw CUDA device pointers do not exist on Vulkan "
                "(pass the array itself)")
    _type_eagerly(kernel, tuple(args))
    dtypes = scalar_dtypes(signature)
    if any(d is not None for d in dtypes):
        kernel.__class__ = TypedDispatcher  # same state; only the launch forms differ
        kernel.scalar_dtypes = dtypes
    return kernel
