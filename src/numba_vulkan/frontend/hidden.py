"""Hidden array parameters: global arrays that a kernel reads through a buffer.

Two kinds of globals (and closure variables) become arrays the kernel reaches
through parameters that the user never passes:

- a NumPy array too large to inline (frontend/constants.py): its values are
  frozen when the kernel is compiled (Numba's rule: changing the array later
  does not change the kernel), uploaded once per device into a buffer kept
  with the kernel's launcher, and read there. The kernel cannot write it
  (Numba types global arrays as read-only).
- a ``DeviceArray``: used in place, no copy. The kernel reads (and may write)
  its current contents at each launch, so writes made to it after compilation,
  by the host or by other kernels, are seen; only the binding is frozen
  (rebinding the global name to another array does not change the kernel).

Each hidden array has the parameters of an array argument (address, extents
and strides; arrays.py), declared as hidden parameters (kir/abi.h,
``KirModule.add_hidden_param``) named ``global<k>.addr``, ``global<k>.shape[d]``
and ``global<k>.strides[d]``. The launcher is given their values when it is
made (``launchers.hidden_values``, hidden_args.py): the DeviceArray for the
address, which the launcher marks as used by every launch (and as written
where the kernel writes it: ``mark_written`` on the address's declaration),
so the device's hazard tracking sees it as it sees any argument. One global
array used several times, or by several inlined device functions, is one
hidden array.

A hidden array is declared at its first use, in whatever block that is, so
its parameters are read again at each use (in the block of the use) rather
than once in the entry block as arguments' are: KIR values never cross blocks.
"""

from .. import _core
from . import arith
from .arrays import ArrayArg

#: Kinds of hidden arrays, as recorded in LoweredKernel.hidden / CompiledKernel.hidden.
CONSTANT = "constant"  # ("constant", frozen C-contiguous ndarray)
DEVICE = "device"  # ("device", DeviceArray)


class HiddenArray(ArrayArg):
    """A global array passed through hidden parameters (see the module docstring)."""

    def __init__(self, lowerer, name, ty, source, loc):
        self.b = lowerer.b
        self._reads = None  # set below, once ArrayArg has declared the parameters
        super().__init__(lowerer, name, ty, loc)
        self.source = source  # (CONSTANT, ndarray) or (DEVICE, DeviceArray)
        self._reads = self.param_ids
        if source[0] == CONSTANT:
            shape = source[1].shape
            self._const_shape = shape
            self._const_strides = tuple(
                int(_prod(shape[k + 1:])) for k in range(len(shape))
            )  # fmt: skip
        else:
            self._const_shape = None

    def _declare(self, module, name, ty):
        """Hidden parameters in place of ArrayArg's argument declaration (same names, kinds
        and order); ``arg_index`` is the address's declaration."""
        self.arg_index = module.num_args
        first = module.add_hidden_param(f"{name}.addr", _core.Kind.u64)
        for part in ("shape", "strides"):
            for k in range(ty.ndim):
                module.add_hidden_param(f"{name}.{part}[{k}]", self.index_kind)
        return first

    def unit_stride_dim(self):
        """A constant array is uploaded C-contiguous whatever the global's layout."""
        unit = super().unit_stride_dim()
        return self.ndim - 1 if unit is not None and self._const_shape is not None else unit

    # ArrayArg.__init__ stores the parameters it reads; a hidden array reads them at each
    # use instead (the setters drop the values read where the array was declared).
    @property
    def addr(self):
        return self.b.param(self._reads[0])

    @addr.setter
    def addr(self, _value):
        pass

    @property
    def extents(self):
        if self._reads is not None and self._const_shape is not None:
            return [arith.const(self.b, self.index_kind, n) for n in self._const_shape]
        return [self.b.param(p) for p in self._reads[1]]

    @extents.setter
    def extents(self, _value):
        pass

    @property
    def strides(self):
        if self._reads is not None and self._const_shape is not None:
            return [arith.const(self.b, self.index_kind, s) for s in self._const_strides]
        return [self.b.param(p) for p in self._reads[2]]

    @strides.setter
    def strides(self, _value):
        pass


def _prod(values):
    out = 1
    for v in values:
        out *= int(v)
    return out


def hidden_array(lowerer, value, ty, source, loc):
    """The HiddenArray of global `value` (one per array object and kernel)."""
    root = lowerer.root
    table = root.__dict__.setdefault("hidden_arrays", {})
    key = id(value)
    found = table.get(key)
    if found is not None:
        return found[0]
    name = f"global{len(table)}"
    arr = HiddenArray(root, name, ty, source, loc)
    # The value is kept with the entry, so its id cannot be reused by another object.
    table[key] = (arr, value)
    return arr


def lowered_hidden(lowerer):
    """[(name, source)] of the kernel's hidden arrays, in declaration order; marks the
    address of each that the kernel writes as written (hazards: vk/batch.cc)."""
    table = lowerer.__dict__.get("hidden_arrays", {})
    for arr, _ in table.values():
        if arr.written:
            lowerer.module.mark_written(arr.arg_index)
    return [(arr.name, arr.source) for arr, _ in table.values()]


__all__ = ["CONSTANT", "DEVICE", "HiddenArray", "hidden_array", "lowered_hidden"]
