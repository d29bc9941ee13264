"""Errors the front end raises: every construct it cannot express is named, with its source line."""

from .. import errors


def unsupported(what, loc=None):
    """A VulkanUnsupportedError for `what` (e.g. "calling 'print'") at the ir.Loc `loc`."""
    return errors.VulkanUnsupportedError(f"{what} is not supported in Vulkan kernels", loc=loc)


def internal(what, loc=None):
    """An InternalCompilerError: the typed IR broke an assumption of the front end."""
    return errors.InternalCompilerError(f"front end: {what}", loc=loc)
