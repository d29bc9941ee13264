"""The version of numba_vulkan (pyproject.toml reads it from here)."""

__version__ = "0.2.0"
