"""SPIR-V given to Device.load_kernel: checked before any driver or layer sees it.

Drivers and the Vulkan validation layer may crash on invalid SPIR-V (the layer
did, at NUMBA_VULKAN_DEBUG=1/2), so a module from outside our compiler is run
through SPIRV-Tools' validator first, and must have the GLCompute entry point
``main`` that the runtime's pipelines name.
"""

import numpy as np

from ..errors import SpirvCodegenError

_SPV_MAGIC = 0x07230203
_OP_ENTRY_POINT = 15
_GL_COMPUTE = 5


def check(words):
    """`words` as a uint32 array holding a valid Vulkan 1.2 compute module with entry ``main``.

    The validator (SPIRV-Tools) runs before the driver sees the module:
    drivers and the validation layer are free to crash on invalid SPIR-V.

    Raises
    ------
    TypeError
        If `words` is neither bytes nor an array of unsigned 32-bit integers.
    ValueError
        If the module is invalid, naming what the validator found.
    """
    from .. import _core

    if isinstance(words, (bytes, bytearray, memoryview)):
        raw = bytes(words)
        if len(raw) % 4:
            raise ValueError(f"words has {len(raw)} bytes, not a whole number of 32-bit words")
        words = np.frombuffer(raw, dtype=np.uint32)
    elif isinstance(words, np.ndarray):
        if words.dtype.kind not in "iu" or words.dtype.itemsize != 4:
            raise TypeError(f"words must be a uint32 array or bytes, not an array of {words.dtype}")
    else:
        raise TypeError(f"words must be a uint32 array or bytes, not {type(words).__name__}")
    words = np.ascontiguousarray(words.view(np.uint32)).reshape(-1)
    if len(words) < 5 or int(words[0]) != _SPV_MAGIC:
        raise ValueError("words is not a SPIR-V module (bad magic number or too short)")
    try:
        _core.validate(words)
    except SpirvCodegenError as e:
        message = str(e).split("--- disassembly ---")[0].strip()
        raise ValueError(f"words is not a valid SPIR-V module for Vulkan 1.2: {message}") from None
    if not _has_compute_main(words):
        raise ValueError("words has no GLCompute entry point named 'main'")
    return words


def _has_compute_main(words):
    i = 5
    while i < len(words):
        count, op = int(words[i]) >> 16, int(words[i]) & 0xFFFF
        if count == 0:
            return False
        if op == _OP_ENTRY_POINT and int(words[i + 1]) == _GL_COMPUTE:
            name = words[i + 3 : i + count].tobytes().split(b"\0", 1)[0]
            if name == b"main":
                return True
        i += count
    return False
