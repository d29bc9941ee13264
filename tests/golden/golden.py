"""Compile the golden corpus (kernels.py) to deterministic KIR and SPIR-V text.

Shared by regen.py (writes the files) and tests/nodevice/test_golden.py (compares).
The texts carry no machine-specific detail: the KIR's source file names are
made relative to the repository (or reduced to their base name outside it),
and the rest (value numbers, parameter names, inlined names) depends only on
the kernel and the compiler.
"""

import os
import re

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))

_FILE = re.compile(r'^(file \d+ )"(.*)"$', re.M)


def _relative(match):
    """The file's path from the package's parent (numba_vulkan/...) or from the repository
    (tests/golden/...), else its base name: the same from a source tree or an install."""
    import numba_vulkan

    path = os.path.abspath(match.group(2))
    package_parent = os.path.dirname(os.path.dirname(os.path.abspath(numba_vulkan.__file__)))
    for root in (package_parent, REPO):
        if path.startswith(root + os.sep):
            return f'{match.group(1)}"{os.path.relpath(path, root)}"'
    return f'{match.group(1)}"{os.path.basename(path)}"'


def compile_case(fn, argtypes):
    """(KIR text, SPIR-V assembly, SPIR-V words) of one kernel, compiled without a device."""
    import numba_vulkan as nv

    kernel = nv.jit(fn).compile(tuple(argtypes))
    kir = _FILE.sub(_relative, kernel.kir)
    return kir, kernel.disassemble(), kernel.words


def paths(name):
    return os.path.join(HERE, f"{name}.kir"), os.path.join(HERE, f"{name}.spvasm")
