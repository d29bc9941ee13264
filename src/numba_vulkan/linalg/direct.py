"""Repeated ``matmul(a, b, units=True)`` calls on the tile kernel, straight to its launch.

A product the tile kernel takes as it is (two 2-d device operands and the result read and
written in place, one launch: ``tiles.direct``) is decided by the arrays' shapes, strides,
dtypes and alignment, the call's options, the device and the product variant
``tiles.choose`` names. The first call of such a
signature goes the whole way (``products.matmul``'s steps) and keeps the launch here; later
calls of that signature make the launch alone. On an H100 the whole way took 110 us of host
time more than the launch (2026-12-07), time the device waits for after a synchronisation.
"""

from __future__ import annotations

import numpy as np

from ..runtime.array import DeviceArray
from ..ufunc import operands
from . import plans
from .staging import ALIGN

#: Signatures (``_signature``) -> (the launch, ``tiles.launcher``'s, and the result's
#: dtype), or None for a product that does not go straight to its launch.
_launches: dict = {}
#: Signatures kept at most; past it the memo starts again.
MAX_SIGNATURES = 256


#: linalg.tiles once a product has imported it (its import, 3 ms, waits for the first
#: product; an import statement per call costs 0.5 us of the 5.5 a call takes)
_tiles = None


def _import_tiles():
    global _tiles
    from . import tiles

    _tiles = tiles
    return tiles


def _array(x):
    return x.shape, x._dev_strides, x.dtype, x._offset % ALIGN


def _signature(a, b, out, dtype, casting, contract):
    if not (type(a) is DeviceArray and type(b) is DeviceArray and a.ndim == 2 == b.ndim):
        return None
    if out is not None and not (type(out) is DeviceArray and out.ndim == 2):
        return None
    device = a.device
    if b.device is not device or (out is not None and out.device is not device):
        return None
    # The variant tiles.choose names now (benchmarks and tests choose others)
    tiles = _tiles or _import_tiles()
    variant = tiles.VARIANTS.get(tiles.choose(a.shape[0], b.shape[1], device))
    return (device, variant, _array(a), _array(b), None if out is None else _array(out),
            dtype, casting, contract)


def product(a, b, out, dtype, casting, contract, loop_dtypes):
    """``matmul(a, b, out, dtype=dtype, casting=casting, units=True, contract=contract)``
    where its signature goes straight to the launch (the result), else None (the whole way
    then, which also raises any error). `loop_dtypes`: products.matmul's (a, b) -> NumPy's
    loop dtypes."""
    try:
        key = _signature(a, b, out, dtype, casting, contract)
        known = _launches.get(key, False) if key is not None else None
    except TypeError:  # an unhashable dtype=
        return None
    if known is None:
        return None
    if out is not None and (operands.same_memory(out, a) or operands.same_memory(out, b)):
        return None  # read from copies (products.matmul)
    if known is False:
        return _first(key, a, b, out, dtype, casting, contract, loop_dtypes)
    start, result_dtype = known
    result = DeviceArray(a.device, (a.shape[0], b.shape[1]), result_dtype) if out is None \
        else out
    start(a, b, result)
    return result


def _first(key, a, b, out, dtype, casting, contract, loop_dtypes):
    """The first call of signature `key`: its launch kept (or None, for the whole way)."""
    if len(_launches) >= MAX_SIGNATURES:
        _launches.clear()
    _launches[key] = None
    (M, K), (K_b, N) = a.shape, b.shape
    if K != K_b or not M * N * K or (out is not None and out.shape != (M, N)):
        return None
    try:
        loop = loop_dtypes(a.dtype, b.dtype, dtype, casting)
        plan = plans.choose(loop[2], a.device, units=True, operands=(a.dtype, b.dtype),
                            contract=contract)
    except Exception:  # the whole way raises it with its own words
        return None
    if plan.family != "tiles" or (out is not None
                                  and not np.can_cast(loop[2], out.dtype, casting)):
        return None
    result = DeviceArray(a.device, (M, N), loop[2]) if out is None else out
    start = _import_tiles().direct(a, b, result, a.device, plan.operands)
    if start is None:
        return None
    _launches[key] = (start, result.dtype)
    start(a, b, result)
    return result
