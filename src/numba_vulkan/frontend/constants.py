"""Global and closure NumPy arrays read by a kernel: frozen into the code as constants.

Numba freezes the value of a global (or closure) array when it compiles the
kernel (changing the array afterwards does not change the kernel); so do
we. This first form inlines the values: ``arr[i]`` becomes a chain of
``select(linear == k, value_k, ...)`` over the frozen elements, which is
exact and needs no buffer, but costs one select per element at every read.
It is therefore limited to ``MAX_ELEMENTS`` elements; larger arrays are
refused with VulkanUnsupportedError (uploading them as constant buffers kept
with the pipeline is the planned form, issue 6 item 5). The arrays are
read-only, as in Numba, which types them as such.
"""

import numpy as np
from numba.core import types

from .. import _core
from . import arith
from .arrays import ArrayArg
from .errors import unsupported
from .types import compute_kind, index_kind, is_signed

Op = _core.Op

#: The largest global array inlined as constants (each read costs one select per element).
MAX_ELEMENTS = 256


class ConstArray(ArrayArg):
    """A global/closure NumPy array, frozen at compile time (an ArrayArg for .shape, len...)."""

    def __init__(self, lowerer, value, ty, loc):  # noqa: D107 -- no ArrayArg.__init__: no params
        if not isinstance(value, np.ndarray):
            raise unsupported(
                f"global arrays of type {type(value).__name__} (pass the array as an argument)",
                loc,
            )
        if value.ndim < 1 or value.ndim > 3:
            raise unsupported(f"{value.ndim}-d global arrays (1 to 3 dimensions)", loc)
        if value.size > MAX_ELEMENTS:
            raise unsupported(
                f"global arrays of more than {MAX_ELEMENTS} elements (this one has "
                f"{value.size}; pass it as a kernel argument)",
                loc,
            )
        self.b = lowerer.b
        self.name = "<global array>"
        self.ty = ty
        self.ndim = value.ndim
        self.compute = compute_kind(ty.dtype, lowerer.mode, loc)
        self.index_kind = index_kind(lowerer.mode)
        self.written = False
        self.values = np.array(value, copy=True, order="C").ravel()  # frozen now
        self.dims = value.shape
        self.elem_strides = tuple(int(np.prod(value.shape[k + 1:])) for k in range(value.ndim))

    @property
    def extents(self):
        return [arith.const(self.b, self.index_kind, n) for n in self.dims]

    @property
    def strides(self):
        return [arith.const(self.b, self.index_kind, s) for s in self.elem_strides]

    def load(self, b, indices, loc):
        if len(indices) != self.ndim:
            raise unsupported(
                f"indexing a {self.ndim}-d array with {len(indices)} indices (array views)", loc
            )
        ik = self.index_kind
        linear = None
        for idx, extent, stride in zip(indices, self.dims, self.elem_strides):
            signed = is_signed(b.kind(idx))
            idx = arith.convert(b, idx, ik)
            if signed:  # negative indices wrap around, as for array arguments
                negative = b.compare(Op.lt, idx, arith.const(b, ik, 0))
                idx = b.select(negative, b.binary(Op.add, idx, arith.const(b, ik, extent)), idx)
            term = b.binary(Op.mul, idx, arith.const(b, ik, stride))
            linear = term if linear is None else b.binary(Op.add, linear, term)
        k = self.compute
        result = arith.const(b, k, _python_value(self.values[0]))
        for j in range(1, self.values.size):
            hit = b.compare(Op.eq, linear, arith.const(b, ik, j))
            result = b.select(hit, arith.const(b, k, _python_value(self.values[j])), result)
        return result

    def store(self, b, indices, value, loc):
        raise unsupported("storing into a global array (it is a read-only constant)", loc)

    def element_ptr(self, b, indices, loc):
        raise unsupported("the address of a global array's element", loc)


def _python_value(v):
    if isinstance(v, np.bool_):
        return bool(v)
    if isinstance(v, np.integer):
        return int(v)
    return float(v)


def constant_array(lowerer, value, ty, loc):
    """The compile-time object for global/closure array `value` of Numba type `ty`."""
    if not isinstance(ty, types.Array):
        raise unsupported(f"constants of type {ty}", loc)
    return ConstArray(lowerer, value, ty, loc)
