"""``numba.cuda.types`` (numba-cuda's spelling of Numba's types): Numba's types themselves,
every public name of ``numba.core.types`` (``Type``, ``float16``, ``f2``, ``CPointer`` ...),
not only those of its ``__all__``. A type kernels cannot take is refused where it is used.
``bfloat16`` is numba_vulkan's (typing/bfloat16.py), as numba-cuda's own type is."""

import numba.core.types as _types

globals().update({k: v for k, v in vars(_types).items() if not k.startswith("_")})

from ..typing.bfloat16 import bfloat16  # noqa: E402,F401
