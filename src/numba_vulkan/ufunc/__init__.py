"""Element-wise work on the device: ``vectorize``/``guvectorize(target="vulkan")`` and NumPy's
ufuncs and operators on DeviceArray.

- operands.py: broadcasting, merging axes and cutting operands to kernel rank (views only);
- elementwise.py: the generated element-wise kernels and their cache;
- vectorizer.py / gufunc.py: the ``vectorize`` / ``guvectorize`` targets;
- registry.py: ``target="vulkan"`` in Numba's registries, ``nv.vectorize``/``nv.guvectorize``;
- reduction.py: ``VulkanUFunc.reduce``;
- numpy_ufuncs.py: NumPy's ufuncs on device arrays (``DeviceArray.__array_ufunc__``, which
  runtime/operators.py installs with the Python operators).

The runtime reaches ufuncs and casts on device arrays through runtime/compiler_hook.py,
where this package registers them.
"""

from ..runtime import compiler_hook
from .elementwise import cast_on_device
from .numpy_ufuncs import array_ufunc
from .registry import guvectorize, register, vectorize

compiler_hook.set_array_kernels(array_ufunc, cast_on_device)

__all__ = ["guvectorize", "register", "vectorize"]
