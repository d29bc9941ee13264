"""``numba.cuda.random`` (xoroshiro128+ generators) is not mapped yet: importing it says so."""

from ..errors import VulkanUnsupportedError

raise VulkanUnsupportedError(
    "numba_vulkan.cuda.random: cuda.random (xoroshiro128+ states, "
    "create_xoroshiro128p_states, xoroshiro128p_uniform_float32 ...) is not mapped yet")
