"""Our ufuncs (``nv.vectorize``) and generalized ufuncs (``nv.guvectorize``) called with Dask
arrays: one call per block, built lazily as Dask's own ufuncs are (``elemwise``,
``da.apply_gufunc``). The result dtypes come from the signatures (or Numba's typing without
them), so that Dask never calls the function on sample data."""

from __future__ import annotations

from typing import Any

import dask.array as da
import numpy as np


def has_dask_array(args: Any) -> bool:
    """Whether a Dask array is among `args` (without importing dask: the ufuncs ask)."""
    return any(hasattr(a, "__dask_graph__") and hasattr(a, "chunks") for a in args)


def _prototypes(args):
    """`args` with each Dask array as an empty NumPy array of its dtype (the dtype is all the
    signature selection reads)."""
    return [np.empty((0,) * a.ndim, a.dtype) if isinstance(a, da.Array) else a for a in args]


def _meta_of(args, dtype, ndim):
    from . import device_meta

    for a in args:
        meta = getattr(a, "_meta", None)
        if meta is not None and not isinstance(meta, np.ndarray):
            return device_meta(dtype, ndim, getattr(meta, "device", None))
    return np.empty((0,) * ndim, dtype)


def elementwise(ufunc: Any, args: tuple[Any, ...]) -> da.Array:
    """``ufunc(*args)`` for a VulkanUFunc and Dask arrays among `args`: a Dask array, of the
    dtype the ufunc gives for NumPy arrays of the blocks' dtypes (``ufunc.result_dtype``)."""
    from dask.array.core import elemwise

    return elemwise(ufunc, *args, dtype=ufunc.result_dtype(_prototypes(args)))


def generalized(gufunc: Any, args: tuple[Any, ...]) -> Any:
    """``gufunc(*args)`` for a VulkanGUFunc and Dask arrays among `args`: Dask arrays (a
    tuple of them for several outputs). Core dimensions must each lie in one chunk, as
    ``da.apply_gufunc`` requires."""
    spec = gufunc._select(_prototypes(args), [None] * gufunc.nout)
    dtypes = [np.dtype(dt) for dt, _ in spec[gufunc.nin:]]
    ndim = max((a.ndim for a in args if hasattr(a, "ndim")), default=0)
    metas = tuple(_meta_of(args, dt, max(ndim - len(gufunc._ins[0]) + len(dims), 0))
                  for dt, dims in zip(dtypes, gufunc._outs))  # fmt: skip
    return da.apply_gufunc(gufunc, gufunc.layout, *args,
                           meta=metas if gufunc.nout > 1 else metas[0])  # fmt: skip
