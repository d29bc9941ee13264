"""The launch side of packed arguments (frontend/packed.py) and hidden arrays
(hidden_args.py): what the C++ launcher of such a kernel is given.

The C++ launcher knows scalar and array arguments only. A kernel whose
arguments include tuples, namedtuples or complex numbers has them flattened
into scalar parameters by the front end; its launcher is made with the flat
argspecs, and ``AdaptedLauncher`` flattens each launch's arguments the same
way (checking the Python type of each packed value: a value of another shape
or type answers False, as the C++ launcher does for a scalar of another type,
so that the dispatcher tries its other specialisations). Hidden arrays are
appended after the arguments. Kernels with neither get the bare C++ launcher.
"""

import numpy as np

from .arguments import scalar_for_launch


def launcher_specs(compiled):
    """(flat argspecs, flat writes) of the C++ launcher of `compiled`."""
    specs, writes = [], []
    for spec, written in zip(compiled.argspecs, compiled.writes):
        if spec[0] in ("tuple", "complex"):
            flat = []
            _flatten_spec(spec, flat)
            specs.extend(flat)
            # The arrays of a tuple argument count as written when any of them is (safe:
            # at worst a barrier or a copy back too many).
            writes.extend([written and s[0] == "array" for s in flat])
        else:
            specs.append(spec)
            writes.append(written)
    for spec, written, _source in getattr(compiled, "hidden", ()):
        specs.append(spec)
        writes.append(written)
    return specs, writes


def needs_adapter(compiled):
    return bool(getattr(compiled, "hidden", None)) or any(
        spec[0] in ("tuple", "complex") for spec in compiled.argspecs
    )


def _flatten_spec(spec, out):
    if spec[0] in ("tuple", "complex"):
        for item in spec[2]:
            _flatten_spec(item, out)
    else:
        out.append(spec)


def _packer(spec):
    """A function (value, out list) -> bool that appends `value`'s scalars to `out`, or
    None for a plain argument (passed as it is)."""
    kind = spec[0]
    if kind == "complex":
        accepted = (complex, np.complex128) if spec[1] == "float64" else (np.complex64,)

        def pack_complex(value, out):
            if type(value) not in accepted:
                return False
            out.append(value.real)  # float / numpy.float64, or numpy.float32: the part's type
            out.append(value.imag)
            return True

        return pack_complex
    if kind == "tuple":
        cls = spec[1] or tuple
        items = [_packer(s) for s in spec[2]]
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
    """A C++ launcher with packed arguments flattened and hidden arrays appended."""

    __slots__ = ("core", "packers", "hidden")

    def __init__(self, core, argspecs, hidden):
        self.core = core
        self.packers = tuple(_packer(spec) for spec in argspecs)
        self.hidden = tuple(hidden)

    def launch(self, groups, local_size, args, hold=False, stream=None):
        if len(args) != len(self.packers):
            return False
        flat = []
        for value, pack in zip(args, self.packers):
            if pack is None:
                flat.append(value)
            elif not pack(value, flat):
                return False
        flat.extend(self.hidden)
        return self.core.launch(groups, local_size, tuple(flat), hold, stream)

    def __getattr__(self, name):  # keep_last_block, last_block(): the C++ launcher's
        return getattr(self.core, name)

    def __setattr__(self, name, value):
        if name in self.__slots__:
            object.__setattr__(self, name, value)
        else:
            setattr(self.core, name, value)


def for_launch(value, argtype, mode, position, kernel, device=None, copy_back=None):
    """A tuple argument as the launcher takes it: scalars through scalar_for_launch (exact
    NumPy types, OverflowError for ints a narrowed slot cannot hold), NumPy arrays copied
    to `device` (appended to `copy_back` as (host, device copy) pairs, to copy back after
    the launch), device arrays checked to be on `device`."""
    from numba.core import types

    from .arguments import check_narrowed_array

    if isinstance(value, tuple) and isinstance(argtype, types.BaseTuple):
        items = [for_launch(v, t, mode, position, kernel, device, copy_back)
                 for v, t in zip(value, argtype.types)]  # fmt: skip
        return type(value)(*items) if hasattr(value, "_fields") else tuple(items)
    if isinstance(value, (np.generic, int, float)):
        return scalar_for_launch(value, argtype, mode, position, kernel)
    if isinstance(value, np.ndarray) and device is not None:
        from .runtime.array import _upload

        check_narrowed_array(value, mode, position, kernel)
        on_device = _upload(value, device)
        if copy_back is not None and value.flags.writeable:
            copy_back.append((value, on_device))
        return on_device
    if getattr(value, "device", device) is not device and hasattr(value, "copy_to_host"):
        raise ValueError(
            f"argument {position} of kernel {kernel!r} holds a device array of another "
            "device than the launch's; copy it with copy_to_host() and to_device()")  # fmt: skip
    return value
