"""Errors and warnings of numba_vulkan (API.md section 4)."""

from numba.core.errors import NumbaError, TypingError


class VulkanUnsupportedError(NumbaError):
    """A construct that kernels cannot express; raised at compile time with its source location."""


class VulkanTypingError(VulkanUnsupportedError, TypingError):
    """A kernel Numba cannot type, said in our words (typing/translate.py): also Numba's
    TypingError, which numba.cuda raises for it, so that ``except TypingError`` still
    catches it. Numba's own error is its ``numba_error``."""


class SpirvCodegenError(NumbaError):
    """The generated SPIR-V failed validation: a bug of numba_vulkan, with the validator's message."""


class InternalCompilerError(NumbaError):
    """A broken invariant inside the compiler (a bug of numba_vulkan); names the stage."""


class VulkanSupportError(RuntimeError):
    """The device lacks a capability, or a launch asks for more than it allows."""


class VulkanError(RuntimeError):
    """A Vulkan call failed; the message names the VkResult."""


class VulkanTimeoutError(VulkanError, TimeoutError):
    """A wait for the device took longer than ``NUMBA_VULKAN_TIMEOUT`` (a runaway kernel?).

    The work stays queued and the device usable once it finishes.
    """


class VulkanDeviceLostError(VulkanError):
    """The device was lost (VK_ERROR_DEVICE_LOST); every later call on it raises this too."""


class VulkanForkError(VulkanError):
    """A Vulkan device was used in a child process forked after the parent had used Vulkan.

    Start worker processes with multiprocessing's ``spawn`` start method instead.
    """


class VulkanLoaderError(RuntimeError):
    """No Vulkan loader or driver was found; the message carries ``runtime.hint``."""


class VulkanPrecisionWarning(UserWarning):
    """A kernel computes in float32 where the code says float64."""


class VulkanPerformanceWarning(UserWarning):
    """A kernel computes in float64 on a device where that is slow."""


class VulkanValidationWarning(UserWarning):
    """A message of the Vulkan validation layer (NUMBA_VULKAN_DEBUG)."""


class VulkanDriverFaultWarning(RuntimeWarning):
    """The driver self-test found a primitive wrong that no software form mends: kernels
    that use it may give results that differ from numba.njit's (runtime/selftest.py)."""


class VulkanLoopLimitError(VulkanError):
    """Invocations of a kernel did not finish their loops: the driver ended them early
    (lavapipe: past 65,535 loop iterations per invocation), so the kernel's results are
    wrong. Raised where the work is synchronised, as a kernel's own exceptions are
    (kir/loop_guard.h, runtime/reports.py)."""


class VulkanGraphError(VulkanSupportError):
    """A launch graph cannot capture or replay this (graphs.py): work that needs the host
    during the graph, a wait inside a capture, or a binding of another shape or type."""
