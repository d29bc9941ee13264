"""Linear algebra on device arrays: ``matmul`` (also ``np.matmul`` and ``@``).

- plans.py: which kernel computes a loop dtype on a device (``choose``), and the
  accumulation type of each dtype;
- kernels.py: the generated kernels (the tiled SIMT product, the sum of split-k partials);
- products.py: NumPy's semantics (types, shapes, broadcasting, ``out=``) on views.

``DeviceArray.__array_ufunc__`` reaches ``np.matmul`` through runtime/compiler_hook.py,
where this package registers it.
"""

from ..runtime import compiler_hook
from .products import array_ufunc, matmul

compiler_hook.set_matmul(array_ufunc)

__all__ = ["matmul"]
