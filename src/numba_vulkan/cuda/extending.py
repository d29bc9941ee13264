"""numba.cuda.extending on Vulkan: Numba's extension API with numba.cuda's target names.

``overload``, ``overload_method``, ``overload_attribute`` and ``intrinsic`` are Numba's
(numba.extending); an implementation registered for ``target="cuda"`` (numba.cuda's
default) is registered for our target instead, so ``@overload(f, target="cuda")`` next to
``@overload(f, target="generic")`` is chosen in Vulkan kernels as numba.cuda chooses it in
CUDA kernels. Other targets (``"generic"``, ``"cpu"``) are left as they are. The typing
side of the extension API (``typeof_impl``, ``type_callable``, ``register_model``,
``models``, ``make_attribute_wrapper``) is Numba's, shared by every target; a lowering
written with llvmlite for numba.cuda's back end (``numba.cuda.cudaimpl.lower``) has no
counterpart: a kernel that reaches one is refused by name.
"""

from numba import extending as _ext
from numba.core import datamodel as _datamodel
from numba.extending import (  # noqa: F401
    NativeValue,
    box,
    lower_builtin,
    lower_cast,
    lower_getattr,
    lower_getattr_generic,
    lower_setattr,
    lower_setattr_generic,
    make_attribute_wrapper,
    models,
    register_jitable,
    register_model,
    type_callable,
    typeof_impl,
    unbox,
)

#: numba.cuda.extending's name for Numba's data models
core_models = _datamodel.models

_CUDA_TARGETS = ("cuda", "CUDA")
_TARGET = "vulkan"


def _target(kwargs, default):
    """The keyword arguments with numba.cuda's target name replaced by ours."""
    target = kwargs.get("target", default)
    kwargs["target"] = _TARGET if target in _CUDA_TARGETS else target
    return kwargs


def overload(func, jit_options=None, strict=True, inline="never", prefer_literal=False,
             **kwargs):
    """numba.cuda.extending.overload: Numba's ``overload``; target ``"cuda"`` (the
    default, as in numba.cuda) means the Vulkan target."""
    return _ext.overload(func, jit_options=jit_options or {}, strict=strict, inline=inline,
                         prefer_literal=prefer_literal, **_target(kwargs, "cuda"))


def overload_method(typ, attr, **kwargs):
    """numba.cuda.extending.overload_method, for the Vulkan target by default."""
    return _ext.overload_method(typ, attr, **_target(kwargs, "cuda"))


def overload_attribute(typ, attr, **kwargs):
    """numba.cuda.extending.overload_attribute, for the Vulkan target by default."""
    return _ext.overload_attribute(typ, attr, **_target(kwargs, "cuda"))


def intrinsic(*args, **kwargs):
    """numba.cuda.extending.intrinsic: Numba's ``intrinsic``, whose LLVM code generator
    frontend/llvm_codegen.py translates (``target="cuda"`` means ours)."""
    if "target" in kwargs:
        _target(kwargs, "cuda")
    return _ext.intrinsic(*args, **kwargs)
