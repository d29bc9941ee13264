"""Typing of numba_vulkan's kernel intrinsics (Numba typing templates)."""
