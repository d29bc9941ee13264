"""Global and closure arrays read by a kernel: frozen constants, or device arrays in place.

Numba freezes the value of a global (or closure) NumPy array when it compiles
the kernel (changing the array afterwards does not change the kernel); so do
we, in one of two forms:

- small arrays of plain numbers (up to ``MAX_ELEMENTS``, 16, elements) are inlined:
  ``arr[i]`` becomes a chain of ``select(linear == k, value_k, ...)`` over the
  frozen elements, exact and without any buffer, but one select per element
  at every read;
- larger ones, and arrays of records or complex numbers, become constant
  buffers: the frozen copy is uploaded once per device and kept with the
  kernel's launcher, and the kernel reads it through hidden parameters
  (frontend/hidden.py).

A global ``DeviceArray`` is not frozen: the kernel uses it in place (hidden.py).
Global NumPy arrays are read-only in kernels, as in Numba, which types them so.
"""

import numpy as np
from numba.core import types

from .. import _core
from . import arith
from .arrays import ArrayArg
from .errors import unsupported
from .types import compute_kind, index_kind, is_signed

Op = _core.Op

#: The largest global array inlined as constants. Each read of an inlined array costs a
#: select per element unless its index is a constant (then it folds to the value); a
#: constant buffer costs one load. On lavapipe, with variable indices, inlining wins at 8
#: elements and loses from 32 on (2x at 64, 9x at 256: benchmarks/bench_constants.py,
#: results/lavapipe_2026-11-30_constants.txt); small tables, often read at constant
#: indices (coefficients), stay inlined.
MAX_ELEMENTS = 16


class ConstArray(ArrayArg):
    """A global/closure NumPy array, frozen at compile time (an ArrayArg for .shape, len...)."""

    def __init__(self, lowerer, value, ty, loc):  # noqa: D107 -- no ArrayArg.__init__: no params
        self.b = lowerer.b
        self.name = "<global array>"
        self.ty = ty
        self.ndim = value.ndim
        self.compute = self.storage = compute_kind(ty.dtype, lowerer.mode, loc)
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
        return self.load_linear(b, linear)

    def load_linear(self, b, linear):
        """The element at C-order position `linear` (a view's element: views.py)."""
        ik = self.index_kind
        k = self.compute
        if not self.values.size:  # any read of an empty array is out of bounds
            return arith.const(b, k, 0)
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


def _check_narrowed(value, mode, loc):
    """Refuse 64-bit integers that a kernel computing in 32 bits (narrow="ints") would
    change, as the dispatcher refuses such NumPy arguments (OverflowError there)."""
    if not mode.ints or value.dtype.kind not in "iu" or value.dtype.itemsize != 8 or not value.size:
        return
    lo, hi = (-(2**31), 2**31 - 1) if value.dtype.kind == "i" else (0, 2**32 - 1)
    low, high = int(value.min()), int(value.max())
    if low < lo or high > hi:
        raise unsupported(
            f"a global array holding {low if low < lo else high}, which does not fit the "
            "32-bit integers the kernel computes in (narrow='ints'; use narrow=None)", loc)  # fmt: skip


def _inlinable(value, ty):
    """Whether global array `value` is small enough, and of plain numbers, to inline."""
    plain = isinstance(ty.dtype, (types.Integer, types.Float, types.Boolean))
    return plain and value.size <= MAX_ELEMENTS


def constant_array(lowerer, value, ty, loc):
    """The compile-time object for global/closure array `value` of Numba type `ty`."""
    from ..runtime import DeviceArray
    from .hidden import CONSTANT, DEVICE, hidden_array

    if not isinstance(ty, types.Array):
        raise unsupported(f"constants of type {ty}", loc)
    if isinstance(value, DeviceArray):
        return hidden_array(lowerer, value, ty, (DEVICE, value), loc)
    if not isinstance(value, np.ndarray):
        raise unsupported(
            f"global arrays of type {type(value).__name__} (pass the array as an argument)",
            loc,
        )
    if value.ndim < 1 or value.ndim > 3:
        raise unsupported(f"{value.ndim}-d global arrays (1 to 3 dimensions)", loc)
    _check_narrowed(value, lowerer.mode, loc)
    if _inlinable(value, ty):
        return ConstArray(lowerer, value, ty, loc)
    frozen = np.array(value, copy=True, order="C")  # frozen now, as Numba does
    frozen.setflags(write=False)
    return hidden_array(lowerer, value, ty, (CONSTANT, frozen), loc)
