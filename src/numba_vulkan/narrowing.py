"""What a kernel computes in, for a device and the ``narrow`` option (ARCHITECTURE.md decision 4).

By default a kernel computes exactly what ``numba.njit`` computes for the same
types: int64 stays int64, uint32 stays unsigned. 32-bit integer math is either
proven exact by the compiler (the KIR narrowing pass, on by default) or asked
for by the user (``narrow="ints"``/``True``). float64 stays float64 where the
device has it; elsewhere the default computes in float32 with a
``VulkanPrecisionWarning``.

Independent of the arithmetic, every specialisation has an *index width*:
array extents and strides travel as 32-bit integers unless some array
argument reaches 2^31 elements or more past its first, in which case the
dispatcher asks for a 64-bit-index specialisation (``index64``). Index
arithmetic in a 32-bit-index specialisation is exact for every in-bounds
element (out-of-bounds access is undefined, as in Numba without boundscheck).

In memory, data always keeps its dtype where the device can hold it: a
float64 array is read as float64 and converted to float32 in the kernel when
``floats`` is set, never reinterpreted. Only a device without float64 (or
int64) stores such arrays as their 32-bit counterparts, and the runtime then
converts the data on the host (``runtime.array.storage_dtype``).
"""

from dataclasses import dataclass

from numba.core import types


@dataclass(frozen=True)
class Mode:
    """How a kernel is compiled.

    Attributes
    ----------
    ints : bool
        Compute int64/uint64 values as 32-bit integers (the user's request:
        ``narrow="ints"`` or ``True``). Scalar arguments that do not fit raise
        OverflowError at launch.
    floats : bool
        Compute float64 values as float32.
    prove : bool
        Run the compiler's proven narrowing of 64-bit integer operations
        (results unchanged). Off with ``narrow=False`` or NUMBA_VULKAN_INT64=1.
    index64 : bool
        Extents and strides as 64-bit integers (arrays past 2^31 elements).
    float64_storage : bool
        The device holds float64 data (False: float64 arrays are stored as float32).
    int64_storage : bool
        The device holds int64 data (False: int64 arrays are stored as int32).
    float32_atomic_add : bool
        The device adds float32 atomically (else atomic.add on float32 is a CAS loop).
    int64_atomics : bool
        The device has 64-bit integer atomics (else atomics on 64-bit data are refused).
    """

    ints: bool = False
    floats: bool = False
    prove: bool = True
    index64: bool = False
    float64_storage: bool = True
    int64_storage: bool = True
    float32_atomic_add: bool = True
    int64_atomics: bool = True

    @classmethod
    def for_device(cls, info, narrow=None):
        """The mode for a device (a DeviceInfo) and a kernel's ``narrow`` option.

        ``narrow``: None (Numba's types; floats narrowed only where the device
        lacks float64), "ints", "floats", True (both) or False (nothing, not
        even proven narrowing; a device without float64 or int64 then cannot
        run kernels that use them).
        """
        from . import config

        f64 = bool(getattr(info, "float64", True))
        i64 = bool(getattr(info, "int64", True))
        storage = dict(
            float64_storage=f64,
            int64_storage=i64,
            float32_atomic_add=bool(getattr(info, "float32_atomic_add", True)),
            int64_atomics=bool(getattr(info, "int64_atomics", True)),
        )
        if narrow is None:
            if config.NARROW:
                return cls(ints=True, floats=True, **storage)
            return cls(ints=not i64, floats=not f64, prove=not config.INT64, **storage)
        if narrow is True:
            return cls(ints=True, floats=True, **storage)
        if narrow is False:
            return cls(prove=False, **storage)
        if narrow == "ints":
            return cls(ints=True, floats=not f64, **storage)
        if narrow == "floats":
            return cls(ints=not i64, floats=True, **storage)
        raise ValueError(f"narrow must be None, True, False, 'ints' or 'floats', not {narrow!r}")


def int64_in_32_bit_slot(ty, mode):
    """Whether a scalar argument of Numba type `ty` travels in an int32 slot in a kernel
    compiled in `mode`: an int64 the kernel computes in 64 bits, in the 32-bit-index
    specialisation (the front end widens it; the dispatcher gives a launch whose value does
    not fit to the 64-bit-index specialisation, docs/narrowing.md)."""
    ty = types.unliteral(ty)
    return (isinstance(ty, types.Integer) and ty.signed and ty.bitwidth == 64
            and not mode.ints and not mode.index64)
