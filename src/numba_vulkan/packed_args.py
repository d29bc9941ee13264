"""The launch side of packed arguments (frontend/packed.py): tuples, namedtuples and
complex numbers, flattened for the C++ launcher; and of record scalar arguments.

The C++ launcher knows scalar and array arguments only (``_core.ArgDecl``,
kir/abi.h). A kernel whose arguments include tuples, namedtuples or complex
numbers has them declared as several scalar (or, for a tuple of arrays, array)
arguments by the front end, depth first; ``AdaptedLauncher`` flattens each
launch's arguments the same way, following the argument's Numba type and
checking the Python type of each packed value on the way (a value of another
shape or type answers False, as the C++ launcher does for a scalar of another
type, so that the dispatcher tries its other specialisations). A record scalar
argument is declared as a 1-element array of its dtype and passed as its device
copy, which the slow path wraps (``RecordOnDevice``). Kernels without packed or
record arguments get the bare C++ launcher and pay nothing. (Hidden arrays need
no adapter: they are hidden parameters the launcher is given once; hidden_args.py.)
"""

import numpy as np
from numba.core import types

from .arguments import check_narrowed_array, scalar_for_launch


class RecordOnDevice:
    """A record scalar argument's device copy (a 1-element device array), as the slow path
    hands it to the launcher: the only value a record parameter takes, so that no launch
    takes the fast path with a record array in its place (slow_launch.py copies records)."""

    __slots__ = ("array",)

    def __init__(self, array):
        self.array = array


def is_packed(ty):
    """Whether kernel argument type `ty` is flattened into several declarations."""
    return isinstance(types.unliteral(ty), (types.BaseTuple, types.Complex))


def flat_count(ty):
    """How many argument declarations kernel argument type `ty` has (frontend/packed.py)."""
    ty = types.unliteral(ty)
    if isinstance(ty, types.Complex):
        return 2
    if isinstance(ty, types.BaseTuple):
        return sum(flat_count(t) for t in ty.types)
    return 1


def needs_adapter(compiled):
    return any(is_packed(t) or isinstance(t, types.Record) for t in compiled.argtypes)


def _packer(ty):
    """A function (value, out list) -> bool that appends `value`'s scalars (or arrays) to
    `out`, or None for a plain argument (passed as it is)."""
    ty = types.unliteral(ty)
    if isinstance(ty, types.Record):

        def pack_record(value, out):
            if type(value) is not RecordOnDevice:
                return False
            out.append(value.array)
            return True

        return pack_record
    if isinstance(ty, types.Complex):
        accepted = (complex, np.complex128) if ty.bitwidth == 128 else (np.complex64,)

        def pack_complex(value, out):
            if type(value) not in accepted:
                return False
            out.append(value.real)  # float / numpy.float64, or numpy.float32: the part's type
            out.append(value.imag)
            return True

        return pack_complex
    if isinstance(ty, types.BaseTuple):
        cls = ty.instance_class if isinstance(ty, types.BaseNamedTuple) else tuple
        items = [_packer(t) for t in ty.types]
        n = len(items)

        def pack_tuple(value, out):
            if type(value) is not cls or len(value) != n:
                return False
            for item, pack in zip(value, items):
                if pack is None:
                    out.append(item)
                elif not pack(item, out):
                    return False
            return True

        return pack_tuple
    return None


class AdaptedLauncher:
    """A C++ launcher with packed arguments flattened."""

    __slots__ = ("core", "packers")

    def __init__(self, core, argtypes):
        self.core = core
        self.packers = tuple(_packer(t) for t in argtypes)

    def launch(self, groups, local_size, args, hold=False, stream=None):
        if len(args) != len(self.packers):
            return False
        flat = []
        for value, pack in zip(args, self.packers):
            if pack is None:
                flat.append(value)
            elif not pack(value, flat):
                return False
        return self.core.launch(groups, local_size, tuple(flat), hold, stream)

    def __getattr__(self, name):  # keep_last_block, last_block(): the C++ launcher's
        return getattr(self.core, name)

    def __setattr__(self, name, value):
        if name in self.__slots__:
            object.__setattr__(self, name, value)
        else:
            setattr(self.core, name, value)


def for_launch(value, argtype, decls, position, kernel, device=None, copy_back=None):
    """A tuple argument as the launcher takes it: scalars through scalar_for_launch (exact
    NumPy types, OverflowError for ints a narrowed slot cannot hold), NumPy arrays copied
    to `device` (appended to `copy_back` as (host, device copy) pairs, to copy back after
    the launch), device arrays checked to be on `device`. `decls`: the argument's
    declarations (CompiledKernel.by_position[position]), consumed in flattening order."""
    return _for_launch(value, argtype, iter(decls), position, kernel, device, copy_back)


def _for_launch(value, argtype, decls, position, kernel, device, copy_back):
    argtype = types.unliteral(argtype)
    if isinstance(value, tuple) and isinstance(argtype, types.BaseTuple):
        items = [_for_launch(v, t, decls, position, kernel, device, copy_back)
                 for v, t in zip(value, argtype.types)]  # fmt: skip
        return type(value)(*items) if hasattr(value, "_fields") else tuple(items)
    if isinstance(argtype, types.Complex):  # two declarations, checked by the launcher
        next(decls), next(decls)
        return value
    decl = next(decls)
    if isinstance(value, (np.generic, int, float)):
        return scalar_for_launch(value, argtype, decl, position, kernel)
    if isinstance(value, np.ndarray) and device is not None:
        from .runtime.creation import _upload

        check_narrowed_array(value, decl, position, kernel)
        on_device = _upload(value, device)
        if copy_back is not None and value.flags.writeable:
            copy_back.append((value, on_device))
        return on_device
    if getattr(value, "device", device) is not device and hasattr(value, "copy_to_host"):
        raise ValueError(
            f"argument {position} of kernel {kernel!r} holds a device array of another "
            "device than the launch's; copy it with copy_to_host() and to_device()")  # fmt: skip
    return value
