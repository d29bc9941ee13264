"""Dask arrays of device arrays: numba_vulkan's DeviceArray as a Dask chunk type.

Importing this module (it imports dask.array) registers:

- the chunk type with Dask's dispatch tables (``concatenate``, ``empty``, ``take``,
  ``tensordot``, ``numel`` ...; the NumPy functions Dask calls on chunks run on the device
  through ``DeviceArray.__array_function__``, runtime/array_functions.py), and with
  ``to_numpy_dispatch`` so that ``x.to_backend("numpy")`` copies chunks to the host;
- the array backend "vulkan" (also an entry point of the package, so
  ``dask.config.set({"array.backend": "vulkan"})`` finds it without this import):
  ``da.ones``, ``da.zeros``, ``da.empty``, ``da.full``, ``da.arange`` and ``da.random``
  make device chunks, and ``x.to_backend("vulkan")`` moves chunks to the device;
- serialisation of device arrays for ``distributed`` (the chunk's bytes on the host, as
  NumPy arrays travel; the receiving worker copies them to its device).

``LocalVulkanCluster`` (numba_vulkan.dask.cluster) starts one worker process per device.
See docs/dask.md.
"""

from __future__ import annotations

from itertools import product
from typing import Any
from uuid import uuid4

import dask.array as da
import numpy as np
from dask import config as _dask_config
from dask.array.backends import ArrayBackendEntrypoint
from dask.array.core import normalize_chunks, slices_from_chunks
from dask.array.dispatch import (
    concatenate_lookup,
    empty_lookup,
    nannumel_lookup,
    numel_lookup,
    take_lookup,
    tensordot_lookup,
    to_numpy_dispatch,
)
from dask.highlevelgraph import HighLevelGraph
from dask.utils import Dispatch

from ..runtime import DeviceArray, device_list
from ..runtime.creation import to_device

__all__ = [
    "LocalVulkanCluster",
    "VulkanBackendEntrypoint",
    "device_meta",
    "from_device_array",
    "to_vulkan_dispatch",
]

#: Moves one chunk to the calling thread's current device (``to_backend("vulkan")``).
to_vulkan_dispatch = Dispatch("to_vulkan_dispatch")


def device_meta(dtype: Any = np.float64, ndim: int = 0, device: Any = None) -> DeviceArray:
    """An empty device array (every extent 0) to give Dask as ``meta=``: it tells Dask the
    chunk type without data, so that Dask never computes a sample on the host."""
    return DeviceArray(device, (0,) * ndim, dtype)


def from_device_array(x: DeviceArray, chunks: Any = "auto", name: str | None = None) -> da.Array:
    """A Dask array whose chunks are views of device array `x`, without a copy.

    ``da.from_array(x, ...)`` first copies the array it is given (``x.copy()``: a second
    array of x's size on the device, for as long as the Dask array lives); here the chunks
    are views of `x` itself, so `x` must not change while the Dask array is used. `chunks`
    as Dask's (``normalize_chunks``: "auto", a size per axis, or the sizes of every chunk);
    `name` the Dask key's name (a random one by default: nothing is hashed or copied to the
    host). The chunk type is known from an empty device array (``device_meta``)."""
    if not isinstance(x, DeviceArray):
        raise TypeError(f"from_device_array() takes a device array, not {type(x).__name__} "
                        "(da.from_array takes host arrays)")
    chunks = normalize_chunks(chunks, x.shape, dtype=x.dtype)
    name = name or f"from-device-array-{uuid4().hex}"
    keys = product([name], *(range(len(c)) for c in chunks))
    graph = {key: x[s] for key, s in zip(keys, slices_from_chunks(chunks))}
    return da.Array(HighLevelGraph.from_collections(name, graph, dependencies=()), name, chunks,
                    meta=device_meta(x.dtype, x.ndim, x.device))


@to_vulkan_dispatch.register(np.ndarray)
def _numpy_to_device(data: np.ndarray, **kwargs: Any) -> DeviceArray:
    return to_device(data, **kwargs)


@to_vulkan_dispatch.register(DeviceArray)
def _device_to_device(data: DeviceArray, **kwargs: Any) -> DeviceArray:
    device = kwargs.get("device")
    if device is None or device_list.get_device(device) is data.device:
        return data
    return to_device(data, device=device)


@to_numpy_dispatch.register(DeviceArray)
def _device_to_numpy(data: DeviceArray, **kwargs: Any) -> np.ndarray:
    return data.copy_to_host()


def _take(a, indices, axis=0):
    if isinstance(indices, DeviceArray):
        indices = indices.copy_to_host()
    key = (slice(None),) * (axis % a.ndim) + (np.asarray(indices),)
    return a[key]


def _numel(x, **kwargs):
    from dask.array.backends import _numel_arraylike

    return _numel_arraylike(x, **kwargs)


def _nannumel(x, **kwargs):
    return np.sum(~np.isnan(x), **kwargs)


def _tensordot(a, b, axes=2):
    return np.tensordot(np.asarray(a), np.asarray(b), axes)  # on the host: no device form


def _empty(shape, dtype=np.float64, **kwargs):
    return DeviceArray(None, shape, dtype)


