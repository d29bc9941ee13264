"""``target="vulkan"`` for ``numba.vectorize`` and ``numba.guvectorize``, and ``nv.vectorize``.

Numba looks a target up in ``Vectorize.target_registry`` and
``GUVectorize.target_registry`` (``numba/np/ufunc/decorators.py``); numba.cuda
puts ``"cuda"`` there as an on-demand entry, and so do we for ``"vulkan"``
when ``numba_vulkan`` is imported. Numba then drives our builders through its
own protocol: ``builder(func, identity=..., cache=..., targetoptions=...)``,
``add(sig)`` per signature, ``build_ufunc()``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, overload

from numba.np.ufunc.decorators import GUVectorize, Vectorize

from .gufunc import VulkanGUFunc, VulkanGUVectorize
from .vectorizer import VulkanUFunc, VulkanVectorize

TARGET = "vulkan"


def _vectorize_builder():
    return VulkanVectorize


def _guvectorize_builder():
    return VulkanGUVectorize


def register():
    """Make ``target="vulkan"`` known to Numba's decorators (idempotent)."""
    for registry, builder in ((Vectorize.target_registry, _vectorize_builder),
                              (GUVectorize.target_registry, _guvectorize_builder)):  # fmt: skip
        if TARGET not in registry and TARGET not in registry.ondemand:
            registry.ondemand[TARGET] = builder


@overload
def vectorize(signatures_or_function: Callable[..., Any], **options: Any) -> VulkanUFunc: ...
@overload
def vectorize(signatures_or_function: str | Sequence[Any] = (),
              **options: Any) -> Callable[[Callable[..., Any]], VulkanUFunc]: ...


def vectorize(signatures_or_function: Callable[..., Any] | str | Sequence[Any] = (),
              **options: Any) -> VulkanUFunc | Callable[[Callable[..., Any]], VulkanUFunc]:
    """``numba.vectorize(..., target="vulkan")``: ``@nv.vectorize``, ``@nv.vectorize(sigs)``.

    Parameters
    ----------
    signatures_or_function : list of signatures, a signature string, or a function
        Without signatures the function is compiled for the types of each call.
    **options
        ``identity`` (for ``reduce``), ``fastmath``, ``device`` (the default
        device of calls whose arguments are all host arrays or scalars).

    Returns
    -------
    VulkanUFunc, or a decorator that makes one
    """
    options.pop("target", None)
    identity = options.pop("identity", None)
    cache = options.pop("cache", False)

    def build(func, signatures):
        builder = VulkanVectorize(func, identity=identity, cache=cache, targetoptions=options)
        for sig in signatures:
            builder.add(sig)
        return builder.build_ufunc()

    if callable(signatures_or_function):
        return build(signatures_or_function, ())
    sigs = signatures_or_function
    sigs = [sigs] if isinstance(sigs, str) else list(sigs)
    return lambda func: build(func, sigs)


def guvectorize(*args: Any, **options: Any) -> Callable[[Callable[..., Any]], VulkanGUFunc]:
    """``numba.guvectorize(..., target="vulkan")``: ``@nv.guvectorize(sigs, layout)``, or
    ``@nv.guvectorize(layout)`` (compiled per call; outputs must then be passed).

    Returns
    -------
    A decorator making a VulkanGUFunc.
    """
    options.pop("target", None)
    options.pop("identity", None)
    options.pop("cache", None)
    options.pop("writable_args", None)
    options.pop("is_dynamic", None)
    if len(args) == 1:
        sigs, layout = [], args[0]
    elif len(args) == 2:
        sigs, layout = args
    else:
        raise TypeError("guvectorize() takes a layout, or signatures and a layout")
    sigs = [sigs] if isinstance(sigs, str) else list(sigs)

    def build(func):
        builder = VulkanGUVectorize(func, layout, targetoptions=options)
        for sig in sigs:
            builder.add(sig)
        return builder.build_ufunc()

    return build
