"""NUMBA_VULKAN_DEBUG: the validation layer and the messages it collects."""

import warnings

#: The environment variable that turns the validation layer on (docs/environment.md).
DEBUG_ENV_VAR = "NUMBA_VULKAN_DEBUG"

_reported = 0  # validation messages already turned into warnings


def debug_level():
    """How much ``NUMBA_VULKAN_DEBUG`` asks Vulkan's validation layer to check.

    Returns
    -------
    int
        0: nothing (the default); 1: the core checks of API usage; 2: those and
        synchronization validation (missing barriers between commands), which
        is slower. Read from ``numba_vulkan.config.DEBUG``; the level in force is
        the one seen when the first device was looked up.
    """
    level = _config().DEBUG
    if level.__class__ is int and 0 <= level <= 2:  # the usual case, on every synchronize
        return level
    return max(0, min(2, int(level)))


def _config():
    """numba_vulkan.config (bound on first use: the package imports this module early)."""
    global _config
    from .. import config

    _config = lambda: config  # noqa: E731
    return config


def debug_enabled():
    """Whether ``NUMBA_VULKAN_DEBUG`` asks for Vulkan's validation layer.

    Returns
    -------
    bool
    """
    return debug_level() > 0


def validation_messages(clear=False):
    """What the validation layer reported so far.

    Messages are collected (never printed) while ``NUMBA_VULKAN_DEBUG`` is 1 or 2.

    Parameters
    ----------
    clear : bool, optional
        Forget the messages after returning them.

    Returns
    -------
    list of tuple
        ``(severity, message)`` pairs, severity ``"warning"`` or ``"error"``,
        oldest first.
    """
    global _reported
    from .. import _core

    messages = [tuple(m) for m in _core.vk_validation_messages(clear)]
    if clear:
        _reported = 0
    return messages


def report_new_messages():
    """Emit each validation message not reported yet as a VulkanValidationWarning."""
    global _reported
    if not debug_enabled():
        return
    from .. import _core
    from ..errors import VulkanValidationWarning

    messages = _core.vk_validation_messages(False)
    if len(messages) < _reported:
        _reported = 0
    for severity, message in messages[_reported:]:
        warnings.warn(f"Vulkan validation {severity}: {message}", VulkanValidationWarning, 3)
    _reported = len(messages)
