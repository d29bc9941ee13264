"""How 64-bit types are narrowed for a device (ARCHITECTURE.md decision 4).

Index math in 32 bits is markedly faster on GPUs, so kernels compute with
32-bit integers by default. float64 stays float64 where the device has it.
"""

from dataclasses import dataclass


@dataclass(frozen=True)
class Mode:
    """How a kernel is compiled.

    Attributes
    ----------
    ints : bool
        Compute int64/uint64 values as 32-bit integers.
    floats : bool
        Compute float64 values as float32 (devices without float64).
    """

    ints: bool = True
    floats: bool = False

    @classmethod
    def for_device(cls, info, narrow=None):
        """The mode for a device (a DeviceInfo) and a kernel's ``narrow`` option.

        ``narrow``: None (ints narrowed, floats where the device lacks float64),
        "ints", "floats", True (both) or False (nothing).
        """
        from . import config

        if narrow is None:
            if config.NARROW:
                return cls(ints=True, floats=True)
            return cls(ints=not config.INT64, floats=not info.float64)
        if narrow is True:
            return cls(ints=True, floats=True)
        if narrow is False:
            return cls(ints=False, floats=False)
        if narrow == "ints":
            return cls(ints=True, floats=not info.float64)
        if narrow == "floats":
            return cls(ints=False, floats=True)
        raise ValueError(f"narrow must be None, True, False, 'ints' or 'floats', not {narrow!r}")
