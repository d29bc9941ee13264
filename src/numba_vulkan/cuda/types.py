"""``numba.cuda.types`` (numba-cuda's spelling of Numba's types): Numba's types themselves."""

from numba.core.types import *  # noqa: F401,F403