concatenate_lookup.register(DeviceArray, np.concatenate)  # the device form (runtime/array_functions.py)
take_lookup.register(DeviceArray, _take)
numel_lookup.register(DeviceArray, _numel)
nannumel_lookup.register(DeviceArray, _nannumel)
tensordot_lookup.register(DeviceArray, _tensordot)
empty_lookup.register(DeviceArray, _empty)


# ---- the "vulkan" array backend --------------------------------------------------------


class RandomState:
    """``da.random`` under the "vulkan" backend: NumPy's RandomState draws each chunk on the
    host (seeded per chunk by Dask, so results do not depend on the backend), and the chunk is
    copied to the current device."""

    def __init__(self, seed: Any = None) -> None:
        self._state = np.random.RandomState(seed)

    def __getattr__(self, name: str) -> Any:
        draw = getattr(self._state, name)
        if not callable(draw):
            return draw

        def on_device(*args: Any, **kwargs: Any) -> Any:
            values = draw(*args, **kwargs)
            return to_device(values) if isinstance(values, np.ndarray) else values

        return on_device


def _with_device_meta(name, *args, meta=None, dtype=None, **kwargs):
    """dask.array's creation function `name` with a device meta: its chunks are made by
    np.ones_like & co. on that meta, which run on the device."""
    if meta is None:
        shape = args[0] if args else kwargs.get("shape", ())
        ndim = len(shape) if isinstance(shape, (tuple, list)) else 1
        meta = device_meta(np.float64 if dtype is None else dtype, ndim)
    with _dask_config.set({"array.backend": "numpy"}):
        return getattr(da, name)(*args, meta=meta, dtype=dtype, **kwargs)


class VulkanBackendEntrypoint(ArrayBackendEntrypoint):
    """The "vulkan" array backend: ``dask.config.set({"array.backend": "vulkan"})``."""

    @classmethod
    def to_backend_dispatch(cls):
        return to_vulkan_dispatch

    @classmethod
    def to_backend(cls, data: da.Array, **kwargs: Any) -> da.Array:
        if isinstance(data._meta, DeviceArray):
            return data
        meta = device_meta(data.dtype, data.ndim)
        return data.map_blocks(to_vulkan_dispatch, meta=meta, **kwargs)

    @property
    def RandomState(self):
        return RandomState

    @property
    def default_bit_generator(self):
        return np.random.PCG64

    @staticmethod
    def ones(*args, **kwargs):
        return _with_device_meta("ones", *args, **kwargs)

    @staticmethod
    def zeros(*args, **kwargs):
        return _with_device_meta("zeros", *args, **kwargs)

    @staticmethod
    def empty(*args, **kwargs):
        return _with_device_meta("empty", *args, **kwargs)

    @staticmethod
    def full(*args, **kwargs):
        return _with_device_meta("full", *args, **kwargs)

    @staticmethod
    def arange(*args, like=None, **kwargs):
        if like is None:
            like = device_meta(kwargs.get("dtype") or np.int64, 1)
        with _dask_config.set({"array.backend": "numpy"}):
            return da.arange(*args, like=like, **kwargs)


def _register_backend():
    from dask.array.backends import array_creation_dispatch

    if "vulkan" not in array_creation_dispatch._lookup:
        array_creation_dispatch.register_backend("vulkan", VulkanBackendEntrypoint())


_register_backend()


# ---- distributed: device arrays travel as their host bytes ------------------------------


def _register_serialization():
    try:
        from distributed.protocol import dask_deserialize, dask_serialize
        from distributed.protocol.numpy import deserialize_numpy_ndarray, serialize_numpy_ndarray
    except ImportError:  # dask without distributed: nothing to register
        return

    @dask_serialize.register(DeviceArray)
    def _serialize(x: DeviceArray):
        header, frames = serialize_numpy_ndarray(x.copy_to_host())
        return header, frames

    @dask_deserialize.register(DeviceArray)
    def _deserialize(header, frames) -> DeviceArray:
        return to_device(deserialize_numpy_ndarray(header, frames))


_register_serialization()


def dask_setup(worker: Any = None) -> None:
    """distributed's preload hook (``--preload numba_vulkan.dask``; LocalVulkanCluster passes
    it): take the worker's ``NUMBA_VULKAN_VISIBLE_DEVICES`` and ``NUMBA_VULKAN_POOL_MB`` (set
    by the cluster after Python started: a forked worker's config was read before), open the
    device and compile the first kernel before the first task."""
    import os

    from .. import config

    config.POOL_MB = config._int("NUMBA_VULKAN_POOL_MB", config.POOL_MB, 0, 1 << 30)
    spec = os.environ.get("NUMBA_VULKAN_VISIBLE_DEVICES", "")
    if spec != config.VISIBLE_DEVICES:
        config.VISIBLE_DEVICES = spec
        device_list.list_devices(refresh=True)
    if os.environ.get("NUMBA_VULKAN_DASK_WARM", "1") != "0":
        from .cluster import warm_up

        warm_up()


def __getattr__(name: str) -> Any:
    if name == "LocalVulkanCluster":  # imports distributed on first use
        from .cluster import LocalVulkanCluster

        return LocalVulkanCluster
    raise AttributeError(f"module 'numba_vulkan.dask' has no attribute {name!r}")
